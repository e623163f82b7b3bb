"""Shared fixtures.

``global_random_seed`` is 42 by default; set ``SKLEARN_PAPERS_TESTS_GLOBAL_RANDOM_SEED=all``
(or ``0-9``, or ``7``) to run the seeded tests over several seeds, so no test relies on a
lucky seed (as in scikit-learn).
"""

import os

import pytest


def _seeds():
    spec = os.environ.get("SKLEARN_PAPERS_TESTS_GLOBAL_RANDOM_SEED", "42")
    if spec == "all":
        return list(range(100))
    if "-" in spec:
        lo, hi = spec.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(spec)]


def pytest_generate_tests(metafunc):
    if "global_random_seed" in metafunc.fixturenames:
        metafunc.parametrize("global_random_seed", _seeds())


@pytest.fixture(autouse=True, scope="session")
def _torch_one_thread():
    """Tests use tiny models: one intra-op thread is faster than two fighting for 2 cores."""
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a hard dependency
        yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(autouse=True)
def _matplotlib_agg():
    import matplotlib

    matplotlib.use("Agg")
