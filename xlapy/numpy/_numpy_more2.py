"""More of jax.numpy's functions, composed from xlapy.numpy's own (so they trace,
differentiate and batch): hsplit, vsplit, dsplit, resize, choose, diagflat, nextafter,
spacing, packbits, unpackbits, bitwise_count, array_equiv, apply_over_axes, trim_zeros,
place, put, mask_indices and sort_complex (the array API's unique_* and setxor1d are in
_unique_more.py).

As in JAX: sizes, modes and positions are static (Python values); place and put return
the updated copy (inplace=False is required: arrays are immutable); choose's mode='raise'
and trim_zeros need concrete values (under jit use mode='wrap'/'clip'). Host-side
helpers (printing, files, buffers) are in _numpy_host.py.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import UnsupportedError, XlapyError
from xlapy.frontend.core import Tracer
from xlapy.frontend.dtypes import default_float
from xlapy.frontend.primitives import basic as B
from xlapy.numpy._core import asarray, dtype_of, kind, normalize_axis, result_type, shape


def _xnp():
    import xlapy.numpy as xnp  # the package itself: these functions compose its API
    return xnp


# ---- splitting, resizing, choosing --------------------------------------------------------

def _split_along(name, ary, indices_or_sections, axis, min_rank):
    a = asarray(ary)
    if len(shape(a)) < min_rank:
        raise XlapyError(f"{name}: the array needs at least {min_rank} dimension"
                         f"{'s' if min_rank > 1 else ''}, got shape {shape(a)}")
    return _xnp().split(a, indices_or_sections, axis=axis)


def hsplit(ary, indices_or_sections):
    """split along axis 1 (axis 0 for 1-d arrays)."""
    a = asarray(ary)
    return _split_along("hsplit", a, indices_or_sections, 0 if len(shape(a)) == 1 else 1, 1)


def vsplit(ary, indices_or_sections):
    """split along axis 0 (1-d arrays included, as jax.numpy)."""
    return _split_along("vsplit", ary, indices_or_sections, 0, 1)


def dsplit(ary, indices_or_sections):
    """split along axis 2 (arrays of 3 or more dimensions)."""
    return _split_along("dsplit", ary, indices_or_sections, 2, 3)


def resize(a, new_shape):
    """a's elements, repeated in order as needed, in an array of new_shape (an empty a
    gives zeros)."""
    xnp = _xnp()
    a = asarray(a)
    dims = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    dims = tuple(int(d) for d in dims)
    if any(d < 0 for d in dims):
        raise XlapyError(f"resize: all elements of new_shape must be non-negative, got {dims}")
    total = int(np.prod(dims, dtype=np.int64))
    flat = xnp.ravel(a)
    n = shape(flat)[0]
    if n == 0:
        return xnp.zeros(dims, dtype_of(a))
    reps = -(-total // n)
    return xnp.reshape(xnp.tile(flat, reps)[:total], dims)


def choose(a, choices, out=None, mode="raise"):
    """choices[a[i]][i] elementwise, a and the choices broadcast together. mode: 'raise'
    (indices checked, so they must be concrete: not under jit, as JAX), 'wrap' or
    'clip'."""
    xnp = _xnp()
    if out is not None:
        raise XlapyError("choose: the out argument is not supported (arrays are immutable)")
    if mode not in ("raise", "wrap", "clip"):
        raise XlapyError(f"choose: mode={mode!r} not understood; one of 'raise', 'wrap' or "
                         "'clip'")
    idx = asarray(a)
    if kind(dtype_of(idx)) not in "iub":
        raise XlapyError(f"choose: the index array must hold integers, got "
                         f"{dtype_of(idx)}")
    ch = [asarray(c) for c in choices]
    n = len(ch)
    if n == 0:
        raise XlapyError("choose: choices is empty")
    if mode == "raise":
        if isinstance(idx, Tracer):
            raise idx._concrete_error("choose with mode='raise' checks the indices; under "
                                      "jit use mode='wrap' or mode='clip' (as in JAX)")
        v = np.asarray(idx)
        if v.size and (v.min() < 0 or v.max() >= n):
            raise XlapyError(f"choose: invalid entry in the index array (indices must be in "
                             f"[0, {n}) for {n} choices)")
    elif mode == "wrap":
        idx = idx % n
    else:
        idx = xnp.clip(idx, 0, n - 1)
    arrays = xnp.broadcast_arrays(idx, *ch)
    idx, ch = arrays[0], arrays[1:]
    dt = result_type(*choices)
    out = xnp.zeros(shape(idx), dt) if not ch else ch[-1].astype(dt)
    for k in range(n - 2, -1, -1):
        out = xnp.where(idx == k, ch[k].astype(dt), out)
    return out


def diagflat(v, k=0):
    """A 2-d array with v's flattened elements on its k-th diagonal."""
    xnp = _xnp()
    return xnp.diag(xnp.ravel(asarray(v)), int(k))


# ---- floating-point steps ---------------------------------------------------------------------

def _float_operand(name, x, *others):
    dt = result_type(x, *others)
    if kind(dt) == "c":
        raise XlapyError(f"{name}: complex values are not supported (real floats only)")
    if kind(dt) != "f":
        dt = default_float()
    return dt


def nextafter(x1, x2, /):
    """The next float after x1 towards x2 (integers become the default float type)."""
    from xlapy.lax.float_bits import nextafter as lax_nextafter  # the bit-level primitive
    dt = _float_operand("nextafter", x1, x2)
    a, b = _xnp().broadcast_arrays(asarray(x1).astype(dt), asarray(x2).astype(dt))
    return lax_nextafter(a, b)


_BITS = {2: (np.uint16, 10), 4: (np.uint32, 23), 8: (np.uint64, 52)}


def spacing(x, /):
    """The distance from x to the next float of larger magnitude, with x's sign (as
    jax.numpy: a spacing below the smallest normal is the smallest subnormal, NaN for inf
    and NaN, inf at the largest finite value; for float16 the step towards +inf). Built
    from x's bits, so eager and jitted results agree whatever the hardware does with
    subnormals."""
    xnp = _xnp()
    from xlapy.lax import bitcast_convert_type  # the bit reinterpretation of lax
    dt = np.dtype(_float_operand("spacing", x))
    x = asarray(x).astype(dt)
    if dt == np.float16:  # (as jax.numpy: the step up, computed exactly in float32)
        up = nextafter(x, xnp.asarray(np.inf, dt))
        return (up.astype(np.float32) - x.astype(np.float32)).astype(dt)
    ut, mbits = _BITS[dt.itemsize]
    if dt == np.dtype("bfloat16"):
        mbits = 7
    ut = np.dtype(ut)
    total = 8 * dt.itemsize
    c = lambda v: np.array(v, ut)
    bits = bitcast_convert_type(x, ut)
    sign = bits & c(1 << (total - 1))
    mag = bits & c((1 << (total - 1)) - 1)
    exp = mag >> c(mbits)
    emax = (1 << (total - 1 - mbits)) - 1
    normal_step = (exp - c(mbits)) << c(mbits)
    step = xnp.where(exp > c(mbits), normal_step, c(1))
    out = bitcast_convert_type(step | sign, dt)
    big = xnp.where(sign != c(0), xnp.asarray(-np.inf, dt), xnp.asarray(np.inf, dt))
    fmax = np.finfo(dt).max if dt != np.dtype("bfloat16") else float(
        np.asarray(np.uint16(0x7F7F)).view(dt))
    out = xnp.where(xnp.abs(x) == xnp.asarray(fmax, dt), big, out)
    return xnp.where(exp == c(emax), xnp.asarray(np.nan, dt), out)


# ---- bits ---------------------------------------------------------------------------------

def _bitorder(name, bitorder):
    if bitorder not in ("big", "little"):
        raise XlapyError(f"{name}: bitorder must be 'big' or 'little', got {bitorder!r}")


def packbits(a, axis=None, bitorder="big"):
    """Elements of a (true when nonzero) packed 8 to a uint8 along axis (flattened when
    None), padded with zero bits."""
    xnp = _xnp()
    _bitorder("packbits", bitorder)
    a = asarray(a)
    if kind(dtype_of(a)) not in "iub":
        raise XlapyError(f"packbits: an integer or boolean array is needed, got "
                         f"{dtype_of(a)}")
    if axis is None:
        a, axis = xnp.ravel(a), 0
    axis = normalize_axis(axis, len(shape(a)))
    bits = xnp.moveaxis(a != 0, axis, -1).astype(np.uint8)
    n = shape(bits)[-1]
    pad = -n % 8
    if pad:
        bits = xnp.pad(bits, [(0, 0)] * (len(shape(bits)) - 1) + [(0, pad)])
    groups = xnp.reshape(bits, tuple(shape(bits)[:-1]) + ((n + pad) // 8, 8))
    shifts = np.arange(7, -1, -1) if bitorder == "big" else np.arange(8)
    packed = xnp.sum(groups << shifts.astype(np.uint8), axis=-1, dtype=np.uint8)
    return xnp.moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of a uint8 array, as 0/1 uint8 values along axis (flattened when None);
    count keeps that many (negative: drops that many from the end; more: zero-padded)."""
    xnp = _xnp()
    _bitorder("unpackbits", bitorder)
    a = asarray(a)
    if np.dtype(dtype_of(a)) != np.uint8:
        raise XlapyError(f"unpackbits: a uint8 array is needed, got {dtype_of(a)}")
    if axis is None:
        a, axis = xnp.ravel(a), 0
    axis = normalize_axis(axis, len(shape(a)))
    a = xnp.moveaxis(a, axis, -1)
    shifts = np.arange(7, -1, -1) if bitorder == "big" else np.arange(8)
    bits = (a[..., None] >> shifts.astype(np.uint8)) & np.uint8(1)
    bits = xnp.reshape(bits, tuple(shape(a)[:-1]) + (shape(a)[-1] * 8,))
    if count is not None:
        count = int(count)
        n = shape(bits)[-1]
        keep = count if count >= 0 else max(n + count, 0)
        if keep <= n:
            bits = bits[..., :keep]
        else:
            bits = xnp.pad(bits, [(0, 0)] * (len(shape(bits)) - 1) + [(0, keep - n)])
    return xnp.moveaxis(bits, -1, axis)


def bitwise_count(x, /):
    """The number of 1 bits in |x| (as NumPy), as uint8."""
    xnp = _xnp()
    x = asarray(x)
    k = kind(dtype_of(x))
    if k not in "iub":
        raise XlapyError(f"bitwise_count: an integer or boolean array is needed, got "
                         f"{dtype_of(x)}")
    if k == "b":
        return x.astype(np.uint8)
    if k == "i":
        x = xnp.abs(x)
    return B.population_count_p.bind(x).astype(np.uint8)


# ---- comparisons and functional helpers --------------------------------------------------

def array_equiv(a1, a2):
    """Whether a1 and a2 broadcast to one shape and are equal everywhere (False when their
    shapes do not broadcast, as NumPy)."""
    xnp = _xnp()
    a, b = asarray(a1), asarray(a2)
    try:
        np.broadcast_shapes(shape(a), shape(b))
    except ValueError:
        return xnp.asarray(False)
    return xnp.all(a == b)


def apply_over_axes(func, a, axes):
    """func(a, axis) applied for each axis in turn; a result one rank lower gets the axis
    back (as a length-1 dimension)."""
    xnp = _xnp()
    a = asarray(a)
    for ax in ([axes] if isinstance(axes, (int, np.integer)) else list(axes)):
        nd = len(shape(a))
        ax = normalize_axis(ax, nd)
        b = asarray(func(a, ax))
        if len(shape(b)) == nd - 1:
            b = xnp.expand_dims(b, ax)
        elif len(shape(b)) != nd:
            raise XlapyError(f"apply_over_axes: func must return an array of rank {nd} or "
                             f"{nd - 1}, got shape {shape(b)}")
        a = b
    return a


def trim_zeros(filt, trim="fb", axis=None):
    """filt without its leading ('f') and/or trailing ('b') zeros, along each of the axes
    (all by default). Needs a concrete array: the result's shape depends on the values."""
    if isinstance(filt, Tracer):
        raise filt._concrete_error("trim_zeros: the result's size depends on the values; "
                                   "it cannot be used under jit (as in JAX)")
    t = str(trim).lower()
    if set(t) - set("fb"):
        raise XlapyError(f"trim_zeros: trim must hold only 'f' and 'b', got {trim!r}")
    a = asarray(filt)
    v = np.asarray(a)
    if v.ndim == 0:
        return a
    axes = range(v.ndim) if axis is None else (
        [axis] if isinstance(axis, (int, np.integer)) else axis)
    axes = [normalize_axis(ax, v.ndim) for ax in axes]
    nz = v != 0
    index = [slice(None)] * v.ndim
    for ax in axes:
        other = tuple(d for d in range(v.ndim) if d != ax)
        hits = np.flatnonzero(nz.any(axis=other) if other else nz)
        n = v.shape[ax]
        if hits.size == 0:
            start = stop = 0
        else:
            start = int(hits[0]) if "f" in t else 0
            stop = int(hits[-1]) + 1 if "b" in t else n
        index[ax] = slice(start, stop)
    return a[tuple(index)]


# ---- writing elements ---------------------------------------------------------------------

def _refuse_inplace(name, inplace):
    if inplace:
        raise XlapyError(f"{name}: xlapy arrays are immutable, so they cannot be modified in "
                         "place; pass inplace=False to get the updated copy (as jax.numpy "
                         "requires)")


def place(arr, mask, vals, *, inplace=True):
    """arr with its elements where mask is true replaced by vals in order (vals repeated as
    needed). Works under jit: the k-th true position takes vals[k % len(vals)]."""
    xnp = _xnp()
    _refuse_inplace("place", inplace)
    a = asarray(arr)
    m = asarray(mask)
    if shape(m) != shape(a):
        if int(np.prod(shape(m), dtype=np.int64)) != int(np.prod(shape(a), dtype=np.int64)):
            raise XlapyError(f"place: mask of shape {shape(m)} and arr of shape {shape(a)} "
                             "must have the same size")
        m = xnp.reshape(m, shape(a))
    v = xnp.ravel(asarray(vals))
    nv = shape(v)[0]
    flat_m = xnp.ravel(m).astype(bool)
    if nv == 0:
        if isinstance(flat_m, Tracer) or np.any(np.asarray(flat_m)):
            raise XlapyError("place: vals is empty, so no values can be placed")
        return a
    k = xnp.cumsum(flat_m.astype(np.int32)) - 1
    picked = xnp.take(v, xnp.clip(k, 0, None) % nv).astype(dtype_of(a))
    return xnp.reshape(xnp.where(flat_m, picked, xnp.ravel(a)), shape(a))


def put(a, ind, v, mode=None, *, inplace=True):
    """a with the flat positions ind set to v (v repeated as needed; the last write to a
    position wins). mode None: negative positions count from the end, then positions are
    clipped; 'clip': clipped as given; 'wrap': modulo the size. 'raise' is not supported
    (as in JAX)."""
    xnp = _xnp()
    _refuse_inplace("put", inplace)
    if mode == "raise":
        raise UnsupportedError("put: mode='raise' is not supported (as in JAX); use None, "
                               "'clip' or 'wrap'")
    if mode not in (None, "clip", "wrap"):
        raise XlapyError(f"put: mode must be None, 'clip' or 'wrap', got {mode!r}")
    arr = asarray(a)
    flat = xnp.ravel(arr)
    n = shape(flat)[0]
    idx = xnp.ravel(asarray(ind))
    if kind(dtype_of(idx)) not in "iu":
        raise XlapyError(f"put: indices must be integers, got {dtype_of(idx)}")
    m = shape(idx)[0]
    vals = xnp.ravel(asarray(v))
    if m == 0:
        return arr
    if shape(vals)[0] == 0:
        raise XlapyError("put: v is empty, so no values can be put")
    if n == 0:
        raise XlapyError("put: cannot put values into an empty array")
    vals = resize(vals, m).astype(dtype_of(arr))
    if mode is None:
        idx = xnp.clip(xnp.where(idx < 0, idx + n, idx), 0, n - 1)
    elif mode == "clip":
        idx = xnp.clip(idx, 0, n - 1)
    else:
        idx = idx % n
    return xnp.reshape(xnp.at(flat)[idx].set(vals), shape(arr))


def mask_indices(n, mask_func, k=0, *, size=None):
    """The (row, column) indices where mask_func(ones((n, n)), k) is nonzero (size= for a
    static number of them under jit)."""
    xnp = _xnp()
    m = mask_func(xnp.ones((int(n), int(n)), np.int32), k)
    return xnp.nonzero(m, size=size)


def sort_complex(a):
    """a sorted by real part, then imaginary part, as a complex array."""
    xnp = _xnp()
    a = asarray(a)
    dt = np.dtype(dtype_of(a))
    if kind(dt) != "c":
        f = dt if kind(dt) == "f" else np.dtype(default_float())
        dt = np.dtype(np.complex128 if f == np.float64 else np.complex64)
    a = xnp.ravel(a.astype(dt)) if len(shape(a)) == 0 else a.astype(dt)
    # lexicographic: by imaginary part, then (stably) by real part, along the last axis
    order = xnp.argsort(xnp.imag(a), axis=-1, stable=True)
    a = xnp.take_along_axis(a, order, axis=-1)
    order = xnp.argsort(xnp.real(a), axis=-1, stable=True)
    return xnp.take_along_axis(a, order, axis=-1)


__all__ = ["hsplit", "vsplit", "dsplit", "resize", "choose", "diagflat", "nextafter",
           "spacing", "packbits", "unpackbits", "bitwise_count", "array_equiv",
           "apply_over_axes", "trim_zeros", "place", "put", "mask_indices", "sort_complex"]
