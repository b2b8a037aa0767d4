"""``tl.device_print`` on the simulator (printf in the compute stage) against the interpreter: the same
records per program (scalars, 1-D and 2-D tiles, float and int, prefixes with ``%``), numbers equal."""
import re

import numpy as np

import ascdsl
import ascdsl.language as tl

from tests.backend import mem_kernels as k


def _records(text: str) -> list[tuple[str, list]]:
    """``(pid, words)`` per printed record (a 2-D tile spans lines), numbers as floats, in each program's
    order (programs print in another order on the simulator's cores than on the interpreter)."""
    records = re.split(r"^(?=pid \()", text, flags=re.M)
    out = []
    for r in filter(None, records):
        pid, rest = re.match(r"pid (\(\d+, \d+, \d+\))(.*)", r, flags=re.S).groups()
        words = rest.replace("[", " [ ").replace("]", " ] ").split()
        out.append((pid, [float(w) if re.fullmatch(r"-?[\d.]+(e[-+]\d+)?", w) else w for w in words]))
    return sorted(out, key=lambda r: r[0])  # stable: program order within a program


def test_device_print_matches_the_interpreter(capsys):
    n = 13
    x = np.arange(n, dtype=np.float32) * 0.5 - 1.25
    m = np.arange(24, dtype=np.float32).reshape(3, 8) / 4
    ids = np.arange(-3, 5, dtype=np.int32)
    texts = []
    for backend in ("interpreter", "sim"):
        k.print_kernel[(2,)](x, m, ids, n, BLOCK=8, ROWS=3, backend=backend)
        texts.append(capsys.readouterr().out)
    want, got = (_records(t) for t in texts)
    assert len(want) == 8 and want[0] == ("(0, 0, 0)", ["x", "[", *x[:8].tolist(), "]"])
    assert want[1] == ("(0, 0, 0)", ["sum,", "n,", "pid:", float(x[:8].sum()), 13.0, 0.0])
    assert want[2][1][:3] == ["m%", "[", "["] and want[2][1].count("[") == 4
    assert want[4][1][-3:] == [-1.0, -1.0, "]"]  # the masked lanes of program 1 print `other`
    assert got == want
    assert texts[1].count("\n") == texts[0].count("\n")


@ascdsl.jit
def print_rank3_kernel(x_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    a = tl.arange(0, A)[:, None, None]
    b = tl.arange(0, B)[None, :, None]
    c = tl.arange(0, C)[None, None, :]
    x = tl.load(x_ptr + a * B * C + b * C + c)
    tl.device_print("x", x + 1.0)
    tl.device_print("four", tl.reshape(x, (2, A // 2, B, C)))


def test_device_print_of_rank_3_and_4_tiles_nests_as_the_interpreter(capsys):
    x = np.arange(4 * 3 * 5, dtype=np.float32) / 4
    texts = []
    for backend in ("interpreter", "sim"):
        print_rank3_kernel[(1,)](x, A=4, B=3, C=5, backend=backend)
        texts.append(capsys.readouterr().out)
    want, got = (_records(t) for t in texts)
    assert want[0][1].count("[") == 1 + 4 + 12 and want[1][1][:5] == ["four", "[", "[", "[", "["]
    assert got == want
    assert texts[1].count("\n") == texts[0].count("\n")


@ascdsl.jit
def bool_print_kernel(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.device_print("positive", x > 0, tl.sum(x, 0) > 0)
    tl.device_print("grid", (x > 0)[:, None] & (x < 2)[None, :])


def test_device_print_of_bool_tiles_and_scalars(capsys):
    """Bool tiles print NumPy's words (``True``/``False``), from their 0/1 values (a mask in UB)."""
    x = np.array([1.0, -1.0, 3.0, -2.0], np.float32)
    texts = []
    for backend in ("interpreter", "sim"):
        bool_print_kernel[(1,)](x, BLOCK=4, backend=backend)
        texts.append(capsys.readouterr().out)
    want, got = (_records(t) for t in texts)
    assert want[0] == ("(0, 0, 0)", ["positive", "[", "True", "False", "True", "False", "]", "True"])
    assert got == want
