"""jax.lax functions over xlapy's existing primitives: sorting (sort, sort_key_val, top_k),
cumulative reductions (cumsum, cumprod, cummax, cummin, cumlogsumexp), associative_scan,
map, gather/scatter with XLA's dimension numbers (GatherDimensionNumbers,
ScatterDimensionNumbers, GatherScatterMode), the special functions JAX's lax names
(lgamma, digamma, igamma, igammac, regularized_incomplete_beta, erf_inv, erfc, polygamma,
zeta, bessel_i0e, bessel_i1e), the remaining inverse trigonometric and hyperbolic
functions, population_count, clz and batch_matmul."""

from __future__ import annotations

import enum

import numpy as np

import xlapy.numpy as xnp
from xlapy.errors import XlapyError
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives.bitcast import bitcast_convert_type
from xlapy.frontend.primitives import indexing as I
from xlapy.frontend.primitives import sorting as S
from xlapy.lax.control import scan

GatherDimensionNumbers = I.GatherDimensionNumbers
ScatterDimensionNumbers = I.ScatterDimensionNumbers


class GatherScatterMode(enum.Enum):
    """How gather/scatter treat indices out of bounds (JAX's names)."""

    CLIP = "clip"
    FILL_OR_DROP = "fill_or_drop"
    PROMISE_IN_BOUNDS = "promise_in_bounds"

    @staticmethod
    def from_any(mode):
        if isinstance(mode, GatherScatterMode):
            return mode
        if mode is None:
            return GatherScatterMode.FILL_OR_DROP
        names = {"clip": "CLIP", "fill": "FILL_OR_DROP", "drop": "FILL_OR_DROP",
                 "fill_or_drop": "FILL_OR_DROP", "promise_in_bounds": "PROMISE_IN_BOUNDS"}
        if isinstance(mode, str) and mode.lower() in names:
            return GatherScatterMode[names[mode.lower()]]
        raise XlapyError(f"unknown gather/scatter mode {mode!r}: one of 'clip', 'fill', "
                         "'drop', 'promise_in_bounds' or a GatherScatterMode")


# ---- sorting ----------------------------------------------------------------------------------

def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sort one array, or a sequence of arrays by the first num_keys of them."""
    return S.sort(operand, dimension, is_stable, num_keys)


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """(keys sorted, values permuted alike) along dimension."""
    k, v = S.sort([keys, values], dimension, is_stable, 1)
    return k, v


def top_k(operand, k):
    """The k largest entries along the last axis, in descending order, and their int32
    indices, as XLA's TopK: floats in IEEE total order (NaN largest, 0.0 before -0.0),
    ties with the lower index first."""
    k = int(k)
    x = xnp.asarray(operand)
    n = xnp.shape(x)[-1] if xnp.ndim(x) else 0
    if xnp.ndim(x) == 0 or not 0 <= k <= n:
        raise XlapyError(f"top_k: k = {k} must be between 0 and the last axis' size ({n}) "
                         f"of an array with at least one axis")
    key = _descending_key(x)
    ids = xnp.broadcast_to(xnp.arange(n, dtype=np.int32), xnp.shape(x))
    idx = S.sort([key, ids], -1, True, 1)[1][..., :k]
    return xnp.take_along_axis(x, idx, axis=-1), idx


def _descending_key(x):
    """An integer key whose ascending order is x's descending (total) order."""
    dt = np.dtype(xnp.result_type(x))
    if dt == np.bool_:
        x, dt = x.astype(np.int8), np.dtype(np.int8)
    if B.is_float(dt):
        it = np.dtype(f"int{8 * dt.itemsize}")
        bits = bitcast_convert_type(x, it)
        magnitude = np.asarray(np.iinfo(it).max, it)
        x = xnp.bitwise_xor(bits, xnp.bitwise_and(xnp.right_shift(bits, 8 * dt.itemsize - 1),
                                                  magnitude))
    return xnp.invert(x)


# ---- cumulative reductions and scans --------------------------------------------------------

def cumsum(operand, axis=0, reverse=False):
    return S.cumsum(operand, axis, reverse)


def cumprod(operand, axis=0, reverse=False):
    return S.cumprod(operand, axis, reverse)


def cummax(operand, axis=0, reverse=False):
    return S.cummax(operand, axis, reverse)


def cummin(operand, axis=0, reverse=False):
    return S.cummin(operand, axis, reverse)


def cumlogsumexp(operand, axis=0, reverse=False):
    """log(cumsum(exp(x))) along axis, as an associative scan of logaddexp (exact for
    terms of any magnitude)."""
    return associative_scan(xnp.logaddexp, xnp.asarray(operand), reverse, axis)


def associative_scan(fn, elems, reverse=False, axis=0):
    """Inclusive scan of an associative fn over axis 0 (or `axis`) of elems (a pytree of
    arrays), by the up-sweep/down-sweep of Blelloch's algorithm: O(log n) levels of fn
    applied to whole slices."""
    from xlapy.frontend import pytree  # a frontend helper for leaves of the pytree
    leaves, tree = pytree.flatten(elems)
    if not leaves:
        raise XlapyError("associative_scan: elems has no arrays")
    leaves = [xnp.asarray(v) for v in leaves]
    n = xnp.shape(leaves[0])[axis]
    if any(xnp.shape(v)[axis] != n for v in leaves):
        raise XlapyError("associative_scan: every array in elems needs the same size along "
                         f"axis {axis}")
    leaves = [xnp.moveaxis(v, axis, 0) for v in leaves]
    if reverse:
        leaves = [xnp.flip(v, 0) for v in leaves]

    def combine(a, b):
        out = fn(pytree.unflatten(tree, a), pytree.unflatten(tree, b))
        return [xnp.asarray(v) for v in pytree.flatten(out)[0]]

    def scan_level(xs):
        m = xnp.shape(xs[0])[0]
        if m < 2:
            return xs
        pairs = combine([v[0:m - 1:2] for v in xs], [v[1::2] for v in xs])
        odd = scan_level(pairs)  # prefix results at positions 1, 3, 5, ...
        if m > 2:
            evens = combine([v if m % 2 else v[:-1] for v in odd], [v[2::2] for v in xs])
        else:
            evens = [v[:0] for v in xs]
        out = []
        for x0, ev, od in zip(xs, evens, odd):
            ev = xnp.concatenate([x0[:1], ev], 0)
            inter = xnp.stack([ev[:xnp.shape(od)[0]], od], 1)
            inter = xnp.reshape(inter, (-1,) + tuple(xnp.shape(od)[1:]))
            out.append(xnp.concatenate([inter, ev[xnp.shape(od)[0]:]], 0))
        return out

    res = scan_level(leaves)
    if reverse:
        res = [xnp.flip(v, 0) for v in res]
    res = [xnp.moveaxis(v, 0, axis) for v in res]
    return pytree.unflatten(tree, res)


def map(f, xs, *, batch_size=None):  # jax.lax.map's name
    """[f(x) for x in xs] along the leading axis, as a scan (batch_size: that many
    elements per step, through vmap)."""
    from xlapy.frontend import pytree  # a frontend helper for leaves of the pytree
    if batch_size is None:
        return scan(lambda c, x: (c, f(x)), None, xs)[1]
    from xlapy.frontend.vmap import vmap  # the batching transformation
    leaves, tree = pytree.flatten(xs)
    n = xnp.shape(leaves[0])[0]
    b = int(batch_size)
    full, rest = divmod(n, b)
    head = [xnp.reshape(v[:full * b], (full, b) + tuple(xnp.shape(v)[1:])) for v in leaves]
    out = scan(lambda c, x: (c, vmap(f)(x)), None, pytree.unflatten(tree, head))[1]
    out = pytree.tree_map(lambda v: xnp.reshape(v, (full * b,) + tuple(xnp.shape(v)[2:])), out)
    if rest:
        tail = vmap(f)(pytree.unflatten(tree, [v[full * b:] for v in leaves]))
        out = pytree.tree_map(lambda a, c: xnp.concatenate([a, c], 0), out, tail)
    return out


# ---- gather / scatter -------------------------------------------------------------------------

def gather(operand, start_indices, dimension_numbers, slice_sizes, *,
           indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None):
    """XLA's gather with JAX's signature (mode: clip, or fill for out-of-bounds slices)."""
    m = GatherScatterMode.from_any(mode)
    return I.gather(operand, start_indices, dimension_numbers, slice_sizes,
                    mode="clip" if m is not GatherScatterMode.FILL_OR_DROP else "fill",
                    fill_value=fill_value)


def _scatter(fn):
    def run(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
            unique_indices=False, mode=None):
        m = GatherScatterMode.from_any(mode)
        return fn(operand, scatter_indices, updates, dimension_numbers,
                  mode="clip" if m is GatherScatterMode.CLIP else "drop")
    run.__name__ = fn.__name__
    run.__doc__ = fn.__doc__
    return run


scatter = _scatter(I.scatter)
scatter_add = _scatter(I.scatter_add)
scatter_mul = _scatter(I.scatter_mul)
scatter_min = _scatter(I.scatter_min)
scatter_max = _scatter(I.scatter_max)


# ---- special functions and the remaining elementwise names --------------------------------

def _special(name: str, lax_name: str):
    """xlapy.scipy.special's function, looked up when called: scipy.special imports
    xlapy.numpy, which imports this module, so it may still be loading here."""
    def fn(*args):
        from xlapy.scipy import special  # at call time (see the docstring)
        return getattr(special, name)(*args)
    fn.__name__ = lax_name
    fn.__doc__ = f"xlapy.scipy.special.{name} under jax.lax's name {lax_name}."
    return fn


lgamma = _special("gammaln", "lgamma")
digamma = _special("digamma", "digamma")
igamma = _special("gammainc", "igamma")
igammac = _special("gammaincc", "igammac")
erf_inv = _special("erfinv", "erf_inv")
erfc = _special("erfc", "erfc")
polygamma = _special("polygamma", "polygamma")
zeta = _special("zeta", "zeta")
bessel_i0e = _special("i0e", "bessel_i0e")
bessel_i1e = _special("i1e", "bessel_i1e")
regularized_incomplete_beta = _special("betainc", "regularized_incomplete_beta")


acos, asin, atan = xnp.arccos, xnp.arcsin, xnp.arctan
acosh, asinh, atanh = xnp.arccosh, xnp.arcsinh, xnp.arctanh
cosh, sinh = xnp.cosh, xnp.sinh


def population_count(x):
    """The number of set bits of each element (in x's integer type)."""
    return B.population_count_p.bind(x)


def clz(x):
    """The number of leading zero bits of each element (in x's integer type)."""
    return B.clz_p.bind(x)


def batch_matmul(lhs, rhs, precision=None):
    """Batched matrix product over the leading dimensions (both of equal rank >= 2)."""
    if xnp.ndim(lhs) != xnp.ndim(rhs) or xnp.ndim(lhs) < 2:
        raise XlapyError(f"batch_matmul: operands of equal rank >= 2 needed, got shapes "
                         f"{xnp.shape(lhs)} and {xnp.shape(rhs)}")
    return xnp.matmul(lhs, rhs, precision=precision)


def collapse(operand, start_dimension: int, stop_dimension: int | None = None):
    """operand with dimensions [start_dimension, stop_dimension) folded into one (Python
    slice bounds: negative counts from the end, None is the end)."""
    shape = tuple(xnp.shape(operand))
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(len(shape))
    if hi < lo:
        raise XlapyError(f"collapse: start_dimension {start_dimension} is after "
                         f"stop_dimension {stop_dimension} for a shape {shape}")
    size = int(np.prod(shape[lo:hi], dtype=np.int64))
    return xnp.reshape(operand, shape[:lo] + (size,) + shape[hi:])


def split(operand, sizes, axis: int = 0) -> list:
    """operand cut along `axis` into pieces of the given sizes (which must add up to the
    axis's size)."""
    shape = tuple(xnp.shape(operand))
    if not -len(shape) <= axis < len(shape):
        raise XlapyError(f"split: axis {axis} is out of range for a shape {shape}")
    axis %= len(shape)
    sizes = [int(s) for s in sizes]
    if any(s < 0 for s in sizes) or sum(sizes) != shape[axis]:
        raise XlapyError(f"split: sizes {sizes} must be >= 0 and add up to the size of axis "
                         f"{axis} ({shape[axis]}) of a shape {shape}")
    out, start = [], 0
    for s in sizes:
        index = (slice(None),) * axis + (slice(start, start + s),)
        out.append(xnp.asarray(operand)[index])
        start += s
    return out


__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode", "sort",
           "sort_key_val", "top_k", "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp",
           "associative_scan", "map", "gather", "scatter", "scatter_add", "scatter_mul",
           "scatter_min", "scatter_max", "lgamma", "digamma", "igamma", "igammac", "erf_inv",
           "erfc", "polygamma", "zeta", "bessel_i0e", "bessel_i1e",
           "regularized_incomplete_beta", "acos", "asin", "atan", "acosh", "asinh", "atanh",
           "cosh", "sinh", "population_count", "clz", "batch_matmul", "collapse", "split"]
