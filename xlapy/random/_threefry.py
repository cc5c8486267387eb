"""Threefry-2x32 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11), the
counter-based generator behind JAX's default PRNG, written with xlapy's u32 primitives so
that a sampler under jit is one fused elementwise kernel.

A key is a pair of u32 words (k0, k1). The hash maps a pair of u32 counters (x0, x1) to a
pair of u32 words: 20 rounds of `x0 += x1; x1 = rotl(x1, r); x1 ^= x0` with the rotation
amounts R0 = (13, 15, 26, 6) and R1 = (17, 29, 16, 24) alternating every four rounds, and
after each group of four a key injection: with k2 = k0 ^ k1 ^ 0x1BD11BDA and the schedule
ks = (k0, k1, k2), group g (1..5) adds ks[g % 3] to x0 and ks[(g+1) % 3] + g to x1; before
the first round x0 += k0, x1 += k1.

How JAX (jax_threefry_partitionable = True, its default) derives everything from the hash:
  counters   element i of an output of shape S (row-major linear index i, as a 64-bit
             number) hashes the counter pair (hi32(i), lo32(i))
  bits       the two output words b0, b1 of that hash: 32-bit samples are b0 ^ b1, 64-bit
             ones (b0 << 32) | b1, 8- and 16-bit ones the low bits of b0 ^ b1
  split      new key i (of shape S keys) is the pair (b0, b1) of counter i
  fold_in    the new key is the pair (b0, b1) of the counter pair (0, data)
  seed       a 64-bit integer seed s gives the key (s >> 32, s & 0xFFFFFFFF)
"""

from __future__ import annotations

import math

import numpy as np

from xlapy import lax as L
from xlapy.config import enable_x64
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives import shapes as S

U32 = np.dtype(np.uint32)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA


def _broadcast(k, shape):
    """k (a scalar, or an array of shape `shape` minus trailing dims) broadcast to shape."""
    ks = B.aval_of(k).shape
    if ks == tuple(shape):
        return k
    return B.broadcast_in_dim(k, shape, tuple(range(len(ks))))


def _rotl(x, r: int):
    return L.bitwise_or(L.shift_left(x, r), L.shift_right_logical(x, 32 - r))


def threefry2x32(k0, k1, x0, x1):
    """The Threefry-2x32 hash of the counters (x0, x1) under the key (k0, k1): u32 arrays of
    one shape (scalars broadcast to it). Returns the two u32 output words."""
    shape = B.aval_of(x0).shape
    k0, k1 = (_broadcast(k, shape) for k in (k0, k1))
    ks = (k0, k1, L.bitwise_xor(L.bitwise_xor(k0, k1), _PARITY))
    x0, x1 = L.add(x0, ks[0]), L.add(x1, ks[1])
    for g in range(1, 6):
        for r in _ROTATIONS[(g - 1) % 2]:
            x0 = L.add(x0, x1)
            x1 = L.bitwise_xor(x0, _rotl(x1, r))
        x0 = L.add(x0, ks[g % 3])
        x1 = L.add(L.add(x1, ks[(g + 1) % 3]), g)
    return x0, x1


def counters(shape: tuple):
    """(hi, lo): the high and low 32 bits of each element's row-major linear index."""
    n = math.prod(shape)
    if not shape:
        z = np.zeros((), U32)
        return z, z
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    if n <= 2 ** 32:
        lo = None
        for d, stride in enumerate(strides):
            if shape[d] == 1:
                continue
            term = S.iota(U32, shape, d)
            if stride != 1:
                term = L.mul(term, stride)
            lo = term if lo is None else L.add(lo, term)
        if lo is None:
            lo = B.full(shape, 0, U32)
        return B.full(shape, 0, U32), lo
    u64 = np.dtype(np.uint64)
    idx = None
    with enable_x64(True):  # 64-bit indices whatever the user's setting
        for d, stride in enumerate(strides):
            term = L.mul(S.iota(u64, shape, d), stride)
            idx = term if idx is None else L.add(idx, term)
        hi = B.convert(L.shift_right_logical(idx, 32), U32)
        return hi, B.convert(L.bitwise_and(idx, 0xFFFFFFFF), U32)


def key_words(key):
    """The two u32 words of a key of shape (2,), as scalars."""
    return (S.reshape(S.slice_(key, (0,), (1,)), ()), S.reshape(S.slice_(key, (1,), (2,)), ()))


def _pair(b0, b1):
    """Stack two arrays of shape S into one of shape S + (2,)."""
    shape = B.aval_of(b0).shape
    return S.concatenate([S.reshape(b, shape + (1,)) for b in (b0, b1)], len(shape))


def random_bits(key, bit_width: int, shape: tuple):
    """Uniform random bits: an array of uint{bit_width} of `shape`."""
    k0, k1 = key_words(key)
    if math.prod(shape) == 0:
        return B.full(shape, 0, np.dtype(f"uint{bit_width}"))
    hi, lo = counters(shape)
    return _bits(*threefry2x32(k0, k1, hi, lo), bit_width)


def _bits(b0, b1, bit_width: int):
    """uint{bit_width} bits of the two u32 words of threefry's output: both words for 64,
    their xor (truncated below 32) else."""
    if bit_width == 64:
        u64 = np.dtype(np.uint64)
        return L.bitwise_or(L.shift_left(B.convert(b0, u64), 32), B.convert(b1, u64))
    bits = L.bitwise_xor(b0, b1)
    return bits if bit_width == 32 else B.convert(bits, np.dtype(f"uint{bit_width}"))


def split(key, shape: tuple):
    """Keys of shape `shape` (data of shape shape + (2,)) derived from one key."""
    k0, k1 = key_words(key)
    if math.prod(shape) == 0:
        return B.full(tuple(shape) + (2,), 0, U32)
    hi, lo = counters(shape)
    return _pair(*threefry2x32(k0, k1, hi, lo))


def fold_in(key, data):
    """A new key from a key and a u32 scalar."""
    k0, k1 = key_words(key)
    b0, b1 = threefry2x32(k0, k1, np.zeros((), U32), data)
    return _pair(b0, b1)


def seed_words(seed):
    """The key of an integer seed (an int64/int32/uint array scalar, maybe traced): the
    high word is the seed shifted right (logically) by 32, zero for 32-bit seeds."""
    dt = B.aval_of(seed).dtype
    if dt.itemsize == 8:
        hi = B.convert(L.shift_right_logical(seed, 32), U32)
        lo = B.convert(L.bitwise_and(seed, 0xFFFFFFFF), U32)
    else:
        hi, lo = B.full((), 0, U32), B.convert(seed, U32)
    return _pair(S.reshape(hi, ()), S.reshape(lo, ()))


def batched_words(keys):
    """The two u32 words of each key of a key array of shape S + (2,): arrays of shape S."""
    shape = B.aval_of(keys).shape
    n = len(shape) - 1
    words = []
    for i in range(2):
        starts, limits = [0] * (n + 1), list(shape)
        starts[n], limits[n] = i, i + 1
        words.append(S.reshape(S.slice_(keys, starts, limits), shape[:-1]))
    return words


def split_batched(keys, num: int):
    """split(k, num) of every key of an array of shape S + (2,): shape S + (num, 2)."""
    k0, k1 = batched_words(keys)
    shape = B.aval_of(k0).shape + (num,)
    lo = S.iota(U32, shape, len(shape) - 1)
    return _pair(*threefry2x32(k0, k1, B.full(shape, 0, U32), lo))


def scalar_bits_batched(keys, bit_width: int = 32):
    """random_bits(k, bit_width, ()) of every key of an array of shape S + (2,)."""
    k0, k1 = batched_words(keys)
    zero = B.full(B.aval_of(k0).shape, 0, U32)
    return _bits(*threefry2x32(k0, k1, zero, zero), bit_width)
