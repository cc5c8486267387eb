"""Array manipulation and math beyond the basics: split, range, linspace, reverse,
reverse_sequence, cumsum/cumprod, pad modes, matrix_band_part, einsum/tensordot, meshgrid,
sequence_mask, truncatediv/truncatemod, is_finite/is_nan/is_inf, clip_by_* and norms,
reduce_logsumexp, Print / print.

Ops whose values shape the output (split sizes, range bounds, linspace's num, reverse
axes, pads) take them as compile-time-constant inputs under XLA. Composites (clip_by_norm,
global_norm, reduce_logsumexp, ...) follow TF 1.x's own formulas, so their values and
gradients at the edges (zero norms, infinities) are TF's.
"""

from __future__ import annotations

import string

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor, get_default_graph
from xlapy.compat.v1.op_registry import not_differentiable, register_gradient, register_op
from xlapy.compat.v1.ops._common import (binary_fn, constant_value, float_unary, ints, make,
                                         make_op, same_as_input, tensor, unary_fn)
from xlapy.compat.v1.ops.array_ops import (concat, expand_dims, ones_like, reshape,
                                           zeros_like)
from xlapy.compat.v1.ops.math_ops import (cast, multiply, reduce_max, truediv)
from xlapy.compat.v1.tensor_shape import TensorShape, unknown_shape


def _i32(v):
    return v if isinstance(v, Tensor) else tensor(np.asarray(v, np.int32))


# ---- split --------------------------------------------------------------------------------

def _split_shapes(x: Tensor, axis, sizes, num):
    if x.shape.dims is None or axis is None:
        return [unknown_shape(x.shape.ndims)] * num
    r = len(x.shape.dims)
    a = int(axis)
    if not -r <= a < r:
        raise InvalidArgumentError(f"split_dim {a} out of range for a tensor of rank {r}")
    a %= r
    out = []
    for s in sizes:
        dims = list(x.shape.dims)
        dims[a] = s
        out.append(TensorShape(dims))
    return out


def _split_infer(op):
    axis_t, x = op.inputs
    n = op.get_attr("num_split")
    a = constant_value(axis_t)
    d = None
    if a is not None and x.shape.dims is not None:
        d = x.shape.dims[int(a) % len(x.shape.dims)]
        if d is not None and d % n:
            raise InvalidArgumentError(f"Dimension size must be evenly divisible by {n} but "
                                       f"is {d} for '{op.name}' (op: 'Split')")
    sizes = [None if d is None else d // n] * n
    return [(x.dtype, s) for s in _split_shapes(x, None if a is None else a, sizes, n)]


@register_op("Split", infer=_split_infer, attrs=("num_split",), const_inputs=(0,))
def _split(m, axis, x, num_split=1):
    a = int(axis) % x.ndim
    if x.shape[a] % num_split:
        raise InvalidArgumentError(f"Number of ways to split should evenly divide the split "
                                   f"dimension, but got split_dim {a} (size = {x.shape[a]}) "
                                   f"and num_split {num_split}")
    k = x.shape[a] // num_split
    return tuple(x[(slice(None),) * a + (slice(i * k, (i + 1) * k),)]
                 for i in range(num_split))


def _splitv_infer(op):
    x, sizes_t, axis_t = op.inputs
    n = op.get_attr("num_split")
    sv, a = constant_value(sizes_t), constant_value(axis_t)
    if sv is None:
        return [(x.dtype, unknown_shape(x.shape.ndims))] * n
    sizes = [int(s) for s in np.reshape(sv, [-1])]
    if -1 in sizes and a is not None and x.shape.dims is not None:
        d = x.shape.dims[int(a) % len(x.shape.dims)]
        known = sum(s for s in sizes if s != -1)
        sizes[sizes.index(-1)] = None if d is None else d - known
    elif a is not None and x.shape.dims is not None:
        d = x.shape.dims[int(a) % len(x.shape.dims)]
        if d is not None and sum(sizes) != d:
            raise InvalidArgumentError(f"Determined shape must either match input shape along "
                                       f"split_dim exactly if fully specified, or be less than "
                                       f"the size of the input along split_dim if not fully "
                                       f"specified.  Got: {sum(sizes)} vs {d}")
    return [(x.dtype, s) for s in _split_shapes(x, a, sizes, n)]


@register_op("SplitV", infer=_splitv_infer, attrs=("num_split",), const_inputs=(1, 2))
def _splitv(m, x, sizes, axis, num_split=1):
    a = int(axis) % x.ndim
    sizes = list(ints(sizes))
    if -1 in sizes:
        sizes[sizes.index(-1)] = x.shape[a] - sum(s for s in sizes if s != -1)
    if sum(sizes) != x.shape[a]:
        raise InvalidArgumentError(f"split sizes {sizes} do not add up to dimension {a} of "
                                   f"size {x.shape[a]}")
    out, start = [], 0
    for s in sizes:
        out.append(x[(slice(None),) * a + (slice(start, start + s),)])
        start += s
    return tuple(out)


@register_gradient("Split")
def _split_grad(op, *grads):
    grads = [g if g is not None else zeros_like(o) for g, o in zip(grads, op.outputs)]
    return [None, concat(grads, op.inputs[0])]


@register_gradient("SplitV")
def _splitv_grad(op, *grads):
    grads = [g if g is not None else zeros_like(o) for g, o in zip(grads, op.outputs)]
    return [concat(grads, op.inputs[2]), None, None]


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    x = tensor(value)
    if isinstance(num_or_size_splits, (int, np.integer)):
        return list(make_op("Split", [_i32(axis), x], {"num_split": int(num_or_size_splits)},
                            name=name).outputs)
    sizes = tensor(num_or_size_splits, dtype=dtypes.int32) \
        if not isinstance(num_or_size_splits, Tensor) else num_or_size_splits
    if num is None:
        n = sizes.shape.dims[0] if sizes.shape.dims else None
        if n is None:
            raise InvalidArgumentError(f"Cannot infer num from shape {sizes.shape}")
        num = n
    return list(make_op("SplitV", [x, sizes, _i32(axis)], {"num_split": int(num)},
                        name=name).outputs)


# ---- range, linspace -------------------------------------------------------------------------

def _range_infer(op):
    vals = [constant_value(t) for t in op.inputs]
    dt = op.inputs[0].dtype
    if any(v is None for v in vals):
        return [(dt, TensorShape([None]))]
    s, e, d = (np.asarray(v).item() for v in vals)
    if d == 0:
        raise InvalidArgumentError("Requires delta != 0")
    n = max(0, int(np.ceil((e - s) / d))) if dt.is_floating else max(0, -((s - e) // d))
    return [(dt, TensorShape([n]))]


@register_op("Range", infer=_range_infer, const_inputs=(0, 1, 2))
def _range(m, start, limit, delta):
    s, e, d = (np.asarray(v).item() for v in (start, limit, delta))
    if d == 0:
        raise InvalidArgumentError("Requires delta != 0")
    if (d > 0 and s > e) or (d < 0 and s < e):
        raise InvalidArgumentError(f"Requires start <= limit when delta > 0: {s}/{e}"
                                   if d > 0 else f"Requires start >= limit when delta < 0: "
                                   f"{s}/{e}")
    return np.arange(s, e, d, dtype=np.asarray(start).dtype)


not_differentiable("Range")


def range_(start, limit=None, delta=1, dtype=None, name="range"):
    if limit is None:
        start, limit = 0, start
    vals = [start, limit, delta]
    if dtype is None:
        kinds = []
        for v in vals:
            if isinstance(v, Tensor):
                kinds.append(v.dtype)
            else:
                kinds.append(dtypes.float32 if isinstance(v, (float, np.floating))
                             else dtypes.int32)
        order = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]
        dtype = max(kinds, key=lambda d: order.index(d) if d in order else 0)
    dtype = dtypes.as_dtype(dtype)
    ts = []
    for v in vals:
        t = v if isinstance(v, Tensor) else tensor(np.asarray(v, dtype.np))
        if t.dtype != dtype:
            t = cast(t, dtype)
        ts.append(t)
    return make("Range", ts, name=name)


@register_op("LinSpace", const_inputs=(2,),
             infer=lambda op: [(op.inputs[0].dtype, TensorShape([
                 None if constant_value(op.inputs[2]) is None
                 else int(constant_value(op.inputs[2]))]))])
def _linspace(m, start, stop, num):
    n = int(num)
    if n <= 0:
        raise InvalidArgumentError(f"Requires num > 0: {n}")
    if n == 1:
        return m.reshape(m.asarray(start), (1,))
    step = m.true_divide(m.subtract(stop, start), np.asarray(n - 1, np.asarray(0, start.dtype)
                                                               .dtype))
    idx = m.astype(m.arange(n), start.dtype)
    out = m.add(start, m.multiply(idx, step))
    return m.concatenate([out[:-1], m.reshape(m.asarray(stop), (1,))])


not_differentiable("LinSpace")


def lin_space(start, stop, num, name=None):
    start = tensor(start)
    if not start.dtype.is_floating:
        raise InvalidTypeError(f"linspace needs floating start/stop, got {start.dtype.name}")
    return make("LinSpace", [start, tensor(stop, dtype=start.dtype),
                             _i32(num) if not isinstance(num, Tensor) else num], name=name)


# ---- reverse, reverse_sequence ---------------------------------------------------------------

@register_op("ReverseV2", infer=same_as_input(0), const_inputs=(1,))
def _reverse(m, x, axis):
    axes = tuple(sorted({int(a) % max(x.ndim, 1) for a in ints(axis)}))
    return m.flip(x, axis=axes) if axes else x


@register_gradient("ReverseV2")
def _reverse_grad(op, g):
    return [make("ReverseV2", [g, op.inputs[1]]), None]


def reverse(tensor_, axis, name=None):
    return make("ReverseV2", [tensor(tensor_), _i32(axis)], name=name)


reverse_v2 = reverse


def _revseq_index(m, x, lengths, seq_axis, batch_axis):
    t = x.shape[seq_axis]
    n = x.shape[batch_axis]
    pos = m.arange(t)
    lens = m.astype(lengths, pos.dtype)
    shp = [1] * x.ndim
    shp[seq_axis] = t
    pos = m.reshape(pos, shp)
    lshape = [1] * x.ndim
    lshape[batch_axis] = n
    lens = m.reshape(lens, lshape)
    idx = m.where(m.less(pos, lens), m.subtract(m.subtract(lens, 1), pos), pos)
    return m.broadcast_to(idx, x.shape)


@register_op("ReverseSequence", infer=same_as_input(0), attrs=("seq_dim", "batch_dim"))
def _reverse_sequence(m, x, lengths, seq_dim=1, batch_dim=0):
    if m is np:
        if np.any(np.asarray(lengths) > x.shape[seq_dim]) or np.any(np.asarray(lengths) < 0):
            raise InvalidArgumentError(f"seq_lens must be in [0, {x.shape[seq_dim]}], got "
                                       f"{np.asarray(lengths).tolist()}")
    return m.take_along_axis(x, _revseq_index(m, x, lengths, seq_dim, batch_dim), axis=seq_dim)


@register_gradient("ReverseSequence")
def _reverse_sequence_grad(op, g):
    return [make("ReverseSequence", [g, op.inputs[1]], {
        "seq_dim": op.get_attr("seq_dim"), "batch_dim": op.get_attr("batch_dim")}), None]


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None,
                     seq_dim=None, batch_dim=None):
    sa = seq_axis if seq_axis is not None else seq_dim
    ba = batch_axis if batch_axis is not None else (batch_dim if batch_dim is not None else 0)
    if sa is None:
        raise InvalidArgumentError("reverse_sequence needs seq_axis")
    x = tensor(input)
    r = x.shape.ndims
    if r is not None:
        sa, ba = int(sa) % r, int(ba) % r
    return make("ReverseSequence", [x, tensor(seq_lengths)], {"seq_dim": int(sa),
                                                                "batch_dim": int(ba)},
                name=name)


# ---- cumsum, cumprod -------------------------------------------------------------------------

def _cum(m, kind, x, axis, exclusive=False, reverse=False):
    a = int(axis) % x.ndim
    if reverse:
        x = m.flip(x, axis=a)
    out = (m.cumsum if kind == "sum" else m.cumprod)(x, axis=a)
    if exclusive:
        pad = [(0, 0)] * x.ndim
        pad[a] = (1, 0)
        idx = (slice(None),) * a + (slice(0, x.shape[a]),)
        out = m.pad(out, pad, constant_values=0 if kind == "sum" else 1)[idx]
    if reverse:
        out = m.flip(out, axis=a)
    return m.astype(out, x.dtype)


@register_op("Cumsum", infer=same_as_input(0), attrs=("exclusive", "reverse"),
             const_inputs=(1,))
def _cumsum(m, x, axis, exclusive=False, reverse=False):
    return _cum(m, "sum", x, axis, exclusive, reverse)


@register_op("Cumprod", infer=same_as_input(0), attrs=("exclusive", "reverse"),
             const_inputs=(1,))
def _cumprod(m, x, axis, exclusive=False, reverse=False):
    return _cum(m, "prod", x, axis, exclusive, reverse)


@register_gradient("Cumsum")
def _cumsum_grad(op, g):
    return [cumsum(g, op.inputs[1], exclusive=op.get_attr("exclusive"),
                   reverse=not op.get_attr("reverse")), None]


@register_gradient("Cumprod")
def _cumprod_grad(op, g):
    # TF's formula (assumes no zeros in x): cumsum(g * out, reversed) / x
    x = op.inputs[0]
    out = cumsum(multiply(op.outputs[0], g), op.inputs[1], exclusive=op.get_attr("exclusive"),
                 reverse=not op.get_attr("reverse"))
    return [truediv(out, x), None]


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    return make("Cumsum", [tensor(x), _i32(axis)], {"exclusive": bool(exclusive),
                                                     "reverse": bool(reverse)}, name=name)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    return make("Cumprod", [tensor(x), _i32(axis)], {"exclusive": bool(exclusive),
                                                      "reverse": bool(reverse)}, name=name)


# ---- pad modes, matrix_band_part --------------------------------------------------------------

def _pads(p):
    return [(int(a), int(b)) for a, b in np.reshape(np.asarray(p), (-1, 2))]


def _mirror_infer(op):
    from xlapy.compat.v1.ops.index_ops import _pad_shape
    return [(op.inputs[0].dtype, _pad_shape(op))]


@register_op("MirrorPad", infer=_mirror_infer, attrs=("mode",), const_inputs=(1,))
def _mirror_pad(m, x, paddings, mode="REFLECT"):
    pads = _pads(paddings)
    off = 1 if mode == "REFLECT" else 0
    for d, (a, b) in enumerate(pads):
        if a > x.shape[d] - off or b > x.shape[d] - off or a < 0 or b < 0:
            raise InvalidArgumentError(f"paddings must be no greater than the dimension size: "
                                       f"{a}, {b} greater than {x.shape[d] - off}")
    return m.pad(x, pads, mode="reflect" if mode == "REFLECT" else "symmetric")


def _mirror_pad_grad_kernel(m, g, paddings, mode="REFLECT"):
    import xlapy.numpy as xnp
    from xlapy.frontend.autodiff import vjp
    pads = _pads(paddings)
    shp = tuple(s - a - b for s, (a, b) in zip(g.shape, pads))
    x0 = np.zeros(shp, g.dtype)
    _, back = vjp(lambda x: xnp.pad(x, pads, mode="reflect" if mode == "REFLECT"
                                    else "symmetric"), x0)
    out = back(g)[0]
    return np.asarray(out) if m is np else out


register_op("MirrorPadGrad", attrs=("mode",), const_inputs=(1,),
            infer=lambda op: [(op.inputs[0].dtype, unknown_shape(op.inputs[0].shape.ndims))])(
    _mirror_pad_grad_kernel)


@register_gradient("MirrorPadGrad")
def _mirror_pad_grad_grad(op, g):
    """MirrorPadGrad is linear in its gradient input, the adjoint of MirrorPad: its
    gradient is the MirrorPad of the incoming one."""
    return [make("MirrorPad", [g, op.inputs[1]], {"mode": op.get_attr("mode")}), None]


@register_gradient("MirrorPad")
def _mirror_pad_grad(op, g):
    out = make("MirrorPadGrad", [g, op.inputs[1]], {"mode": op.get_attr("mode")})
    out.set_shape(op.inputs[0].shape)
    return [out, None]


@register_op("PadV2", infer=_mirror_infer, const_inputs=(1,))
def _padv2(m, x, paddings, value):
    return m.pad(x, _pads(paddings), constant_values=value)


@register_gradient("PadV2")
def _padv2_grad(op, g):
    from xlapy.compat.v1.ops.index_ops import _pad_grad
    return _pad_grad(op, g) + [None]


def pad(tensor_, paddings, mode="CONSTANT", name=None, constant_values=0):
    x = tensor(tensor_)
    p = paddings if isinstance(paddings, Tensor) else tensor(np.asarray(paddings, np.int32))
    mode = mode.upper()
    if mode == "CONSTANT":
        if isinstance(constant_values, Tensor) or constant_values != 0:
            return make("PadV2", [x, p, tensor(constant_values, dtype=x.dtype)], name=name)
        return make("Pad", [x, p], name=name)
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise InvalidArgumentError(f"Unknown padding mode: {mode}")
    return make("MirrorPad", [x, p], {"mode": mode}, name=name)


@register_op("MatrixBandPart", infer=same_as_input(0))
def _band_part(m, x, lower, upper):
    r, c = x.shape[-2], x.shape[-1]
    i = m.reshape(m.arange(r), (r, 1))
    j = m.reshape(m.arange(c), (1, c))
    lo, up = m.astype(m.asarray(lower), i.dtype), m.astype(m.asarray(upper), i.dtype)
    keep = m.logical_and(m.logical_or(m.less(lo, np.zeros((), i.dtype)),
                                      m.less_equal(m.subtract(i, j), lo)),
                         m.logical_or(m.less(up, np.zeros((), i.dtype)),
                                      m.less_equal(m.subtract(j, i), up)))
    return m.where(keep, x, m.zeros_like(x))


@register_gradient("MatrixBandPart")
def _band_part_grad(op, g):
    return [make("MatrixBandPart", [g, op.inputs[1], op.inputs[2]]), None, None]


def matrix_band_part(input, num_lower, num_upper, name=None):
    lo = num_lower if isinstance(num_lower, Tensor) else tensor(np.asarray(num_lower,
                                                                           np.int64))
    up = num_upper if isinstance(num_upper, Tensor) else tensor(np.asarray(num_upper,
                                                                           lo.dtype.np))
    return make("MatrixBandPart", [tensor(input), lo, up], name=name)


# ---- einsum, tensordot -----------------------------------------------------------------------

def _parse_einsum(eq: str, n: int):
    eq = eq.replace(" ", "")
    if "." in eq:
        raise InvalidArgumentError(f"einsum: ellipses are not supported ({eq!r})")
    ins, arrow, out = eq.partition("->")
    subs = ins.split(",")
    if len(subs) != n:
        raise InvalidArgumentError(f"einsum: {eq!r} names {len(subs)} operands, got {n}")
    if not arrow:
        counts = {c: ins.count(c) for c in set(ins) if c != ","}
        out = "".join(sorted(c for c, k in counts.items() if k == 1))
    return subs, out


def _einsum_infer(op):
    subs, out = _parse_einsum(op.get_attr("equation"), len(op.inputs))
    sizes: dict = {}
    for s, t in zip(subs, op.inputs):
        if t.dtype != op.inputs[0].dtype:
            raise InvalidTypeError("einsum operands must have the same dtype")
        if t.shape.ndims is not None and t.shape.ndims != len(s):
            raise InvalidArgumentError(f"einsum: operand {t.name} has rank {t.shape.ndims} but "
                                       f"subscripts {s!r}")
        for c, d in zip(s, t.shape.dims or [None] * len(s)):
            if d is not None:
                if sizes.get(c, d) != d:
                    raise InvalidArgumentError(f"einsum: dimension {c} is {sizes[c]} and {d}")
                sizes[c] = d
    return [(op.inputs[0].dtype, TensorShape([sizes.get(c) for c in out]))]


@register_op("Einsum", infer=_einsum_infer, attrs=("equation",))
def _einsum(m, *xs, equation=""):
    return m.einsum(equation, *xs)


@register_gradient("Einsum")
def _einsum_grad(op, g):
    subs, out = _parse_einsum(op.get_attr("equation"), len(op.inputs))
    grads = []
    for k, (s, x) in enumerate(zip(subs, op.inputs)):
        if len(set(s)) != len(s):
            raise InvalidArgumentError(f"the gradient of einsum {op.get_attr('equation')!r} "
                                       "with a repeated index in an operand is not supported")
        others = [(subs[j], op.inputs[j]) for j in range(len(subs)) if j != k]
        avail = set(out).union(*[set(o) for o, _ in others])
        kept = "".join(c for c in s if c in avail)
        eq = ",".join([out] + [o for o, _ in others]) + "->" + kept
        gk = einsum(eq, g, *[t for _, t in others])
        if kept != s:  # indices summed in this operand alone: broadcast back
            for pos, c in enumerate(s):
                if c not in avail:
                    gk = expand_dims(gk, pos)
            gk = multiply(gk, ones_like(x))
        grads.append(gk)
    return grads


def einsum(equation, *inputs, **kwargs):
    name = kwargs.pop("name", None)
    xs = [tensor(x) for x in inputs]
    _parse_einsum(equation, len(xs))
    return make("Einsum", xs, {"equation": equation.replace(" ", "")}, name=name)


def tensordot(a, b, axes, name=None):
    a, b = tensor(a), tensor(b)
    ra, rb = a.shape.ndims, b.shape.ndims
    if ra is None or rb is None:
        raise InvalidArgumentError("tensordot needs the ranks of its operands")
    if isinstance(axes, (int, np.integer)):
        ax_a, ax_b = list(range(ra - int(axes), ra)), list(range(int(axes)))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
    if len(ax_a) != len(ax_b):
        raise InvalidArgumentError(f"tensordot: {len(ax_a)} axes of a but {len(ax_b)} of b")
    letters = iter(string.ascii_letters)
    sa = [next(letters) for _ in range(ra)]
    sb = [next(letters) for _ in range(rb)]
    for i, j in zip(ax_a, ax_b):
        sb[int(j) % rb] = sa[int(i) % ra]
    contracted = {sa[int(i) % ra] for i in ax_a}
    out = [c for c in sa if c not in contracted] + [c for c in sb if c not in contracted]
    return einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out)}", a, b, name=name)


def meshgrid(*args, **kwargs):
    """TF's construction: each input reshaped to its own axis, times ones of the full
    shape ('xy' swaps the first two axes)."""
    from xlapy.compat.v1.ops.array_ops import fill, size, stack
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise InvalidTypeError(f"meshgrid: unexpected arguments {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise InvalidArgumentError("indexing parameter must be either 'xy' or 'ij'")
    xs = [tensor(a) for a in args]
    n = len(xs)
    with get_default_graph().name_scope(name):
        out = []
        for k, x in enumerate(xs):
            s = [1] * n
            s[k] = -1
            out.append(reshape(x, s))
        sizes = [size(x) for x in xs]
        if indexing == "xy" and n > 1:
            out[0] = reshape(xs[0], [1, -1] + [1] * (n - 2))
            out[1] = reshape(xs[1], [-1, 1] + [1] * (n - 2))
            sizes[0], sizes[1] = sizes[1], sizes[0]
        ones = fill(stack(sizes), tensor(np.ones((), xs[0].dtype.np)))
        return [multiply(o, ones) for o in out]


# ---- sequence_mask, truncatediv, is_finite --------------------------------------------------

def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name=None):
    from xlapy.compat.v1.ops.math_ops import less
    with get_default_graph().name_scope(name or "SequenceMask"):
        lengths = tensor(lengths)
        if maxlen is None:
            maxlen = reduce_max(lengths)
        ml = maxlen if isinstance(maxlen, Tensor) else tensor(np.asarray(maxlen,
                                                                        lengths.dtype.np))
        if ml.dtype != lengths.dtype:
            ml = cast(ml, lengths.dtype)
        r = range_(0, ml, 1, dtype=lengths.dtype)
        mask = less(r, expand_dims(lengths, -1))
        dtype = dtypes.as_dtype(dtype)
        return mask if dtype == dtypes.bool else cast(mask, dtype)


def _int_infer(op):
    x, y = op.inputs
    from xlapy.compat.v1.ops._common import broadcasting
    return broadcasting()(op)


@register_op("TruncateDiv", infer=_int_infer)
def _truncatediv(m, x, y):
    if np.dtype(x.dtype).kind == "f":
        return m.trunc(m.true_divide(x, y))
    if m is np and np.any(np.asarray(y) == 0):
        raise InvalidArgumentError("Integer division by zero")
    q = m.floor_divide(x, y)
    fix = m.logical_and(m.not_equal(m.remainder(x, y), m.zeros_like(q)),
                        m.not_equal(m.less(x, m.zeros_like(x)), m.less(y, m.zeros_like(y))))
    return m.where(fix, m.add(q, m.ones_like(q)), q)


@register_op("TruncateMod", infer=_int_infer)
def _truncatemod(m, x, y):
    if m is np and np.dtype(x.dtype).kind != "f" and np.any(np.asarray(y) == 0):
        raise InvalidArgumentError("Integer division by zero")
    return m.fmod(x, y)


not_differentiable("TruncateDiv", "TruncateMod")


truncatediv = binary_fn("TruncateDiv")
truncatemod = binary_fn("TruncateMod")


def _pred_infer(op):
    float_unary(op)
    return [(dtypes.bool, op.inputs[0].shape)]


register_op("IsFinite", infer=_pred_infer)(lambda m, x: m.isfinite(x))
register_op("IsNan", infer=_pred_infer)(lambda m, x: m.isnan(x))
register_op("IsInf", infer=_pred_infer)(lambda m, x: m.isinf(x))
not_differentiable("IsFinite", "IsNan", "IsInf")


is_finite = unary_fn("IsFinite", "is_finite")
is_nan = unary_fn("IsNan", "is_nan")
is_inf = unary_fn("IsInf", "is_inf")
