"""``tl.device_print`` on the simulator (printf in the compute stage) against the interpreter: the same
records per program (scalars, 1-D and 2-D tiles, float and int, prefixes with ``%``), numbers equal."""
import re

import numpy as np

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
