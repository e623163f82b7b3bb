"""The built distributions install and work without the checkout.

``python -m build`` writes an sdist, then a wheel built from that sdist (so a file missing
from the sdist is missing from the wheel too). The wheel is installed with ``--no-deps``
into a new virtual environment whose only other path is this environment's
``site-packages`` (added by a ``.pth`` line, so the dependencies are the installed ones and
this checkout's editable install is not loaded). A smoke script then runs in that
environment from an empty folder: it checks that ``sklearn_papers`` is imported from the new
environment, loads a bundled data set and both shipped GROVER checkpoints, fits one small
estimator per family and runs the ``sklearn-papers`` command.
"""

import os
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SMOKE = r'''
import os
import sys

import numpy as np
import torch

torch.set_num_threads(1)
import sklearn_papers

site = os.path.realpath(sys.argv[1])
assert os.path.realpath(sklearn_papers.__file__).startswith(site + os.sep), sklearn_papers.__file__

from sklearn.datasets import load_digits

from sklearn_papers.chem import CircularFingerprint, GroverFeaturizer, NeuralFingerprintRegressor
from sklearn_papers.continual import ProgressiveNetworkClassifier
from sklearn_papers.contrastive import SupConEmbedder
from sklearn_papers.datasets import load_delaney, make_scenes
from sklearn_papers.decomposition import NMF
from sklearn_papers.estimation import LogPartitionEstimator
from sklearn_papers.generative import DeePSiMAutoencoder
from sklearn_papers.metrics import mutual_info_gap
from sklearn_papers.rl import A2C, GridWorld
from sklearn_papers.vision import InstanceSegmenter

data = load_delaney()
assert data.data.shape[0] == 1128 and data.DESCR, data.data.shape
X, y = data.data[:24], data.target[:24]
assert CircularFingerprint(n_bits=64).fit_transform(X).shape == (24, 64)
for checkpoint in ("moses-small", "moses-176k"):
    grover = GroverFeaturizer(pretrained=checkpoint).fit(X[:4])
    assert np.isfinite(grover.transform(X[:4])).all(), checkpoint
NeuralFingerprintRegressor(max_epochs=1, random_state=0).fit(X, y).predict(X)

digits, labels = load_digits(return_X_y=True)
digits, labels = digits[:120], labels[:120]
NMF(n_components=2, max_iter=5, random_state=0).fit_transform(digits)
SupConEmbedder(max_epochs=1, random_state=0).fit(digits, labels).transform(digits)
clf = ProgressiveNetworkClassifier(max_epochs=1, random_state=0)
clf.partial_fit(digits[labels < 2], labels[labels < 2], task=0)
DeePSiMAutoencoder(n_components=2, image_shape=(8, 8), max_epochs=1,
                   random_state=0).fit(digits).transform(digits)
scenes = make_scenes(4, image_size=32, n_classes=2, max_objects=2, random_state=0)
InstanceSegmenter(max_epochs=1, random_state=0).fit(
    scenes.images, scenes.instance_maps, scenes.semantic_maps).predict(scenes.images[:1])
est = LogPartitionEstimator(lambda x: 0.5 * (x ** 2).sum(1), n_features=2,
                            fit_proposal=False, n_estimates=200, random_state=0).fit()
assert np.isfinite(est.log_partition_)
factors = np.random.default_rng(0).integers(0, 4, size=(100, 2))
assert mutual_info_gap(factors, factors + 0.1) > 0.5
A2C(lifetime=5, random_state=0).fit(GridWorld())
print("smoke ok", sklearn_papers.__version__)
'''


def _site_packages(venv):
    paths = sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})
    return Path(paths["purelib"])


def test_built_wheel_installs_and_runs_without_the_checkout(tmp_path):
    pytest.importorskip("build")
    import sklearn_papers

    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)],
                   check=True, capture_output=True)
    version = sklearn_papers.__version__
    wheel = dist / f"sklearn_papers-{version}-py3-none-any.whl"
    sdist = dist / f"sklearn_papers-{version}.tar.gz"
    assert wheel.exists() and sdist.exists(), sorted(p.name for p in dist.iterdir())

    shipped = ["sklearn_papers/datasets/data/delaney.csv.gz",
               "sklearn_papers/datasets/descr/delaney.rst",
               "sklearn_papers/chem/_pretrained/moses-small/weights.pt",
               "sklearn_papers/chem/_pretrained/moses-176k/config.json"]
    with tarfile.open(sdist) as tar:
        in_sdist = {name.partition("/")[2] for name in tar.getnames()}
    with zipfile.ZipFile(wheel) as zf:
        in_wheel = set(zf.namelist())
    for name in shipped:
        assert name in in_sdist, f"{name} missing from the sdist"
        assert name in in_wheel, f"{name} missing from the wheel"
    assert not any(name.startswith("tests/") for name in in_wheel)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = _site_packages(venv)
    # a path line, not a site dir: the .pth files there (this checkout's editable
    # install among them) are not run
    (site / "_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                    "--quiet", "--no-deps", "--no-index", str(wheel)], check=True)
    installed = site / "sklearn_papers"
    assert (installed / "chem" / "_pretrained" / "moses-small" / "weights.pt").exists()

    run_dir = tmp_path / "empty"
    run_dir.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["OMP_NUM_THREADS"] = "1"
    script = run_dir / "smoke.py"
    script.write_text(SMOKE)
    out = subprocess.run([str(python), str(script), str(installed)], cwd=run_dir, env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert f"smoke ok {version}" in out.stdout
    cli = subprocess.run([str(venv / "bin" / "sklearn-papers"), "reproduce", "--list"],
                         cwd=run_dir, env=env, capture_output=True, text=True)
    assert cli.returncode == 0 and "duvenaud" in cli.stdout, cli.stderr[-3000:]
