"""Op entry points: NumPy in -> NumPy out, torch in -> torch out (bf16 included), any strides,
for every op through ``ascdsl.entry`` (which ``Operator`` applies to ``entry``)."""
import ml_dtypes
import numpy as np
import pytest

import ascdsl
from ops.log_softmax_grad import log_softmax_backward
from ops.scale_add import OP as SCALE_ADD, scale_add
from ops.softmax import softmax
from ops.softmax_grad import softmax_grad


def test_numpy_in_numpy_out_and_views_accepted():
    x = np.arange(60, dtype=np.float32).reshape(6, 10)
    view = x[::2, 1::3]                  # neither C- nor F-contiguous
    assert not view.flags.c_contiguous
    out = scale_add(view, view, 2.0)
    assert type(out) is np.ndarray and out.flags.c_contiguous
    np.testing.assert_array_equal(out, 3.0 * view)
    np.testing.assert_allclose(softmax(x.T), softmax(np.ascontiguousarray(x.T)), rtol=0, atol=0)


def test_bf16_numpy_round_trip():
    x = np.linspace(-2, 2, 48, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(4, 12)
    out = softmax(x[:, ::2])
    assert out.dtype == ml_dtypes.bfloat16 and out.shape == (4, 6)


def test_operator_wraps_its_entry_once():
    def plain(x, *, platform=None, backend=None):
        assert isinstance(x, np.ndarray) and x.flags.c_contiguous
        return x * 2

    op = ascdsl.Operator(name="double_it", op_type="DoubleIt", entry=plain, host=SCALE_ADD.host,
                         reference=lambda x: 2 * x, inputs=("x", "y"))
    np.testing.assert_array_equal(op.entry(np.arange(6.0)[::2]), [0.0, 4.0, 8.0])
    assert ascdsl.entry(op.entry) is op.entry and SCALE_ADD.entry is scale_add


@pytest.fixture
def torch():
    return pytest.importorskip("torch")  # the NumPy tests above run without torch


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_torch_in_torch_out(torch, dtype):
    dtype = getattr(torch, dtype)
    x = torch.randn(5, 40).to(dtype)
    y = torch.randn(5, 40).to(dtype)
    out = scale_add(x, y, 0.5)
    assert isinstance(out, torch.Tensor) and out.dtype == dtype and out.shape == x.shape
    expect = (0.5 * x.float() + y.float()).to(dtype)
    assert torch.equal(out, expect)


def test_torch_non_contiguous_and_keywords(torch):
    x = torch.randn(8, 16)
    view = x.t()[::2]                     # transposed and strided
    assert not view.is_contiguous()
    out = softmax(view)
    assert isinstance(out, torch.Tensor)
    torch.testing.assert_close(out, torch.softmax(view, dim=-1), rtol=1e-5, atol=1e-6)
    grad = torch.randn(4, 33, dtype=torch.bfloat16)
    out = log_softmax_backward(grad_output=grad, output=torch.log_softmax(grad.float(), -1).bfloat16(), dim=-1)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.bfloat16


def test_torch_bf16_multiple_arguments(torch):
    grad = torch.randn(3, 64, dtype=torch.bfloat16)
    src = torch.softmax(torch.randn(3, 64), -1).bfloat16()
    out = softmax_grad(grad, src)
    expect = ((grad.float() - (grad.float() * src.float()).sum(-1, keepdim=True)) * src.float())
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(out.float(), expect, rtol=2e-2, atol=2e-2)


def test_tensor_requiring_grad_is_accepted(torch):
    x = torch.randn(4, 8, requires_grad=True)
    out = softmax(x)
    assert isinstance(out, torch.Tensor) and not out.requires_grad
