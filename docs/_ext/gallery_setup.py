"""Set-up run by sphinx-gallery before each example (``reset_modules`` in docs/conf.py)."""


def one_torch_thread(gallery_conf, fname):
    """Run each example with one torch thread.

    The models are small, and a thread team on a small or shared machine mostly waits.
    """
    import torch

    torch.set_num_threads(1)
