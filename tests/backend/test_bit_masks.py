"""Bit-mode masks in the kernel IR: a :attr:`kir.Struct.BIT_MASK` variable defined by a ``Let`` of two words
(a :class:`kir.Brace`), rendered as CANN's ``uint64_t mask[2] = {low, high};`` and passed by name to the calls
that take ``uint64_t mask[]`` (``WholeReduceSum``, ``Sub``), as ``tests/sim/kernels/packed_rows.cpp`` writes them."""
from __future__ import annotations

import subprocess

import pytest

from ascdsl import dtypes
from ascdsl.backend import kir
from ascdsl.backend.names.naming import Names
from ascdsl.backend.render.emit import Printer
from ascdsl.sim import INCLUDE_DIR
from tests.cann.headers import needs_kernel_headers, type_check
from tests.sim.test_cann_headers import cann_flags

F32 = dtypes.float32
SUMS, X, BLOCKS = (kir.Buf(key, kir.Role.TILE, F32, hint) for key, hint in ((1, "sums"), (2, "x"), (3, "blocks")))
MASK = kir.Var(-2, kir.Struct.BIT_MASK, "mask")


def _words(low: int, high: int = 0) -> kir.Brace:
    return kir.Brace(tuple(kir.Conv(kir.CInt.UINT64, kir.Lit(w, dtypes.int64)) for w in (low, high)))


def _masked_calls() -> list:
    """A row sum and a broadcast subtraction of 19-lane rows at lane offset 45, under one mask."""
    sums, x, blocks = (kir.Ref(b, F32, kir.lit(0), 64) for b in (SUMS, X, BLOCKS))
    reps = kir.Brace(tuple(map(kir.lit, (1, 1, 0, 19, 19, 1))))
    return [kir.Let(MASK, _words(((1 << 19) - 1) << 45)),  # 19 lanes from lane 45
            kir.Call("WholeReduceSum", sums, (x,), (MASK, kir.lit(3), kir.lit(8), kir.lit(1), kir.lit(19))),
            kir.Call("Sub", x, (x, blocks), (MASK, kir.lit(3), reps))]


def _lines() -> list[str]:
    names = Names(views={(b.key, F32.name): b.hint for b in (SUMS, X, BLOCKS)}, vars={MASK.key: "mask"})
    return Printer(names).lines(_masked_calls())


def test_a_bit_mask_renders_as_cann_declares_and_passes_it():
    high = (((1 << 19) - 1) << 45) % (1 << 64)
    assert _lines() == [f"uint64_t mask[2] = {{{high}U, 0}};", "WholeReduceSum(sums, x, mask, 3, 8, 1, 19);",
                        "Sub(x, x, blocks, mask, 3, {1, 1, 0, 19, 19, 1});"]


def _source(tmp_path):
    body = "\n".join("    " + line for line in _lines())
    path = tmp_path / "masked.cpp"
    path.write_text('#include "kernel_operator.h"\nusing namespace AscendC;\n\n'
                    "void Masked(LocalTensor<float>& sums, LocalTensor<float>& x, LocalTensor<float>& blocks) {\n"
                    f"{body}\n}}\n")
    return path


def test_masked_calls_compile_against_the_simulator_cleanly(tmp_path):
    proc = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-isystem",
                           str(INCLUDE_DIR), str(_source(tmp_path))], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[:4000]


@needs_kernel_headers
def test_masked_calls_type_check_against_cann(tmp_path):
    type_check(cann_flags() + ["-Wall", "-Werror"], _source(tmp_path))


def test_verifier_rejects_a_bit_mask_that_is_not_two_words():
    def kernel(body):
        return kir.Kernel("masked", (), (), tuple(body))

    one_word = kir.Let(MASK, kir.Brace(_words(255).items[:1]))
    with pytest.raises(kir.KirError, match="not two words"):
        kir.verify(kernel([one_word] + _masked_calls()[1:]))
    assert kir.verify(kernel(_masked_calls()))
    with pytest.raises(kir.KirError, match="read before it is defined"):  # a mask is a variable like any other
        kir.verify(kernel(_masked_calls()[1:]))
