"""``tl.rand``/``randn``/``randint``/``randint4x``: Philox 4x32 emitted as int32 tile arithmetic.

The rounds are Triton's (``triton.language.random``) on the same bits: ascdsl has no uint32, so
the counters are int32 tiles whose bit patterns are Triton's uint32 values (wrapping ``*``/``+``,
``^`` and ``umulhi`` do not care about signedness). The key is the seed's low and high 32 bits.
"""
from __future__ import annotations

from .. import dtypes
from .. import language as tl
from ..ir import Op, Value
from ..semantics import SemanticError
from .emit import Emitter, describe


def _i32(bits: int) -> int:
    """The int32 whose bit pattern is the uint32 ``bits``."""
    bits &= 0xFFFFFFFF
    return bits - (1 << 32) if bits >= 1 << 31 else bits


KEY_A, KEY_B = _i32(0x9E3779B9), _i32(0xBB67AE85)
ROUND_A, ROUND_B = _i32(0xD2511F53), _i32(0xCD9E8D57)
UNIFORM_SCALE = 4.6566127342e-10  # the largest float with INT32_MAX * scale < 1.0


def _key(em: Emitter, seed):
    """The Philox key (low and high 32 bits of the seed as a uint64)."""
    if isinstance(seed, int) and not isinstance(seed, bool):
        return _i32(seed), _i32(seed >> 32)
    if not (isinstance(seed, Value) and seed.type.is_scalar and seed.type.dtype.is_int):
        raise SemanticError(f"the seed must be an int scalar, got {describe(seed)}",
                            "pass the seed as an int argument of the kernel")
    wide = em.cast(seed, dtypes.int64)
    return em.cast(wide, dtypes.int32), em.cast(em.binary(Op.SHR, wide, 32), dtypes.int32)


def _counter(em: Emitter, offset) -> Value:
    if isinstance(offset, int) and not isinstance(offset, bool):
        return em.const(offset, dtypes.int32)
    if not (isinstance(offset, Value) and offset.type.dtype in (dtypes.int32, dtypes.int16, dtypes.int8,
                                                                dtypes.uint8)):
        raise SemanticError(f"the offset of the random functions must be an int32 tile, got {describe(offset)}",
                            "use int32 offsets, e.g. pid * BLOCK + tl.arange(0, BLOCK)")
    return em.cast(offset, dtypes.int32)


def philox(em: Emitter, seed, offset, n_rounds) -> tuple[Value, Value, Value, Value]:
    if not isinstance(n_rounds, int) or n_rounds < 0:
        raise SemanticError(f"n_rounds must be a non-negative constexpr int, got {describe(n_rounds)}")
    c0 = _counter(em, offset)
    c1 = c2 = c3 = em.const(0, dtypes.int32, c0.type.shape)
    k0, k1 = _key(em, seed)
    for _ in range(n_rounds):
        old0, old2 = c0, c2
        c0 = em.binary(Op.XOR, em.binary(Op.XOR, em.binary(Op.UMULHI, ROUND_B, old2), c1), k0)
        c2 = em.binary(Op.XOR, em.binary(Op.XOR, em.binary(Op.UMULHI, ROUND_A, old0), c3), k1)
        c1 = em.binary(Op.MUL, ROUND_B, old2)
        c3 = em.binary(Op.MUL, ROUND_A, old0)
        k0, k1 = _add(em, k0, KEY_A), _add(em, k1, KEY_B)
    return c0, c1, c2, c3


def _add(em: Emitter, key, constant: int):
    return _i32(key + constant) if isinstance(key, int) else em.binary(Op.ADD, key, constant)


def uniform(em: Emitter, bits: Value) -> Value:
    """Random int32 bits as a float32 in [0, 1)."""
    negative = em.binary(Op.LT, bits, 0)
    bits = em.where(negative, em.binary(Op.SUB, em.unary(Op.NEG, bits), 1), bits)
    return em.binary(Op.MUL, bits, UNIFORM_SCALE)


def normal(em: Emitter, u1: Value, u2: Value) -> tuple[Value, Value]:
    """Box-Muller: two uniforms to two standard normals."""
    u1 = em.binary(Op.MAXIMUM, 1.0e-7, u1)
    theta = em.binary(Op.MUL, 6.283185307179586, u2)
    r = em.unary(Op.SQRT, em.binary(Op.MUL, -2.0, em.unary(Op.LOG, u1)))
    return em.binary(Op.MUL, r, em.unary(Op.COS, theta)), em.binary(Op.MUL, r, em.unary(Op.SIN, theta))


def randint4x(em: Emitter, seed, offset, n_rounds):
    return philox(em, seed, offset, n_rounds)


def randint(em: Emitter, seed, offset, n_rounds):
    return philox(em, seed, offset, n_rounds)[0]


def rand(em: Emitter, seed, offset, n_rounds):
    return uniform(em, randint(em, seed, offset, n_rounds))


def rand4x(em: Emitter, seed, offset, n_rounds):
    return tuple(uniform(em, bits) for bits in philox(em, seed, offset, n_rounds))


def randn(em: Emitter, seed, offset, n_rounds):
    i1, i2, _, _ = philox(em, seed, offset, n_rounds)
    return normal(em, uniform(em, i1), uniform(em, i2))[0]


def randn4x(em: Emitter, seed, offset, n_rounds):
    u = [uniform(em, bits) for bits in philox(em, seed, offset, n_rounds)]
    return (*normal(em, u[0], u[1]), *normal(em, u[2], u[3]))


BUILTINS = {tl.randint4x: randint4x, tl.randint: randint, tl.rand: rand, tl.rand4x: rand4x, tl.randn: randn,
            tl.randn4x: randn4x}
