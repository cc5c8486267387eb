"""Windowed reductions: reduce_window_{sum,max,min} and select_and_scatter_add.

reduce_window_<op>(x; window_dimensions, window_strides, padding, base_dilation,
window_dilation) is XLA's reduce-window with the op's identity as init value: the operand
is dilated (base_dilation - 1 holes between elements) and padded (pairs per dimension), the
holes and the padding hold the identity, and each output element reduces one window
(window_dilation spaces the window's taps).

VJPs (JAX's rules):
  sum: the cotangent, interior-padded by stride - 1 and edge-padded like the lhs
       cotangent of a convolution, reduce_window-summed with the same window (strided by
       base_dilation): every operand element collects the cotangents of the windows it
       was in.
  max/min: select_and_scatter_add(ct, x): each window's cotangent goes to the element
       the window selected (the first maximum for max, the first minimum for min, as
       XLA's select-and-scatter with GE/LE does); base dilation pads the operand with the
       identity and strides the result; window dilation is not supported (as in JAX).

select_and_scatter_add(source, operand; select_prim, window_dimensions, window_strides,
padding) lowers to HLO select-and-scatter with a GE/LE select and an add scatter. Its VJP
with respect to `source` is the matching gather ("select_and_gather_add"), written with
pad/slice/select, so max-pooling can be differentiated twice.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ShapeError, XlapyError
from xlapy.frontend.core import ShapedArray, bind, primitive
from xlapy.frontend.primitives.basic import (and_, aval_of, full, ge, is_float, le, not_, or_,
                                             select, zeros_like)
from xlapy.frontend.primitives.shapes import pad, pad_p, slice_

# ---- helpers ------------------------------------------------------------------------------


def _dilate(n, d):
    return 0 if n == 0 else 1 + d * (n - 1)


def _out_size(padded, window, stride):
    return 0 if padded < window else (padded - window) // stride + 1


def _identity(kind, dtype):
    dtype = np.dtype(dtype)
    if kind == "sum":
        return np.zeros((), dtype)
    if dtype == np.bool_:
        return np.array(kind == "min")
    if is_float(dtype):
        return np.array(-np.inf if kind == "max" else np.inf, dtype)
    info = np.iinfo(dtype)
    return np.array(info.min if kind == "max" else info.max, dtype)


def _check_window(name, a, window_dimensions, window_strides, padding, base_dilation,
                  window_dilation):
    where = f"{name} of {a}"
    for what, v in (("window_dimensions", window_dimensions), ("window_strides", window_strides),
                    ("padding", padding), ("base_dilation", base_dilation),
                    ("window_dilation", window_dilation)):
        if len(v) != a.ndim:
            raise ShapeError(f"{where}: {what} needs {a.ndim} entries, got {list(v)}")
    if min((*window_dimensions, *window_strides, *base_dilation, *window_dilation),
           default=1) < 1:
        raise ShapeError(f"{where}: window sizes, strides and dilations must be positive, got "
                         f"window {list(window_dimensions)}, strides {list(window_strides)}")
    shape = []
    for d in range(a.ndim):
        size = _dilate(a.shape[d], base_dilation[d]) + sum(padding[d])
        if size < 0:
            raise ShapeError(f"{where}: padding {padding[d]} crops dimension {d} below zero")
        win = _dilate(window_dimensions[d], window_dilation[d])
        shape.append(_out_size(size, win, window_strides[d]))
    return tuple(shape)


def _windows(x, fill, window_dimensions, window_strides, padding, base_dilation,
             window_dilation):
    """Yield, for each window tap in row-major order, the strided view of the dilated and
    padded operand it touches for every output position (NumPy)."""
    cfg = tuple((lo, hi, b - 1) for (lo, hi), b in zip(padding, base_dilation))
    xp = pad_p.impl(np.asarray(x), fill, cfg)
    out = [_out_size(p, _dilate(w, wd), s) for p, w, wd, s
           in zip(xp.shape, window_dimensions, window_dilation, window_strides)]
    for pos in np.ndindex(*window_dimensions):
        yield pos, xp[tuple(slice(q * wd, q * wd + (m - 1) * s + 1, s) for q, wd, s, m
                            in zip(pos, window_dilation, window_strides, out))], out


# ---- reduce_window_{sum,max,min} ---------------------------------------------------------------

_COMBINE = {"sum": np.add, "max": np.maximum, "min": np.minimum}
_HLO = {"sum": "add", "max": "maximum", "min": "minimum"}


def _reduce_window_prim(kind):
    p = primitive(f"reduce_window_{kind}")

    @p.def_impl
    def _(x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
        x = np.asarray(x)
        acc_t = np.float32 if (is_float(x.dtype) and x.dtype.itemsize < 4) else x.dtype
        xa = x.astype(acc_t)
        init = _identity(kind, acc_t)
        out_shape = _check_window(p.name, ShapedArray(x.shape, x.dtype), window_dimensions,
                                  window_strides, padding, base_dilation, window_dilation)
        acc = np.full(out_shape, init, acc_t)
        if acc.size:
            with np.errstate(all="ignore"):
                for _pos, view, _ in _windows(xa, init, window_dimensions, window_strides,
                                              padding, base_dilation, window_dilation):
                    acc = _COMBINE[kind](acc, view)
                    if kind == "sum" and acc_t == np.bool_:
                        acc = acc.astype(np.bool_)
        return acc.astype(x.dtype)

    @p.def_abstract_eval
    def _(a, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
        return ShapedArray(_check_window(p.name, a, window_dimensions, window_strides, padding,
                                         base_dilation, window_dilation), a.dtype)

    @p.def_lowering
    def _(ctx, x, *, window_dimensions, window_strides, padding, base_dilation,
          window_dilation):
        b = ctx.b
        t = x.shape.element_type
        init = b.constant(_identity(kind, t.np_dtype))
        op = "or" if (kind == "sum" and t.np_dtype == np.bool_) else _HLO[kind]
        return b.reduce_window(x, init, b.scalar_computation(op, t), window_dimensions,
                               window_strides, padding, base_dilation, window_dilation)

    return p


reduce_window_sum_p = _reduce_window_prim("sum")
reduce_window_max_p = _reduce_window_prim("max")
reduce_window_min_p = _reduce_window_prim("min")


@reduce_window_sum_p.def_vjp
def _rw_sum_vjp(ct, x, out, *, window_dimensions, window_strides, padding, base_dilation,
                window_dilation):
    # x_i collects ct_j of every window j containing i: pad ct (stride-1 interior) and
    # sum it over the same (dilated) window, striding by base_dilation
    a = aval_of(x)
    cts = aval_of(ct).shape
    cfg = []
    for d in range(a.ndim):
        wd = _dilate(window_dimensions[d], window_dilation[d])
        before = wd - padding[d][0] - 1
        after = (_dilate(a.shape[d], base_dilation[d]) + wd - 1
                 - _dilate(cts[d], window_strides[d]) - before)
        cfg.append((before, after, window_strides[d] - 1))
    padded = pad(ct, full((), 0, aval_of(ct).dtype), cfg)
    ones = (1,) * a.ndim
    return (reduce_window("sum", padded, window_dimensions, base_dilation,
                          ((0, 0),) * a.ndim, ones, window_dilation),)


def _rw_chooser_vjp(kind):
    def vjp(ct, x, out, *, window_dimensions, window_strides, padding, base_dilation,
            window_dilation):
        # each window's cotangent goes to the element it selected (select-and-scatter)
        if any(d != 1 for d in window_dilation):
            raise XlapyError(f"differentiation of reduce_window_{kind} with window dilation "
                             f"{list(window_dilation)} is not implemented (JAX does not "
                             "support it either)")
        a = aval_of(x)
        operand = x
        dilated = any(d != 1 for d in base_dilation)
        if dilated:
            operand = pad(x, full((), _identity(kind, a.dtype), a.dtype),
                          tuple((0, 0, d - 1) for d in base_dilation))
        g = select_and_scatter_add(ct, operand, "ge" if kind == "max" else "le",
                                   window_dimensions, window_strides, padding)
        if dilated:
            g = slice_(g, (0,) * a.ndim, aval_of(g).shape, base_dilation)
        return (g,)
    return vjp


reduce_window_max_p.def_vjp(_rw_chooser_vjp("max"))
reduce_window_min_p.def_vjp(_rw_chooser_vjp("min"))

_REDUCE_WINDOW = {"sum": reduce_window_sum_p, "max": reduce_window_max_p,
                  "min": reduce_window_min_p}


def reduce_window(kind, x, window_dimensions, window_strides=None, padding=None,
                  base_dilation=None, window_dilation=None):
    """reduce_window_<kind> (kind: 'sum', 'max' or 'min') with explicit (low, high) pairs."""
    if kind not in _REDUCE_WINDOW:
        raise XlapyError(f"reduce_window: unknown reduction '{kind}' (expected sum, max, min)")
    n = aval_of(x).ndim
    ones = (1,) * n
    ints = lambda v, default: default if v is None else tuple(int(d) for d in v)
    pads = ((0, 0),) * n if padding is None else tuple((int(lo), int(hi)) for lo, hi in padding)
    return bind(_REDUCE_WINDOW[kind], x, window_dimensions=ints(window_dimensions, ones),
                window_strides=ints(window_strides, ones), padding=pads,
                base_dilation=ints(base_dilation, ones),
                window_dilation=ints(window_dilation, ones))


# ---- select_and_scatter_add ------------------------------------------------------------------

select_and_scatter_add_p = primitive("select_and_scatter_add")


def _np_select(select_prim, operand, window_dimensions, window_strides, padding):
    """Per output window: the flat operand index it selects (-1 if it covers only padding),
    scanning the taps in row-major order and replacing the selection when
    select(current, candidate) is false (XLA's select-and-scatter)."""
    operand = np.asarray(operand)
    idx = np.arange(operand.size, dtype=np.int64).reshape(operand.shape)
    ones = (1,) * operand.ndim
    cmp = np.greater_equal if select_prim == "ge" else np.less_equal
    sel_val = sel_idx = None
    for (_, vals, _), (_, ids, _) in zip(
            _windows(operand, np.zeros((), operand.dtype), window_dimensions, window_strides,
                     padding, ones, ones),
            _windows(idx, np.array(-1, np.int64), window_dimensions, window_strides, padding,
                     ones, ones)):
        if sel_val is None:
            sel_val, sel_idx = vals.copy(), ids.copy()
            continue
        valid = ids >= 0
        with np.errstate(invalid="ignore"):
            take = valid & ((sel_idx < 0) | ~cmp(sel_val, vals))
        sel_val = np.where(take, vals, sel_val)
        sel_idx = np.where(take, ids, sel_idx)
    return sel_idx


@select_and_scatter_add_p.def_impl
def _sas_impl(source, operand, *, select_prim, window_dimensions, window_strides, padding):
    source, operand = np.asarray(source), np.asarray(operand)
    acc_t = np.float32 if (is_float(source.dtype) and source.dtype.itemsize < 4) else source.dtype
    result = np.zeros(operand.size, acc_t)
    if source.size:
        sel = _np_select(select_prim, operand, window_dimensions, window_strides, padding)
        ok = sel >= 0
        np.add.at(result, sel[ok], source[ok].astype(acc_t))
    return result.reshape(operand.shape).astype(source.dtype)


@select_and_scatter_add_p.def_abstract_eval
def _sas_aval(source, operand, *, select_prim, window_dimensions, window_strides, padding):
    ones = (1,) * operand.ndim
    out = _check_window("select_and_scatter_add", operand, window_dimensions, window_strides,
                        padding, ones, ones)
    if source.shape != out or source.dtype != operand.dtype:
        raise ShapeError(f"select_and_scatter_add: the source {source} must have the window "
                         f"output shape {list(out)} and the dtype of the operand {operand}")
    if select_prim not in ("ge", "le"):
        raise ShapeError(f"select_and_scatter_add: select_prim must be 'ge' or 'le', got "
                         f"{select_prim!r}")
    return operand


@select_and_scatter_add_p.def_lowering
def _sas_lower(ctx, source, operand, *, select_prim, window_dimensions, window_strides,
               padding):
    from xlapy.hlo.shapes import Shape
    b = ctx.b
    t = operand.shape.element_type
    sub = b.subcomputation(f"select_{select_prim}")
    x = sub.parameter(Shape.array(t, ()), "a")
    y = sub.parameter(Shape.array(t, ()), "b")
    select_comp = sub.build(sub.compare(x, y, select_prim.upper()))
    return b.select_and_scatter(operand, select_comp, window_dimensions, window_strides,
                                padding, source, b.constant(np.zeros((), t.np_dtype)),
                                b.scalar_computation("add", t))


@select_and_scatter_add_p.def_vjp
def _sas_vjp(ct, source, operand, out, *, select_prim, window_dimensions, window_strides,
             padding):
    # linear in source: each window reads back the cotangent at the element it selected
    return (_select_and_gather_add(ct, operand, select_prim, window_dimensions,
                                   window_strides, padding), None)


def _select_and_gather_add(t, operand, select_prim, window_dimensions, window_strides,
                           padding):
    """out[w] = t[selected(w)] (0 for windows of padding only), with primitives."""
    a = aval_of(operand)
    cfg = tuple((lo, hi, 0) for lo, hi in padding)
    xv = pad(operand, full((), 0, a.dtype), cfg)
    tv = pad(t, full((), 0, aval_of(t).dtype), cfg)
    valid = pad(full(a.shape, True, np.bool_), full((), False, np.bool_), cfg)
    ps = aval_of(xv).shape
    out = [_out_size(p, w, s) for p, w, s in zip(ps, window_dimensions, window_strides)]
    cmp = ge if select_prim == "ge" else le
    sel_v = sel_t = has = None
    for pos in np.ndindex(*window_dimensions):
        starts = list(pos)
        limits = [q + (m - 1) * s + 1 if m else q for q, s, m in zip(pos, window_strides, out)]
        v, tt, ok = (slice_(u, starts, limits, window_strides) for u in (xv, tv, valid))
        if sel_v is None:
            sel_v, sel_t, has = v, select(ok, tt, zeros_like(tt)), ok
            continue
        take = and_(ok, or_(not_(has), not_(cmp(sel_v, v))))
        sel_v, sel_t, has = select(take, v, sel_v), select(take, tt, sel_t), or_(has, ok)
    return sel_t


def select_and_scatter_add(source, operand, select_prim, window_dimensions, window_strides,
                           padding):
    return bind(select_and_scatter_add_p, source, operand, select_prim=str(select_prim),
                window_dimensions=tuple(int(d) for d in window_dimensions),
                window_strides=tuple(int(d) for d in window_strides),
                padding=tuple((int(lo), int(hi)) for lo, hi in padding))


__all__ = ["reduce_window", "reduce_window_sum_p", "reduce_window_max_p",
           "reduce_window_min_p", "select_and_scatter_add", "select_and_scatter_add_p"]
