"""Early stopping, the warm-up-then-decay schedule and directed messages."""

import pickle

import numpy as np
import pytest
import torch

from sklearn_papers.chem import MPNNRegressor, NeuralFingerprintClassifier
from sklearn_papers.nn._skorch import WarmupDecay

MOLS = ["CCO", "c1ccccc1", "CC(=O)O", "CCN(CC)CC", "c1ccncc1", "CC(C)O", "C1CCCCC1",
        "OC(=O)c1ccccc1", "CCOC(=O)C", "Clc1ccccc1", "CC(=O)Oc1ccccc1C(=O)O", "CCCCCC",
        "CCCCO", "CCCl", "c1ccc(O)cc1", "NCCO", "CC#N", "C=CC", "CCOCC", "OCCO"]
Y = np.array([len(s) % 5 - 2.0 + ("O" in s) for s in MOLS])
MP = dict(hidden_size=8, n_steps=2, set2set_steps=2, edge_hidden_size=8, batch_size=8)
# the training the tests below were written for (the MPNN defaults are now warm-up then
# decay with the best epoch on a held-out 10 % restored)
PLAIN = dict(lr_schedule="constant", early_stopping=False)


def test_warmup_decay_factor():
    f = WarmupDecay(4, 14)
    values = [f(s) for s in range(16)]
    assert values[0] == pytest.approx(0.1) and values[4] == pytest.approx(1.0)
    assert values[14] == pytest.approx(0.1) and values[15] == pytest.approx(0.1)
    assert np.all(np.diff(values[:5]) > 0) and np.all(np.diff(values[4:15]) < 0)
    assert WarmupDecay(0, 10)(0) == pytest.approx(1.0)


@pytest.mark.parametrize("schedule, final", [("warmup_decay", 0.1), ("constant", 1.0)])
def test_lr_schedule_reaches_its_end(schedule, final):
    reg = MPNNRegressor(max_epochs=3, lr=1e-2, lr_schedule=schedule, random_state=0,
                        **MP).fit(MOLS, Y)
    assert reg.net_.optimizer_.param_groups[0]["lr"] == pytest.approx(final * 1e-2)
    pickle.loads(pickle.dumps(reg)).predict(MOLS[:2])  # the schedule pickles


def test_early_stopping_restores_the_best_epoch():
    reg = MPNNRegressor(max_epochs=60, lr=3e-2, early_stopping=True,
                        validation_fraction=0.25, n_iter_no_change=3, random_state=0,
                        lr_schedule="constant", **dict(MP, batch_size=16)).fit(MOLS, Y)
    curve = reg.validation_loss_curve_
    assert len(curve) == reg.n_iter_ == len(reg.loss_curve_)
    best = int(np.argmin(curve))
    assert reg.n_iter_ < 60  # stopped: n_iter_no_change epochs without improvement
    assert reg.n_iter_ == best + 1 + 3
    # the restored weights are those of the best epoch: their held-out loss is the minimum
    from sklearn_papers.nn._graph import GraphDataset

    graphs = reg._featurize_mols(reg._molecules(MOLS)[0])
    target = ((Y - reg._y_mean) / reg._y_std).astype(np.float32).reshape(-1, 1)
    _, valid = reg.net_.get_split_datasets(GraphDataset(graphs, target))
    assert len(valid) == 5
    pred = reg.net_.forward(valid, training=False)
    true = torch.as_tensor(np.stack([valid[i][1] for i in range(len(valid))]))
    loss = float(reg.net_.get_loss(pred, true, training=False))
    assert loss == pytest.approx(min(curve), rel=1e-4)
    assert MPNNRegressor(max_epochs=2, **MP, **PLAIN).fit(MOLS, Y).validation_loss_curve_ \
        is None
    # the MPNN default holds out 10 % and restores the best of max_epochs epochs
    default = MPNNRegressor(max_epochs=3, **MP, random_state=0).fit(MOLS, Y)
    assert len(default.validation_loss_curve_) == default.n_iter_ == 3


def test_early_stopping_for_classifiers_and_too_few_molecules():
    clf = NeuralFingerprintClassifier(fp_length=8, conv_width=4, hidden_size=4, radius=1,
                                      max_epochs=4, batch_size=8, early_stopping=True,
                                      random_state=0).fit(MOLS, Y > 0)
    assert len(clf.validation_loss_curve_) == clf.n_iter_
    with pytest.raises(ValueError, match="leaves none to train on"):
        MPNNRegressor(early_stopping=True, validation_fraction=0.5, **MP).fit(
            ["CCO"], [1.0])



def _held_out_rows(reg, target):
    from sklearn_papers.nn._graph import GraphDataset

    graphs = reg._featurize_mols(reg._molecules(MOLS)[0])
    _, valid = reg.net_.get_split_datasets(GraphDataset(graphs, target))
    return set(valid.indices.tolist())


def test_early_stopping_holds_out_only_labelled_rows_of_positive_weight():
    # with every row labelled the split is skorch's ValidSplit(0.25) (shuffled rows)
    y = np.c_[Y, -Y]
    y[::2] = np.nan  # half the rows have no label (NaN: missing, among several targets)
    reg = MPNNRegressor(max_epochs=3, validation_fraction=0.25, random_state=0,
                        **MP).fit(MOLS, y)
    held_out = _held_out_rows(reg, np.zeros((len(MOLS), 2), np.float32))
    assert len(held_out) == 3 and all(i % 2 == 1 for i in held_out)  # ceil(0.25 x 10)
    assert all(v > 0 for v in reg.validation_loss_curve_)  # a real loss every epoch
    # weight 0 rows are never held out, and a weight-0 row is as if it were left out
    w = np.ones(len(MOLS))
    w[:12] = 0
    reg = MPNNRegressor(max_epochs=3, validation_fraction=0.25, random_state=0,
                        **MP).fit(MOLS, Y, sample_weight=w)
    target = np.zeros((len(MOLS), 1), np.float32)
    assert _held_out_rows(reg, target) <= set(range(12, 20))
    assert all(v > 0 for v in reg.loss_curve_)
    with pytest.raises(ValueError, match="1 of the 20 have a label and a positive weight"):
        MPNNRegressor(max_epochs=2, **MP).fit(MOLS, Y, sample_weight=np.eye(20)[3])


def test_max_epochs_0_with_early_stopping_keeps_the_initial_weights():
    reg = MPNNRegressor(max_epochs=0, **MP, random_state=0).fit(MOLS, Y)
    assert reg.n_iter_ == 0 and reg.validation_loss_curve_ is None
    assert np.isfinite(reg.predict(MOLS)).all()


def test_a_diverging_fit_raises_instead_of_predicting_nan():
    with pytest.raises(FloatingPointError, match="MPNNRegressor: the training loss became"):
        MPNNRegressor(max_epochs=3, lr=1e10, **MP, **PLAIN, random_state=0).fit(MOLS, Y)
    with pytest.raises(ValueError, match="too large to standardise"):
        MPNNRegressor(max_epochs=1, **MP).fit(MOLS, Y * 1e300)


def test_pandas_nullable_targets_with_missing_labels():
    import pandas as pd

    labels = pd.Series((Y > 0).astype(int), dtype="Int64")
    labels[[0, 5]] = pd.NA
    frame = pd.DataFrame({"a": labels, "b": pd.Series((Y > 1).astype(int), dtype="Int64")})
    clf = NeuralFingerprintClassifier(fp_length=8, conv_width=4, hidden_size=4, radius=1,
                                      max_epochs=1, batch_size=8, random_state=0)
    clf.fit(MOLS, frame)
    assert clf.classes_.tolist() == [0, 1]
    assert clf.predict_proba(MOLS).shape[0] == len(MOLS)
    reg = MPNNRegressor(max_epochs=1, **MP, random_state=0).fit(MOLS, frame.astype("Float64"))
    assert reg.predict(MOLS).shape == (len(MOLS), 2)


def test_directed_messages_fit_and_overfit_a_small_set():
    reg = MPNNRegressor(message="directed", max_epochs=80, lr=1e-2, random_state=0,
                        **dict(MP, hidden_size=16), **PLAIN).fit(MOLS, Y)
    assert hasattr(reg.module_.encoder, "directed") and reg.module_.encoder.directed
    mse = np.mean((reg.predict(MOLS) - Y) ** 2)
    assert mse < 0.1 * Y.var(), mse
    # a bond-less molecule and an invalid one
    out = MPNNRegressor(message="directed", max_epochs=1, errors="nan", **MP).fit(
        MOLS, Y).predict(["[Na+].[Cl-]", "C1CC", "C"])
    assert np.isfinite(out[[0, 2]]).all() and np.isnan(out[1])


def test_grover_fine_tuning_early_stopping_and_schedule():
    from sklearn_papers.chem import GroverRegressor

    tiny = dict(pretrained=None, hidden_size=8, n_heads=1, depth=2, ffn_hidden=8,
                batch_size=8, random_state=0, head="finetune")
    reg = GroverRegressor(max_epochs=40, lr=3e-2, early_stopping=True,
                          validation_fraction=0.25, n_iter_no_change=2, **tiny).fit(MOLS, Y)
    curve = reg.validation_loss_curve_
    assert len(curve) == reg.n_iter_ < 40
    assert reg.n_iter_ == int(np.argmin(curve)) + 1 + 2
    # the kept weights are the best epoch's: their held-out loss is the minimum
    from sklearn_papers.nn._skorch import seed_from_random_state

    seed = seed_from_random_state(0)
    valid = np.sort(np.random.RandomState(seed).permutation(len(MOLS))[:5])
    pred = reg.predict([MOLS[i] for i in valid])
    mse = np.mean(((pred - Y[valid]) / reg._y_std) ** 2)
    assert mse == pytest.approx(min(curve), rel=1e-4)
    assert GroverRegressor(max_epochs=1, **tiny).fit(MOLS, Y).validation_loss_curve_ is None
    # the regressor's default schedule is "warmup_decay"; the constant one works too
    assert GroverRegressor().lr_schedule == "warmup_decay"
    sched = GroverRegressor(max_epochs=2, lr_schedule="constant", **tiny).fit(MOLS, Y)
    assert np.isfinite(sched.predict(MOLS)).all()


def test_column_names_are_checked_at_predict():
    import pandas as pd

    reg = MPNNRegressor(max_epochs=1, **MP, random_state=0).fit(
        pd.DataFrame({"smiles": MOLS}), Y)
    assert reg.feature_names_in_.tolist() == ["smiles"]
    reg.predict(pd.DataFrame({"smiles": MOLS}))
    with pytest.raises(ValueError, match="feature names should match"):
        reg.predict(pd.DataFrame({"other": MOLS}))
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        reg.predict(MOLS)


def test_multitask_score_and_cross_validation_skip_missing_labels():
    from sklearn.model_selection import KFold, cross_val_score

    from sklearn_papers.metrics import masked_roc_auc_scorer

    Y2 = np.column_stack([Y > 0, Y > 1]).astype(float)
    Y2[[0, 3, 7], 0] = np.nan
    clf = NeuralFingerprintClassifier(fp_length=8, conv_width=4, hidden_size=4, radius=1,
                                      max_epochs=2, batch_size=8, random_state=0)
    clf.fit(MOLS, Y2)
    pred = clf.predict(MOLS)
    labelled = ~np.isnan(Y2[:, 0])
    expected = np.mean([np.mean(pred[labelled, 0] == Y2[labelled, 0]),
                        np.mean(pred[:, 1] == Y2[:, 1])])
    assert clf.score(MOLS, Y2) == pytest.approx(expected)
    scores = cross_val_score(clf, MOLS, Y2, cv=KFold(2), error_score="raise")
    assert np.isfinite(scores).all()
    auc = cross_val_score(clf, MOLS, Y2, cv=KFold(2), scoring=masked_roc_auc_scorer,
                          error_score="raise")
    assert ((0 <= auc) & (auc <= 1)).all()


def test_grover_early_stopping_labelled_rows_divergence_and_ignored_architecture():
    from sklearn_papers.chem import GroverFeaturizer, GroverRegressor

    y = np.c_[Y, -Y]
    y[::2] = np.nan  # rows without a label (NaN: missing, among several targets)
    reg = GroverRegressor(head="finetune", max_epochs=3, early_stopping=True,
                          validation_fraction=0.2, batch_size=8, random_state=0).fit(MOLS, y)
    assert all(v > 0 for v in reg.validation_loss_curve_)  # the held-out rows have labels
    with pytest.raises(FloatingPointError, match="training loss became"):
        GroverRegressor(head="finetune", max_epochs=3, lr=1e12, batch_size=8,
                        random_state=0).fit(MOLS, Y)
    with pytest.warns(UserWarning, match="hidden_size=128 ignored: the architecture comes"):
        GroverFeaturizer(hidden_size=128).fit(MOLS[:3])


def test_fingerprint_column_names_and_n_jobs():
    import pandas as pd

    from sklearn_papers.chem import CircularFingerprint

    fp = CircularFingerprint(n_bits=64).fit(pd.DataFrame({"smiles": MOLS}))
    assert fp.transform(pd.DataFrame({"smiles": MOLS})).shape == (len(MOLS), 64)
    with pytest.raises(ValueError, match="feature names should match"):
        fp.transform(pd.DataFrame({"other": MOLS}))
    assert CircularFingerprint(n_bits=64).transform(MOLS).shape == (len(MOLS), 64)  # unfitted
    with pytest.raises(ValueError, match="n_jobs"):
        CircularFingerprint(n_jobs=0).fit(MOLS)


def test_mpnn_defaults_reach_their_best_epoch_well_before_the_last():
    # the defaults (lr=2e-3, batch 32, patience 10) on the same 200 ESOL molecules as
    # below: the best held-out epoch comes early (29 of 50 here) and training stops 10
    # epochs after it
    from sklearn_papers.datasets import load_delaney

    X, y = load_delaney(return_X_y=True)
    rows = np.random.RandomState(0).permutation(len(X))[:200]
    X, y = np.asarray(X, dtype=object)[rows], np.asarray(y, dtype=float)[rows]
    reg = MPNNRegressor(random_state=0).fit(X, y)
    best = int(np.argmin(reg.validation_loss_curve_)) + 1
    assert reg.n_iter_ < reg.max_epochs == 50
    assert reg.n_iter_ == best + reg.n_iter_no_change
    assert best <= 0.8 * reg.max_epochs


def test_warmup_decay_hold_finishes_training_before_max_epochs():
    # the schedule that finishes its decay halfway, with lr=3e-3 and a patience of 10, on
    # 200 ESOL molecules (a narrower network than the default): the held-out loss levels
    # off within the run, so early stopping ends it n_iter_no_change epochs after the
    # best epoch, well before max_epochs (chemprop's "warmup_decay" at lr=1e-3 and batch 64
    # puts the best epoch of this fit at 47 of 50)
    from sklearn_papers.datasets import load_delaney

    X, y = load_delaney(return_X_y=True)
    rows = np.random.RandomState(0).permutation(len(X))[:200]
    X, y = np.asarray(X, dtype=object)[rows], np.asarray(y, dtype=float)[rows]
    reg = MPNNRegressor(hidden_size=64, lr=3e-3, batch_size=64,
                        lr_schedule="warmup_decay_hold", n_iter_no_change=10,
                        random_state=0).fit(X, y)
    best = int(np.argmin(reg.validation_loss_curve_)) + 1
    assert reg.n_iter_ < reg.max_epochs == 50
    assert reg.n_iter_ == best + reg.n_iter_no_change
    assert best <= 0.8 * reg.max_epochs


def test_warmup_decay_hold_reaches_its_floor_halfway():
    # per batch: lr / 10 at half of max_epochs, then held (10 molecules, batch 5: 2 steps
    # an epoch, 6 epochs: the decay ends after epoch 3)
    from sklearn_papers.nn._skorch import training_callbacks

    est = MPNNRegressor(max_epochs=6, batch_size=5, lr_schedule="warmup_decay_hold",
                        early_stopping=False)
    (_, callback), = [c for c in training_callbacks(est, 10, 0)["callbacks"]
                      if c[0] == "lr_schedule"]
    factor = callback.kwargs["lr_lambda"]
    values = [factor(step) for step in range(13)]
    assert values[0] == pytest.approx(0.1) and values[4] == pytest.approx(1.0)
    assert np.all(np.diff(values[4:7]) < 0)
    np.testing.assert_allclose(values[6:], 0.1)
    reg = MPNNRegressor(max_epochs=4, lr=1e-2, lr_schedule="warmup_decay_hold",
                        random_state=0, early_stopping=False, **MP).fit(MOLS, Y)
    assert reg.net_.optimizer_.param_groups[0]["lr"] == pytest.approx(1e-3)


def test_a_run_ending_at_max_epochs_while_still_improving_warns():
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    X = np.array(MOLS * 4, dtype=object)
    y = np.arange(len(X), dtype=float) % 3
    with pytest.warns(ConvergenceWarning, match=r"MPNNRegressor: training ran all "
                                                r"max_epochs=2 epochs .*best epoch [12] of 2"):
        MPNNRegressor(max_epochs=2, hidden_size=8, random_state=0).fit(X, y)
    # stopped by early stopping, or without a held-out split: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        MPNNRegressor(max_epochs=2, hidden_size=8, early_stopping=False,
                      random_state=0).fit(X, y)


def test_a_patience_longer_than_the_run_warns_only_for_a_best_epoch_near_the_end():
    """With ``n_iter_no_change >= max_epochs`` nothing can stop the run (the whole held-out
    curve is watched): the warning needs the best epoch in the last tenth of the epochs."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from sklearn_papers.nn._skorch import StillImprovingWarning

    class Net:
        max_epochs = 20

    def run(best_epoch, patience):
        net = Net()
        net.history = [{"valid_loss_best": i + 1 == best_epoch} for i in range(20)]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            StillImprovingWarning("Est", patience).on_train_end(net)
        return [w for w in caught if issubclass(w.category, ConvergenceWarning)]

    assert not run(best_epoch=15, patience=21)    # 5 epochs without improvement: settled
    assert run(best_epoch=19, patience=21)        # in the last tenth (epochs 19-20)
    assert run(best_epoch=15, patience=10)        # within the patience: early stopping
    assert not run(best_epoch=10, patience=10)    # would have stopped at epoch 20


@pytest.mark.parametrize("n, batch_size", [(902, 100), (200, 50), (7, 10), (101, 100), (1, 4)])
def test_even_batches_cover_every_row_once_in_near_equal_sizes(n, batch_size):
    from sklearn_papers.nn._skorch import EvenBatchSampler

    sampler = EvenBatchSampler(n, batch_size, shuffle=True,
                               generator=torch.Generator().manual_seed(0))
    batches = list(sampler)
    sizes = [len(b) for b in batches]
    assert len(batches) == len(sampler) == -(-n // batch_size)
    assert max(sizes) <= batch_size and max(sizes) - min(sizes) <= 1
    assert sorted(i for b in batches for i in b) == list(range(n))
    assert list(EvenBatchSampler(0, batch_size, shuffle=True)) == []


def test_even_batches_draw_a_new_order_each_pass_from_the_generator():
    from sklearn_papers.nn._skorch import EvenBatchLoader

    def passes(seed):
        loader = EvenBatchLoader(list(range(30)), batch_size=8, shuffle=True,
                                 generator=torch.Generator().manual_seed(seed))
        return [[b.tolist() for b in loader] for _ in range(2)]

    first, second = passes(3)
    assert first != second and passes(3) == [first, second]
    fixed = EvenBatchLoader(list(range(30)), batch_size=8, shuffle=False)
    assert [b.tolist() for b in fixed][0] == list(range(8))


def test_neural_fingerprint_trains_on_even_batches_unless_told_not_to():
    from sklearn_papers.chem import NeuralFingerprintRegressor
    from sklearn_papers.nn._skorch import EvenBatchLoader

    params = dict(fp_length=8, conv_width=4, hidden_size=4, radius=2, max_epochs=2,
                  batch_size=8, random_state=0)
    even = NeuralFingerprintRegressor(**params).fit(MOLS, Y)  # 20 molecules: 7 + 7 + 6
    assert even.net_.iterator_train is EvenBatchLoader
    plain = NeuralFingerprintRegressor(**params, even_batches=False).fit(MOLS, Y)
    assert plain.net_.iterator_train is torch.utils.data.DataLoader  # 8 + 8 + 4
    assert not np.allclose(even.predict(MOLS), plain.predict(MOLS))
    pickle.loads(pickle.dumps(even)).predict(MOLS[:2])
