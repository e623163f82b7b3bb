"""Fixtures of the estimation tests.

SUMO works on many tiny tensors; torch's intra-op thread pool only adds synchronisation
cost there, and on a shared 2-core machine it made these tests ~10x slower. The
fixture runs each test module single-threaded and restores the caller's setting.
"""

import pytest
import torch


@pytest.fixture(autouse=True, scope="module")
def _single_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
