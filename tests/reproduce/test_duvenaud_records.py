"""Text records of the duvenaud search: written, reused, refused on other settings, and the
guard that tells when the code computing a part changes its results."""

import json

import numpy as np
import pytest

from sklearn_papers.datasets import load_delaney
from sklearn_papers.reproduce import RunContext
from sklearn_papers.reproduce._duvenaud_neural import NEURAL_SPECS
from sklearn_papers.reproduce._records import (
    read_record,
    record_path,
    records_note,
    to_json,
    write_record,
)
from sklearn_papers.reproduce._duvenaud_search import (
    MODEL_SPECS,
    DatasetData,
    ModelSpec,
    _search_part,
    search_rows,
)


def _sample_constant(rng, quick):
    return {"c": float(rng.normal())}


def _fit_constant(params, data, train, others, seed):
    return [np.full(len(idx), params["c"]) for idx in others]


_CONSTANT = ModelSpec("const", "constant", _sample_constant, _fit_constant, "c ~ N(0, 1)")


def test_search_rows_writes_text_records_and_a_later_run_reuses_them(tmp_path):
    y = np.random.default_rng(0).normal(size=40)
    data = DatasetData("toy", np.array(["C"] * 40, dtype=object), y)
    records = tmp_path / "records"
    ctx = RunContext(quick=False, out_dir=tmp_path / "a", verbose=0, experiment="duvenaud",
                     records_dir=records)
    found = search_rows(ctx, [(data, _CONSTANT, 3)], n_jobs=1)
    assert len(ctx.computed) == 15 and not ctx.reused
    files = sorted(records.rglob("*.json"))
    assert len(files) == 15
    record = json.loads(record_path(records, "toy/const/fold=0/draw=0").read_text())
    assert set(record) >= {"key", "params", "value", "created", "commit", "cpu_seconds",
                           "device", "versions"}
    assert len(record["value"]) == 2  # validation MSE, test MSE: scores, not predictions

    # another output folder and no --resume: the records are reused all the same
    again = RunContext(quick=False, out_dir=tmp_path / "b", verbose=0,
                       experiment="duvenaud", records_dir=records)
    assert search_rows(again, [(data, _CONSTANT, 3)], n_jobs=2) == found
    assert again.computed == [] and len(again.reused) == 15
    assert "15 search fits are kept as text records" in records_note(again.records, "search fits")


def test_a_record_is_not_reused_under_another_code_version(tmp_path):
    y = np.arange(30.0)
    data = DatasetData("toy", np.array(["C"] * 30, dtype=object), y)
    records = tmp_path / "records"
    ctx = RunContext(quick=False, out_dir=tmp_path, verbose=0, records_dir=records)
    search_rows(ctx, [(data, _CONSTANT, 1)], n_jobs=1)
    bumped = ModelSpec("const", "constant", _sample_constant, _fit_constant, "c",
                       code_version=2)
    ctx = RunContext(quick=False, out_dir=tmp_path, verbose=0, records_dir=records)
    search_rows(ctx, [(data, bumped, 1)], n_jobs=1)
    assert ctx.reused == [] and len(ctx.computed) == 5


def test_records_round_trip_and_refuse_objects(tmp_path):
    params = [("alpha", 0.1), ("n_bits", 64)]
    write_record(tmp_path, "a/b", params, (np.float64(0.25), np.array([1.0, np.nan])))
    record = read_record(tmp_path, "a/b", params)
    assert record["value"][0] == 0.25 and np.isnan(record["value"][1][1])
    assert read_record(tmp_path, "a/b", [("alpha", 0.2), ("n_bits", 64)]) is None
    (tmp_path / "a" / "b.json").write_text("{not json")
    assert read_record(tmp_path, "a/b", params) is None
    with pytest.raises(TypeError, match="scores, not objects"):
        to_json(object())


# Validation and test MSE of one small part per row of the table: 200 Delaney molecules,
# fold-like index sets, fixed settings. A change in the code that computes a part (the fit
# function or the estimator it trains) that moves these numbers must bump that row's
# ``ModelSpec.code_version``, so that recorded parts computed by the old code are not
# mixed with new ones; then update the numbers here. The tolerance admits the
# floating-point differences between hosts (float32 training for the neural rows).
_GUARD_PARAMS = {
    "ecfp_linear": {"radius": 2, "n_bits": 256, "alpha": 1.0},
    "ecfp_mlp": {"radius": 2, "n_bits": 64, "alpha": 1e-3, "hidden": 50, "lr": 1e-2,
                 "max_iter": 10},
    "nf_linear": {"fp_length": 16, "radius": 2, "conv_width": 10, "lr": 1e-2, "alpha": 0.01,
                  "max_epochs": 3, "hidden_size": 0},
    "nf_mlp": {"fp_length": 16, "radius": 2, "conv_width": 10, "lr": 1e-2, "alpha": 0.01,
               "max_epochs": 3, "hidden_size": 50},
}
_GUARD_VALUES = {
    # (validation MSE, test MSE), code_version
    "ecfp_linear": ((2.7894823733654794, 2.2857815583892984), 1),
    "ecfp_mlp": ((4.56241102672588, 4.380167697936429), 1),
    "nf_linear": ((5.622848774288945, 4.254922591654067), 1),
    "nf_mlp": ((11.118200832518113, 10.15439554773953), 1),
}


def _guard_part(spec):
    smiles, y = load_delaney(return_X_y=True)
    data = DatasetData("solubility", smiles[:200], y[:200])
    idx = np.arange(200)
    train, val, test = idx[:120], idx[120:160], idx[160:]
    params = _GUARD_PARAMS[spec.key]
    part_data = data if spec.part_data is None else spec.part_data(data, params)
    return _search_part(spec.fit_predict, params, part_data, train, val, test, seed=3)


@pytest.mark.parametrize("spec", [*MODEL_SPECS, *NEURAL_SPECS], ids=lambda s: s.key)
def test_a_small_part_of_each_row_gives_the_recorded_numbers(spec):
    expected, version = _GUARD_VALUES[spec.key]
    got = _guard_part(spec)
    assert spec.code_version == version, (
        f"{spec.key}: code_version is {spec.code_version}, the guard numbers are of version "
        f"{version}: recompute them with this code and update _GUARD_VALUES")
    np.testing.assert_allclose(
        got, expected, rtol=1e-3,
        err_msg=f"the code computing a {spec.key} part changed its results: bump "
                f"ModelSpec.code_version of that row (recorded parts of the old code are then "
                f"recomputed) and update _GUARD_VALUES")


def test_records_note_counts_commits_most_first_and_sums_cpu_time():
    records = [{"commit": "b", "cpu_seconds": 3600.0}, {"commit": "a", "cpu_seconds": 1800.0},
               {"commit": "b", "cpu_seconds": None}, {}]
    note = records_note(records, "parts")
    assert note.startswith("The 4 parts are kept as text records")
    assert "commit(s) `b` (2), `a` (1), `unknown` (1), 1.5 CPU hours" in note
