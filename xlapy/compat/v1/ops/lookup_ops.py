"""String hashing and vocabulary lookups, as tf.feature_column's categorical columns use them.

StringToHashBucketFast maps each string to Fingerprint64(s) % num_buckets with FarmHash's
Fingerprint64 (farmhashna::Hash64 of the UTF-8 bytes), so buckets are TF's. Integer inputs
are hashed by their decimal text, as TF's hash-bucket column does (as_string first).

XlapyVocabularyLookup maps each key (string or integer) to its index in a vocabulary, as
TF's index table (HashTable + IdTableWithHashBuckets); a key outside it maps to
vocabulary_size + Fingerprint64(key) % num_oov_buckets when there are OOV buckets, else to
default_value. Keys that TF's dense-to-sparse conversion drops ('' for strings, -1 for
integers) map to -1 ("no id"), which feature columns ignore.

Both ops run in the executor: XLA does not compute strings.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import make, tensor

# ---- FarmHash Fingerprint64 --------------------------------------------------------------

_M = (1 << 64) - 1
_K0 = 0xC3A5C85C97CB3127
_K1 = 0xB492B66FBE98F273
_K2 = 0x9AE16A3B2F90404F
_KMUL = 0x9DDFEA08EB382D69


def _rot(v, r):
    return v if r == 0 else ((v >> r) | (v << (64 - r))) & _M


def _u64(b, i):
    return int.from_bytes(b[i:i + 8], "little")


def _u32(b, i):
    return int.from_bytes(b[i:i + 4], "little")


def _mix(v):
    return v ^ (v >> 47)


def _h16(u, v, mul=_KMUL):
    a = _mix(((u ^ v) * mul) & _M)
    b = _mix(((v ^ a) * mul) & _M)
    return (b * mul) & _M


def _len0to16(s, n):
    if n >= 8:
        mul = _K2 + n * 2
        a = (_u64(s, 0) + _K2) & _M
        b = _u64(s, n - 8)
        c = (_rot(b, 37) * mul + a) & _M
        d = ((_rot(a, 25) + b) * mul) & _M
        return _h16(c, d, mul)
    if n >= 4:
        mul = _K2 + n * 2
        return _h16((n + (_u32(s, 0) << 3)) & _M, _u32(s, n - 4), mul)
    if n > 0:
        y = (s[0] + (s[n >> 1] << 8)) & 0xFFFFFFFF
        z = (n + (s[n - 1] << 2)) & 0xFFFFFFFF
        return (_mix(((y * _K2) ^ (z * _K0)) & _M) * _K2) & _M
    return _K2


def _len17to32(s, n):
    mul = _K2 + n * 2
    a = (_u64(s, 0) * _K1) & _M
    b = _u64(s, 8)
    c = (_u64(s, n - 8) * mul) & _M
    d = (_u64(s, n - 16) * _K2) & _M
    return _h16((_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M,
                (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)


def _len33to64(s, n):
    mul = _K2 + n * 2
    a = (_u64(s, 0) * _K2) & _M
    b = _u64(s, 8)
    c = (_u64(s, n - 8) * mul) & _M
    d = (_u64(s, n - 16) * _K2) & _M
    y = (_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M
    z = _h16(y, (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)
    e = (_u64(s, 16) * mul) & _M
    f = _u64(s, 24)
    g = ((y + _u64(s, n - 32)) * mul) & _M
    h = ((z + _u64(s, n - 24)) * mul) & _M
    return _h16((_rot((e + f) & _M, 43) + _rot(g, 30) + h) & _M,
                (e + _rot((f + a) & _M, 18) + g) & _M, mul)


def _weak32(s, i, a, b):
    w, x, y, z = _u64(s, i), _u64(s, i + 8), _u64(s, i + 16), _u64(s, i + 24)
    a = (a + w) & _M
    b = _rot((b + a + z) & _M, 21)
    c = a
    a = (a + x + y) & _M
    b = (b + _rot(a, 44)) & _M
    return (a + z) & _M, (b + c) & _M


def fingerprint64(data) -> int:
    """FarmHash Fingerprint64 of bytes (str: its UTF-8 encoding), as TF's Fingerprint64."""
    s = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    n = len(s)
    if n <= 16:
        return _len0to16(s, n)
    if n <= 32:
        return _len17to32(s, n)
    if n <= 64:
        return _len33to64(s, n)
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & _M
    z = (_mix((y * _K2 + 113) & _M) * _K2) & _M
    v = (0, 0)
    w = (0, 0)
    x = (x * _K2 + _u64(s, 0)) & _M
    end = ((n - 1) // 64) * 64
    last64 = n - 64
    i = 0
    while True:
        x = (_rot((x + y + v[0] + _u64(s, i + 8)) & _M, 37) * _K1) & _M
        y = (_rot((y + v[1] + _u64(s, i + 48)) & _M, 42) * _K1) & _M
        x ^= w[1]
        y = (y + v[0] + _u64(s, i + 40)) & _M
        z = (_rot((z + w[0]) & _M, 33) * _K1) & _M
        v = _weak32(s, i, (v[1] * _K1) & _M, (x + w[0]) & _M)
        w = _weak32(s, i + 32, (z + w[1]) & _M, (y + _u64(s, i + 16)) & _M)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = _K1 + ((z & 0xFF) << 1)
    i = last64
    w = ((w[0] + ((n - 1) & 63)) & _M, w[1])
    v = ((v[0] + w[0]) & _M, v[1])
    w = ((w[0] + v[0]) & _M, w[1])
    x = (_rot((x + y + v[0] + _u64(s, i + 8)) & _M, 37) * mul) & _M
    y = (_rot((y + v[1] + _u64(s, i + 48)) & _M, 42) * mul) & _M
    x ^= (w[1] * 9) & _M
    y = (y + v[0] * 9 + _u64(s, i + 40)) & _M
    z = (_rot((z + w[0]) & _M, 33) * mul) & _M
    v = _weak32(s, i, (v[1] * mul) & _M, (x + w[0]) & _M)
    w = _weak32(s, i + 32, (z + w[1]) & _M, (y + _u64(s, i + 16)) & _M)
    z, x = x, z
    return _h16((_h16(v[0], w[0], mul) + _mix(y) * _K0 + z) & _M,
                (_h16(v[1], w[1], mul) + x) & _M, mul)


# ---- keys ------------------------------------------------------------------------------------

def _key_bytes(v) -> bytes:
    """A string key as bytes; an integer key as its decimal text (TF's as_string)."""
    if isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode("utf-8")
    return str(int(v)).encode()


def _is_string_array(a) -> bool:
    return a.dtype.kind in "SUO"


def _ignored(a) -> np.ndarray:
    """The entries TF's dense-to-sparse conversion drops: '' for strings, -1 for ints."""
    if _is_string_array(a):
        return np.vectorize(lambda v: len(v) == 0, otypes=[bool])(a) if a.size else \
            np.zeros(a.shape, bool)
    return a == -1


def _check_key_dtype(op_name, t):
    if not (t.dtype == dtypes.string or t.dtype.is_integer):
        raise InvalidTypeError(f"{op_name}: keys must be strings or integers, got "
                               f"{t.dtype.name}")


# ---- StringToHashBucketFast --------------------------------------------------------------------

@register_op("StringToHashBucketFast", attrs=("num_buckets", "keep_empty"), lowering=None,
             infer=lambda op: [(dtypes.int64, op.inputs[0].shape)])
def _hash_bucket(m, x, num_buckets=1, keep_empty=False):
    """keep_empty: '' hashes as any string (tf.strings.to_hash_bucket_fast), else gives -1
    (feature columns)."""
    x = np.asarray(x)
    flat = x.reshape(-1)
    out = np.fromiter((fingerprint64(_key_bytes(v)) % num_buckets for v in flat), np.int64,
                      count=flat.size)
    out = out.reshape(x.shape)
    if not keep_empty:
        out[_ignored(x)] = -1
    return out


def string_to_hash_bucket_fast(input, num_buckets, name=None):
    """Fingerprint64(s) % num_buckets for each string (ints: of their decimal text); ''
    (or -1) gives -1."""
    t = tensor(input)
    _check_key_dtype("string_to_hash_bucket_fast", t)
    if int(num_buckets) < 1:
        raise InvalidArgumentError(f"num_buckets must be >= 1, got {num_buckets}")
    return make("StringToHashBucketFast", [t], {"num_buckets": int(num_buckets)}, name=name)


# ---- XlapyVocabularyLookup ---------------------------------------------------------------------

@register_op("XlapyVocabularyLookup", attrs=("keys", "default_value", "num_oov_buckets"),
             lowering=None, infer=lambda op: [(dtypes.int64, op.inputs[0].shape)])
def _vocab_lookup(m, x, keys=(), default_value=-1, num_oov_buckets=0):
    x = np.asarray(x)
    table = {k: i for i, k in enumerate(keys)}
    n = len(keys)
    flat = x.reshape(-1)
    as_key = _key_bytes if keys and isinstance(keys[0], bytes) else int
    out = np.empty(flat.size, np.int64)
    for j, v in enumerate(flat):
        k = as_key(v)
        i = table.get(k)
        if i is None:
            i = n + fingerprint64(_key_bytes(v)) % num_oov_buckets if num_oov_buckets \
                else default_value
        out[j] = i
    out = out.reshape(x.shape)
    out[_ignored(x)] = -1
    return out


not_differentiable("StringToHashBucketFast", "XlapyVocabularyLookup")


def vocabulary_lookup(keys, vocabulary, default_value=-1, num_oov_buckets=0, name=None):
    """The index of each key in `vocabulary` (strings or ints), int64; see the module doc."""
    t = tensor(keys)
    _check_key_dtype("vocabulary_lookup", t)
    if t.dtype == dtypes.string:
        vocab = tuple(_key_bytes(v) for v in vocabulary)
    else:
        vocab = tuple(int(v) for v in vocabulary)
    if len(set(vocab)) != len(vocab):
        raise InvalidArgumentError(f"Duplicate keys in the vocabulary: {list(vocabulary)}")
    return make("XlapyVocabularyLookup", [t], {"keys": vocab, "default_value": int(
        default_value), "num_oov_buckets": int(num_oov_buckets)}, name=name)


# ---- XlapyCrossHashed --------------------------------------------------------------------------

_CROSS_MUL = 0xC6A4A7935BD1E995
DEFAULT_HASH_KEY = 0xDECAFCAFFE   # TF's sparse_ops._DEFAULT_HASH_KEY


def fingerprint_cat64(fp1: int, fp2: int) -> int:
    """TF's FingerprintCat64: mixes two fingerprints into one."""
    r = fp1 ^ _CROSS_MUL
    r ^= (_mix((fp2 * _CROSS_MUL) & _M) * _CROSS_MUL) & _M
    r = (r * _CROSS_MUL) & _M
    r = (_mix(r) * _CROSS_MUL) & _M
    return _mix(r)


def _cross_infer(op):
    widths = []
    for t in op.inputs:
        d = t.shape.dims
        widths.append(None if d is None or len(d) != 2 else d[1])
    batch = op.inputs[0].shape.dims[0] if op.inputs[0].shape.dims else None
    width = None if any(w is None for w in widths) else int(np.prod(widths))
    from xlapy.compat.v1.tensor_shape import TensorShape
    return [(dtypes.int64, TensorShape([batch, width]))]


@register_op("XlapyCrossHashed", attrs=("num_buckets", "hash_key", "drop_missing"),
             lowering=None, infer=_cross_infer)
def _cross_hashed(m, *inputs, num_buckets=0, hash_key=DEFAULT_HASH_KEY, drop_missing=()):
    import itertools
    arrays = [np.asarray(a) for a in inputs]
    n = arrays[0].shape[0]
    if any(a.ndim != 2 or a.shape[0] != n for a in arrays):
        raise InvalidArgumentError(f"cross: inputs must be [batch, k] with the same batch, "
                                   f"got shapes {[a.shape for a in arrays]}")
    width = int(np.prod([a.shape[1] for a in arrays]))
    out = np.full((n, width), -1, np.int64)
    mod = num_buckets if num_buckets > 0 else (1 << 63) - 1
    for b in range(n):
        lists = []
        for a, drop in zip(arrays, drop_missing or (False,) * len(arrays)):
            row = a[b]
            if _is_string_array(a):
                lists.append([fingerprint64(_key_bytes(v)) for v in row])
            else:   # integers enter the cross as they are (TF's SparseTensorColumn<int64>)
                lists.append([int(v) & _M for v in row if not (drop and int(v) < 0)])
        for j, combo in enumerate(itertools.product(*lists)):
            h = hash_key
            for f in combo:
                h = fingerprint_cat64(h, f)
            out[b, j] = h % mod
    return out


not_differentiable("XlapyCrossHashed")


def cross_hashed(inputs, num_buckets=0, hash_key=None, drop_missing=None, name=None):
    """TF's sparse_cross_hashed over dense [batch, k_i] inputs: for each example, every
    combination of one value per input, hashed by chaining FingerprintCat64 from hash_key
    over the values' fingerprints (strings: Fingerprint64; ints: the value), then
    % num_buckets. Rows are padded with -1 where drop_missing inputs lack values (-1)."""
    ts = [tensor(t) for t in inputs]
    for t in ts:
        _check_key_dtype("cross_hashed", t)
    drop = tuple(bool(d) for d in (drop_missing or [False] * len(ts)))
    return make("XlapyCrossHashed", ts, {"num_buckets": int(num_buckets),
                                         "hash_key": int(DEFAULT_HASH_KEY if hash_key is None
                                                         else hash_key),
                                         "drop_missing": drop}, name=name)
