"""Every check and hazard trips on a faulty kernel, and the message says what happened where."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ascdsl.errors
from ascdsl import sim

KERNELS = Path(__file__).parent / "kernels"
FAULTS = KERNELS / "faults.cpp"


def fault(name, *extra, block_dim=1, **kw) -> sim.SimError:
    x = np.arange(1024, dtype=np.float32)
    y = np.zeros(1024, np.float32)
    with pytest.raises(sim.SimError) as info:
        sim.run_kernel(FAULTS, name, [x, y, *extra], block_dim, **kw)
    return info.value


@pytest.mark.parametrize(
    "kernel,api,reason",
    [
        ("ub_overflow", "InitBuffer", "UB total 201088 B exceeds the 196608 B UB of Ascend910B3; buffers: #0 TQue VECIN 2 x 65536 B"),
        ("reserved_ub", "Compare", "uses the reserved UB at offset 188416 but InitBuffer claimed 190720 B"),
        ("too_many_queue_buffers", "InitBuffer", "10 queue buffers on VECIN exceed the 8 hardware event ids"),
        ("too_many_buffers", "InitBuffer", "65 buffers exceed the 64 a TPipe manages"),
        ("misaligned_operand", "Add", "UB operand src0 at offset 4 is not 32-byte aligned"),
        ("datacopy_unaligned_count", "DataCopy", "count 7 x 4 B = 28 B is not a multiple of 32 bytes"),
        ("compare_unaligned_count", "Compare", "count 32 x 4 B is not a multiple of 256 bytes"),
        ("pad_too_wide", "DataCopyPad", "padding of 0 B left / 36 B right is over 32 bytes per side"),
        ("block_count_over", "DataCopy", "blockCount 5000 is over 4095"),
        ("widening_cast_overlap", "Cast", "partial overlap of dst [2048, 2304) and src [2048, 2176)"),
        ("reduce_max_small_work", "ReduceMax", "workLocal holds 8 elements, below the documented minimum of 16"),
        ("operand_past_end", "Add", "operand dst touches element 511 of a tensor of 256 elements"),
        ("deque_empty", "DeQue", "DeQue on an empty queue"),
        ("bound_deque_wrong_hand_over", "DeQue",
         "the DeQue's positions hand the buffer from V to MTE3, its EnQue's from MTE2 to V"),
        ("enque_beyond_depth", "EnQue", "the queue already holds 1 tensors (depth 1)"),
        ("alloc_beyond_count", "AllocTensor", "all 1 buffers of the queue are in use"),
        ("free_twice", "FreeTensor", "already freed (FreeTensor twice)"),
        ("free_wrong_queue", "FreeTensor", "the tensor belongs to queue #1, not to this queue #0"),
        ("touch_while_queued", "Adds", "touches a tensor between EnQue and DeQue"),
        ("use_after_free", "Exp", "operand src uses a tensor after FreeTensor"),
        ("wait_without_set", "WaitFlag", "WaitFlag<HardEvent::V_S>(2) has no matching SetFlag"),
    ],
)
def test_check_names_api_block_and_reason(kernel, api, reason):
    err = fault(kernel)
    assert (err.api, err.block) == (api, 0)
    assert reason in err.reason
    assert str(err).startswith(f"{api}: block 0: ")
    assert isinstance(err, ascdsl.errors.Error)


def test_repeat_over_255_is_caught_not_wrapped():
    err = fault("repeat_over_255", np.int32(300))
    assert (err.api, err.block, err.reason) == ("Add", 0, "repeatTimes 300 is outside [0, 255]")
    fault_free = sim.run_kernel(FAULTS, "repeat_over_255", [np.zeros(1024, np.float32)] * 2 + [np.int32(255)], 1)
    assert fault_free.stats.vector_elements["Add"] == 255 * 64


def test_gm_access_outside_the_arrays_names_the_block():
    err = fault("gm_out_of_bounds", block_dim=2)
    assert (err.api, err.block) == ("DataCopy", 1)
    assert "is outside every GM buffer passed to the kernel" in err.reason


def test_two_blocks_writing_the_same_gm_bytes():
    err = fault("gm_write_race", np.uint32(0), block_dim=3, shuffle_blocks=7)
    assert err.api == "DataCopy"
    assert "GM byte 0 of a 4096-byte buffer is written by block" in err.reason
    assert "with another value (blocks must write disjoint GM)" in err.reason


def test_blocks_writing_the_same_values_over_each_other_is_no_race():
    """Two programs storing one result alike (each computes the whole of a small output): whatever order
    a device runs them in, memory ends the same."""
    y = np.zeros(1024, np.float32)
    sim.run_kernel(FAULTS, "gm_write_race", [np.arange(1024, dtype=np.float32), y, np.uint32(1)], 3, shuffle_blocks=7)
    assert (y[:64] == 1.0).all()


@pytest.mark.parametrize(
    "kernel,api,needed",
    [
        ("vv_missing_barrier", "Muls", "PIPE_V reads UB byte 0x800 written by Exp on PIPE_V (op #"),
        ("vs_missing_flag", "LocalTensor::GetValue", "with no SetFlag/WaitFlag<HardEvent::V_S> in between"),
        ("sv_missing_flag", "Adds", "written by LocalTensor::SetValue on PIPE_S"),
        ("mte2_v_missing_sync", "Exp", "with no SetFlag/WaitFlag<HardEvent::MTE2_V> (or EnQue/DeQue) in between"),
        ("v_mte3_missing_sync", "DataCopy", "PIPE_MTE3 reads UB byte 0x800 written by Duplicate on PIPE_V"),
        ("war_missing_sync", "DataCopy",
         "PIPE_MTE2 overwrites UB byte 0x800 read by Exp on PIPE_V (op #4) with no SetFlag/WaitFlag<HardEvent::V_MTE2> (or FreeTensor/AllocTensor)"),
        ("waw_missing_sync", "Duplicate", "PIPE_V overwrites UB byte 0x800 written by DataCopy on PIPE_MTE2"),
    ],
)
def test_hazards(kernel, api, needed):
    err = fault(kernel)
    assert (err.api, err.block) == (api, 0)
    assert err.reason.startswith("missing synchronisation: ")
    assert needed in err.reason


def test_vv_check_can_be_turned_off_but_not_the_others():
    x, y = np.arange(1024, dtype=np.float32), np.zeros(1024, np.float32)
    sim.run_kernel(FAULTS, "vv_missing_barrier", [x, y], 1, vv_hazards=False)
    with pytest.raises(sim.SimError, match="V_S"):
        sim.run_kernel(FAULTS, "vs_missing_flag", [x, y], 1, vv_hazards=False)
    sim.run_kernel(FAULTS, "vs_missing_flag", [x, y], 1, hazards=False)
    assert y[0] == np.float32(np.exp(np.float32(3)))


def test_bf16_casts_the_platform_lacks():
    src = KERNELS / "elementwise.cpp"
    x = np.ones(16, np.float32)
    out = np.zeros(16, np.uint16)
    with pytest.raises(sim.SimError) as info:
        sim.run_kernel(src, "cast_f32_bf16", [x, out, np.uint32(16), np.int32(0)], 1)
    assert (info.value.api, info.value.block) == ("Cast", 0)
    assert "Cast from float to bfloat16_t with CAST_NONE is not supported (allowed: CAST_RINT, CAST_FLOOR" in info.value.reason
    with pytest.raises(sim.SimError, match="Cast: block 0: bfloat16_t conversions are not available on Ascend310P3"):
        sim.run_kernel(src, "cast_f32_bf16", [x, out, np.uint32(16), np.int32(1)], 1, platform="Ascend310P3")


def test_poisoned_ub_reads_as_nan():
    """A kernel that copies out a tensor it never wrote hands back the all-ones poison pattern."""
    src = KERNELS / "datacopy.cpp"
    out0 = np.zeros(128, np.float16)
    sim.run_kernel(src, "copy_params", [np.ones(256, np.float16), out0, np.zeros(128, np.float16)], 1)
    assert (out0[48:80].view(np.uint16) == 0xFFFF).all() and np.isnan(out0[48:80]).all()


COMPILE_ERRORS = {
    "double_scalar": ("LocalTensor<float> t = buf.Get<float>();\n    Muls(t, t, 2.0, 64);", "Muls"),
    "bf16_add": ("LocalTensor<bfloat16_t> t = buf.Get<bfloat16_t>();\n    Add(t, t, t, 64);", "Add: unsupported element type"),
    "bf16_from_half": (
        "Cast(buf.Get<bfloat16_t>(), buf.Get<half>(), RoundMode::CAST_RINT, 64);",
        "Cast: this src -> dst conversion does not exist",
    ),
    "int32_and": ("LocalTensor<int32_t> t = buf.Get<int32_t>();\n    And(t, t, t, 64);", "And: unsupported element type"),
    "float_shift": ("LocalTensor<float> t = buf.Get<float>();\n    ShiftLeft(t, t, 1.0f, 64);",
                    "ShiftLeft: unsupported element type"),
    "int16_compare": ("LocalTensor<int16_t> t = buf.Get<int16_t>();\n    Compare(buf.Get<uint8_t>(), t, t, CMPMODE::EQ, 128);",
                      "Compare/CompareScalar support half, float and int32_t"),
    "int_tanh": ("LocalTensor<int32_t> t = buf.Get<int32_t>();\n    Tanh(t, t, 64);", "high-level math APIs support half and float"),
    "uint8_atomic": ("SetAtomicAdd<uint8_t>();", "SetAtomicAdd/Max/Min support half, float, int16_t, int32_t, int8_t"),
    "printf_double": ('printf("%f", 1.0);', "printf does not support double arguments"),
}


@pytest.mark.parametrize("case", list(COMPILE_ERRORS))
def test_rejected_at_compile_time(tmp_path, case):
    body, expect = COMPILE_ERRORS[case]
    src = tmp_path / f"{case}.cpp"
    src.write_text(
        '#include "kernel_operator.h"\nusing namespace AscendC;\n'
        'extern "C" __global__ __aicore__ void bad(GM_ADDR x) {\n'
        "    TPipe pipe;\n    TBuf<TPosition::VECCALC> buf;\n    pipe.InitBuffer(buf, 1024);\n"
        f"    {body}\n}}\n"
    )
    with pytest.raises(sim.SimCompileError) as info:
        sim.run_kernel(src, "bad", [np.zeros(8, np.float32)], 1)
    err = info.value
    assert ": error: " in str(err) and err.line is not None and err.file is not None
    assert expect in err.output


def test_compile_error_points_at_the_kernel_line(tmp_path):
    src = tmp_path / "typo.cpp"
    src.write_text('#include "kernel_operator.h"\nextern "C" __global__ __aicore__ void k(GM_ADDR x) {\n    int y = ;\n}\n')
    with pytest.raises(sim.SimCompileError) as info:
        sim.run_kernel(src, "k", [None], 1)
    assert (Path(info.value.file), info.value.line) == (src, 3)
    assert str(info.value).startswith(f"{src}:3:")


def test_arguments_are_checked_against_the_declaration():
    src = KERNELS / "add.cpp"
    x = np.zeros(64, np.float32)
    with pytest.raises(sim.SimArgumentError, match=r"takes 5 arguments, got 4"):
        sim.run_kernel(src, "add_custom", [x, x, x, np.uint32(64)], 1)
    with pytest.raises(sim.SimArgumentError, match=r"argument 3 \(uint32_t totalLength\) of add_custom must be np.uint32, got int 64"):
        sim.run_kernel(src, "add_custom", [x, x, x, 64, np.uint32(64)], 1)
    with pytest.raises(sim.SimArgumentError, match=r"argument 0 \(GM_ADDR x\) of add_custom must be a NumPy array or None"):
        sim.run_kernel(src, "add_custom", [[1.0], x, x, np.uint32(64), np.uint32(64)], 1)
    with pytest.raises(sim.SimArgumentError, match="no extern \"C\" kernel 'nope'"):
        sim.run_kernel(src, "nope", [], 1)
    with pytest.raises(TypeError):  # SimArgumentError is also a TypeError
        sim.run_kernel(src, "add_custom", [x, x, x, np.int32(64), np.uint32(64)], 1)


def test_a_bound_queue_hands_its_buffer_from_load_to_compute_to_store():
    """TQueBind<VECIN, VECOUT>: EnQue/DeQue with user positions (GM -> VECIN, VECOUT -> GM) order the
    load, the in-place compute and the store of one buffer, double-buffered, with no hazard."""
    x = np.arange(1024, dtype=np.float32)
    y = np.zeros(1024, np.float32)
    run = sim.run_kernel(FAULTS, "bound_in_place", [x, y], 1)
    np.testing.assert_array_equal(y, 2 * x)
    assert run.stats.ub_peak_bytes == 2 * 1024 + 3 * 1024  # the bound queue's two buffers after Setup's
