"""r_ and c_: NumPy's index-trick concatenation objects (as jax.numpy has them).

    r_[1:5:2, 0, [7, 8]]      slices become ranges (a complex step: linspace's count)
    r_['0,2,0', [1, 2], [3]]  a leading string: axis, minimum rank, and where the last
                              dimension of an item that gains dimensions goes (its axes
                              rotate, as jax.numpy does; -1: leading unit dims only)
    r_['r', ...], r_['c', ...] a 1-d result as a row (1, n) or a column (n, 1)
    c_[a, b]                  r_['-1,2,0', a, b]: 1-d items become columns

Slices and strings are static (Python values); the items may be traced. Python scalars
are weak for the result dtype, as in JAX (r_[int8 array, 3] stays int8).
"""

from __future__ import annotations

from xlapy.errors import XlapyError
from xlapy.numpy._core import asarray, result_type, shape
from xlapy.numpy._creation import arange, linspace
from xlapy.numpy._shape_ops import concatenate, expand_dims, reshape, transpose

_PY_SCALARS = (bool, int, float, complex)


def _directive(text: str, params: list) -> list:
    """[axis, ndmin, trans1d, matrix] from a string like '0,2,0' (up to three integers;
    more are ignored), 'r' (a 1-d result becomes a row) or 'c' (a column)."""
    if text == "r":
        return params[:3] + [0]
    if text == "c":
        return params[:3] + [1]
    parts = text.split(",")
    vals = parts + params[len(parts):] if len(parts) < 4 else parts[:3] + params[3:]
    try:
        return [int(v) for v in vals]
    except ValueError:
        raise XlapyError(f"r_/c_: could not understand directive {text!r}: expected 'r', "
                         "'c' or up to three comma-separated integers (axis, minimum rank, "
                         "position of the item's dimensions)") from None


def _slice_range(s: slice):
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if s.stop is None:
        raise XlapyError("r_/c_: a slice needs a stop value")
    if isinstance(step, complex):
        return linspace(start, s.stop, int(abs(step)))
    return arange(start, s.stop, step)


def _raise_rank(a, item_ndim: int, ndmin: int, trans1d: int):
    """a with leading unit dimensions up to ndmin; when it gained some and trans1d is not
    -1, its axes rotated left so that its last dimension lands at trans1d (jax.numpy's
    rule)."""
    s = tuple(shape(a))
    if len(s) < ndmin:
        a = reshape(a, (1,) * (ndmin - len(s)) + s)
    if trans1d != -1 and ndmin - item_ndim > 0:
        shift = ndmin - abs(ndmin + trans1d + 1) % ndmin
        order = list(range(ndmin))
        a = transpose(a, order[shift:] + order[:shift])
    return a


class _Concat:
    """r_ / c_: item access concatenates the items along an axis."""

    def __init__(self, axis: int, ndmin: int, trans1d: int, name: str):
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __getitem__(self, key):
        items = list(key) if isinstance(key, tuple) else [key]
        params = [self.axis, self.ndmin, self.trans1d, -1]
        if items and isinstance(items[0], str):
            params = _directive(items[0], params)
            items = items[1:]
        axis, ndmin, trans1d, matrix = params
        if not items:
            raise XlapyError(f"{self.name}[...]: nothing to concatenate")
        arrays, weak = [], []
        for it in items:
            if isinstance(it, str):
                raise XlapyError(f"{self.name}[...]: a string directive must be placed at the "
                                 f"beginning, got {it!r} later")
            if isinstance(it, slice):
                arrays.append((_slice_range(it), 0, False))
                continue
            a = asarray(it)
            if isinstance(it, _PY_SCALARS):
                weak.append(it)
            arrays.append((a, len(shape(a)), isinstance(it, _PY_SCALARS)))
        strong = [a for a, _, is_weak in arrays if not is_weak]
        dt = result_type(*strong, *weak)
        parts = [_raise_rank(a, nd, ndmin, trans1d).astype(dt) for a, nd, _ in arrays]
        ranks = [len(shape(p)) for p in parts]
        if len(set(ranks)) != 1 or not -ranks[0] <= axis < max(ranks[0], 1):
            raise XlapyError(f"{self.name}[...]: the items have ranks {ranks}; they must agree "
                             f"and axis {axis} must be one of their dimensions")
        out = concatenate(parts, axis)
        if matrix != -1 and len(shape(out)) == 1:
            out = expand_dims(out, matrix)
        return out

    def __len__(self):
        return 0


r_ = _Concat(0, 1, -1, "r_")
c_ = _Concat(-1, 2, 0, "c_")

__all__ = ["r_", "c_"]
