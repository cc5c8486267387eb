"""Primitives that move data or reduce it: reshape, transpose, reductions, argmax,
dot_general, slice, concatenate, pad, rev, iota — with their NumPy impls, shape rules, HLO
lowerings and VJPs.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ShapeError
from xlapy.frontend.core import ShapedArray, bind, primitive
from xlapy.frontend.primitives.basic import (add, aval_of, broadcast_in_dim, convert, eq, full,
                                             is_float, mul, select, sub, zeros_like)

# ---- reshape / transpose -----------------------------------------------------------------

reshape_p = primitive("reshape")
reshape_p.def_impl(lambda x, new_sizes: np.reshape(np.asarray(x), new_sizes).copy())


@reshape_p.def_abstract_eval
def _reshape_aval(a, new_sizes):
    if int(np.prod(new_sizes, dtype=np.int64)) != a.size:
        raise ShapeError(f"reshape: cannot reshape {a} ({a.size} elements) to {list(new_sizes)}")
    return ShapedArray(new_sizes, a.dtype)


reshape_p.def_lowering(lambda ctx, x, new_sizes: ctx.b.reshape(x, new_sizes))
reshape_p.def_vjp(lambda ct, x, out, new_sizes: (reshape(ct, aval_of(x).shape),))


def reshape(x, new_sizes):
    new_sizes = tuple(int(d) for d in new_sizes)
    if aval_of(x).shape == new_sizes:
        return x
    return bind(reshape_p, x, new_sizes=new_sizes)


transpose_p = primitive("transpose")
transpose_p.def_impl(lambda x, permutation: np.transpose(np.asarray(x), permutation).copy())


@transpose_p.def_abstract_eval
def _transpose_aval(a, permutation):
    if sorted(permutation) != list(range(a.ndim)):
        raise ShapeError(f"transpose: {list(permutation)} is not a permutation of the "
                         f"{a.ndim} dimensions of {a}")
    return ShapedArray(tuple(a.shape[p] for p in permutation), a.dtype)


transpose_p.def_lowering(lambda ctx, x, permutation: ctx.b.transpose(x, permutation))
transpose_p.def_vjp(lambda ct, x, out, permutation:
                    (transpose(ct, tuple(int(i) for i in np.argsort(permutation))),))


def transpose(x, permutation):
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))):
        return x
    return bind(transpose_p, x, permutation=permutation)


# ---- reductions ----------------------------------------------------------------------------

def _reduce(name, np_fn, hlo_op, init):
    p = primitive(name)

    @p.def_impl
    def _(x, axes):
        x = np.asarray(x)
        if x.dtype.itemsize < 4 and is_float(x.dtype) and name in ("reduce_sum", "reduce_prod"):
            return np_fn(x.astype(np.float32), axis=axes).astype(x.dtype)
        with np.errstate(all="ignore"):
            return np.asarray(np_fn(x, axis=axes)).astype(x.dtype)

    @p.def_abstract_eval
    def _(a, axes):
        for ax in axes:
            if not 0 <= ax < a.ndim:
                raise ShapeError(f"{name}: axis {ax} is out of range for {a}")
        return ShapedArray(tuple(d for i, d in enumerate(a.shape) if i not in axes), a.dtype)

    @p.def_lowering
    def _(ctx, x, axes):
        b = ctx.b
        t = x.shape.element_type
        init_value = init(t.np_dtype)
        reducer = b.scalar_computation(hlo_op, t)
        return b.reduce(x, b.constant(np.asarray(init_value, dtype=t.np_dtype)), reducer, axes)

    return p


def _max_init(dt):
    return -np.inf if is_float(dt) else (np.iinfo(dt).min if dt != np.bool_ else False)


def _min_init(dt):
    return np.inf if is_float(dt) else (np.iinfo(dt).max if dt != np.bool_ else True)


reduce_sum_p = _reduce("reduce_sum", np.sum, "add", lambda dt: 0)
reduce_max_p = _reduce("reduce_max", np.max, "maximum", _max_init)
reduce_min_p = _reduce("reduce_min", np.min, "minimum", _min_init)
reduce_prod_p = _reduce("reduce_prod", np.prod, "multiply", lambda dt: 1)
reduce_and_p = _reduce("reduce_and", np.all, "and", lambda dt: True)
reduce_or_p = _reduce("reduce_or", np.any, "or", lambda dt: False)


def _kept_shape(shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _expand_back(ct, x_shape, axes):
    """Broadcast a reduced cotangent back to the operand's shape."""
    kept = [i for i in range(len(x_shape)) if i not in axes]
    return broadcast_in_dim(ct, x_shape, kept)


reduce_sum_p.def_vjp(lambda ct, x, out, axes: (_expand_back(ct, aval_of(x).shape, axes),))


def _minmax_vjp(ct, x, out, axes):
    # the cotangent goes to the positions equal to the extremum, split evenly among ties
    shape = aval_of(x).shape
    mask = convert(eq(x, _expand_back(out, shape, axes)), aval_of(x).dtype)
    count = reduce_sum(mask, axes)
    return (mul(mask, _expand_back(_div(ct, count), shape, axes)),)


def _div(a, b):
    from xlapy.frontend.primitives.basic import div
    return div(a, b)


reduce_max_p.def_vjp(_minmax_vjp)
reduce_min_p.def_vjp(_minmax_vjp)


@reduce_prod_p.def_vjp
def _prod_vjp(ct, x, out, axes):
    # d(prod)/dx_i = the product of the others: prod/x_i when the group has no zero; with
    # one zero only that element gets the product of the rest; with two or more, all get 0
    a = aval_of(x)
    shape = a.shape
    zero = eq(x, zeros_like(x))
    safe = select(zero, full(shape, 1, a.dtype), x)
    p_nz = _expand_back(reduce_prod(safe, axes), shape, axes)       # product of the nonzeros
    n_zeros = _expand_back(reduce_sum(convert(zero, a.dtype), axes), shape, axes)
    none, one = eq(n_zeros, zeros_like(x)), eq(n_zeros, full(shape, 1, a.dtype))
    others = select(zero, select(one, p_nz, zeros_like(x)),
                    select(none, _div(p_nz, safe), zeros_like(x)))
    return (mul(_expand_back(ct, shape, axes), others),)


def _reducer(p):
    def fn(x, axes):
        axes = tuple(sorted(int(a) for a in axes))
        if not axes:
            return x
        return bind(p, x, axes=axes)
    return fn


reduce_sum = _reducer(reduce_sum_p)
reduce_max = _reducer(reduce_max_p)
reduce_min = _reducer(reduce_min_p)
reduce_prod = _reducer(reduce_prod_p)
reduce_and = _reducer(reduce_and_p)
reduce_or = _reducer(reduce_or_p)

# ---- argmax / argmin (a variadic reduce over (value, index)) ----------------------------------


def _arg_impl(is_max):
    def impl(x, axis, index_dtype):
        x = np.asarray(x)
        if x.shape[axis] == 0:
            raise ShapeError("argmax/argmin of an empty axis")
        fn = np.nanargmax if False else (np.argmax if is_max else np.argmin)
        nan = np.isnan(x) if is_float(x.dtype) else np.zeros(x.shape, bool)
        idx = fn(np.where(nan, (np.inf if is_max else -np.inf), x), axis=axis)
        has_nan = nan.any(axis=axis)
        first_nan = np.argmax(nan, axis=axis)
        return np.where(has_nan, first_nan, idx).astype(index_dtype)  # NaN wins, like XLA
    return impl


def _arg_lowering(is_max):
    def lower(ctx, x, axis, index_dtype):
        b = ctx.b
        t = x.shape.element_type
        it = np.dtype(index_dtype)
        dims = x.shape.dims
        idx = b.iota(it, dims, axis)
        sub = b.subcomputation("argmax" if is_max else "argmin")
        from xlapy.hlo.shapes import Shape, primitive_type
        st, si = Shape.array(t, ()), Shape.array(primitive_type(it), ())
        av, ai, bv, bi = (sub.parameter(st, "a"), sub.parameter(si, "ai"), sub.parameter(st, "b"),
                          sub.parameter(si, "bi"))
        better = sub.compare(av, bv, "GT" if is_max else "LT")
        if t.is_float:
            better = sub.or_(better, sub.compare(av, av, "NE"))  # NaN wins
        tie = sub.and_(sub.compare(av, bv, "EQ"), sub.compare(ai, bi, "LT"))
        pick_a = sub.or_(better, tie)
        comp = sub.build(sub.tuple([sub.select(pick_a, av, bv), sub.select(pick_a, ai, bi)]))
        init_v = b.constant(np.asarray(_max_init(t.np_dtype) if is_max else _min_init(t.np_dtype),
                                       dtype=t.np_dtype))
        init_i = b.constant(np.asarray(0, dtype=it))
        r = b.reduce([x, idx], [init_v, init_i], comp, [axis])
        return b.get_tuple_element(r, 1)
    return lower


argmax_p = primitive("argmax")
argmin_p = primitive("argmin")
for _p, _is_max in ((argmax_p, True), (argmin_p, False)):
    _p.def_impl(_arg_impl(_is_max))
    _p.def_abstract_eval(lambda a, axis, index_dtype: ShapedArray(
        tuple(d for i, d in enumerate(a.shape) if i != axis), index_dtype))
    _p.def_lowering(_arg_lowering(_is_max))


def argmax(x, axis, index_dtype=np.int64):
    return bind(argmax_p, x, axis=int(axis), index_dtype=np.dtype(index_dtype))


def argmin(x, axis, index_dtype=np.int64):
    return bind(argmin_p, x, axis=int(axis), index_dtype=np.dtype(index_dtype))


# ---- dot_general ----------------------------------------------------------------------------

dot_general_p = primitive("dot_general")


def _dot_dims(a_shape, b_shape, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    lfree = [d for d in range(len(a_shape)) if d not in lc and d not in lb]
    rfree = [d for d in range(len(b_shape)) if d not in rc and d not in rb]
    return lc, rc, lb, rb, lfree, rfree


@dot_general_p.def_impl
def _dot_impl(x, y, dimension_numbers, preferred_element_type, precision=None):
    # (imported here: tracing, which never runs this, skips the evaluator's import)
    from xlapy.hlo.evaluator.linalg import matmul_dims
    x, y = np.asarray(x), np.asarray(y)
    lc, rc, lb, rb, _, _ = _dot_dims(x.shape, y.shape, dimension_numbers)
    out_t = np.dtype(preferred_element_type) if preferred_element_type is not None else x.dtype
    acc = np.float32 if (is_float(out_t) and out_t.itemsize < 4) else out_t
    with np.errstate(all="ignore"):
        r = matmul_dims(x.astype(acc), y.astype(acc), lc, rc, lb, rb)
    return r.astype(out_t)


@dot_general_p.def_abstract_eval
def _dot_aval(a, b, dimension_numbers, preferred_element_type, precision=None):
    lc, rc, lb, rb, lfree, rfree = _dot_dims(a.shape, b.shape, dimension_numbers)
    for l, r in zip(list(lc) + list(lb), list(rc) + list(rb)):
        if a.shape[l] != b.shape[r]:
            raise ShapeError(f"dot_general: dimension {l} of {a} ({a.shape[l]}) does not match "
                             f"dimension {r} of {b} ({b.shape[r]})")
    if a.dtype != b.dtype:
        raise ShapeError(f"dot_general: operand dtypes differ: {a} and {b}")
    out_t = preferred_element_type if preferred_element_type is not None else a.dtype
    shape = tuple(a.shape[d] for d in lb) + tuple(a.shape[d] for d in lfree) + \
        tuple(b.shape[d] for d in rfree)
    return ShapedArray(shape, out_t)


@dot_general_p.def_lowering
def _dot_lower(ctx, x, y, dimension_numbers, preferred_element_type, precision=None):
    (lc, rc), (lb, rb) = dimension_numbers
    return ctx.b.dot_general(x, y, contracting=(lc, rc), batch=(lb, rb),
                             preferred_type=preferred_element_type, precision=precision)


@dot_general_p.def_vjp
def _dot_vjp(ct, x, y, out, dimension_numbers, preferred_element_type, precision=None):
    xa, ya = aval_of(x), aval_of(y)
    lc, rc, lb, rb, lfree, rfree = _dot_dims(xa.shape, ya.shape, dimension_numbers)
    nb, nlf, nrf = len(lb), len(lfree), len(rfree)
    # ct dims: [batch, lfree, rfree]
    ct_b = list(range(nb))
    ct_l = list(range(nb, nb + nlf))
    ct_r = list(range(nb + nlf, nb + nlf + nrf))
    # dx = ct . y contracting rfree: result dims [batch, lfree, y's contracting (rc order)]
    # (the cotangent's dots keep the precision, with the operands' roles swapped for dy)
    dx = dot_general(ct, y, ((tuple(ct_r), tuple(rfree)), (tuple(ct_b), tuple(rb))),
                     preferred_element_type=xa.dtype, precision=precision)
    # dx dims currently: batch (lb order), lfree, rc-dims (in order of y dims sorted)
    rc_sorted = [d for d in range(ya.ndim) if d in rc]
    x_dims_of_dx = list(lb) + lfree + [lc[list(rc).index(d)] for d in rc_sorted]
    dx = transpose(dx, [x_dims_of_dx.index(d) for d in range(xa.ndim)])
    # dy = x^T . ct, contracting x's free dims with ct's lhs-free dims: the result comes
    # out as [batch, y's contracting dims, y's free dims], y's own order in the usual case,
    # so no transpose is needed (a transposed weight gradient would make the update read
    # it with strides)
    dy = dot_general(x, ct, ((tuple(lfree), tuple(ct_l)), (tuple(lb), tuple(ct_b))),
                     preferred_element_type=ya.dtype, precision=precision)
    lc_sorted = [d for d in range(xa.ndim) if d in lc]
    y_dims_of_dy = list(rb) + [rc[list(lc).index(d)] for d in lc_sorted] + rfree
    dy = transpose(dy, [y_dims_of_dy.index(d) for d in range(ya.ndim)])
    return convert(dx, xa.dtype), convert(dy, ya.dtype)


def dot_general(x, y, dimension_numbers, preferred_element_type=None, precision=None):
    """precision: None or a pair of "default"/"high"/"highest" (lax.Precision's names,
    canonicalized by xlapy.lax.precision); a param only when given, so the jaxprs of
    programs that never ask for one stay as they were."""
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(int(d) for d in lc), tuple(int(d) for d in rc)),
          (tuple(int(d) for d in lb), tuple(int(d) for d in rb)))
    pet = None if preferred_element_type is None else np.dtype(preferred_element_type)
    if pet is not None and pet == aval_of(x).dtype:
        pet = None
    if precision is not None:
        return bind(dot_general_p, x, y, dimension_numbers=dn, preferred_element_type=pet,
                    precision=tuple(precision))
    return bind(dot_general_p, x, y, dimension_numbers=dn, preferred_element_type=pet)


# ---- slicing and assembling -----------------------------------------------------------------

slice_p = primitive("slice")
slice_p.def_impl(lambda x, starts, limits, strides: np.asarray(x)[
    tuple(slice(s, l, st) for s, l, st in zip(starts, limits, strides))].copy())


@slice_p.def_abstract_eval
def _slice_aval(a, starts, limits, strides):
    shape = []
    for d, (s, l, st) in enumerate(zip(starts, limits, strides)):
        if not (0 <= s <= l <= a.shape[d]) or st < 1:
            raise ShapeError(f"slice: [{s}:{l}:{st}] is out of range for dimension {d} of {a}")
        shape.append((l - s + st - 1) // st)
    return ShapedArray(shape, a.dtype)


slice_p.def_lowering(
    lambda ctx, x, starts, limits, strides: ctx.b.slice(x, starts, limits, strides))


@slice_p.def_vjp
def _slice_vjp(ct, x, out, starts, limits, strides):
    a = aval_of(x)
    lows = list(starts)
    interiors = [st - 1 for st in strides]
    highs = [a.shape[d] - (starts[d] + (aval_of(out).shape[d] - 1) * strides[d] + 1)
             if aval_of(out).shape[d] else a.shape[d] - starts[d] for d in range(a.ndim)]
    cfg = tuple((lo, hi, it if aval_of(out).shape[d] else 0)
                for d, (lo, hi, it) in enumerate(zip(lows, highs, interiors)))
    return (pad(ct, full((), 0, a.dtype), cfg),)


def slice_(x, starts, limits, strides=None):
    starts = tuple(int(s) for s in starts)
    limits = tuple(int(s) for s in limits)
    strides = tuple(int(s) for s in strides) if strides is not None else (1,) * len(starts)
    if starts == (0,) * len(starts) and limits == aval_of(x).shape and set(strides) <= {1}:
        return x
    return bind(slice_p, x, starts=starts, limits=limits, strides=strides)


pad_p = primitive("pad")


@pad_p.def_impl
def _pad_impl(x, value, config):
    x = np.asarray(x)
    shape = [lo + hi + d + max(d - 1, 0) * it for d, (lo, hi, it) in zip(x.shape, config)]
    out = np.full([max(s, 0) for s in shape], np.asarray(value), dtype=x.dtype)
    # place x into a temporarily enlarged canvas to allow negative padding
    big = [d + max(d - 1, 0) * it + max(lo, 0) + max(hi, 0)
           for d, (lo, hi, it) in zip(x.shape, config)]
    canvas = np.full(big, np.asarray(value), dtype=x.dtype)
    idx = tuple(slice(max(lo, 0), max(lo, 0) + d + max(d - 1, 0) * it, it + 1)
                for d, (lo, hi, it) in zip(x.shape, config))
    canvas[idx] = x
    crop = tuple(slice(-min(lo, 0), -min(lo, 0) + s) for (lo, hi, it), s in zip(config, out.shape))
    return canvas[crop].copy()


@pad_p.def_abstract_eval
def _pad_aval(a, v, config):
    shape = [lo + hi + d + max(d - 1, 0) * it for d, (lo, hi, it) in zip(a.shape, config)]
    if any(s < 0 for s in shape):
        raise ShapeError(f"pad: padding {config} makes a negative dimension for {a}")
    return ShapedArray(shape, a.dtype)


pad_p.def_lowering(lambda ctx, x, v, config: ctx.b.pad(x, v, config))


@pad_p.def_vjp
def _pad_vjp(ct, x, v, out, config):
    a = aval_of(x)
    # un-pad: slice out the operand positions (negative lows were crops: pad them back)
    t = ct
    neg_cfg = tuple((max(-lo, 0), max(-hi, 0), 0) for lo, hi, _ in config)
    if any(lo or hi for lo, hi, _ in neg_cfg):
        t = pad(t, full((), 0, a.dtype), neg_cfg)
    starts = [max(lo, 0) for lo, _, _ in config]
    limits = [s + d + max(d - 1, 0) * it for s, d, (_, _, it) in zip(starts, a.shape, config)]
    strides = [it + 1 for _, _, it in config]
    t_operand = slice_(t, starts, limits, strides)
    every = tuple(range(a.ndim))                     # the value fills every other position
    t_value = sub(reduce_sum(ct, every), reduce_sum(t_operand, every))
    return t_operand, t_value


def pad(x, value, config):
    config = tuple((int(lo), int(hi), int(it)) for lo, hi, it in config)
    if all(c == (0, 0, 0) for c in config):
        return x
    return bind(pad_p, x, value, config=config)


concatenate_p = primitive("concatenate")
concatenate_p.def_impl(
    lambda *xs, dimension: np.concatenate([np.asarray(x) for x in xs], dimension))


@concatenate_p.def_abstract_eval
def _concat_aval(*avals, dimension):
    a0 = avals[0]
    for a in avals[1:]:
        if a.dtype != a0.dtype or a.ndim != a0.ndim or any(
                a.shape[d] != a0.shape[d] for d in range(a.ndim) if d != dimension):
            raise ShapeError(f"concatenate along {dimension}: incompatible operands "
                             f"{', '.join(map(str, avals))}")
    shape = list(a0.shape)
    shape[dimension] = sum(a.shape[dimension] for a in avals)
    return ShapedArray(shape, a0.dtype)


concatenate_p.def_lowering(lambda ctx, *xs, dimension: ctx.b.concatenate(list(xs), dimension))


@concatenate_p.def_vjp
def _concat_vjp(ct, *xs, out, dimension):
    grads, start = [], 0
    shape = aval_of(ct).shape
    for x in xs:
        n = aval_of(x).shape[dimension]
        starts = [0] * len(shape)
        limits = list(shape)
        starts[dimension], limits[dimension] = start, start + n
        grads.append(slice_(ct, starts, limits))
        start += n
    return tuple(grads)


def concatenate(xs, dimension):
    xs = list(xs)
    if len(xs) == 1:
        return xs[0]
    return bind(concatenate_p, *xs, dimension=int(dimension))


rev_p = primitive("rev")
rev_p.def_impl(lambda x, dimensions: np.flip(np.asarray(x), dimensions).copy())
rev_p.def_abstract_eval(lambda a, dimensions: a)
rev_p.def_lowering(lambda ctx, x, dimensions: ctx.b.reverse(x, dimensions))
rev_p.def_vjp(lambda ct, x, out, dimensions: (rev(ct, dimensions),))


def rev(x, dimensions):
    dimensions = tuple(int(d) for d in dimensions)
    return x if not dimensions else bind(rev_p, x, dimensions=dimensions)


iota_p = primitive("iota")


@iota_p.def_impl
def _iota_impl(dtype, shape, dimension):
    r = np.arange(shape[dimension], dtype=dtype)
    return np.broadcast_to(r.reshape([-1 if i == dimension else 1 for i in range(len(shape))]),
                           shape).copy()


iota_p.def_abstract_eval(lambda dtype, shape, dimension: ShapedArray(shape, dtype))
iota_p.def_lowering(
    lambda ctx, dtype, shape, dimension: ctx.b.iota(np.dtype(dtype), shape, dimension))


def iota(dtype, shape, dimension=0):
    return bind(iota_p, dtype=np.dtype(dtype), shape=tuple(int(d) for d in shape),
                dimension=int(dimension))


__all__ = ["reshape", "transpose", "reduce_sum", "reduce_max", "reduce_min", "reduce_prod",
           "argmax", "argmin", "dot_general", "slice_", "pad", "concatenate", "rev", "iota",
           "add", "select", "zeros_like"]
