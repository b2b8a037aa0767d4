"""Cases whose dtypes a platform lacks are skipped with the reason, not failed (issue 12: a
310P build or check of an op with bfloat16 cases)."""
from pathlib import Path

from ascdsl.op import load_operators
from ascdsl.testing import format_table, verify

OPS = Path(__file__).resolve().parents[1] / "ops"


def test_bfloat16_cases_are_skipped_on_a_platform_without_bfloat16():
    (op,) = load_operators([OPS / "scale_add.py"])
    results = verify(op, ("interpreter",), platform="Ascend310P3")
    bf16 = [r for r in results if "bfloat16" in r.case]
    assert bf16 and all(r.ok and r.skipped == "Ascend310P3 has no bfloat16" for r in bf16)
    others = [r for r in results if "bfloat16" not in r.case]
    assert others and all(r.ok and not r.skipped for r in others)
    table = format_table(results)
    assert table.endswith(f"{len(others)} passed, 0 failed, {len(bf16)} skipped")
    assert f"skip {op.name} [{bf16[0].case}] on interpreter: Ascend310P3 has no bfloat16" in table


def test_bfloat16_cases_run_where_the_platform_has_bfloat16():
    (op,) = load_operators([OPS / "scale_add.py"])
    results = verify(op, ("interpreter",), platform="Ascend910B3")
    assert any("bfloat16" in r.case for r in results) and not any(r.skipped for r in results)
    assert all(r.ok for r in results)
