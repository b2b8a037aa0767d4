"""Every kernel specialisation that the ops launch survives dump -> parse: text, structure and
execution on the interpreter."""
from pathlib import Path

import numpy as np
import pytest

from ascdsl import interpreter
from ascdsl.ir import dump, parse
from ascdsl.op import load_operators, specializations
from ascdsl import record

OPS = load_operators([Path(__file__).parent.parent / "ops"])


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_op_kernels_round_trip(op):
    module = specializations(op)
    assert module.kernels, f"{op.name}: its cases launched no kernel"
    text = dump(module)
    assert parse(text) == module
    assert dump(parse(text)) == text


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_parsed_kernels_run_the_same(op):
    with record.launches() as seen:
        for case in op.cases[:6]:
            op.entry(*case.inputs(), **dict(case.attrs), backend="interpreter")
    assert seen
    for launch in seen:
        original = [a.copy() if isinstance(a, np.ndarray) else a for a in launch.args]
        replayed = [a.copy() if isinstance(a, np.ndarray) else a for a in launch.args]
        interpreter.run(launch.kernel, original, launch.grid)
        (parsed,) = parse(dump(launch.kernel)).kernels
        interpreter.run(parsed, replayed, launch.grid)
        for a, b in zip(original, replayed):
            if isinstance(a, np.ndarray):
                assert a.tobytes() == b.tobytes()


def test_nested_collections_each_see_what_was_published_inside_them():
    channel = record.Channel()
    with channel.collect() as outer:
        with channel.collect() as inner:
            channel.publish(1)
        # closing `inner`, equal to `outer` then, closes `inner`, not `outer`
        channel.publish(2)
    assert (outer, inner) == ([1, 2], [1]) and not channel.listening
