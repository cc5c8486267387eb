"""xlapy.flatten_util (jax.flatten_util): a pytree of arrays as one flat vector.

    flat, unravel = ravel_pytree({"w": w, "b": b})
    unravel(flat)          # {"w": ..., "b": ...}: the leaves' shapes and dtypes again

The leaves are raveled and concatenated in the pytree's flattening order; the vector's
dtype is the promotion of the leaves' dtypes (xlapy.numpy.result_type), float32 for a tree
without leaves. unravel splits a vector of that size and dtype back into the tree, each
piece converted to its leaf's dtype. Both work on traced values (jit, grad, vmap).
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ShapeError, XlapyError
from xlapy.frontend import pytree

__all__ = ["ravel_pytree"]


def ravel_pytree(tree):
    """(flat, unravel): the leaves of `tree` as one 1-d array, and the function that
    rebuilds the tree from such an array."""
    import xlapy.numpy as xnp

    leaves, treedef = pytree.flatten(tree)
    leaves = [xnp.asarray(x) for x in leaves]
    shapes = [tuple(x.shape) for x in leaves]
    dtypes = [np.dtype(x.dtype) for x in leaves]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    dtype = xnp.result_type(*dtypes) if dtypes else np.dtype(np.float32)
    if leaves:
        flat = xnp.concatenate([xnp.ravel(x).astype(dtype) for x in leaves])
    else:
        flat = xnp.zeros((0,), dtype)
    return flat, _Unravel(treedef, shapes, dtypes, sizes, dtype)


class _Unravel:
    """The inverse of one ravel_pytree: a flat vector -> the tree it came from."""

    def __init__(self, treedef, shapes, dtypes, sizes, dtype):
        self.treedef, self.shapes, self.dtypes = treedef, shapes, dtypes
        self.sizes, self.dtype = sizes, np.dtype(dtype)

    def __call__(self, flat):
        import xlapy.numpy as xnp

        flat = xnp.asarray(flat)
        total = sum(self.sizes)
        if tuple(flat.shape) != (total,):
            raise ShapeError(f"unravel (from ravel_pytree): expects a vector of shape "
                             f"({total},), got shape {tuple(flat.shape)}")
        if np.dtype(flat.dtype) != self.dtype:
            raise XlapyError(f"unravel (from ravel_pytree): given an array of dtype "
                             f"{flat.dtype}, but expected dtype {self.dtype}")
        pieces, start = [], 0
        for shape, dt, n in zip(self.shapes, self.dtypes, self.sizes):
            piece = xnp.reshape(flat[start:start + n], shape)
            pieces.append(piece if dt == self.dtype else piece.astype(dt))
            start += n
        return pytree.unflatten(self.treedef, pieces)

    def __repr__(self):
        return f"<unravel of {self.treedef}>"
