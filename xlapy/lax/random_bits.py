"""jax.lax's random-bit operations: rng_bit_generator and rng_uniform (and
RandomAlgorithm).

rng_bit_generator gives XLA's bits on the cpu (the default algorithm there is Philox
4x32-10, which RNG_PHILOX names too): the key is four uint32 words; the first two are the
Philox key, the last two the low 64 bits of a 128-bit counter (the first two its high
bits). Block i of four 32-bit outputs hashes counter + i; element j of the (row-major)
result is word j % 4 of block j // 4 (64-bit results: words 2k and 2k + 1 joined, low
word first, two per block; 8- and 16-bit results: the low bits of the 32-bit words). The
returned key has its low counter word advanced by the number of blocks used. THREE_FRY
(XLA's own three-fry layout) is not provided.

rng_uniform is XLA's stateful RngUniform: values in [a, b) of a hidden generator (NumPy's,
seeded once per process), drawn afresh on every call, jitted programs included (through a
host callback); as in XLA they are not reproducible across programs.
"""

from __future__ import annotations

import enum
import math
import threading

import numpy as np

import xlapy.numpy as xnp
from xlapy.errors import UnsupportedError, XlapyError
from xlapy.frontend.core import Tracer, active_traces
from xlapy.frontend.dtypes import canonicalize_dtype
from xlapy.frontend.primitives import basic as B
from xlapy.lax import ops as L
from xlapy.lax.more_ops2 import mulhi


def _arr(x):
    return x if isinstance(x, Tracer) else np.asarray(x)


def _aval(x):
    return B.aval_of(_arr(x))


class RandomAlgorithm(enum.IntEnum):
    """XLA's bit-generator algorithms (as jax.lax.RandomAlgorithm)."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2


_U32 = np.dtype(np.uint32)
_PHILOX_M = (np.uint32(0xD2511F53), np.uint32(0xCD9E8D57))
_PHILOX_W = (np.uint32(0x9E3779B9), np.uint32(0xBB67AE85))


def _mulhilo(x, m):
    m = L.full_like(x, m)
    return mulhi(x, m), L.mul(x, m)


def _philox_blocks(key, n_blocks: int):
    """The four u32 words of Philox 4x32-10 blocks 0..n_blocks-1 for an XLA state key."""
    w = [L.reshape(L.slice(key, (i,), (i + 1,)), ()) for i in range(4)]
    i = L.iota(_U32, n_blocks)
    one = L.full((n_blocks,), 1, _U32)
    zero = L.full((n_blocks,), 0, _U32)

    def bcast(s):
        return L.broadcast(s, (n_blocks,))

    # the counter: the 128-bit number (w1 w0 w3 w2), low word w2, plus the block index
    c0 = L.add(bcast(w[2]), i)
    carry = L.select(L.lt(c0, i), one, zero)
    c1 = L.add(bcast(w[3]), carry)
    carry = L.select(L.bitwise_and(L.eq(c1, zero), L.eq(carry, one)), one, zero)
    c2 = L.add(bcast(w[0]), carry)
    carry = L.select(L.bitwise_and(L.eq(c2, zero), L.eq(carry, one)), one, zero)
    c3 = L.add(bcast(w[1]), carry)
    x = [c0, c1, c2, c3]
    k0, k1 = bcast(w[0]), bcast(w[1])
    for _ in range(10):
        hi0, lo0 = _mulhilo(x[0], _PHILOX_M[0])
        hi1, lo1 = _mulhilo(x[2], _PHILOX_M[1])
        x = [L.bitwise_xor(L.bitwise_xor(hi1, x[1]), k0), lo1,
             L.bitwise_xor(L.bitwise_xor(hi0, x[3]), k1), lo0]
        k0 = L.add(k0, L.full_like(k0, _PHILOX_W[0]))
        k1 = L.add(k1, L.full_like(k1, _PHILOX_W[1]))
    return x


def _advanced_key(key, n_blocks: int):
    """The key with its low 64 counter bits (words 2 and 3) advanced by n_blocks."""
    w = [L.reshape(L.slice(key, (i,), (i + 1,)), ()) for i in range(4)]
    lo = L.add(w[2], L.full((), n_blocks & 0xFFFFFFFF, _U32))
    carry = L.convert_element_type(L.lt(lo, w[2]), _U32)
    hi = L.add(L.add(w[3], L.full((), n_blocks >> 32, _U32)), carry)
    return L.concatenate([L.reshape(v, (1,)) for v in (w[0], w[1], lo, hi)], 0)


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *,
                      out_sharding=None):
    """(new key, random bits of shape and dtype) from a uint32[4] key, as XLA's
    RngBitGenerator on the cpu (see the module docstring)."""
    try:
        alg = RandomAlgorithm(int(algorithm))
    except (TypeError, ValueError):
        raise XlapyError(f"rng_bit_generator: unknown algorithm {algorithm!r}") from None
    if alg == RandomAlgorithm.RNG_THREE_FRY:
        raise UnsupportedError("rng_bit_generator: RNG_THREE_FRY is not supported by xlapy; "
                               "use RNG_DEFAULT or RNG_PHILOX (the cpu's default)")
    key = _arr(key)
    ka = B.aval_of(key)
    if ka.shape != (4,) or np.dtype(ka.dtype) != _U32:
        raise XlapyError(f"rng_bit_generator: the key must be a uint32[4] array, got {ka}")
    dt = np.dtype(canonicalize_dtype(np.dtype(dtype)))
    if dt.kind != "u":
        raise XlapyError(f"rng_bit_generator: dtype must be an unsigned integer type (uint8, "
                         f"uint16, uint32, uint64), got {dt}")
    shape = tuple(int(d) for d in shape)
    n = math.prod(shape)
    wide = dt.itemsize == 8
    n_blocks = -(-(2 * n if wide else n) // 4)
    if n_blocks == 0:
        return key, L.full(shape, 0, dt)
    x = _philox_blocks(key, n_blocks)
    if wide:
        u64 = np.dtype(np.uint64)
        joined = [L.bitwise_or(L.convert_element_type(x[2 * j], u64),
                               L.shift_left(L.convert_element_type(x[2 * j + 1], u64),
                                            L.full((n_blocks,), 32, u64))) for j in range(2)]
        words = L.reshape(L.concatenate([L.reshape(v, (n_blocks, 1)) for v in joined], 1),
                          (2 * n_blocks,))
    else:
        words = L.reshape(L.concatenate([L.reshape(v, (n_blocks, 1)) for v in x], 1),
                          (4 * n_blocks,))
    words = L.slice(words, (0,), (n,))
    if dt.itemsize < 4:
        words = L.convert_element_type(words, np.dtype(f"uint{8 * dt.itemsize}"))
    return _advanced_key(key, n_blocks), L.reshape(words, shape)


_rng_lock = threading.Lock()
_rng = np.random.default_rng(0)


def _draw(a, b, shape, dtype):
    dtype = np.dtype(dtype)
    a = np.broadcast_to(np.asarray(a, dtype), shape)
    b = np.broadcast_to(np.asarray(b, dtype), shape)
    with _rng_lock:
        if dtype.kind in "iu":
            lo = a.astype(np.int64)
            return _rng.integers(lo, np.maximum(b.astype(np.int64), lo + 1),
                                 size=shape).astype(dtype)
        u = _rng.random(size=shape)
    r = (a + (b.astype(np.float64) - a) * u).astype(dtype)
    return np.where(r >= b, np.nextafter(b, a), r).astype(dtype)


def rng_uniform(a, b, shape):
    """Values in [a, b) (scalars of one float or integer dtype) of a hidden stateful
    generator: different on every call, eager or jitted (see the module docstring)."""
    shape = tuple(int(d) for d in shape)
    aa, ba = _aval(a), _aval(b)
    if aa.dtype != ba.dtype or aa.shape != () or ba.shape != ():
        raise XlapyError(f"rng_uniform: a and b must be scalars of one dtype, got {aa} and "
                         f"{ba}")
    dt = np.dtype(aa.dtype)
    if dt.kind not in "iuf":
        raise XlapyError(f"rng_uniform: a float or integer dtype is needed, got {dt}")
    if not active_traces():
        return xnp.asarray(_draw(np.asarray(a), np.asarray(b), shape, dt))
    # under a trace: drawn when the program runs, not once when it is traced
    from xlapy.frontend.callbacks import pure_callback  # the host callback of jit
    from xlapy.frontend.jaxpr import ShapeDtypeStruct  # the callback's result type
    return pure_callback(lambda lo, hi: _draw(lo, hi, shape, dt),
                         ShapeDtypeStruct(shape, dt), a, b)


__all__ = ["RandomAlgorithm", "rng_bit_generator", "rng_uniform"]
