"""SupConEmbedder and CrossEntropyEmbedder: behaviour, batches of one, seeding, clone, API."""

import pickle

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from sklearn_papers.contrastive import CrossEntropyEmbedder, SupConEmbedder

EMBEDDERS = [SupConEmbedder, CrossEntropyEmbedder]
FAST = dict(n_components=4, max_epochs=2, batch_size=16)


def _supcon_fast(**kw):
    return SupConEmbedder(**{**FAST, "projection_dim": 8, **kw})


def _make(cls, **kw):
    return _supcon_fast(**kw) if cls is SupConEmbedder else cls(**{**FAST, **kw})


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X.astype(np.float32), y


@pytest.fixture(scope="module")
def small(digits):
    X, y = digits
    return X[:120], y[:120]


@pytest.fixture(scope="module")
def fitted_conv(small):
    # Module-scoped: do not mutate.
    X, y = small
    return SupConEmbedder(encoder="conv", image_shape=(8, 8), n_components=8, projection_dim=8,
                          max_epochs=3, batch_size=32, random_state=0).fit(X, y)


# ---------------------------------------------------------------- quick tier
def test_supcon_embedder_quick(fitted_conv, small):
    X, _ = small
    Z = fitted_conv.transform(X)
    assert Z.shape == (120, 8) and Z.dtype == np.float32 and np.isfinite(Z).all()
    assert fitted_conv.n_iter_ == 3 == len(fitted_conv.loss_curve_)
    assert np.isfinite(fitted_conv.loss_curve_).all()
    assert fitted_conv.n_features_in_ == 64
    # The projection head exists but transform is the encoder output.
    with torch.no_grad():
        enc = fitted_conv.net_.module_.eval()(torch.as_tensor(X[:5]))
    np.testing.assert_allclose(Z[:5], enc.numpy(), rtol=1e-6)


@pytest.mark.parametrize("cls", EMBEDDERS)
def test_training_loss_decreases(cls, small):
    X, y = small
    est = _make(cls, max_epochs=6, batch_size=32, random_state=0).fit(X, y)
    assert est.loss_curve_[-1] < est.loss_curve_[0]


@pytest.mark.slow
def test_supcon_linear_probe_overfit(digits):
    # Overfit tier: on 300 digits the linear probe on the SupCon embedding classifies the
    # training set almost perfectly.
    X, y = digits
    probe = make_pipeline(
        SupConEmbedder(encoder="conv", image_shape=(8, 8), n_components=32, max_epochs=15,
                       batch_size=64, random_state=0), LogisticRegression(max_iter=2000))
    assert probe.fit(X[:300], y[:300]).score(X[:300], y[:300]) >= 0.98


def test_linear_probe_beats_chance_clearly(digits):
    X, y = digits
    probe = make_pipeline(SupConEmbedder(n_components=16, max_epochs=10, batch_size=64,
                                         random_state=0),
                          LogisticRegression(max_iter=1000))
    probe.fit(X[:400], y[:400])
    assert probe.score(X[1000:1400], y[1000:1400]) > 0.7


@pytest.mark.parametrize("norm", ["group", "layer", None])
@pytest.mark.parametrize("encoder", ["mlp", "conv"])
def test_every_norm_choice_trains(norm, encoder, small):
    X, y = small
    est = _supcon_fast(encoder=encoder, image_shape=(8, 8), norm=norm, num_groups=2,
                       random_state=0).fit(X, y)
    assert np.isfinite(est.transform(X[:7])).all()


@pytest.mark.parametrize("cls", EMBEDDERS)
@pytest.mark.parametrize("norm", ["batch", "group", "layer", None])
@pytest.mark.parametrize("n_components", [2, 3])
def test_small_representation_is_not_collapsed_by_the_norm(cls, norm, n_components):
    # The encoder's output layer was Linear -> norm -> ReLU: group norm with one feature per
    # group (n_components <= num_groups) or layer norm over two features gave every sample
    # (nearly) the same representation (std ~1e-6, one distinct row).
    rng = np.random.RandomState(0)
    X, y = rng.rand(40, 4), np.repeat([0, 1, 2, 3], 10)
    Z = _make(cls, n_components=n_components, norm=norm, max_epochs=2,
              random_state=0).fit_transform(X, y)
    assert len(np.unique(Z.round(4), axis=0)) == 40
    assert (Z.std(axis=0) > 1e-2).all()


@pytest.mark.parametrize("norm", ["group", "layer"])
def test_small_conv_representation_is_not_collapsed_by_the_norm(norm, small):
    X, y = small
    Z = _supcon_fast(encoder="conv", image_shape=(8, 8), n_components=3, norm=norm,
                     random_state=0).fit_transform(X, y)
    assert len(np.unique(Z.round(4), axis=0)) == len(X)
    assert (Z.std(axis=0) > 1e-2).all()


def test_more_than_two_views(small):
    X, y = small
    est = _supcon_fast(n_views=4, random_state=0).fit(X, y)
    assert est.net_.module_.n_views == 4 and np.isfinite(est.loss_curve_).all()


def test_variant_in_trains(small):
    X, y = small
    est = _supcon_fast(variant="in", random_state=0).fit(X, y)
    assert np.isfinite(est.loss_curve_).all()


# ---------------------------------------------------------------- augmentations / encoder
def test_callable_augment_is_used(small):
    X, y = small
    calls = []

    def flip(x):
        calls.append(tuple(x.shape))
        return torch.flip(x, dims=[1])

    _supcon_fast(augment=flip, random_state=0).fit(X, y)
    assert calls and all(c[1] == 64 for c in calls)


def test_callable_augment_with_wrong_shape_raises(small):
    X, y = small
    with pytest.raises(ValueError, match=r"augment must map .* returned \(2, 63\)"):
        _supcon_fast(augment=lambda x: x[:, 1:]).fit(X, y)


@pytest.mark.parametrize("augment, message", [
    (lambda x: x.numpy(), r"returned a numpy.ndarray of shape \(2, 64\), not a torch.Tensor"),
    (lambda x: x.tolist(), r"returned a list, not a torch.Tensor"),
    (lambda x: x.double(), r"returned a tensor of dtype torch.float64"),
    (lambda x: x * float("nan"), r"returned non-finite values")])
def test_callable_augment_returning_the_wrong_kind_raises(augment, message, small):
    X, y = small
    with pytest.raises(ValueError, match=message):
        _supcon_fast(augment=augment).fit(X, y)


def _nan_after_the_probe(x):
    # Passes the two-row check at fit start, then gives NaN on every training batch.
    return x if x.shape[0] <= 2 else x * float("nan")


@pytest.mark.parametrize("cls", EMBEDDERS)
def test_non_finite_first_loss_blames_the_augmentation_or_input_not_lr(cls, small):
    X, y = small
    with pytest.raises(FloatingPointError, match=r"first batch was already non-finite .*"
                       r"learning rate is not the cause: the augmentation \(augment="):
        _make(cls, augment=_nan_after_the_probe, max_epochs=1).fit(X, y)


def test_no_augmentation(small):
    X, y = small
    est = _supcon_fast(augment=None, random_state=0).fit(X, y)
    assert est.net_.module_.augment is None


class _TinyEncoder(torch.nn.Module):
    def __init__(self, n_features, n_components):
        super().__init__()
        self.linear = torch.nn.Linear(n_features, n_components)

    def forward(self, x):
        return torch.tanh(self.linear(x))


@pytest.mark.parametrize("cls", EMBEDDERS)
def test_encoder_as_module_class(cls, small):
    X, y = small
    est = _make(cls, encoder=_TinyEncoder, random_state=0).fit(X, y)
    assert isinstance(est.net_.module_.encoder, _TinyEncoder)
    assert np.abs(est.transform(X)).max() <= 1.0


def test_conv_needs_matching_image_shape(small):
    X, y = small
    with pytest.raises(ValueError, match="encoder='conv' needs image_shape"):
        _supcon_fast(encoder="conv").fit(X, y)
    with pytest.raises(ValueError, match=r"image_shape=\(8, 7\) has 56 pixels but X has 64"):
        _supcon_fast(encoder="conv", image_shape=(8, 7)).fit(X, y)
    with pytest.raises(ValueError, match="positive ints"):
        _supcon_fast(image_shape=(8, 8, 1, 1)).fit(X, y)


@pytest.mark.parametrize("cls", EMBEDDERS)
def test_continuous_target_is_rejected(cls, small):
    X, _ = small
    with pytest.raises(ValueError, match="Unknown label type"):
        _make(cls).fit(X, np.linspace(0, 1, len(X)))


def test_unavailable_cuda_is_a_clear_error(small):
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    X, y = small
    with pytest.raises(ValueError, match="CUDA is not available"):
        _supcon_fast(device="cuda").fit(X, y)


# --------------------------------------------------------------------- batches of one
@pytest.mark.parametrize("cls", EMBEDDERS)
@pytest.mark.parametrize("n_views", [1, 2])
@pytest.mark.parametrize("encoder", ["mlp", "conv"])
def test_remainder_batch_of_one_with_batch_norm(cls, n_views, encoder, small):
    X, y = small[0][:9], small[1][:9]
    kw = {"n_views": n_views} if cls is SupConEmbedder else {}
    if cls is CrossEntropyEmbedder and n_views == 2:
        pytest.skip("n_views is a SupCon parameter")
    est = _make(cls, batch_size=8, norm="batch", encoder=encoder, image_shape=(8, 8),
                random_state=0, **kw).fit(X, y)
    assert np.isfinite(est.loss_curve_).all()
    one = est.transform(X[:1])
    assert one.shape == (1, 4) and np.isfinite(one).all()


# ---------------------------------------------------------------------- class of one
@pytest.mark.parametrize("n_views", [1, 2])
@pytest.mark.parametrize("variant", ["out", "in"])
def test_class_of_one_sample_gives_finite_embeddings(n_views, variant, global_random_seed):
    rng = np.random.RandomState(global_random_seed)
    y = np.array([0] * 6 + [1] * 6 + [2] + [3] + [4] * 7)
    X = rng.normal(size=(21, 5)) + y[:, None]
    est = SupConEmbedder(n_components=4, projection_dim=8, max_epochs=3, batch_size=64,
                         n_views=n_views, variant=variant,
                         random_state=global_random_seed).fit(X, y)
    Z = est.transform(X)
    assert Z.shape == (21, 4) and np.isfinite(Z).all()
    assert np.isfinite(est.loss_curve_).all()
    assert all(np.isfinite(v) for v in est.net_.history[:, "train_loss"])


# ------------------------------------------------------------------- reproducibility
@pytest.mark.parametrize("cls", EMBEDDERS)
def test_random_state_reproducible_regardless_of_global_seeds(cls, small):
    X, y = small[0][:48], small[1][:48]
    outputs = []
    for global_seed in (1, 2):
        torch.manual_seed(global_seed)
        np.random.seed(global_seed)
        est = _make(cls, encoder="conv", image_shape=(8, 8), random_state=0).fit(X, y)
        first, second = est.transform(X), est.transform(X)
        np.testing.assert_array_equal(first, second)  # inference is deterministic
        outputs.append(first)
    np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-5)
    other = _make(cls, encoder="conv", image_shape=(8, 8), random_state=1).fit(X, y)
    assert not np.allclose(other.transform(X), outputs[0], rtol=1e-5)


@pytest.mark.parametrize("cls", EMBEDDERS)
def test_fit_leaves_global_torch_rng_untouched(cls, small):
    X, y = small
    torch.manual_seed(123)
    state = torch.get_rng_state()
    _make(cls, random_state=0).fit(X, y)
    assert torch.equal(torch.get_rng_state(), state)


# ------------------------------------------------------------- clone, grid search
@pytest.mark.parametrize("cls", EMBEDDERS)
def test_unfitted_transform_raises(cls, small):
    with pytest.raises(NotFittedError):
        clone(_make(cls)).transform(small[0])


def test_fitting_a_clone_leaves_the_original_unchanged(fitted_conv, small, digits):
    X, _ = small
    before = fitted_conv.transform(X)
    twin = clone(fitted_conv)
    assert twin.get_params() == fitted_conv.get_params()
    twin.fit(digits[0][500:620], digits[1][500:620])
    np.testing.assert_array_equal(fitted_conv.transform(X), before)


def test_pickle_round_trip(fitted_conv, small):
    X, _ = small
    restored = pickle.loads(pickle.dumps(fitted_conv))
    np.testing.assert_array_equal(restored.transform(X), fitted_conv.transform(X))


def test_linear_probe_in_grid_search(small):
    X, y = small[0][:60], small[1][:60]
    pipe = make_pipeline(_supcon_fast(random_state=0), LogisticRegression(max_iter=300))
    search = GridSearchCV(pipe, {"supconembedder__temperature": [0.1, 0.5],
                                 "supconembedder__n_views": [2, 3]}, cv=2)
    search.fit(X, y)
    assert len(search.cv_results_["params"]) == 4
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert search.predict(X[:3]).shape == (3,)


def test_norm_is_grid_searchable(small):
    X, y = small[0][:60], small[1][:60]
    pipe = make_pipeline(CrossEntropyEmbedder(**FAST, random_state=0),
                         LogisticRegression(max_iter=300))
    search = GridSearchCV(pipe, {"crossentropyembedder__norm": ["batch", "group"]},
                          cv=2).fit(X, y)
    assert search.best_params_["crossentropyembedder__norm"] in {"batch", "group", "layer"}


# ----------------------------------------------------------------------- sklearn API
@pytest.mark.parametrize("cls", EMBEDDERS)
def test_feature_names_set_output_and_width(cls, small):
    X, y = small
    columns = [f"px{i}" for i in range(64)]
    df = pd.DataFrame(X, columns=columns)
    est = _make(cls, random_state=0).fit(df, y)
    np.testing.assert_array_equal(est.feature_names_in_, columns)
    assert est.n_features_in_ == 64
    names = est.get_feature_names_out()
    prefix = cls.__name__.lower()
    assert list(names) == [f"{prefix}{i}" for i in range(4)]
    dense = est.transform(df)
    est.set_output(transform="pandas")
    out = est.transform(df)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(names)
    np.testing.assert_array_equal(out.to_numpy(), dense)
    with pytest.raises(ValueError, match="X has 63 features"):
        est.transform(X[:, 1:])
    with pytest.raises(ValueError, match="Feature names"):
        est.transform(df.drop(columns="px3"))


def test_float64_input_gives_float32_output(small):
    X, y = small
    est = _supcon_fast(random_state=0).fit(X.astype(np.float64), y)
    assert est.transform(X.astype(np.float64)).dtype == np.float32


def test_cross_entropy_embedder_rejects_a_single_class(small):
    # One class makes the cross-entropy loss identically zero: the encoder would stay at
    # its random initialisation without any error.
    X, _ = small
    with pytest.raises(ValueError, match=r"y has 1 class \(3\); CrossEntropyEmbedder needs"):
        _make(CrossEntropyEmbedder).fit(X, np.full(len(X), 3))


def test_supcon_embedder_rejects_a_single_class(small):
    # One class: every other view is a positive and there are no negatives, so the loss
    # is minimised by collapsing every sample to one point; fit must refuse it.
    X, _ = small
    with pytest.raises(ValueError, match=r"y has 1 class \('a'\); SupConEmbedder needs .*"
                                         r"no negatives"):
        _supcon_fast().fit(X, np.full(len(X), "a"))


@pytest.mark.parametrize("cls", EMBEDDERS)
def test_classes_are_counted_among_rows_of_positive_weight(cls):
    X = np.random.RandomState(0).randn(40, 6)
    y = np.r_[np.zeros(20), np.ones(20)]
    only_class_0 = (y == 0).astype(float)
    with pytest.raises(ValueError, match=r"y has 1 class \(0\.0\) among the rows of "
                                         r"positive sample_weight; " + cls.__name__):
        cls(max_epochs=2, n_components=4, random_state=0).fit(X, y, sample_weight=only_class_0)
    # three labels, one of them only at weight 0: two classes, two output units
    y3 = np.r_[np.zeros(15), np.ones(15), np.full(10, 2.0)]
    est = cls(max_epochs=1, n_components=4, random_state=0).fit(
        X, y3, sample_weight=(y3 < 2).astype(float))
    np.testing.assert_array_equal(est.classes_, [0.0, 1.0])
    if cls is CrossEntropyEmbedder:
        assert est.net_.module_.classifier.out_features == 2


@pytest.mark.parametrize("cls", EMBEDDERS)
def test_large_scale_features_train_finitely(cls):
    # Standardisation statistics of float32 data overflowed for |x| ~ 1e30 (x^2 > float32
    # max) and training stopped with a misleading "lower lr" error.
    rng = np.random.RandomState(0)
    X, y = rng.rand(40, 4), np.arange(40) % 2
    est = _make(cls, random_state=0)
    Z_big = est.fit(X * 1e30, y).transform(X * 1e30)
    Z = est.fit(X, y).transform(X)
    assert np.isfinite(Z_big).all()
    np.testing.assert_allclose(Z_big, Z, atol=1e-2)


@pytest.mark.parametrize("cls", EMBEDDERS)
def test_values_beyond_float32_range_are_named(cls, small):
    X, y = small
    X_bad = X.astype(np.float64)
    X_bad[5, 7] = 1e300
    with pytest.raises(ValueError, match=r"X\[5, 7\] = 1e\+300 is too large for float32"):
        _make(cls).fit(X_bad, y)
    est = _make(cls).fit(X, y)
    with pytest.raises(ValueError, match=r"X\[5, 7\] = 1e\+300 is too large for float32"):
        est.transform(X_bad)
