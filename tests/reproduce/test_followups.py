"""The follow-up experiments of the failed claims run end to end at a tiny scale."""

import numpy as np

from sklearn_papers.reproduce import Result, RunContext


def _ctx(tmp_path, name):
    return RunContext(quick=True, out_dir=tmp_path, verbose=0, experiment=name)


def test_group_norm_followup_reports_every_arm(tmp_path, monkeypatch):
    from sklearn_papers.reproduce import group_norm

    tiny = dict(n_train=12, n_test=9, steps={2: 3, 4: 2}, seeds=1, batch_sizes=(2, 4),
                channels=(4, 8))
    monkeypatch.setattr(group_norm, "PROTOCOL_FOLLOWUP", group_norm.PROTOCOL_FOLLOWUP.but(**tiny))
    result = Result()
    md, err = group_norm.followup(_ctx(tmp_path, "group_norm"), result)
    md = result.fill(md)
    assert [v.rule for v in result.verdicts] == ["paired interval"] * len(result.verdicts)
    assert result.find("Group norm at least as good as batch norm at batch 2").arms == [
        "group", "batch: running"]
    arms = ("batch: running", "batch: precise", "batch: test batches", "group")
    assert set(err) == {(a, b) for a in arms for b in (2, 4)}
    assert all(0 <= e[0] <= 100 for e in err.values())
    assert "| batch: precise |" in md and "excess" in md


def test_precise_statistics_are_the_training_set_population():
    import torch

    from sklearn_papers.nn._encoders import precise_batch_norm
    from sklearn_papers.reproduce import group_norm

    cfg = dict(n_train=16, n_test=8, steps={2: 2}, channels=(4,))
    X_tr, y_tr, _, _ = group_norm._shapes_task(cfg, 0)
    model = group_norm._train_deep("batch", 2, 0, cfg, X_tr, y_tr)
    before = model.features[1].running_mean.clone()
    # 16 rows in batches of 5: the last row is left out, the 3 full batches weigh the same
    precise = precise_batch_norm(model, X_tr, batch_size=5)
    with torch.no_grad():
        out = model.features[0](torch.as_tensor(X_tr[:15]).reshape(-1, 1, 32, 32))
    np.testing.assert_allclose(precise.features[1].running_mean.numpy(),
                               out.mean(dim=(0, 2, 3)).numpy(), rtol=1e-4, atol=1e-6)
    assert torch.equal(model.features[1].running_mean, before)  # the original is untouched


def test_sumo_followup_compares_at_equal_expected_samples(tmp_path):
    from sklearn_papers.reproduce import sumo

    result = Result()
    md = sumo._followup(_ctx(tmp_path, "sumo"), result,
                        settings=dict(ms=(1, 2), seeds=[0], epochs=1, k_eval=5))
    md = result.fill(md)
    shrinks, = result.verdicts
    assert shrinks.claim == "SUMO's deficit shrinks from m = 1 to m = 2"
    assert shrinks.outcome == "inconclusive" and shrinks.n == 1  # one seed
    assert "| 1 | 6 |" in md and "| 2 | 7 |" in md  # IWAE k = round(m + E[K])
    assert "SUMO - IWAE" in md


def test_supcon_followup_runs_both_losses_per_view_count(tmp_path, monkeypatch):
    from sklearn_papers.reproduce import supcon
    from sklearn_papers.reproduce._digits import load_split

    monkeypatch.setattr(supcon, "PROTOCOL_FOLLOWUP",
                        supcon.PROTOCOL_FOLLOWUP.but(seeds=1, epochs=1, views=(2, 3)))
    X_tr, X_te, y_tr, y_te = load_split(0)
    result = Result()
    md, acc = supcon.followup(_ctx(tmp_path, "supcon"), result, X_tr[:200], y_tr[:200], X_te[:100],
                              y_te[:100])
    assert set(acc) == {(v, var) for v in (2, 3) for var in ("out", "in")}
    assert [r["views per image"] for r in result.tables[0].rows] == [2, 3]
    assert "L_out - L_in, probe (points)" in result.tables[0].columns
    every = result.find("L_out beats L_in at every number of views")
    assert every.rule == "all of" and len(every.parts) == 2
    assert result.find("L_out - L_in grows from 2 to 3 views").arms == ["3 views", "2 views"]


def test_molecule_protocols_pin_the_training_settings_they_were_written_with():
    from sklearn_papers.chem import MPNNRegressor
    from sklearn_papers.reproduce._pinned import PINNED_TRAINING, pinned

    params = pinned(MPNNRegressor, {"hidden_size": 8})
    est = MPNNRegressor(**params)
    for key, value in PINNED_TRAINING.items():
        if key in MPNNRegressor._get_param_names():
            assert est.get_params()[key] == value
    assert params["hidden_size"] == 8
    assert pinned(MPNNRegressor, {"lr_schedule": "x"})["lr_schedule"] == "x"  # caller wins
