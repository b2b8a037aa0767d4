"""The math builtin table (:data:`ascdsl.numerics.MATH`) is what the language, the interpreter and
``libdevice`` read: every row is a marker ``tl.<name>`` (also ``tl.math.<name>``) with the row's
parameters and doc, the interpreter's implementation of its op, and a ``libdevice`` name where the row
says so."""
import inspect

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl import numerics
from ascdsl.frontend.builtins import BUILTINS
from ascdsl.language.extra import libdevice


@pytest.mark.parametrize("row", numerics.MATH, ids=lambda row: row.op.value)
def test_each_row_is_a_builtin_with_its_signature_doc_and_numpy(row):
    name = row.op.value
    fn = getattr(tl, name)
    assert fn is getattr(tl.math, name) and fn in BUILTINS
    assert tuple(inspect.signature(fn).parameters) == row.params and inspect.getdoc(fn) == row.doc
    assert numerics.NP_FOR_OP[row.op] is row.numpy
    assert (getattr(libdevice, name, None) is fn) == row.libdevice == (name in libdevice.__all__)
    with pytest.raises(ascdsl.Error, match=rf"tl\.{name}\(\) can only be called inside"):
        fn(*(np.float32(1),) * len(row.params))


def test_the_table_has_one_row_per_op():
    ops = [row.op for row in numerics.MATH]
    assert len(ops) == len(set(ops))
