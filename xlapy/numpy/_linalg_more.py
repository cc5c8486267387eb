"""jax.numpy.linalg's array-API additions and tensor solves: cond, vector_norm,
matrix_norm, outer, cross, tensorinv, tensorsolve (over xlapy.numpy.linalg's functions)."""

from __future__ import annotations

import numpy as np

from xlapy.errors import ShapeError, XlapyError


def _xnp():
    import xlapy.numpy as xnp
    return xnp


def cond(x, p=None):
    """The condition number of each matrix of x in norm p (None: 2-norm, from the
    singular values)."""
    xnp = _xnp()
    x = xnp.asarray(x)
    if x.ndim < 2:
        raise ShapeError(f"linalg.cond: expects matrices, got shape {list(x.shape)}")
    if p is None or p == 2 or p == -2:
        s = xnp.linalg.svd(x, compute_uv=False)
        return s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    if x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"linalg.cond: p={p!r} needs square matrices, got shape "
                         f"{list(x.shape)}")
    r = xnp.linalg.norm(x, ord=p, axis=(-2, -1)) * \
        xnp.linalg.norm(xnp.linalg.inv(x), ord=p, axis=(-2, -1))
    # a singular matrix (NaNs from the inverse) has condition number inf, as JAX's
    return xnp.where(xnp.isnan(r) & ~xnp.any(xnp.isnan(x), axis=(-2, -1)), np.inf, r)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The vector norm over axis (all axes when None) (array API)."""
    xnp = _xnp()
    x = xnp.asarray(x)
    if axis is None:
        r = xnp.linalg.norm(x.ravel(), ord=ord)
        return r.reshape((1,) * x.ndim) if keepdims else r
    if isinstance(axis, tuple) and len(axis) != 1:
        axes = tuple(a % x.ndim for a in axis)
        rest = [d for d in range(x.ndim) if d not in axes]
        moved = xnp.transpose(x, rest + list(axes))
        flat = moved.reshape(tuple(x.shape[d] for d in rest) + (-1,))
        r = xnp.linalg.norm(flat, ord=ord, axis=-1)
        if keepdims:
            r = r.reshape(tuple(1 if d in axes else x.shape[d] for d in range(x.ndim)))
        return r
    ax = axis[0] if isinstance(axis, tuple) else axis
    return xnp.linalg.norm(x, ord=ord, axis=ax, keepdims=keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The matrix norm of each matrix of x's two minor dimensions (array API)."""
    xnp = _xnp()
    x = xnp.asarray(x)
    if x.ndim < 2:
        raise ShapeError(f"linalg.matrix_norm: expects matrices, got shape {list(x.shape)}")
    return xnp.linalg.norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def outer(x1, x2, /):
    xnp = _xnp()
    x1, x2 = xnp.asarray(x1), xnp.asarray(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ShapeError(f"linalg.outer: expects 1-d arrays, got shapes {list(x1.shape)} "
                         f"and {list(x2.shape)}")
    return xnp.outer(x1, x2)


def cross(x1, x2, /, *, axis=-1):
    xnp = _xnp()
    x1, x2 = xnp.asarray(x1), xnp.asarray(x2)
    for v in (x1, x2):
        if v.ndim == 0 or v.shape[axis] != 3:
            raise ShapeError(f"linalg.cross: both arrays need size 3 along axis {axis}, got "
                             f"shapes {list(x1.shape)} and {list(x2.shape)}")
    return xnp.cross(x1, x2, axis=axis)


def tensorinv(a, ind=2):
    """The inverse of a as a linear map from its first `ind` dims to the others:
    shape a.shape[ind:] + a.shape[:ind]."""
    xnp = _xnp()
    a = xnp.asarray(a)
    if not isinstance(ind, (int, np.integer)) or ind <= 0:
        raise XlapyError(f"linalg.tensorinv: ind must be a positive integer, got {ind!r}")
    out_shape, in_shape = tuple(a.shape[:ind]), tuple(a.shape[ind:])
    n, m = int(np.prod(out_shape)), int(np.prod(in_shape))
    if n != m:
        raise ShapeError(f"linalg.tensorinv: the first {ind} dims of a {list(a.shape)} "
                         f"({n} elements) must have the size of the others ({m})")
    return xnp.linalg.inv(a.reshape(n, m)).reshape(in_shape + out_shape)


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) == b."""
    xnp = _xnp()
    a, b = xnp.asarray(a), xnp.asarray(b)
    if axes is not None:
        axes = [ax % a.ndim for ax in axes]
        a = xnp.moveaxis(a, axes, [a.ndim - len(axes) + i for i in range(len(axes))])
    x_shape = tuple(a.shape[b.ndim:])
    n, m = int(np.prod(b.shape)), int(np.prod(x_shape))
    if tuple(a.shape[:b.ndim]) != tuple(b.shape) or n != m:
        raise ShapeError(f"linalg.tensorsolve: a of shape {list(a.shape)} does not match b "
                         f"of shape {list(b.shape)} (a's leading dims must be b's shape and "
                         f"the rest hold as many elements)")
    return xnp.linalg.solve(a.reshape(n, m), b.ravel()).reshape(x_shape)
