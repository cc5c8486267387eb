"""More of NumPy's functions, composed from xlapy.numpy's own (so they trace, differentiate
and batch): editing (append, insert, delete, select, block, unstack, rollaxis), arithmetic
(gcd, lcm, ldexp, frexp, modf, fabs, sinc, i0), products (cross, vecdot, matvec, vecmat),
cumulative_sum/prod, polynomials (polyadd, polysub, polymul, polyder, polyint),
apply_along_axis, fromfunction. Static arguments (positions, sizes, modes) are Python
values, as in JAX. Sequences and signals are in _signals.py."""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError


def _xnp():
    import xlapy.numpy as xnp  # the package itself: these functions compose its API
    return xnp


# ---- editing ------------------------------------------------------------------------------------

def append(arr, values, axis=None):
    xnp = _xnp()
    if axis is None:
        return xnp.concatenate([xnp.ravel(arr), xnp.ravel(values)])
    return xnp.concatenate([xnp.asarray(arr), xnp.asarray(values)], axis=axis)


def _static_positions(obj, n, name):
    try:
        return np.asarray(obj)
    except Exception:
        raise XlapyError(f"{name}: the positions must be concrete (static) values") from None


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """arr without the entries at obj (an int, a slice or concrete indices) along axis."""
    xnp = _xnp()
    a = xnp.asarray(arr)
    if axis is None:
        a, axis = xnp.ravel(a), 0
    axis = axis % max(len(xnp.shape(a)), 1)
    n = xnp.shape(a)[axis]
    if isinstance(obj, slice):
        drop = np.arange(n)[obj]
    else:
        drop = _static_positions(obj, n, "delete")
        if drop.dtype == np.bool_:
            drop = np.nonzero(drop)[0]
        drop = np.where(drop < 0, drop + n, drop)
        if np.any((drop < 0) | (drop >= n)):
            raise XlapyError(f"delete: index out of bounds for axis {axis} of size {n}")
    keep = np.setdiff1d(np.arange(n), drop)
    return xnp.take(a, keep.astype(np.int32), axis=axis)


def insert(arr, obj, values, axis=None):
    """arr with values inserted before the positions obj (concrete) along axis."""
    xnp = _xnp()
    a = xnp.asarray(arr)
    if axis is None:
        a, axis = xnp.ravel(a), 0
    axis = axis % max(len(xnp.shape(a)), 1)
    n = xnp.shape(a)[axis]
    pos = np.arange(n + 1)[obj] if isinstance(obj, slice) else _static_positions(obj, n,
                                                                                 "insert")
    scalar_pos = pos.ndim == 0
    pos = np.atleast_1d(np.where(pos < 0, pos + n, pos))
    if np.any((pos < 0) | (pos > n)):
        raise XlapyError(f"insert: index out of bounds for axis {axis} of size {n}")
    v = xnp.asarray(values).astype(a.dtype)
    shp = list(xnp.shape(a))
    if scalar_pos:  # NumPy: values inserted as one block at one position
        vs = xnp.shape(v)
        k = vs[axis] if len(vs) == len(shp) else 1
        if len(vs) < len(shp):
            v = xnp.expand_dims(v, axis) if len(vs) == len(shp) - 1 else v
        shp[axis] = xnp.shape(v)[axis] if len(xnp.shape(v)) == len(shp) else k
        v = xnp.broadcast_to(v, tuple(shp))
        pos = np.repeat(pos, shp[axis])
    else:
        shp[axis] = len(pos)
        if len(xnp.shape(v)) == len(shp):
            v = xnp.broadcast_to(v, tuple(shp))
        else:
            v = xnp.moveaxis(xnp.broadcast_to(v, tuple(shp[:axis] + shp[axis + 1:]) +
                                              (len(pos),)), -1, axis) \
                if len(xnp.shape(v)) else xnp.broadcast_to(v, tuple(shp))
    # an inserted value goes before the element at its position: keys 2k + 1 and 2p
    order = np.argsort(np.concatenate([2 * np.arange(n) + 1, 2 * pos]), kind="stable")
    both = xnp.concatenate([a, v], axis=axis)
    return xnp.take(both, order.astype(np.int32), axis=axis)


def select(condlist, choicelist, default=0):
    """The first choice whose condition holds, elementwise (default where none does)."""
    xnp = _xnp()
    if len(condlist) != len(choicelist):
        raise XlapyError(f"select: {len(condlist)} conditions and {len(choicelist)} choices")
    if not condlist:
        raise XlapyError("select: condlist is empty")
    out = xnp.asarray(default)
    for c, v in reversed(list(zip(condlist, choicelist))):
        out = xnp.where(c, v, out)
    return out


def block(arrays):
    """An array assembled from nested lists of blocks (NumPy's block)."""
    xnp = _xnp()

    def depth(x):
        return 1 + depth(x[0]) if isinstance(x, list) and x else 0

    d = depth(arrays)

    def build(x, level):
        if not isinstance(x, list):
            a = xnp.asarray(x)
            nd = max(len(xnp.shape(a)), d)
            return xnp.reshape(a, (1,) * (nd - len(xnp.shape(a))) + tuple(xnp.shape(a)))
        parts = [build(e, level + 1) for e in x]
        nd = max(len(xnp.shape(p)) for p in parts)
        parts = [xnp.reshape(p, (1,) * (nd - len(xnp.shape(p))) + tuple(xnp.shape(p)))
                 for p in parts]
        return xnp.concatenate(parts, axis=-(d - level))

    if not isinstance(arrays, list):
        return xnp.asarray(arrays)
    return build(arrays, 0)


def unstack(x, /, *, axis=0):
    xnp = _xnp()
    x = xnp.asarray(x)
    return tuple(xnp.take(x, i, axis=axis) for i in range(xnp.shape(x)[axis]))


def rollaxis(a, axis, start=0):
    xnp = _xnp()
    nd = len(xnp.shape(a))
    axis, start = axis % nd, start + nd if start < 0 else start
    if start > axis:
        start -= 1
    return xnp.moveaxis(a, axis, start)


# ---- arithmetic ------------------------------------------------------------------------------

def _int_pair(x1, x2, name):
    xnp = _xnp()
    a, b = xnp.asarray(x1), xnp.asarray(x2)
    dt = xnp.result_type(a, b)
    if np.dtype(dt).kind not in "iu":
        raise XlapyError(f"{name}: integer arguments are needed, got {dt}")
    return a.astype(dt) if hasattr(a, "astype") else a, b.astype(dt) if hasattr(b, "astype") \
        else b


def gcd(x1, x2):
    """The greatest common divisor, elementwise (Euclid's algorithm in a while loop)."""
    xnp = _xnp()
    from xlapy.lax.control import while_loop  # the loop construct (the lax layer)
    a, b = _int_pair(x1, x2, "gcd")
    a, b = xnp.broadcast_arrays(xnp.abs(a), xnp.abs(b))

    def body(c):
        x, y = c
        nz = y != 0
        safe = xnp.where(nz, y, xnp.ones_like(y))
        return xnp.where(nz, y, x), xnp.where(nz, x % safe, y)

    return while_loop(lambda c: xnp.any(c[1] != 0), body, (a, b))[0]


def lcm(x1, x2):
    xnp = _xnp()
    a, b = _int_pair(x1, x2, "lcm")
    g = gcd(a, b)
    safe = xnp.where(g == 0, xnp.ones_like(g), g)
    return xnp.where(g == 0, xnp.zeros_like(g), xnp.abs(a // safe * b))


def ldexp(x1, x2):
    """x1 * 2**x2, exact (two steps, so 2**x2 alone may under- or overflow)."""
    xnp = _xnp()
    x = xnp.asarray(x1)
    if np.dtype(x.dtype).kind not in "f":
        x = x.astype(xnp.result_type(x, np.float32))
    e = xnp.asarray(x2)
    half = e // 2
    return xnp.multiply(xnp.multiply(x, xnp.exp2(half.astype(x.dtype))),
                        xnp.exp2((e - half).astype(x.dtype)))


def frexp(x):
    """(mantissa in [0.5, 1), exponent) with x = mantissa * 2**exponent (0, inf, NaN: as
    NumPy)."""
    xnp = _xnp()
    x = xnp.asarray(x)
    if np.dtype(x.dtype).kind != "f":
        x = x.astype(np.float32)
    finite = xnp.isfinite(x) & (x != 0)
    ax = xnp.where(finite, xnp.abs(x), xnp.ones_like(x))
    e = xnp.floor(xnp.log2(ax)).astype(np.int32) + 1
    m = x / xnp.exp2(e.astype(x.dtype))
    # log2 rounding near powers of two: bring the mantissa into [0.5, 1)
    big = xnp.abs(m) >= 1.0
    m, e = xnp.where(big, m / 2, m), xnp.where(big, e + 1, e)
    small = finite & (xnp.abs(m) < 0.5)
    m, e = xnp.where(small, m * 2, m), xnp.where(small, e - 1, e)
    return xnp.where(finite, m, x), xnp.where(finite, e, xnp.zeros_like(e))


def modf(x):
    """(fractional part, integral part), both with x's sign."""
    xnp = _xnp()
    x = xnp.asarray(x)
    whole = xnp.trunc(x)
    frac = xnp.where(xnp.isinf(x), xnp.copysign(xnp.zeros_like(x), x), x - whole)
    return frac, whole


def fabs(x):
    xnp = _xnp()
    x = xnp.asarray(x)
    if np.dtype(x.dtype).kind == "c":
        raise XlapyError("fabs: complex values are not supported (use abs)")
    return xnp.abs(x.astype(xnp.result_type(x, np.float16)) if np.dtype(x.dtype).kind
                   in "biu" else x)


def sinc(x):
    """sin(pi x) / (pi x), 1 at 0."""
    xnp = _xnp()
    x = xnp.asarray(x)
    if np.dtype(x.dtype).kind not in "fc":
        x = x.astype(np.float32)
    zero = x == 0
    safe = xnp.where(zero, xnp.ones_like(x), x) * np.pi
    return xnp.where(zero, xnp.ones_like(x), xnp.sin(safe) / safe)


def i0(x):
    from xlapy.scipy.special import i0 as bessel_i0  # the special function
    return bessel_i0(x)


# ---- products and cumulative sums --------------------------------------------------------------

def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 2- or 3-vectors (2-vectors: the z component)."""
    xnp = _xnp()
    if axis is not None:
        axisa = axisb = axisc = axis
    a = xnp.moveaxis(xnp.asarray(a), axisa, -1)
    b = xnp.moveaxis(xnp.asarray(b), axisb, -1)
    na, nb = xnp.shape(a)[-1], xnp.shape(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise XlapyError(f"cross: vectors of 2 or 3 components are needed, got {na} and {nb}")
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    a2 = a[..., 2] if na == 3 else None
    b2 = b[..., 2] if nb == 3 else None
    if na == 2 and nb == 2:
        return a0 * b1 - a1 * b0
    a2 = xnp.zeros_like(a0) if a2 is None else a2
    b2 = xnp.zeros_like(b0) if b2 is None else b2
    c = xnp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return xnp.moveaxis(c, -1, axisc)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    xnp = _xnp()
    a, b = xnp.asarray(x1), xnp.asarray(x2)
    if np.dtype(a.dtype).kind == "c":
        a = xnp.conj(a)
    return xnp.sum(a * b, axis=axis)


def matvec(x1, x2, /):
    xnp = _xnp()
    return xnp.matmul(x1, xnp.asarray(x2)[..., None])[..., 0]


def vecmat(x1, x2, /):
    xnp = _xnp()
    a = xnp.asarray(x1)
    if np.dtype(a.dtype).kind == "c":
        a = xnp.conj(a)
    return xnp.matmul(a[..., None, :], x2)[..., 0, :]


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    return _cumulative(_xnp().cumsum, 0, x, axis, dtype, include_initial, "cumulative_sum")


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    return _cumulative(_xnp().cumprod, 1, x, axis, dtype, include_initial, "cumulative_prod")


def _cumulative(fn, initial, x, axis, dtype, include_initial, name):
    xnp = _xnp()
    x = xnp.asarray(x)
    if axis is None:
        if xnp.ndim(x) > 1:
            raise XlapyError(f"{name}: axis is required for arrays of more than one dimension")
        axis = 0
    out = fn(x, axis=axis, dtype=dtype)
    if include_initial:
        shp = list(xnp.shape(out))
        shp[axis % len(shp)] = 1
        out = xnp.concatenate([xnp.full(tuple(shp), initial, out.dtype), out], axis=axis)
    return out


# ---- polynomials (coefficients highest degree first) ------------------------------------------

def _poly_pad(a, b):
    xnp = _xnp()
    a, b = xnp.atleast_1d(a), xnp.atleast_1d(b)
    n = max(xnp.shape(a)[0], xnp.shape(b)[0])
    return xnp.pad(a, (n - xnp.shape(a)[0], 0)), xnp.pad(b, (n - xnp.shape(b)[0], 0))


def polyadd(a1, a2):
    a, b = _poly_pad(a1, a2)
    return a + b


def polysub(a1, a2):
    a, b = _poly_pad(a1, a2)
    return a - b


def polymul(a1, a2, *, trim_leading_zeros=False):
    xnp = _xnp()
    from xlapy.numpy._signals import convolve  # the product of coefficient sequences
    return convolve(xnp.atleast_1d(a1), xnp.atleast_1d(a2))


def polyder(p, m=1):
    xnp = _xnp()
    p = xnp.asarray(p)
    m = int(m)
    if m < 0:
        raise XlapyError("polyder: the order of the derivative must be positive")
    for _ in range(m):
        n = xnp.shape(p)[0]
        p = p[:-1] * np.arange(n - 1, 0, -1).astype(p.dtype) if n > 1 else p[:0]
    return p


def polyint(p, m=1, k=None):
    xnp = _xnp()
    p = xnp.asarray(p)
    if np.dtype(p.dtype).kind not in "fc":
        p = p.astype(np.float32)
    m = int(m)
    ks = [0.0] * m if k is None else list(np.atleast_1d(k))
    if len(ks) == 1 and m > 1:
        ks = ks * m
    for i in range(m):
        n = xnp.shape(p)[0]
        p = xnp.concatenate([p / np.arange(n, 0, -1).astype(p.dtype),
                             xnp.asarray([ks[i]], p.dtype)])
    return p


# ---- functional ----------------------------------------------------------------------------

def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to the 1-d slices of arr along axis (through vmap)."""
    xnp = _xnp()
    from xlapy.frontend.vmap import vmap  # the batching transformation
    arr = xnp.asarray(arr)
    nd = len(xnp.shape(arr))
    axis = axis % nd
    fn = lambda v: func1d(v, *args, **kwargs)
    for _ in range(nd - 1):
        fn = vmap(fn)
    out = fn(xnp.moveaxis(arr, axis, -1))
    extra = len(xnp.shape(out)) - (nd - 1)
    return xnp.moveaxis(out, list(range(nd - 1, nd - 1 + extra)),
                        list(range(axis, axis + extra))) if extra else out


def fromfunction(function, shape, *, dtype=float, **kwargs):
    from xlapy.numpy._index_tricks import indices  # index grids
    dims = tuple(int(d) for d in shape)
    grids = indices(dims, dtype=_xnp().dtype(dtype) if dtype is not float else np.float32)
    return function(*[grids[k] for k in range(len(dims))], **kwargs)


euler_gamma = float(np.euler_gamma)

__all__ = ["append", "delete", "insert", "select", "block", "unstack", "rollaxis", "gcd", "lcm",
           "ldexp", "frexp", "modf", "fabs", "sinc", "i0", "cross", "vecdot", "matvec", "vecmat",
           "cumulative_sum", "cumulative_prod", "polyadd", "polysub", "polymul", "polyder",
           "polyint", "apply_along_axis", "fromfunction", "euler_gamma"]
