"""Fit and use every torch estimator on a GPU and on the CPU; compare results and speed.

For each public estimator with a ``device`` parameter, the same small configuration (the
common tests' settings, on somewhat more data) is fitted twice with the same
``random_state``: on the CPU and on ``--device`` (default ``cuda``). The script prints, per
estimator, the held-out score on each device (``score`` where the estimator has one, else
the mean of its output), the largest difference between the two devices' outputs relative
to the outputs' scale, whether that is within the stated tolerance, and the fit time on
each device with their ratio (CPU / device: above 1 means the device is faster; one
untimed CPU fit first takes the imports and first-call costs out of the timings).

Tolerances. Training runs in float32 and GPU kernels round differently from CPU kernels;
after a few optimiser steps the two fits are different models of the same quality, not
the same numbers. The check therefore asks (1) the outputs have the same shape and are
finite, (2) the two scores differ by at most ``SCORE_TOLERANCE`` times
``max(1, |CPU score|)`` (an absolute 0.1 for accuracies and R^2, relative for
log-likelihoods), and it reports the output difference without judging it. An estimator that fails on the device is a row with its error.

Run on a machine with a GPU::

    python benchmarks/gpu_check.py --device cuda --record

``--record`` writes ``benchmarks/results/gpu_check.json`` (the Benchmarks page "gpu_check"):
one row per estimator that passed, the device's fit time against the CPU's on the same
machine, with both scores in the row's text; estimators that failed are named in the notes.

``--device cpu`` runs the same comparison CPU against CPU: every difference must then be
0 (the fits are deterministic), which checks the script itself on any machine.
"""

import argparse
import inspect
import sys
import time
import traceback
from pathlib import Path

import numpy as np

#: Largest difference between the two devices' held-out scores that passes, relative to
#: the score's size (at least 1: scores in [0, 1] get an absolute 0.1).
SCORE_TOLERANCE = 0.1

_ROOT = Path(__file__).resolve().parents[1]


def _registries():
    sys.path.insert(0, str(_ROOT))
    from tests._estimators import CUSTOM, CUSTOM_DATA, MOLECULE, NUMERIC

    return NUMERIC, MOLECULE, CUSTOM, CUSTOM_DATA


def _numeric_data(est):
    from sklearn.base import is_regressor
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    if "n_features" in est.get_params():  # an estimator of a fixed input width
        X = X[:, :est.n_features]
    if is_regressor(est):
        y = X.mean(axis=1)
    return train_test_split(X[:600], y[:600], test_size=0.3, random_state=0)


def _molecule_data(est):
    from sklearn.base import is_classifier

    from sklearn_papers.datasets import load_delaney

    X, y = load_delaney(return_X_y=True)
    X, y = X[:240], y[:240]
    if is_classifier(est):
        y = (y > np.median(y)).astype(int)
    return X[:180], X[180:], y[:180], y[180:]


def _as_array(value):
    """``value`` as a float array, or None when it is not numbers (agents, lists of
    detections)."""
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None


def _output(est, X):
    for method in ("predict_proba", "predict", "transform", "score_samples"):
        if hasattr(est, method):
            try:
                return _as_array(getattr(est, method)(X))
            except (AttributeError, NotImplementedError, TypeError):
                continue
    return None


def _fit_and_use(cls, params, device, data):
    import torch

    est = cls(**{**params, "device": device})
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    start = time.perf_counter()
    if "custom" in data:
        args, kwargs = data["custom"]["fit"]
        est.fit(*args, **kwargs)
    else:
        X_train, _, y_train, _ = data["split"]
        est.fit(X_train) if data.get("unsupervised") else est.fit(X_train, y_train)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    if "custom" in data:
        methods = data["custom"]["methods"]
        if "score" in methods:
            args, kwargs = methods["score"]
            score = float(est.score(*args, **kwargs))
        else:
            score = float("nan")
        name = next(m for m in methods if m != "score")
        args, kwargs = methods[name]
        out = _as_array(getattr(est, name)(*args, **kwargs))
    else:
        _, X_test, _, y_test = data["split"]
        out = _output(est, X_test)
        try:
            score = float(est.score(X_test, y_test))
        except (AttributeError, TypeError, ValueError):
            score = float(np.mean(out)) if out is not None else float("nan")
    return score, out, seconds


def _cases(only):
    from sklearn_papers.utils.discovery import all_estimators

    numeric, molecule, custom, custom_data = _registries()
    classes = dict(all_estimators())
    for name, cls in classes.items():
        if "device" not in inspect.signature(cls).parameters or (only and name not in only):
            continue
        if name in numeric:
            yield name, cls, numeric[name], {"split": _numeric_data(cls(**numeric[name]))}
        elif name in molecule:
            yield name, cls, molecule[name], {"split": _molecule_data(cls(**molecule[name]))}
        elif name in custom:
            yield name, cls, custom[name], {"custom": custom_data[name]()}


def _check_only(only):
    """What is wrong with the ``--only`` names (None when each names an estimator the
    check runs): a misspelt name would otherwise check nothing and pass."""
    from sklearn_papers.utils.discovery import all_estimators

    if not only:
        return None
    classes = dict(all_estimators())
    checked = sorted(n for n, c in classes.items()
                     if "device" in inspect.signature(c).parameters)
    unknown = [n for n in only if n not in classes]
    if unknown:
        return (f"no public estimator named {', '.join(unknown)}; the check runs "
                f"{', '.join(checked)}")
    no_device = [n for n in only if n not in checked]
    if no_device:
        return (f"{', '.join(no_device)} has no device parameter (it never runs on a GPU), "
                f"so there is nothing to compare; the check runs {', '.join(checked)}")
    return None


def check(device="cuda", only=None, out=print):
    """Run the comparison; return the rows (one dict per estimator)."""
    rows = []
    for name, cls, params, data in _cases(only):
        row = {"estimator": name}
        try:
            _fit_and_use(cls, params, "cpu", data)  # warm-up: imports, first-call costs
            cpu_score, cpu_out, cpu_s = _fit_and_use(cls, params, "cpu", data)
            dev_score, dev_out, dev_s = _fit_and_use(cls, params, device, data)
            if cpu_out is not None and dev_out is not None:
                same_shape = cpu_out.shape == dev_out.shape
                finite = bool(np.all(np.isfinite(dev_out)))
                scale = max(float(np.max(np.abs(cpu_out))), 1e-12) if cpu_out.size else 1.0
                rel = (float(np.max(np.abs(cpu_out - dev_out))) / scale
                       if same_shape and cpu_out.size else float("nan"))
            else:
                same_shape, finite, rel = True, True, float("nan")
            gap = abs(cpu_score - dev_score)
            bound = SCORE_TOLERANCE * max(1.0, abs(cpu_score))
            ok = same_shape and finite and (np.isnan(gap) or gap <= bound)
            row.update({"CPU score": cpu_score, f"{device} score": dev_score,
                        "output rel. diff": rel, "ok": ok, "CPU fit s": cpu_s,
                        f"{device} fit s": dev_s, "CPU / device": cpu_s / max(dev_s, 1e-9)})
        except Exception as exc:  # noqa: BLE001 - one failing estimator is a row
            row.update({"ok": False, "error": f"{type(exc).__name__}: {exc}"})
            traceback.print_exc(file=sys.stderr)
        rows.append(row)
        out(_format_row(row, device))
    return rows


def _format_row(row, device):
    if "error" in row:
        return f"{row['estimator']:30s} FAILED {row['error'][:200]}"
    return (f"{row['estimator']:30s} score CPU {row['CPU score']:9.4f} {device} "
            f"{row[f'{device} score']:9.4f}  output rel. diff {row['output rel. diff']:.2e}  "
            f"{'ok' if row['ok'] else 'NOT OK'}  fit CPU {row['CPU fit s']:7.2f} s  "
            f"{device} {row[f'{device} fit s']:7.2f} s  ratio {row['CPU / device']:6.2f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", help="device to compare with the CPU")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these estimators")
    parser.add_argument("--record", action="store_true",
                        help="write benchmarks/results/gpu_check.json for the docs")
    args = parser.parse_args(argv)
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("gpu_check: torch sees no CUDA device (torch.cuda.is_available() is False); "
              "run it on a machine with a GPU and a CUDA build of torch, or with --device cpu "
              "to check the script itself", file=sys.stderr)
        return 2
    from sklearn_papers.nn._skorch import check_device

    try:
        check_device(args.device)
    except ValueError as exc:
        print(f"gpu_check: --device: {exc}", file=sys.stderr)
        return 2
    problem = _check_only(args.only)
    if problem:
        print(f"gpu_check: --only: {problem}", file=sys.stderr)
        return 2
    device_name = args.device
    if args.device.startswith("cuda"):
        device_name = f"{torch.cuda.get_device_name(0)} (torch {torch.__version__})"
        print(f"device: {device_name}")
    print(f"score tolerance: {SCORE_TOLERANCE} x max(1, |CPU score|); ratio = CPU fit time / "
          f"{args.device} fit time")
    rows = check(args.device, args.only)
    bad = [r["estimator"] for r in rows if not r["ok"]]
    print(f"{len(rows) - len(bad)} of {len(rows)} estimators ok" +
          (f"; not ok: {', '.join(bad)}" if bad else ""))
    if args.record:
        _record(rows, args.device, device_name, argv)
    return 1 if bad else 0


def _record(rows, device, device_name, argv, results=None):
    """Write the rows as the ``gpu_check`` benchmark result (device fit time against the
    CPU's, both on the machine that ran the script)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _record import record

    def scores(row):
        return (f"score CPU {row['CPU score']:.4g}, {device} {row[f'{device} score']:.4g}; "
                f"outputs differ by {row['output rel. diff']:.1e} of their scale")

    passed = [r for r in rows if r["ok"]]
    failed = [r for r in rows if not r["ok"]]
    notes = (f"Device: {device_name}. Ours: the fit on {device}; peer: the same fit on the "
             f"same machine's CPU (ratio below 1: the device is faster). Each fit is the "
             f"small configuration of the common tests with the same random_state; a row "
             f"passes when the two held-out scores differ by at most {SCORE_TOLERANCE} x "
             f"max(1, |CPU score|) and the device's outputs are finite.")
    if failed:
        notes += " Not ok: " + "; ".join(
            f"{r['estimator']} ({(r['error'] if 'error' in r else scores(r))[:160]})"
            for r in failed) + "."
    rows = [{"what": f"{r['estimator']}: fit ({scores(r)})",
             "ours": max(r[f"{device} fit s"], 1e-6), "peer": max(r["CPU fit s"], 1e-6),
             "unit": "s", "better": "lower"} for r in passed]
    return record("gpu_check", title=f"Every torch estimator fitted on {device} and on the CPU",
                  peer="the same fit on the CPU", argv=argv, notes=notes, rows=rows,
                  results=results)


if __name__ == "__main__":
    raise SystemExit(main())
