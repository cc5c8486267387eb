"""PRNG keys: legacy uint32[..., 2] key arrays (PRNGKey) and typed key arrays (key), and
the functions that make and derive keys (split, fold_in, key_data, wrap_key_data).

A typed key array (PRNGKeyArray, dtype key<fry>) holds the same uint32 words as a legacy
key; its shape leaves out the trailing 2. It is a pytree node, so it passes through jit
and is returned from it. Every sampler accepts either kind; split and fold_in return the
kind they were given.
"""

from __future__ import annotations

import numpy as np

from xlapy.frontend import pytree
from xlapy.frontend.core import Tracer
from xlapy.frontend.primitives import basic as B
from xlapy.random import _threefry
from xlapy.random._common import RandomError, canonical_shape, jitted, x64_enabled

IMPL = "threefry2x32"


class KeyDType:
    """The dtype of typed threefry keys, printed key<fry> as in JAX."""

    name = "key<fry>"
    impl = IMPL
    itemsize = 8

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, KeyDType) or other == self.name

    def __hash__(self):
        return hash(self.name)


KEY_DTYPE = KeyDType()


class PRNGKeyArray:
    """An array of typed PRNG keys (jax.random.key). Index it, iterate over it, pass it to
    any xlapy.random function; `key_data` gives its uint32 words."""

    __slots__ = ("_data",)
    __array_priority__ = 2000

    def __init__(self, data):
        self._data = data

    shape = property(lambda self: tuple(B.aval_of(self._data).shape[:-1]))
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape)))
    dtype = property(lambda self: KEY_DTYPE)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object (a scalar key array)")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a scalar key array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        if any(i is Ellipsis for i in index):
            return PRNGKeyArray(self._data[index + (slice(None),)])
        if len(index) > self.ndim:
            raise IndexError(f"too many indices for a key array of shape {self.shape}")
        return PRNGKeyArray(self._data[index])

    def __eq__(self, other):
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        import xlapy.numpy as xnp
        return xnp.all(xnp.equal(self._data, other._data), axis=-1)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else ~eq

    __hash__ = None

    def __array__(self, *a, **k):
        raise TypeError("a typed key array cannot be converted to a NumPy array; use "
                        "xlapy.random.key_data(keys) for its uint32 words")

    def __repr__(self):
        if isinstance(self._data, Tracer):
            return f"Traced<key<fry>[{','.join(map(str, self.shape))}]>"
        return (f"Array({self.shape}, dtype=key<fry>) overlaying:\n"
                f"{np.asarray(self._data)}")


pytree.register_pytree_node(PRNGKeyArray, lambda k: ((k._data,), None),
                     lambda aux, children: PRNGKeyArray(children[0]))


def _check_data(data, fn: str):
    a = B.aval_of(data)
    if a.dtype != np.uint32 or a.ndim < 1 or a.shape[-1] != 2:
        raise RandomError(f"{fn}: a key must be a typed key (xlapy.random.key) or a uint32 "
                          f"array whose last dimension is 2 (xlapy.random.PRNGKey), got "
                          f"{a}")
    return data


def key_arg(fn: str, key, allow_batched: bool = False):
    """(uint32 words of the key(s), whether the key was typed)."""
    if isinstance(key, PRNGKeyArray):
        data, typed = key._data, True
    elif isinstance(key, Tracer):
        data, typed = key, False
    elif hasattr(key, "shape") and hasattr(key, "dtype") or isinstance(key, (list, tuple)):
        data, typed = np.asarray(key), False
    else:
        raise RandomError(f"{fn}: expected a PRNG key, got {type(key).__name__}")
    _check_data(data, fn)
    if not allow_batched and B.aval_of(data).ndim != 1:
        shape = tuple(B.aval_of(data).shape[:-1])
        raise RandomError(f"{fn} accepts a single key, but was given a key array of shape "
                          f"{shape} != (). Use xlapy.vmap for batching.")
    return data, typed


def _out(data, typed: bool):
    return PRNGKeyArray(data) if typed else data


# ---- making keys ---------------------------------------------------------------------------

def _integer_scalar(x, kinds: str, not_scalar: str, not_integer: str):
    """(x as an array unless traced, its aval), refusing an array with dims (not_scalar, a
    message with {shape}) or a dtype kind not in `kinds` (not_integer, with {dtype})."""
    if not isinstance(x, Tracer):
        x = np.asarray(x)
    a = B.aval_of(x)
    if a.ndim:
        raise RandomError(not_scalar.format(shape=a.shape))
    if a.dtype.kind not in kinds:
        raise RandomError(not_integer.format(dtype=a.dtype))
    return x, a


def _seed_array(seed, fn: str):
    if isinstance(seed, PRNGKeyArray):
        raise RandomError(f"{fn} accepts a scalar seed, but was given a PRNG key")
    if isinstance(seed, (bool, np.bool_)):
        raise RandomError(f"{fn}: the seed must be an integer, got {seed!r}")
    if isinstance(seed, int):
        try:
            seed = np.asarray(np.int64(seed))
        except OverflowError:
            raise RandomError(f"{fn}: seed {seed} does not fit in 64 bits") from None
    seed, a = _integer_scalar(seed, "iu", f"{fn} accepts a scalar seed, but was given an array "
                              "of shape {shape} != (). Use xlapy.vmap for batching",
                              f"{fn}: the seed must be an integer, got dtype {{dtype}}")
    if a.dtype.itemsize == 8 and not x64_enabled():
        seed = B.convert(seed, np.dtype(f"{a.dtype.kind}4"))  # as JAX's 32-bit mode
    return seed


def _seed(seed):
    return _threefry.seed_words(seed)


def PRNGKey(seed, *, impl=None):
    """A legacy key: a uint32 array of shape (2,) (the seed's high and low 32 bits)."""
    _check_impl(impl)
    return jitted(_seed)(_seed_array(seed, "PRNGKey"))


def key(seed, *, impl=None, dtype=None):
    """A typed key (scalar key array of dtype key<fry>) from an integer seed."""
    _check_impl(impl if dtype is None else dtype)
    return PRNGKeyArray(jitted(_seed)(_seed_array(seed, "key")))


def _check_impl(impl):
    if impl is not None and impl not in (IMPL, KEY_DTYPE) and \
            getattr(impl, "name", None) != IMPL:
        raise RandomError(f"unsupported PRNG implementation {impl!r}: xlapy implements "
                          f"'{IMPL}' (JAX's default)")


def key_data(keys):
    """The uint32 words of a key array (shape keys.shape + (2,))."""
    data, _ = key_arg("key_data", keys, allow_batched=True)
    return data


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """A typed key array over uint32 words whose last dimension is 2."""
    _check_impl(impl if dtype is None else dtype)
    data = key_bits_array if isinstance(key_bits_array, Tracer) else np.asarray(key_bits_array)
    return PRNGKeyArray(_check_data(data, "wrap_key_data"))


def key_impl(keys):
    key_arg("key_impl", keys, allow_batched=True)
    return IMPL


def key_dtype(impl=None):
    _check_impl(impl)
    return KEY_DTYPE


def clone(key):
    """The same key (JAX's key-reuse checker's escape hatch; a no-op here)."""
    return key


# ---- deriving keys -------------------------------------------------------------------------

def _split(key, shape):
    return _threefry.split(key, shape)


def split(key, num=2):
    """`num` new keys (a leading axis of that size; a tuple gives that shape of keys)."""
    data, typed = key_arg("split", key)
    shape = canonical_shape(num, "split")
    return _out(jitted(_split, "shape")(data, shape=shape), typed)


def _fold_in(key, data):
    return _threefry.fold_in(key, B.convert(data, np.uint32))


def fold_in(key, data):
    """A new key from `key` and a 32-bit integer."""
    kdata, typed = key_arg("fold_in", key)
    if isinstance(data, int) and not isinstance(data, bool):
        if not -2 ** 31 <= data < 2 ** 32:
            raise RandomError(f"fold_in: data {data} does not fit in 32 bits")
        data = np.asarray(data % 2 ** 32, np.uint32)
    data, _ = _integer_scalar(data, "iub", "fold_in accepts a scalar, but was given an array of "
                              "shape {shape} != (). Use xlapy.vmap for batching.",
                              "fold_in: data must be an integer, got dtype {dtype}")
    return _out(jitted(_fold_in)(kdata, data), typed)
