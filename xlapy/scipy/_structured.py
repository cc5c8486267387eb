"""Structured matrices of jax.scipy.linalg: block_diag and toeplitz."""

from __future__ import annotations

from xlapy.errors import ShapeError


def block_diag(*arrs):
    """The block-diagonal matrix of the arrays (scalars and vectors count as 1-row
    matrices), in their promoted dtype."""
    import xlapy.numpy as xnp
    if not arrs:
        return xnp.zeros((1, 0))
    mats = []
    for a in arrs:
        a = xnp.asarray(a)
        if a.ndim > 2:
            raise ShapeError(f"block_diag: arguments must have at most 2 dimensions, got "
                             f"shape {list(a.shape)}")
        mats.append(xnp.atleast_2d(a))
    dtype = xnp.result_type(*mats)
    cols = sum(m.shape[1] for m in mats)
    rows, start = [], 0
    for m in mats:
        rows.append(xnp.pad(m.astype(dtype), ((0, 0), (start, cols - start - m.shape[1]))))
        start += m.shape[1]
    return xnp.concatenate(rows, axis=0)


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column c and first row r (r = conj(c) when
    omitted; r[0] is ignored). Leading dimensions of c and r are batch dimensions."""
    import xlapy.numpy as xnp
    c = xnp.asarray(c)
    r = xnp.conj(c) if r is None else xnp.asarray(r)
    if c.ndim == 0:
        c = c.reshape(1)
    if r.ndim == 0:
        r = r.reshape(1)
    if c.shape[:-1] != r.shape[:-1]:
        raise ShapeError(f"toeplitz: c and r must have one batch shape, got "
                         f"{list(c.shape)} and {list(r.shape)}")
    dtype = xnp.result_type(c, r)
    m, n = c.shape[-1], r.shape[-1]
    i = xnp.arange(m)[:, None]
    j = xnp.arange(n)[None, :]
    # values: c[::-1] then r[1:], read at (j - i) + (m - 1)
    vals = xnp.concatenate([xnp.flip(c, -1).astype(dtype), r[..., 1:].astype(dtype)], -1)
    return xnp.take(vals, j - i + (m - 1), axis=-1)
