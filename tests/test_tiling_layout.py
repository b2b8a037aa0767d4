"""Tiling struct layout, packing, variants and CANN naming."""
import numpy as np
import pytest

from ascdsl import Error
from ascdsl.backend.plan.tiling import cann_name, layout, variants
from ascdsl.dtypes import PointerType, float32, int32, int64
from ascdsl.ir import Builder, Type


def kernel(name, **scalars):
    b = Builder()
    with b.block([Type(PointerType(float32))] + [Type(d) for d in scalars.values()]):
        pass
    return b.kernel(name, ["x", *scalars], [])


def test_fields_are_naturally_aligned_and_the_size_is_a_multiple_of_8():
    lay = layout("KTilingData", [kernel("a", n=int32, alpha=float32), kernel("b", big=int64, n=int32)])
    assert [f.name for f in lay.fields] == ["tilingKey", "big", "grid0", "grid1", "grid2", "n", "alpha"]
    dt = lay.numpy_dtype
    for f in lay.fields:
        assert dt.fields[f.name][1] % f.dtype.itemsize == 0
    assert dt.itemsize == 40
    raw = lay.pack({"tilingKey": 2, "big": -3, "n": 7, "alpha": 0.5})
    back = np.frombuffer(raw.tobytes(), dt)[0]
    assert (back["tilingKey"], back["big"], back["n"], back["alpha"], back["grid1"]) == (2, -3, 7, 0.5, 0)


def test_conflicting_scalar_types_and_reserved_names_are_errors():
    with pytest.raises(Error, match="'n' is int32 in one kernel and int64"):
        layout("T", [kernel("a", n=int32), kernel("b", n=int64)])
    with pytest.raises(Error, match="may not be named"):
        layout("T", [kernel("a", grid0=int32)])
    with pytest.raises(Error, match="no field 'nope'"):
        layout("T", [kernel("a")]).pack({"nope": 1})


def test_variants_are_distinct_kernels_keyed_from_one():
    a, b = kernel("row_kernel", n=int32), kernel("looped", n=int64)
    vs = variants([a, b, a])
    assert [(v.key, v.class_name) for v in vs] == [(1, "RowKernelV1"), (2, "LoopedV2")]


@pytest.mark.parametrize("op_type, name", [
    ("SoftmaxGrad", "softmax_grad"), ("LogSoftmaxBackward", "log_softmax_backward"),
    ("GatherV2Custom", "gather_v2_custom"), ("Conv2DCustom", "conv2_d_custom"), ("AddCustom", "add_custom"),
])
def test_cann_naming(op_type, name):
    assert cann_name(op_type) == name


def test_struct_source_matches_the_packed_size(tmp_path):
    import subprocess
    lay = layout("KTilingData", [kernel("a", n=int32, alpha=float32)])
    src = tmp_path / "t.cpp"
    src.write_text("#include <cstdint>\n" + lay.struct_source()
                   + f"static_assert(sizeof(KTilingData) == {lay.numpy_dtype.itemsize}, \"size\");\n"
                   + "static_assert(offsetof(KTilingData, alpha) == "
                   + f"{lay.numpy_dtype.fields['alpha'][1]}, \"offset\");\n#include <cstddef>\n")
    assert "float alpha;" in lay.struct_source()
    subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-include", "cstddef", str(src)], check=True)
