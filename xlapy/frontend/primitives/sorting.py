"""Sorting and cumulative primitives: sort (several operands, lexicographic keys) and
cumsum / cumprod / cummax / cummin, with NumPy impls, shape rules, HLO lowerings and VJPs.

  sort(*operands, dimension, is_stable, num_keys)
      Sorts every operand along `dimension` by the permutation that orders the first
      num_keys operands lexicographically. Floats order as NumPy: NaNs last, -0.0 == 0.0.
      The HLO comparator is lt(a, b) = a < b | (isnan(b) & !isnan(a)) per key, chained
      lexicographically. The strict function defaults to a stable sort (the VJP
      recomputes the permutation with a stable sort, so both agree).
  cumsum / cumprod / cummax / cummin(x, axis, reverse)
      Inclusive prefix reductions (from the end when reverse). Lowered as JAX does on CPU:
      reduce-window with a window of the whole axis and padding (n-1, 0) ((0, n-1) when
      reverse), init the op's identity. O(n^2) work per axis, fine for the axis lengths
      where a prefix op is not the bottleneck. cummax/cummin propagate NaN (XLA max/min).

VJPs:
  sort      ct_operand[perm[j]] = ct[j]: a scatter-add along the axis through the permutation
            (the sort of (keys..., iota) gives perm)
  cumsum    ct_x = reversed cumsum of ct
  cumprod   ct_x = reversed cumsum of (ct * out) / x          (x != 0 assumed, as reduce_prod)
  cummax/cummin  ct_i goes to the last position j <= i holding the running extremum
            (ties: the latest; JAX splits ties through its scan tree)
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ShapeError, XlapyError
from xlapy.frontend.core import bind, primitive
from xlapy.frontend.primitives.basic import (aval_of, div, eq, full, is_float, mul, ne, or_,
                                             select, zeros_like)
from xlapy.frontend.primitives.indexing import scatter_add_along_axis
from xlapy.frontend.primitives.shapes import _max_init, _min_init, iota, rev
from xlapy.hlo.shapes import Shape, primitive_type

# ---- sort -------------------------------------------------------------------------------------

sort_p = primitive("sort", multiple_results=True)


def _sort_key(k: np.ndarray) -> np.ndarray:
    if is_float(k.dtype) and k.dtype.itemsize < 4:
        return k.astype(np.float32)  # f16 / bf16: order-preserving widening
    return k


@sort_p.def_impl
def _sort_impl(*operands, dimension, is_stable, num_keys):
    _sort_aval(*map(aval_of, operands), dimension=dimension, is_stable=is_stable,
               num_keys=num_keys)
    xs = [np.moveaxis(np.asarray(o), dimension, -1) for o in operands]
    keys = [_sort_key(k) for k in xs[:num_keys]]
    if num_keys == 1:
        perm = np.argsort(keys[0], axis=-1, kind="stable")
    else:
        perm = np.lexsort(keys[::-1], axis=-1)  # lexsort is stable; last key is primary
    return [np.ascontiguousarray(np.moveaxis(np.take_along_axis(x, perm, -1), -1, dimension))
            for x in xs]


@sort_p.def_abstract_eval
def _sort_aval(*avals, dimension, is_stable, num_keys):
    a0 = avals[0]
    for a in avals[1:]:
        if a.shape != a0.shape:
            raise ShapeError(f"sort: all operands must have one shape, got "
                             f"{', '.join(map(str, avals))}")
    if not 0 <= dimension < max(a0.ndim, 1) or a0.ndim == 0:
        raise ShapeError(f"sort: dimension {dimension} is out of range for {a0}")
    if not 1 <= num_keys <= len(avals):
        raise ShapeError(f"sort: num_keys={num_keys} must be between 1 and the number of "
                         f"operands ({len(avals)})")
    return list(avals)


def _lt(sub, a, b, t):
    lt = sub.compare(a, b, "LT")
    if t.is_float:  # NaN sorts last: a < NaN for every non-NaN a
        lt = sub.or_(lt, sub.and_(sub.compare(b, b, "NE"), sub.compare(a, a, "EQ")))
    return lt


@sort_p.def_lowering
def _sort_lower(ctx, *xs, dimension, is_stable, num_keys):
    b = ctx.b
    sub = b.subcomputation("compare")
    params = []
    for i, x in enumerate(xs):
        st = Shape.array(x.shape.element_type, ())
        params.append((sub.parameter(st, f"lhs{i}"), sub.parameter(st, f"rhs{i}")))
    result = None
    for i in reversed(range(num_keys)):  # lt_i | (!gt_i & rest): lexicographic order
        a, c = params[i]
        t = xs[i].shape.element_type
        lt = _lt(sub, a, c, t)
        result = lt if result is None else sub.or_(lt, sub.and_(sub.not_(_lt(sub, c, a, t)),
                                                              result))
    s = b.sort(list(xs), sub.build(result), dimension, is_stable)
    if len(xs) == 1:
        return [s]
    return [b.get_tuple_element(s, i) for i in range(len(xs))]


def _index_dtype(n: int):
    return np.dtype(np.int32) if n < 2 ** 31 - 1 else np.dtype(np.int64)


@sort_p.def_vjp
def _sort_vjp(cts, *xs, out, dimension, is_stable, num_keys):
    # out = x[perm] along the axis, so ct_x[perm[j]] = ct[j]
    a = aval_of(xs[0])
    ids = iota(_index_dtype(a.shape[dimension]), a.shape, dimension)
    perm = bind(sort_p, *xs[:num_keys], ids, dimension=dimension, is_stable=True,
                num_keys=num_keys)[-1]
    return tuple(scatter_add_along_axis(zeros_like(x), perm, ct, dimension)
                 if ct is not None and is_float(aval_of(x).dtype) else None
                 for x, ct in zip(xs, cts))


def sort(operands, dimension=-1, is_stable=True, num_keys=1):
    """Sort one array (returns an array) or a sequence of same-shaped arrays (returns a
    list) along `dimension`, ordered by the first num_keys operands."""
    single = not isinstance(operands, (list, tuple))
    ops = [operands] if single else list(operands)
    if not ops:
        raise XlapyError("sort: needs at least one operand")
    nd = aval_of(ops[0]).ndim
    if nd == 0:
        raise XlapyError("sort: cannot sort a 0-d array")
    if not -nd <= dimension < nd:
        raise XlapyError(f"sort: dimension {dimension} is out of range for "
                         f"{aval_of(ops[0])}")
    out = bind(sort_p, *ops, dimension=int(dimension) % nd, is_stable=bool(is_stable),
               num_keys=int(num_keys))
    return out[0] if single else list(out)


# ---- cumulative reductions --------------------------------------------------------------------

def _np_cum(fn_name):
    def impl(x, axis, reverse):
        x = np.asarray(x)
        if reverse:
            x = np.flip(x, axis)
        # f16 / bf16 sums and products accumulate in f32 and round once (as reduce_sum)
        acc = np.float32 if is_float(x.dtype) and x.dtype.itemsize < 4 else x.dtype
        with np.errstate(all="ignore"):
            if fn_name == "sum":
                y = np.cumsum(x, axis=axis, dtype=acc).astype(x.dtype)
            elif fn_name == "prod":
                y = np.cumprod(x, axis=axis, dtype=acc).astype(x.dtype)
            elif x.dtype == np.bool_:
                y = (np.logical_or if fn_name == "max" else np.logical_and).accumulate(x, axis)
            else:
                y = (np.maximum if fn_name == "max" else np.minimum).accumulate(x, axis)
        if reverse:
            y = np.flip(y, axis)
        return np.ascontiguousarray(y)
    return impl


_CUM_HLO = {"sum": ("add", "or", lambda dt: 0), "prod": ("multiply", "and", lambda dt: 1),
            "max": ("maximum", "or", _max_init), "min": ("minimum", "and", _min_init)}


def _cum_prim(fn_name):
    p = primitive(f"cum{fn_name}")

    @p.def_abstract_eval
    def _(a, axis, reverse):
        if not 0 <= axis < a.ndim:
            raise ShapeError(f"{p.name}: axis {axis} is out of range for {a}")
        return a

    np_impl = _np_cum(fn_name)

    @p.def_impl
    def _(x, axis, reverse):
        p.abstract_eval(aval_of(x), axis=axis, reverse=reverse)
        return np_impl(x, axis, reverse)

    @p.def_lowering
    def _(ctx, x, axis, reverse):
        b = ctx.b
        t = x.shape.element_type
        op, bool_op, init = _CUM_HLO[fn_name]
        is_bool = t == primitive_type(np.bool_)
        comp = b.scalar_computation(bool_op if is_bool else op, t)
        dims = list(x.shape.dims)
        n = dims[axis]
        if n == 0 or x.shape.size == 0:
            return x  # nothing to accumulate (a window of size 0 is not valid HLO)
        window = [n if d == axis else 1 for d in range(len(dims))]
        pad = [((0, n - 1) if reverse else (n - 1, 0)) if d == axis else (0, 0)
               for d in range(len(dims))]
        init_v = b.constant(np.asarray(init(t.np_dtype), dtype=t.np_dtype))
        return b.reduce_window(x, init_v, comp, window, [1] * len(dims), pad)

    return p


cumsum_p = _cum_prim("sum")
cumprod_p = _cum_prim("prod")
cummax_p = _cum_prim("max")
cummin_p = _cum_prim("min")


def _cum_fn(p):
    def fn(x, axis=0, reverse=False):
        nd = aval_of(x).ndim
        if not -nd <= axis < nd:
            raise XlapyError(f"{p.name}: axis {axis} is out of range for {aval_of(x)}")
        return bind(p, x, axis=int(axis) % nd, reverse=bool(reverse))
    fn.__name__ = p.name
    fn.__doc__ = f"Inclusive {p.name} along `axis` (from the end when reverse)."
    return fn


cumsum = _cum_fn(cumsum_p)
cumprod = _cum_fn(cumprod_p)
cummax = _cum_fn(cummax_p)
cummin = _cum_fn(cummin_p)

# sum_{i >= j} ct_i (the other way round when reverse)
cumsum_p.def_vjp(lambda ct, x, out, axis, reverse: (cumsum(ct, axis, not reverse),))
# d out_i / d x_j = out_i / x_j for i >= j
cumprod_p.def_vjp(lambda ct, x, out, axis, reverse:
                  (div(cumsum(mul(ct, out), axis, not reverse), x),))


def _cum_extremum_vjp(ct, x, out, axis, reverse):
    # ct_i -> the last j <= i where x_j equals the running extremum (NaN counts as one)
    if reverse:
        g = _cum_extremum_vjp(rev(ct, (axis,)), rev(x, (axis,)), rev(out, (axis,)), axis, False)
        return (rev(g[0], (axis,)),)
    a = aval_of(x)
    it = _index_dtype(a.shape[axis])
    ids = iota(it, a.shape, axis)
    record = eq(x, out)
    if is_float(a.dtype):
        record = or_(record, ne(x, x))
    last = cummax(select(record, ids, full(a.shape, -1, it)), axis)
    return (scatter_add_along_axis(zeros_like(x), last, ct, axis),)


cummax_p.def_vjp(_cum_extremum_vjp)
cummin_p.def_vjp(_cum_extremum_vjp)


__all__ = ["sort", "cumsum", "cumprod", "cummax", "cummin"]
