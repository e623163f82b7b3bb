"""Every gallery example runs to its end, with training shortened.

The docs build runs every example at its own size (``make docs``, about half a minute of
CPU each). This test runs each ``examples/plot_*.py`` as a script in the test process, with
matplotlib's non-interactive backend, after capping the training parameters of every
estimator of the package (``SHORT``): every line of the example runs, every plot is drawn,
only the numbers are those of a shorter fit. An example that stops running fails here, not
in a reader's hands.
"""

import functools
import inspect
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("plot_*.py"))

# parameter -> the most an example may ask for here
SHORT = {"max_epochs": 1, "max_iter": 5, "generator_steps": 5, "max_meta_steps": 2,
         "n_estimates": 2000, "lifetime": 20}


def _estimator_classes():
    import importlib

    import sklearn_papers

    classes = set()
    for family in ("chem", "decomposition", "contrastive", "estimation", "continual",
                   "generative", "vision", "rl"):
        module = importlib.import_module(f"sklearn_papers.{family}")
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.isclass(obj) and hasattr(obj, "get_params"):
                classes.add(obj)
    assert classes, sklearn_papers.__file__
    return classes


def _shortened(init):
    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        for name, cap in SHORT.items():
            value = getattr(self, name, None)
            if isinstance(value, int) and not isinstance(value, bool) and value > cap:
                setattr(self, name, cap)

    return __init__


@pytest.fixture
def short_training(monkeypatch):
    for cls in _estimator_classes():
        if any(p in inspect.signature(cls).parameters for p in SHORT):
            monkeypatch.setattr(cls, "__init__", _shortened(cls.__init__))


def test_shortening_keeps_the_estimator_api(short_training):
    from sklearn.base import clone

    from sklearn_papers.decomposition import NMF

    est = NMF(n_components=2, max_iter=500)
    assert est.max_iter == SHORT["max_iter"] and est.n_components == 2
    assert clone(est).get_params()["max_iter"] == SHORT["max_iter"]


def test_there_are_examples():
    assert len(EXAMPLES) >= 10


# the two whose work is not training (featurizing every fold; a full-size photograph),
# about half of this module's time together
SLOW = {"plot_ecfp", "plot_instance_segmentation_coins"}


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.slow) if p.stem in SLOW
                                  else p for p in EXAMPLES], ids=lambda p: p.stem)
def test_example_runs(path, short_training, tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(plt, "show", lambda *a, **k: None)
    try:
        runpy.run_path(str(path), run_name="__main__")
        assert plt.get_fignums(), f"{path.name} draws no figure"
    finally:
        plt.close("all")
