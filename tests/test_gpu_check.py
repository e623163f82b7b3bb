"""The GPU check script, run CPU against CPU: it runs, and deterministic fits agree."""

import importlib.util
from pathlib import Path

import pytest


def _script():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_check.py"
    spec = importlib.util.spec_from_file_location("gpu_check", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["NMF", "A2C"])
def test_cpu_against_cpu_gives_identical_results(name):
    rows = _script().check("cpu", only=[name], out=lambda line: None)
    assert [r["estimator"] for r in rows] == [name]
    row = rows[0]
    assert row["ok"], row
    assert row["CPU score"] == row["cpu score"]
    assert row["output rel. diff"] == 0 or row["output rel. diff"] != row["output rel. diff"]


def test_without_cuda_it_says_how_to_run_it(capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert _script().main(["--device", "cuda"]) == 2
    assert "no CUDA device" in capsys.readouterr().err


def test_record_writes_a_benchmark_result(tmp_path):
    import json

    module = _script()
    rows = module.check("cpu", only=["NMF"], out=lambda line: None)
    rows.append({"estimator": "Broken", "ok": False, "error": "RuntimeError: no kernel"})
    path = module._record(rows, "cpu", "cpu", ["--device", "cpu"], results=tmp_path)
    data = json.loads(path.read_text())
    assert data["name"] == "gpu_check" and len(data["rows"]) == 1
    assert data["rows"][0]["what"].startswith("NMF: fit (score CPU")
    assert data["rows"][0]["unit"] == "s" and data["rows"][0]["better"] == "lower"
    assert "Not ok: Broken (RuntimeError: no kernel)" in data["notes"]


@pytest.mark.parametrize("argv, match", [
    (["--device", "bogus"], "--device: device='bogus' is not a torch device"),
    (["--device", "meta"], "'meta' device"),
    (["--device", "cpu", "--only", "Bogus"], "--only: no public estimator named Bogus"),
    (["--device", "cpu", "--only", "RDKitDescriptors"], "RDKitDescriptors has no device"),
])
def test_a_bad_device_or_estimator_name_stops_before_any_fit(argv, match, capsys):
    # a misspelt --only name checked nothing and reported "0 of 0 estimators ok", exit 0
    assert _script().main(argv) == 2
    assert match in capsys.readouterr().err
