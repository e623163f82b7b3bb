"""Pieces every experiment uses: one torch thread for small models."""

from contextlib import contextmanager

__all__ = ["one_torch_thread"]


@contextmanager
def one_torch_thread():
    """Run torch with one intra-op thread, restoring the caller's setting afterwards.

    These nets are small (batches of 2 to 256 images of 8x8), so per-step overhead
    dominates and a second thread gains little, while on a busy machine the threads wait
    on each other: on a shared 2-core machine one quick ``supcon`` fit (8 epochs) took
    3-7 s wall with one thread and 17-38 s with two.
    """
    import torch

    n_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(n_threads)
