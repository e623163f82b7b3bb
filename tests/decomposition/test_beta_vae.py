"""BetaVAE transformer: quick and overfit tiers, reproducibility, model selection by a scorer."""

import numpy as np
import pytest
import torch
from sklearn.model_selection import GridSearchCV

from sklearn_papers.datasets import make_shapes
from sklearn_papers.decomposition import BetaVAE
from sklearn_papers.metrics import make_disentanglement_scorer


@pytest.fixture(scope="module")
def shapes():
    return make_shapes(160, image_size=16, random_state=0)


@pytest.fixture(scope="module")
def fitted(shapes):
    X, _ = shapes
    return BetaVAE(n_components=3, max_epochs=2, batch_size=32, random_state=0).fit(X)


def test_beta_vae_quick(fitted, shapes):
    X, _ = shapes
    Z = fitted.transform(X)
    assert Z.shape == (160, 3) and Z.dtype == np.float32 and np.all(np.isfinite(Z))
    assert fitted.likelihood_ == "bernoulli" and fitted.image_shape_ == (1, 16, 16)
    rec = fitted.inverse_transform(Z)
    assert rec.shape == X.shape and rec.min() >= 0 and rec.max() <= 1
    assert fitted.sample(5).shape == (5, 256)
    np.testing.assert_array_equal(fitted.sample(5), fitted.sample(5))
    assert fitted.n_iter_ == 2 and len(fitted.loss_curve_) == 2
    assert fitted.transform(X.astype(np.float64)).dtype == np.float64
    np.testing.assert_array_equal(fitted.transform(X), fitted.transform(X))
    assert list(fitted.get_feature_names_out()) == ["betavae0", "betavae1", "betavae2"]


def test_set_output_pandas(fitted, shapes):
    X, _ = shapes
    est = BetaVAE(n_components=3, max_epochs=1, random_state=0).set_output(transform="pandas")
    df = est.fit(X[:40]).transform(X[:5])
    assert list(df.columns) == ["betavae0", "betavae1", "betavae2"]


def test_random_state_reproducible_and_global_rng_untouched(shapes):
    X, _ = shapes
    X = X[:64]
    torch.manual_seed(123)
    np.random.seed(7)
    before = torch.get_rng_state()
    a = BetaVAE(2, encoder="mlp", max_epochs=2, random_state=0).fit(X).transform(X)
    assert torch.equal(before, torch.get_rng_state())
    torch.manual_seed(999)
    np.random.seed(3)
    b = BetaVAE(2, encoder="mlp", max_epochs=2, random_state=0).fit(X).transform(X)
    c = BetaVAE(2, encoder="mlp", max_epochs=2, random_state=1).fit(X).transform(X)
    np.testing.assert_allclose(a, b, rtol=1e-5)
    assert not np.allclose(a, c)


def test_larger_beta_pulls_posterior_means_to_the_prior(shapes):
    X, _ = shapes
    kw = dict(n_components=4, encoder="mlp", max_epochs=8, batch_size=32, random_state=0)
    spread_0 = BetaVAE(beta=0.0, **kw).fit(X).transform(X).std(axis=0).sum()
    spread_50 = BetaVAE(beta=50.0, **kw).fit(X).transform(X).std(axis=0).sum()
    assert spread_50 < 0.6 * spread_0


def test_gaussian_likelihood_for_real_valued_data_and_batch_remainder_of_one():
    X = np.random.RandomState(0).normal(size=(33, 5))
    est = BetaVAE(2, encoder="mlp", max_epochs=2, batch_size=16, random_state=0).fit(X)
    assert est.likelihood_ == "gaussian"
    assert np.all(np.isfinite(est.loss_curve_))
    assert est.transform(X[:1]).shape == (1, 2)


def test_bad_input_raises_naming_the_problem():
    X = np.random.RandomState(0).rand(20, 10)
    with pytest.raises(ValueError, match="perfect square"):
        BetaVAE(2, max_epochs=1).fit(X)
    with pytest.raises(ValueError, match="has 12 pixels but X has 10"):
        BetaVAE(2, image_shape=(3, 4), max_epochs=1).fit(X)
    X[3, 4] = -1.0
    with pytest.raises(ValueError, match=r"X\[3, 4\] = -1.0"):
        BetaVAE(2, encoder="mlp", likelihood="bernoulli", max_epochs=1).fit(X)
    fitted = BetaVAE(2, encoder="mlp", max_epochs=1, random_state=0).fit(X)
    with pytest.raises(ValueError, match="n_components=2"):
        fitted.inverse_transform(np.zeros((1, 3)))
    with pytest.raises(ValueError, match="n_samples"):
        fitted.sample(0)


def test_grid_search_over_beta_selected_by_a_disentanglement_scorer(shapes):
    X, factors = shapes
    grid = GridSearchCV(
        BetaVAE(n_components=3, encoder="mlp", max_epochs=2, batch_size=32, random_state=0),
        {"beta": [1.0, 8.0]},
        scoring=make_disentanglement_scorer("mutual_info_gap"),
        cv=2,
    )
    grid.fit(X, factors)
    scores = grid.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores)) and np.all((scores >= 0) & (scores <= 1))
    assert grid.best_params_["beta"] in (1.0, 8.0)
    assert grid.transform(X[:3]).shape == (3, 3)


@pytest.mark.slow
def test_beta_vae_overfit():
    X, _ = make_shapes(64, image_size=16, random_state=1)
    est = BetaVAE(n_components=8, beta=0.0, encoder="mlp", max_epochs=300, batch_size=64,
                  lr=3e-3, random_state=0).fit(X)
    rec = est.inverse_transform(est.transform(X))
    assert np.mean((rec > 0.5) != (X > 0.5)) < 0.02


@pytest.mark.parametrize("encoder", ["conv", "mlp"])
@pytest.mark.parametrize("norm", ["batch", "group", "layer", None])
def test_each_norm_fits_and_transforms_to_finite_codes(shapes, norm, encoder):
    X, _ = shapes
    est = BetaVAE(n_components=3, encoder=encoder, norm=norm, num_groups=4, max_epochs=1,
                  batch_size=32, random_state=0).fit(X[:64])
    Z = est.transform(X[:10])
    assert Z.shape == (10, 3) and np.all(np.isfinite(Z)) and np.all(np.isfinite(est.loss_curve_))
    np.testing.assert_array_equal(Z, est.transform(X[:10]))  # evaluation mode: deterministic
    kinds = (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d, torch.nn.GroupNorm, torch.nn.LayerNorm)
    has_norm = any(isinstance(m, kinds) for m in est.net_.module_.modules())
    assert has_norm == (norm is not None)


def test_default_norm_is_none_and_bad_norm_is_rejected(shapes):
    X, _ = shapes
    assert BetaVAE().norm is None
    with pytest.raises(ValueError, match="'norm' parameter"):
        BetaVAE(encoder="mlp", norm="instance", max_epochs=1).fit(X[:8])
    with pytest.raises(ValueError, match="'num_groups' parameter"):
        BetaVAE(encoder="mlp", norm="group", num_groups=0, max_epochs=1).fit(X[:8])


@pytest.mark.parametrize("encoder", ["conv", "mlp"])
def test_batch_norm_with_a_training_batch_of_one(shapes, encoder):
    X, _ = shapes
    # 33 rows in batches of 16: the last training batch holds one sample.
    est = BetaVAE(n_components=2, encoder=encoder, norm="batch", max_epochs=2, batch_size=16,
                  random_state=0).fit(X[:33])
    assert np.all(np.isfinite(est.loss_curve_))
    assert np.all(np.isfinite(est.transform(X[:1])))
    one = BetaVAE(n_components=2, encoder=encoder, norm="batch", max_epochs=1,
                  random_state=0).fit(X[:1])  # every batch is a single sample
    assert np.all(np.isfinite(one.transform(X[:3])))


@pytest.mark.parametrize("encoder", ["conv", "mlp"])
def test_group_norm_with_more_groups_than_channels(shapes, encoder):
    # num_groups=1000 over 256 hidden units taken literally gives one unit per group:
    # every hidden activation normalised to a constant, the same code for every input, and
    # a training batch of one crashing inside torch ("Expected more than 1 value per
    # channel"). 33 rows in batches of 16: the last training batch holds one sample.
    X, _ = shapes
    est = BetaVAE(n_components=2, encoder=encoder, norm="group", num_groups=1000,
                  max_epochs=2, batch_size=16, random_state=0).fit(X[:33])
    assert np.all(np.isfinite(est.loss_curve_))
    groups = [m for m in est.net_.module_.modules() if isinstance(m, torch.nn.GroupNorm)]
    assert groups
    if encoder == "mlp":  # fully connected: at least 4 units per group
        assert all(m.num_channels // m.num_groups >= 4 for m in groups)
    Z = est.transform(X[:33])
    assert np.all(Z.std(axis=0) > 1e-3)
    assert len(np.unique(Z.round(5), axis=0)) > 25


def test_grid_search_over_norm(shapes):
    X, factors = shapes
    grid = GridSearchCV(
        BetaVAE(n_components=3, encoder="mlp", max_epochs=2, batch_size=32, random_state=0),
        {"norm": [None, "batch", "group", "layer"]},
        scoring=make_disentanglement_scorer("mutual_info_gap"),
        cv=2,
    )
    grid.fit(X, factors)
    assert np.all(np.isfinite(grid.cv_results_["mean_test_score"]))
    assert list(grid.cv_results_["param_norm"]) == [None, "batch", "group", "layer"]
    assert grid.best_estimator_.norm == grid.best_params_["norm"]
    assert grid.transform(X[:3]).shape == (3, 3)


@pytest.mark.parametrize("case", ["all zero", "all one", "one value", "one image",
                                  "constant images"])
def test_bernoulli_outputs_stay_in_unit_range_on_degenerate_images(case):
    rng = np.random.RandomState(0)
    X = {"all zero": np.zeros((8, 64)), "all one": np.ones((8, 64)),
         "one value": np.full((8, 64), 0.3), "one image": rng.rand(1, 64),
         "constant images": np.repeat(np.linspace(0, 1, 8)[:, None], 64, axis=1)}[case]
    vae = BetaVAE(n_components=2, encoder="mlp", max_epochs=2, batch_size=4,
                  random_state=0).fit(X)
    assert vae.likelihood_ == "bernoulli"
    far = 10 * rng.randn(6, 2)  # codes far outside the prior's bulk
    for out in (vae.inverse_transform(vae.transform(X)), vae.inverse_transform(far),
                vae.sample(6)):
        assert np.isfinite(out).all() and out.min() >= 0 and out.max() <= 1
