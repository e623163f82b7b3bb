"""Torch tensors given where the package takes arrays: turned into numpy arrays, torch-free.

Everything here works without importing torch. A value can only be a torch tensor when the
caller has already imported torch, so the check reads ``sys.modules`` and never triggers the
import (``import sklearn_papers.metrics`` stays light).
"""

import functools
import inspect
import sys

__all__ = ["is_torch_tensor", "tensor_to_numpy", "tensors_to_numpy", "with_numpy_inputs"]


def is_torch_tensor(value):
    """True when ``value`` is a ``torch.Tensor`` (torch itself is never imported here).

    Parameters
    ----------
    value : object

    Returns
    -------
    bool

    Examples
    --------
    >>> from sklearn_papers.utils._tensors import is_torch_tensor
    >>> is_torch_tensor([0.0, 1.0])
    False
    """
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    tensor_type = getattr(torch, "Tensor", None)
    return tensor_type is not None and isinstance(value, tensor_type)


def tensor_to_numpy(value, name="X"):
    """A torch tensor as a numpy array; anything else unchanged.

    The tensor is detached from its autograd graph and copied to the CPU
    (``value.detach().cpu().numpy()``), so tensors with autograd history and CUDA tensors
    give the same array as their CPU copy. A bfloat16 tensor (which numpy has no type for)
    becomes float32; a complex tensor keeps its conjugation resolved.

    Parameters
    ----------
    value : object
        A ``torch.Tensor``, or any other value (returned as is).
    name : str, default="X"
        The argument's name, for the error message.

    Returns
    -------
    array : ndarray or object
        A new numpy array for a tensor (of the tensor's dtype and shape), else ``value``.

    Raises
    ------
    TypeError
        If the tensor has no numpy equivalent: a sparse tensor, a quantized tensor, or a
        tensor on the ``meta`` device (which holds no values). The message names ``name``
        and the fix.

    Examples
    --------
    >>> from sklearn_papers.utils._tensors import tensor_to_numpy
    >>> tensor_to_numpy([1, 2])
    [1, 2]
    """
    if not is_torch_tensor(value):
        return value
    torch = sys.modules["torch"]
    layout = getattr(value, "layout", torch.strided)
    if layout != torch.strided:
        raise TypeError(
            f"{name} is a sparse torch tensor (layout {layout}); pass {name}.to_dense() or a "
            "scipy.sparse matrix instead."
        )
    if value.is_quantized:
        raise TypeError(f"{name} is a quantized torch tensor; pass {name}.dequantize().")
    if value.is_meta:
        raise TypeError(f"{name} is a torch tensor on the 'meta' device, which holds no "
                        "values; pass a tensor with data.")
    value = value.detach()
    if value.dtype == torch.bfloat16:
        value = value.float()
    value = value.cpu()
    if value.is_complex():
        value = value.resolve_conj()
    return value.resolve_neg().numpy()


def tensors_to_numpy(value, name="X"):
    """:func:`tensor_to_numpy` applied to a value and to the items of lists, tuples and dicts.

    Lists of per-image arrays (boxes, scores, masks) and dicts of one image's detections
    may hold tensors, so plain lists, tuples and dicts are walked recursively; the
    container type is kept. Any other value (DataFrames, estimators, callables) is
    returned unchanged.

    Parameters
    ----------
    value : object
    name : str, default="X"
        The argument's name, for error messages (items are named ``name[i]``).

    Returns
    -------
    value : object
        The same value with every tensor replaced by a numpy array.

    Examples
    --------
    >>> from sklearn_papers.utils._tensors import tensors_to_numpy
    >>> tensors_to_numpy(([1.0], "CCO"))
    ([1.0], 'CCO')
    """
    if is_torch_tensor(value):
        return tensor_to_numpy(value, name)
    if sys.modules.get("torch") is None:
        return value
    if type(value) in (list, tuple):
        items = [tensors_to_numpy(item, f"{name}[{i}]") for i, item in enumerate(value)]
        if any(new is not old for new, old in zip(items, value)):
            return type(value)(items)
    elif type(value) is dict:
        items = {key: tensors_to_numpy(item, f"{name}[{key!r}]") for key, item in value.items()}
        if any(items[key] is not item for key, item in value.items()):
            return items
    return value


def with_numpy_inputs(function):
    """Decorate ``function`` so every argument that is a torch tensor arrives as numpy.

    Arguments are converted by :func:`tensors_to_numpy` (lists and tuples of tensors too)
    before the function, and so before its parameter validation, sees them. Used by the
    package's ``validate_params`` (``utils._sklearn_compat``), so every public function
    validated there accepts tensors, with or without autograd history and on any device.

    Parameters
    ----------
    function : callable

    Returns
    -------
    wrapped : callable
        Same signature, name and docstring.
    """
    signature = inspect.signature(function)

    @functools.wraps(function)
    def wrapped(*args, **kwargs):
        if sys.modules.get("torch") is None:
            return function(*args, **kwargs)
        try:
            bound = signature.bind_partial(*args, **kwargs)
        except TypeError:
            return function(*args, **kwargs)  # the function reports the bad call itself
        names = list(bound.arguments)
        args = [tensors_to_numpy(value, names[i] if i < len(names) else "argument")
                for i, value in enumerate(args)]
        kwargs = {key: tensors_to_numpy(value, key) for key, value in kwargs.items()}
        return function(*args, **kwargs)

    return wrapped

