"""``utils._tensors``: tensors become numpy arrays, torch is never imported by the check."""

import inspect
import subprocess
import sys

import numpy as np
import pytest
import torch

from sklearn_papers.utils._tensors import (
    is_torch_tensor,
    tensor_to_numpy,
    tensors_to_numpy,
    with_numpy_inputs,
)


def test_tensor_with_autograd_history_becomes_its_values():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, requires_grad=True)
    out = tensor_to_numpy(x * 2, "codes")
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    np.testing.assert_array_equal(out, [[2.0, 4.0], [6.0, 8.0]])


def test_dtypes_numpy_lacks_and_lazy_views():
    assert tensor_to_numpy(torch.tensor([1.5, 2.0], dtype=torch.bfloat16)).dtype == np.float32
    np.testing.assert_array_equal(tensor_to_numpy(torch.tensor([1.0, 2.0]).neg()), [-1, -2])
    z = torch.tensor([1 + 2j]).conj()  # a lazy conjugate view
    np.testing.assert_array_equal(tensor_to_numpy(z), [1 - 2j])


@pytest.mark.parametrize("tensor, words", [
    (torch.eye(2).to_sparse(), ["sparse", "codes.to_dense()"]),
    (torch.empty(3, device="meta"), ["meta"]),
])
def test_tensors_without_numpy_equivalent_are_refused_by_name(tensor, words):
    with pytest.raises(TypeError) as info:
        tensor_to_numpy(tensor, "codes")
    for word in ["codes", *words]:
        assert word in str(info.value)


def test_containers_are_walked_and_other_values_kept():
    value = {"boxes": [torch.zeros(1, 4)], "label": "cat", "n": (torch.tensor(3), 2)}
    out = tensors_to_numpy(value)
    assert isinstance(out["boxes"], list) and isinstance(out["boxes"][0], np.ndarray)
    assert out["label"] == "cat" and isinstance(out["n"], tuple) and out["n"][1] == 2
    same = [np.zeros(2), "CCO"]
    assert tensors_to_numpy(same) is same  # nothing to convert: the same object
    assert not is_torch_tensor(np.zeros(2))


def test_decorated_function_sees_numpy_keeps_its_signature():
    @with_numpy_inputs
    def f(a, b=None, *, c=None):
        """Doc."""
        return type(a), type(b), type(c)

    x = torch.ones(2, requires_grad=True) * 1
    assert f(x, b=x, c=[x]) == (np.ndarray, np.ndarray, list)
    assert f.__doc__ == "Doc." and list(inspect.signature(f).parameters) == ["a", "b", "c"]


def test_metrics_on_numpy_do_not_import_torch():
    code = ("import sys, numpy as np\n"
            "from sklearn_papers.metrics import mutual_info_gap, box_iou\n"
            "f = np.arange(40) % 2; c = np.c_[f + 0.1 * np.sin(np.arange(40)), np.cos(f)]\n"
            "mutual_info_gap(f, c); box_iou([[0, 0, 1, 1]], [[0, 0, 2, 2]])\n"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
