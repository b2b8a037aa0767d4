"""Every rejected construct is a CompilationError at its exact ``path:LINE:COL``, with the quoted
line, a caret under the column, a message saying what is wrong and a hint; no ascdsl-internal
file is ever the location. Offending lines carry a ``# E:<name>`` marker that locates them."""
import re
from pathlib import Path

import numpy as np
import pytest

import ascdsl
import ascdsl.language as tl
from ascdsl.errors import UBOverflowError, display_path
from ascdsl.frontend import builtins as frontend_builtins

P = tl.pointer_type
F32, I32 = P(tl.float32), P(tl.int32)
LINES = Path(__file__).read_text().splitlines()
NOT_A_GLOBAL = [1, 2]


def plain_function(x):
    return x


def where(marker: str, snippet: str) -> tuple[int, int]:
    """(line, column) of ``snippet`` on the line marked ``# E:marker``."""
    (line,) = [n for n, text in enumerate(LINES, 1) if text.rstrip().endswith(f"# E:{marker}")]
    return line, LINES[line - 1].index(snippet) + 1


def check(error: ascdsl.CompilationError, marker: str, snippet: str, *fragments: str) -> list[str]:
    """Assert that ``error`` points at ``snippet`` on the marked line and mentions ``fragments``."""
    line, col = where(marker, snippet)
    text = str(error)
    first, quoted, caret = text.splitlines()[:3]
    assert first.startswith(f"{display_path(__file__)}:{line}:{col}: error: "), text
    assert quoted.endswith("| " + LINES[line - 1])
    assert caret.index("^") == quoted.index("| ") + 2 + col - 1
    assert "ascdsl/" not in first and "ascdsl" + "/frontend" not in text
    assert (error.loc.line, error.loc.col) == (line, col)
    for fragment in fragments:
        assert fragment in text, text
    return text.splitlines()


def compile_error(kernel, *args, **kwargs) -> ascdsl.CompilationError:
    with pytest.raises(ascdsl.CompilationError) as info:
        kernel.specialize(*args, **kwargs)
    return info.value


# ----------------------------------------------------------------------------- at decoration time

def test_a_while_with_a_constexpr_condition_is_located():
    @ascdsl.jit
    def k(x_ptr, N: tl.constexpr):
        i = 0
        while N > 0:  # E:cond
            i += 1
    lines = check(compile_error(k, np.zeros(4, np.float32), N=3), "cond", "N > 0",
                  "the condition of a `while` loop is always True here")
    assert lines[-1].startswith("hint: a while loop needs a runtime condition")


def test_a_runtime_return_inside_static_range_is_located():
    @ascdsl.jit
    def k(x_ptr, n):
        for i in tl.static_range(2):
            if n == i:
                return  # E:return
            tl.store(x_ptr + i, 1.0)
    check(compile_error(k, np.zeros(4, np.float32), 3), "return", "return",
          "`return` inside a runtime if or loop is not supported")


def test_while_else_is_rejected():
    @ascdsl.jit
    def k(x_ptr, n):
        i = 0
        while i < n:  # E:while
            i += 1
        else:
            i = 0
    check(compile_error(k, np.zeros(4, np.float32), 3), "while", "while",
          "unsupported Python construct in a kernel: `while ... else`")


@pytest.mark.parametrize("marker, snippet, what", [
    ("lambda", "lambda", "lambdas"), ("comprehension", "[i", "list comprehensions"),
    ("try", "try", "`try`"), ("with", "with", "`with`"), ("global", "global", "`global`"),
    ("def", "def", "nested functions"), ("break", "break", "`break`"),
    ("import", "import", "`import`"), ("fstring", 'f"', "f-strings"), ("class", "class", "classes"),
])
def test_unsupported_syntax(marker, snippet, what):
    with pytest.raises(ascdsl.CompilationError) as info:
        ascdsl.jit(UNSUPPORTED[marker])
    check(info.value, marker, snippet, f"unsupported Python construct in a kernel: {what}", "hint: ")


def _lambda(x):
    f = lambda y: y  # E:lambda


def _comprehension(x):
    y = [i for i in range(3)]  # E:comprehension


def _try(x):
    try:  # E:try
        pass
    finally:
        pass


def _with(x):
    with x:  # E:with
        pass


def _global(x):
    global NOT_A_GLOBAL  # E:global


def _def(x):
    def inner():  # E:def
        pass


def _break(n):
    for i in range(n):
        break  # E:break


def _import(x):
    import math  # E:import


def _fstring(x):
    tl.static_print(f"{x}")  # E:fstring


def _class(x):
    class A:  # E:class
        pass


UNSUPPORTED = {name[1:]: fn for name, fn in dict(globals()).items()
               if name.startswith("_") and callable(fn) and name[1:] in
               "lambda comprehension try with global def break assert import fstring class".split()}


def test_variadic_parameters_are_rejected():
    with pytest.raises(ascdsl.CompilationError) as info:
        @ascdsl.jit
        def k(x_ptr, *rest):  # E:varargs
            pass
    check(info.value, "varargs", "rest", "variadic parameter `rest`")


# ----------------------------------------------------------------------------- while compiling

@ascdsl.jit
def undefined_name(x_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(x_ptr + ofsets, 1.0)  # E:undefined


def test_undefined_name_suggests_a_close_one():
    lines = check(compile_error(undefined_name, F32, BLOCK=4), "undefined", "ofsets", "undefined name `ofsets`")
    assert lines[-1] == "hint: did you mean `offsets`?"


@ascdsl.jit
def shape_mismatch(x_ptr):
    a = tl.arange(0, 128)
    b = tl.arange(0, 64)
    tl.store(x_ptr + a, a + b)  # E:broadcast


def test_broadcast_shape_mismatch():
    check(compile_error(shape_mismatch, I32), "broadcast", "a + b", "cannot broadcast shapes (128,) and (64,)",
          "x[:, None]")


@ascdsl.jit
def runtime_arange(x_ptr, n):
    offs = tl.arange(0, n)  # E:arange
    tl.store(x_ptr + offs, 0)


def test_arange_bounds_must_be_constexpr():
    check(compile_error(runtime_arange, I32, 10), "arange", "tl.arange",
          "the end of tl.arange must be a constexpr int, got i32 scalar", "tl.constexpr")


@ascdsl.jit
def dtype_errors(x_ptr, y_ptr, WHAT: tl.constexpr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    if WHAT == "mod":
        x = x << 1  # E:mod
    elif WHAT == "and":
        x = x & x  # E:and
    elif WHAT == "ptr_float":
        x = tl.load(x_ptr + 1.5)  # E:ptr_float
    elif WHAT == "ptr_tile":
        x = tl.load(x_ptr + x)  # E:ptr_tile
    elif WHAT == "store_tile":
        tl.store(x, offs)  # E:store_tile
    elif WHAT == "store_shape":
        tl.store(y_ptr + offs[:, None] * 0, tl.zeros((16, 3), tl.float32))  # E:store_shape
    elif WHAT == "exp_int":
        x = tl.exp(offs)  # E:exp_int
    elif WHAT == "mask_float":
        x = tl.load(x_ptr + offs, mask=x)  # E:mask_float
    elif WHAT == "other_without_mask":
        x = tl.load(x_ptr + offs, other=0.0)  # E:other_without_mask
    elif WHAT == "pow":
        x = x ** 2  # E:pow
    elif WHAT == "literal_range":
        x = offs + 2 ** 70  # E:literal_range
    elif WHAT == "bool_arith":
        x = (x > 0) - (x > 1)  # E:bool_arith
    tl.store(y_ptr + offs, x)


@pytest.mark.parametrize("what, snippet, message", [
    ("mod", "x << 1", "`<<` needs int operands, got float32 and float32"),
    ("and", "x & x", "`&` needs bool or int operands, got float32 and float32"),
    ("ptr_float", "x_ptr + 1.5", "pointer offsets must be integers, got float added to ptr<f32>"),
    ("ptr_tile", "x_ptr + x", "pointer offsets must be integers, got float32 added to ptr<f32>"),
    ("store_tile", "tl.store", "tl.store needs a pointer, got tile<16xf32>"),
    ("store_shape", "tl.store", "the stored value (tile<16x3xf32>) does not fit pointers of shape (16, 1)"),
    ("exp_int", "tl.exp", "tl.exp needs a float tile, got int32"),
    ("mask_float", "tl.load", "a mask must be a bool tile, got tile<16xf32>"),
    ("other_without_mask", "tl.load", "tl.load got `other` without `mask`"),
    ("pow", "x ** 2", "operator `**` works only on constexprs"),
    ("literal_range", "offs + 2", "the literal 1180591620717411303424 does not fit in 64 bits"),
    ("bool_arith", "(x > 0) -", "`-` is not defined on bool tiles"),
])
def test_dtype_errors(what, snippet, message):
    check(compile_error(dtype_errors, F32, F32, WHAT=what), what, snippet, message, "hint: ")


@ascdsl.jit
def misc_errors(x_ptr, n, WHAT: tl.constexpr):
    offs = tl.arange(0, 8)
    x = tl.load(x_ptr + offs)
    if WHAT == "slice":
        y = x[1:3]  # E:slice
    elif WHAT == "plain":
        y = plain_function(x)  # E:plain
    elif WHAT == "numpy":
        y = np.sum(x)  # E:numpy
    elif WHAT == "list_global":
        y = NOT_A_GLOBAL  # E:list_global
    elif WHAT == "program_id":
        y = tl.program_id(3)  # E:program_id
    elif WHAT == "load_arity":
        y = tl.load()  # E:load_arity
    elif WHAT == "load_keyword":
        y = tl.load(x_ptr, msk=offs < 3)  # E:load_keyword
    elif WHAT == "tile_condition":
        if x > 0:  # E:tile_condition
            y = x
    elif WHAT == "chained":
        y = 0 < n < 10  # E:chained
    elif WHAT == "unpack":
        a, b = x  # E:unpack
    elif WHAT == "subscript_store":
        x[0] = 1.0  # E:subscript_store
    elif WHAT == "zero_step":
        for i in range(n, 0, 0):  # E:zero_step
            pass
    elif WHAT == "static_range":
        for i in tl.static_range(n):  # E:static_range
            pass
    elif WHAT == "iterate_tile":
        for i in x:  # E:iterate_tile
            pass
    elif WHAT == "static_assert":
        tl.static_assert(WHAT == "never", "only for 'never'")  # E:static_assert
    elif WHAT == "print":
        print(x)  # E:print
    elif WHAT == "bad_axis":
        y = tl.sum(x, axis=1)  # E:bad_axis
    elif WHAT == "range_call":
        y = range(3)  # E:range_call
    elif WHAT == "early_return":
        for i in range(n):
            return  # E:early_return
    elif WHAT == "runtime_shape":
        y = tl.zeros((n,), tl.float32)  # E:runtime_shape
    elif WHAT == "float64":
        y = x.to(tl.float64)  # E:float64
    elif WHAT == "dtype_other":
        y = tl.load(x_ptr + offs, mask=offs < n, other=tl.float32)  # E:dtype_other
    elif WHAT == "return_value":
        y = 1
    return y  # E:return_value


@pytest.mark.parametrize("what, snippet, message", [
    ("slice", "1:3", "tiles can only be indexed with `:` and `None`"),
    ("plain", "plain_function", "`plain_function` is a function, which kernels cannot use"),
    ("numpy", "np", "`np` is module `numpy`, which kernels cannot use"),
    ("list_global", "NOT_A_GLOBAL", "`NOT_A_GLOBAL` is a list, which kernels cannot use"),
    ("program_id", "tl.program_id", "the grid axis must be 0, 1 or 2, got 3"),
    ("load_arity", "tl.load", "wrong arguments for tl.load(): missing a required argument: 'ptr'"),
    ("load_keyword", "tl.load", "got an unexpected keyword argument 'msk'"),
    ("tile_condition", "x > 0", "a condition must be a scalar, got tile<8xi1>"),
    ("chained", "0 < n", "chained comparisons work only on constexprs"),
    ("unpack", "a, b", "cannot unpack tile<8xf32> into 2 names"),
    ("subscript_store", "x[0]", "only names can be assigned in a kernel"),
    ("zero_step", "range(n", "the step of a loop must be a nonzero int, got 0"),
    ("static_range", "tl.static_range", "tl.static_range bounds must be constexpr ints"),
    ("iterate_tile", "x:", "a for loop must iterate over range(...)"),
    ("static_assert", "tl.static_assert", "static_assert failed: only for 'never'"),
    ("print", "print", "the Python builtin `print` cannot be used in a kernel"),
    ("bad_axis", "tl.sum", "axis 1 is out of range for a tile of rank 1"),
    ("range_call", "range(3)", "range(...) can only be the iterable of a for loop"),
    ("early_return", "return", "`return` inside a runtime if or loop is not supported"),
    ("return_value", "return", "a kernel cannot return a value"),
    ("runtime_shape", "tl.zeros", "a tile shape must be a constexpr tuple of positive ints, got (i32 scalar,)"),
    ("float64", "tl.float64", "`tl.float64` is a Triton dtype that ascdsl does not support"),
    ("dtype_other", "tl.load", "expected a number for a float32 constant, got tl.float32"),
])
def test_misc_errors(what, snippet, message):
    check(compile_error(misc_errors, F32, 4, WHAT=what), what, snippet, message, "hint: ")


@ascdsl.jit
def loop_type_change(x_ptr, n):
    acc = tl.zeros((8,), tl.float32)
    for i in range(n):
        acc = tl.load(x_ptr + tl.arange(0, 16))  # E:loop_type
    tl.store(x_ptr + tl.arange(0, 8), acc)


def test_loop_carried_value_must_keep_its_type():
    check(compile_error(loop_type_change, F32, 4), "loop_type", "acc",
          "`acc` is tile<8xf32> before the loop and tile<16xf32> after an iteration; it must keep one type")


@ascdsl.jit
def if_type_mismatch(x_ptr, n):
    if n > 0:
        y = tl.zeros((4,), tl.float32)
    else:
        y = tl.zeros((4,), tl.float16)  # E:if_type
    tl.store(x_ptr + tl.arange(0, 4), y)


def test_branches_must_agree_on_types():
    check(compile_error(if_type_mismatch, F32, 4), "if_type", "y =",
          "`y` is tile<4xf32> in one branch of the if and tile<4xf16> in the other")


@ascdsl.jit
def if_int_joins_float_literal(x_ptr, n):
    if n > 2:
        s = n
    else:
        s = 0.5  # E:if_literal
    tl.store(x_ptr, s)


def test_a_literal_that_does_not_fit_the_other_branch_is_an_error_not_a_truncation():
    """``s = 0.5`` against an int32 ``s`` used to become the constant 0 silently."""
    check(compile_error(if_int_joins_float_literal, I32, 4), "if_literal", "s =",
          "`s` is i32 in one branch of the if and the literal 0.5 in the other")


@ascdsl.jit
def loop_int_carries_float_literal(x_ptr, n):
    s = n
    for i in range(n):
        s = 0.5  # E:loop_literal
    tl.store(x_ptr, s)


def test_a_literal_that_does_not_fit_the_loop_carried_type_is_an_error():
    check(compile_error(loop_int_carries_float_literal, I32, 4), "loop_literal", "s =",
          "`s` is i32 before the loop and the literal 0.5 after an iteration")


# ----------------------------------------------------------------------------- helpers

@ascdsl.jit
def inner_helper(x):
    return tl.exp(x)  # E:inner_helper


@ascdsl.jit
def outer_helper(x, SCALE: tl.constexpr):
    return inner_helper(x * SCALE)  # E:outer_call


@ascdsl.jit
def calls_helpers(x_ptr, n):
    offs = tl.arange(0, 8)
    y = outer_helper(offs, 2)  # E:kernel_call
    z = outer_helper(offs, n)  # E:runtime_constexpr
    tl.store(x_ptr + offs, y + z)


def test_errors_in_helpers_point_into_the_helper_and_name_each_call_site():
    lines = check(compile_error(calls_helpers, F32, 3), "inner_helper", "tl.exp", "tl.exp needs a float tile, got int32")
    outer, kernel = where("outer_call", "inner_helper"), where("kernel_call", "outer_helper")
    path = display_path(__file__)
    assert lines[3:5] == [f"note: in `inner_helper`, called from {path}:{outer[0]}:{outer[1]}",
                          f"note: in `outer_helper`, called from {path}:{kernel[0]}:{kernel[1]}"]


@ascdsl.jit
def helper_with_constexpr(x, SCALE: tl.constexpr):
    return x * SCALE


@ascdsl.jit
def passes_runtime_constexpr(x_ptr, n):
    tl.store(x_ptr, helper_with_constexpr(1.0, n))  # E:helper_constexpr


@ascdsl.jit
def wrong_helper_arity(x_ptr):
    tl.store(x_ptr, helper_with_constexpr(1.0))  # E:helper_arity


def test_helper_argument_errors_point_at_the_call():
    check(compile_error(passes_runtime_constexpr, F32, 3), "helper_constexpr", "helper_with_constexpr",
          "`SCALE` of helper_with_constexpr() is a tl.constexpr, but got i32 scalar")
    check(compile_error(wrong_helper_arity, F32), "helper_arity", "helper_with_constexpr",
          "helper_with_constexpr() is missing the constexpr argument `SCALE`",
          "the signature is helper_with_constexpr(x, SCALE: tl.constexpr)")


@ascdsl.jit
def internal_failure(x_ptr):
    tl.store(x_ptr, tl.sigmoid(1.0))  # E:internal


def test_internal_exceptions_are_located_at_the_user_line(monkeypatch):
    def broken(em, x):
        raise RuntimeError("boom")
    monkeypatch.setitem(frontend_builtins.BUILTINS, tl.sigmoid, broken)
    error = compile_error(internal_failure, F32)
    check(error, "internal", "tl.sigmoid", "internal compiler error: RuntimeError: boom")


# ----------------------------------------------------------------------------- at launch

@ascdsl.jit
def launched(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), n)


@pytest.mark.parametrize("call, marker, message", [
    ("missing_constexpr", "launch_missing", "launched() is missing the constexpr argument `BLOCK`"),
    ("too_many", "launch_many", "wrong arguments for launched(): too many positional arguments"),
    ("unknown_keyword", "launch_keyword", "got an unexpected keyword argument 'BLOK'"),
    ("missing", "launch_missing_arg", "launched() is missing the argument `n`"),
    ("bad_grid", "launch_grid", "the grid must be a tuple of 1 to 3 non-negative ints, got (1, 2, 3, 4)"),
    ("bad_arg", "launch_arg", "argument `n` is a str, which kernels cannot take"),
    ("float64", "launch_f64", "argument `x_ptr` has unsupported dtype float64"),
    ("strided", "launch_strided", "argument `x_ptr` has a negative stride, which a device pointer"),
])
def test_launch_errors_point_at_the_launch(call, marker, message):
    x = np.zeros(8, np.float32)
    with pytest.raises(ascdsl.CompilationError) as info:
        LAUNCHES[call](x)
    check(info.value, marker, "launched", message, "hint: ")


LAUNCHES = {
    "missing_constexpr": lambda x: launched[(1,)](x, 3),  # E:launch_missing
    "too_many": lambda x: launched[(1,)](x, 3, 8, 9),  # E:launch_many
    "unknown_keyword": lambda x: launched[(1,)](x, 3, BLOK=8),  # E:launch_keyword
    "missing": lambda x: launched[(1,)](x, BLOCK=8),  # E:launch_missing_arg
    "bad_grid": lambda x: launched[(1, 2, 3, 4)](x, 3, BLOCK=8),  # E:launch_grid
    "bad_arg": lambda x: launched[(1,)](x, "3", BLOCK=8),  # E:launch_arg
    "float64": lambda x: launched[(1,)](x.astype(np.float64), 3, BLOCK=8),  # E:launch_f64
    "strided": lambda x: launched[(1,)](x[::-2], 3, BLOCK=8, backend="sim"),  # E:launch_strided
}


def test_compile_errors_at_launch_render_like_at_specialize_and_name_the_launch():
    x = np.zeros(8, np.float32)
    with pytest.raises(ascdsl.CompilationError) as info:
        runtime_arange[(1,)](x, 8)  # E:launch_compile
    lines = check(info.value, "arange", "tl.arange", "the end of tl.arange must be a constexpr int")
    line, col = where("launch_compile", "runtime_arange")
    assert f"note: while compiling `runtime_arange` for the call at {display_path(__file__)}:{line}:{col}" in lines
    assert re.match(r"^\S+:\d+:\d+: error: ", str(info.value))


@ascdsl.jit
def shifted_product_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr):
    rows = cols = ks = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
    b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
    acc = tl.dot(a, b)
    tl.store(c_ptr + (rows[:, None] << N) + cols[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def test_a_ub_overflow_of_a_mix_kernels_vector_part_is_located_at_the_launch():
    """The store after ``tl.dot`` at ``rows << N`` goes lane by lane on the vector cores, whose UB it overflows:
    the error (its note naming the vector work) is raised at the host line of the launch with its sizes, not an
    AttributeError (``with_note`` kept a UBOverflowError's fields since; the fuzz, seed 44, ``ops/matmul.py``)."""
    a = np.ones((64, 64), np.float16)
    launch = ascdsl.Launch(shifted_product_kernel, grid=(1,), constexprs={"BLOCK": 64},
                           scalars={"M": 64, "N": 64, "K": 64})
    with pytest.raises(UBOverflowError) as info:
        launch(a, a, np.zeros((64, 64), np.float16), backend="sim")
    e = info.value
    assert (Path(e.loc.file).name, e.loc.line) == ("test_errors.py", _line("launch = ascdsl.Launch("))
    assert e.needed > e.budget == 188416 and "this launch of shifted_product_kernel (BLOCK=64)" in e.message
    assert any("after `tl.dot` runs on the vector cores" in n for n in e.notes)


def _line(text: str) -> int:
    return next(i for i, t in enumerate(Path(__file__).read_text().splitlines(), 1) if t.strip().startswith(text))
