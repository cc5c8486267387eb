"""NumPy functions that select, place or order elements: put_along_axis, lexsort,
partition, argpartition, compress, extract, piecewise; isdtype; polyfit.

As jax.numpy: put_along_axis only with inplace=False (JAX arrays are immutable) and
returns the updated copy; partition puts the kth smallest value at kth with the smaller
ones before it in ascending order and the larger ones after it in descending order, and
argpartition the indices of the smaller ones (ascending values, ties by index) then the
others in index order, which is what JAX's top_k-based versions give; compress and extract
need a concrete condition, or `size` (and fill_value) for a result of static size.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ShapeError, UnsupportedError, XlapyError


def _xnp():
    import xlapy.numpy as xnp
    return xnp


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """arr with values put at indices along axis (a copy; inplace=False required)."""
    xnp = _xnp()
    if inplace:
        raise XlapyError("put_along_axis: xlapy arrays are immutable; pass inplace=False to "
                         "get the updated copy (as jax.numpy requires)")
    arr = xnp.asarray(arr)
    indices = xnp.asarray(indices)
    if not xnp.issubdtype(indices.dtype, np.integer):
        raise XlapyError(f"put_along_axis: indices must be integers, got {indices.dtype}")
    if axis is None:
        return put_along_axis(arr.ravel(), indices.ravel(), xnp.ravel(values), 0,
                              inplace=False, mode=mode).reshape(arr.shape)
    nd = arr.ndim
    if indices.ndim != nd:
        raise ShapeError(f"put_along_axis: indices must have arr's rank {nd}, got shape "
                         f"{list(indices.shape)}")
    if not -nd <= axis < nd:
        raise XlapyError(f"put_along_axis: axis {axis} is out of range for rank {nd}")
    axis %= nd
    shape = tuple(arr.shape[d] if d != axis else indices.shape[d] for d in range(nd))
    try:
        shape = np.broadcast_shapes(shape, tuple(indices.shape))
    except ValueError:
        raise ShapeError(f"put_along_axis: indices of shape {list(indices.shape)} do not "
                         f"broadcast against arr of shape {list(arr.shape)}") from None
    idx = []
    for d in range(nd):
        if d == axis:
            i = xnp.where(indices < 0, indices + arr.shape[axis], indices)
            idx.append(xnp.broadcast_to(i, shape))
        else:
            r = xnp.arange(shape[d]).reshape((1,) * d + (-1,) + (1,) * (nd - d - 1))
            idx.append(xnp.broadcast_to(r, shape))
    vals = xnp.broadcast_to(xnp.asarray(values).astype(arr.dtype), shape)
    return arr.at[tuple(idx)].set(vals, mode=mode)


def lexsort(keys, axis=-1):
    """Indices sorting by the last key, then the one before it, ... (stable)."""
    xnp = _xnp()
    keys = [xnp.asarray(k) for k in (keys if isinstance(keys, (list, tuple)) else
                                     list(xnp.asarray(keys)))]
    if not keys:
        raise XlapyError("lexsort: needs at least one key")
    shape = tuple(keys[0].shape)
    if any(tuple(k.shape) != shape for k in keys):
        raise ShapeError(f"lexsort: all keys must have one shape, got "
                         f"{[list(k.shape) for k in keys]}")
    if len(shape) == 0:
        raise ShapeError("lexsort: keys must be at least 1-dimensional")
    order = xnp.argsort(keys[0], axis=axis, stable=True)
    for k in keys[1:]:
        step = xnp.argsort(xnp.take_along_axis(k, order, axis=axis), axis=axis, stable=True)
        order = xnp.take_along_axis(order, step, axis=axis)
    return order


def _kth(name, a, kth, axis):
    if a.ndim == 0:
        raise ShapeError(f"{name}: expects an array of rank >= 1")
    if not -a.ndim <= axis < a.ndim:
        raise XlapyError(f"{name}: axis {axis} is out of range for rank {a.ndim}")
    axis %= a.ndim
    n = a.shape[axis]
    if not isinstance(kth, (int, np.integer)) or not -n <= kth < n:
        raise XlapyError(f"{name}: kth must be an integer in [-{n}, {n}), got {kth!r}")
    if a.dtype.kind == "c":
        raise UnsupportedError(f"{name}: complex arrays are not supported (as in JAX)")
    return int(kth) % n, axis


def partition(a, kth, axis=-1):
    xnp = _xnp()
    a = xnp.asarray(a)
    kth, axis = _kth("partition", a, kth, axis)
    s = xnp.moveaxis(xnp.sort(a, axis=axis), axis, -1)
    out = xnp.concatenate([s[..., :kth + 1], xnp.flip(s[..., kth + 1:], -1)], axis=-1)
    return xnp.moveaxis(out, -1, axis)


def argpartition(a, kth, axis=-1):
    xnp = _xnp()
    a = xnp.asarray(a)
    kth, axis = _kth("argpartition", a, kth, axis)
    a = xnp.moveaxis(a, axis, -1)
    n = a.shape[-1]
    bottom = xnp.argsort(a, axis=-1, stable=True)[..., :kth + 1].astype(np.int32)
    is_bottom = put_along_axis(xnp.zeros(a.shape, np.int32), bottom, 1, -1, inplace=False)
    top = xnp.argsort(is_bottom, axis=-1, stable=True)[..., :n - kth - 1].astype(np.int32)
    return xnp.moveaxis(xnp.concatenate([bottom, top], axis=-1), -1, axis)


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    xnp = _xnp()
    if out is not None:
        raise XlapyError("compress: out= is not supported (xlapy arrays are immutable)")
    cond = xnp.asarray(condition)
    if cond.ndim != 1:
        raise ShapeError(f"compress: condition must be 1-dimensional, got shape "
                         f"{list(cond.shape)}")
    a = xnp.asarray(a)
    if axis is None:
        a, axis = a.ravel(), 0
    if not -a.ndim <= axis < a.ndim:
        raise XlapyError(f"compress: axis {axis} is out of range for rank {a.ndim}")
    axis %= a.ndim
    n = a.shape[axis]
    if cond.shape[0] > n:
        cond = cond[:n]  # (NumPy allows a longer condition only when the extra is False)
    elif cond.shape[0] < n:
        cond = xnp.concatenate([cond.astype(bool), xnp.zeros(n - cond.shape[0], bool)])
    (idx,) = xnp.nonzero(cond, size=size, fill_value=-1 if size is not None else None)
    taken = xnp.take(a, xnp.where(idx < 0, 0, idx), axis=axis)
    if size is None:
        return taken
    valid = (idx >= 0).reshape((1,) * axis + (-1,) + (1,) * (a.ndim - axis - 1))
    return xnp.where(valid, taken, xnp.asarray(fill_value).astype(a.dtype))


def extract(condition, arr, *, size=None, fill_value=0):
    xnp = _xnp()
    return compress(xnp.ravel(condition), xnp.ravel(arr), size=size, fill_value=fill_value)


def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[i] (a function of x, or a value) where condlist[i] holds (later conditions
    win); funclist may have one more entry, used where no condition holds (else 0)."""
    xnp = _xnp()
    x = xnp.asarray(x)
    conds = [xnp.asarray(c, dtype=bool) for c in
             (condlist if isinstance(condlist, (list, tuple)) else [condlist])]
    n = len(conds)
    if len(funclist) not in (n, n + 1):
        raise XlapyError(f"piecewise: funclist needs {n} or {n + 1} entries for {n} "
                         f"conditions, got {len(funclist)}")

    def value(f):
        v = f(x, *args, **kw) if callable(f) else f
        return xnp.broadcast_to(xnp.asarray(v).astype(x.dtype), x.shape)

    out = value(funclist[n]) if len(funclist) == n + 1 else xnp.zeros_like(x)
    for c, f in zip(conds, funclist[:n]):
        out = xnp.where(c, value(f), out)
    return out


_KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u",
          "integral": "iu", "real floating": "f", "complex floating": "c",
          "numeric": "iufc"}


def isdtype(dtype, kind) -> bool:
    """Whether dtype is of kind: a name of _KINDS, a dtype, or a tuple of those."""
    dt = np.dtype(dtype)
    code = "f" if dt.name == "bfloat16" else dt.kind
    if isinstance(kind, tuple):
        return any(isdtype(dt, k) for k in kind)
    if isinstance(kind, str) and kind in _KINDS:
        return code in _KINDS[kind]
    try:
        return dt == np.dtype(kind)
    except TypeError:
        raise XlapyError(f"isdtype: kind must be a dtype, one of {sorted(_KINDS)} or a tuple "
                         f"of those, got {kind!r}") from None


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial coefficients, highest power first."""
    xnp = _xnp()
    if full or cov:
        raise UnsupportedError("polyfit: full=True and cov=True are not supported by xlapy")
    if not isinstance(deg, (int, np.integer)) or deg < 0:
        raise XlapyError(f"polyfit: deg must be a non-negative integer, got {deg!r}")
    x, y = xnp.asarray(x), xnp.asarray(y)
    if x.ndim != 1 or y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
        raise ShapeError(f"polyfit: expects x of shape (M,) and y of shape (M,) or (M, K), "
                         f"got {list(x.shape)} and {list(y.shape)}")
    x = x.astype(xnp.result_type(x, 1.0))
    lhs = xnp.vander(x, deg + 1)
    rhs = y.astype(x.dtype)
    if w is not None:
        w = xnp.asarray(w).astype(x.dtype)
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(np.dtype(x.dtype)).eps)
    scale = xnp.sqrt(xnp.sum(lhs * lhs, axis=0))
    c = xnp.linalg.lstsq(lhs / scale, rhs, rcond=rcond)[0]
    return (c.T / scale).T
