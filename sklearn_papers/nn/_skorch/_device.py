"""The device and the floating dtype an estimator trains and predicts on."""

import contextlib

import torch

__all__ = ["check_device", "default_dtype"]


def check_device(device):
    """Validate a torch device string and return a ``torch.device``.

    Parameters
    ----------
    device : str or torch.device
        ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"mps"``.

    Returns
    -------
    device : torch.device

    Raises
    ------
    ValueError
        If the string is not a device, is a device type other than cpu, cuda and mps
        (``"meta"``, ``"xla"``, ...: the estimators train and predict on real tensors), or
        CUDA is asked for on a machine without it.
    """
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device={device!r} is not a torch device: {exc}") from None
    if dev.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"device={device!r} is a {dev.type!r} device; the estimators run "
                         "on 'cpu', 'cuda', 'cuda:N' or 'mps' only.")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"device={device!r} was requested but CUDA is not available on this machine "
            f"(torch {torch.__version__}); use device='cpu'."
        )
    if dev.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"device={device!r} was requested but MPS is not available.")
    return dev


@contextlib.contextmanager
def default_dtype(dtype=torch.float32):
    """Run a block with torch's default floating dtype set to ``dtype``, restoring the
    caller's afterwards.

    Modules built inside the block get parameters of ``dtype``, and tensors made from
    Python floats or by factories without a ``dtype`` (``torch.zeros``, ``torch.rand``)
    are of ``dtype``: a network built and run in the block computes in ``dtype`` whatever
    default the caller set (``torch.set_default_dtype(torch.float64)``, as botorch and
    pyro users do), and matches the float32 arrays the estimators feed it.

    Parameters
    ----------
    dtype : torch.dtype, default=torch.float32
        A floating dtype.
    """
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)
