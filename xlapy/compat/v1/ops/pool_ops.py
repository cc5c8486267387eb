"""Pooling: max_pool / avg_pool (2-D and 3-D) with TF's gradient ops.

  - ksize and strides per dimension of data_format (batch and channel entries 1);
    padding 'SAME' or 'VALID';
  - MaxPool's gradient (MaxPoolGrad) goes to the first maximum of each window, as TF's;
  - AvgPool with SAME padding divides each window by the number of real (unpadded)
    elements it covers, as TF's; AvgPoolGrad is its transpose.
Kernels are xlapy.lax reduce-windows (eager on NumPy arrays in the executor, traced when
compiled) and the frontend's select-and-scatter.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops._common import BF16, ints, make, make_op, tensor
from xlapy.compat.v1.ops.array_ops import _shape_of
from xlapy.compat.v1.ops.conv_ops import (_POOL_ATTRS, _check_format, _norm_list,
                                          _out_pads, _shape_arg_infer, _spatial)
from xlapy.compat.v1.tensor_shape import TensorShape, unknown_shape


def _lax():
    import xlapy.lax as lax
    return lax


def _linear_transpose(fn, shape, dtype, g, m):
    """The transpose of the linear map fn(xlapy.numpy, x) at g (the reverse-mode derivative
    at zero), eager on NumPy arrays in the executor, traced when compiled."""
    import xlapy.numpy as xnp
    from xlapy.frontend.autodiff import vjp
    _, back = vjp(lambda x: fn(xnp, x), np.zeros(shape, dtype))
    out = back(g)[0]
    return np.asarray(out) if m is np else out


def _pool_infer(op):
    x = op.inputs[0]
    fmt = op.get_attr("data_format")
    n = len(fmt)
    k, s = op.get_attr("ksize"), op.get_attr("strides")
    if x.shape.ndims is not None and x.shape.ndims != n:
        raise InvalidArgumentError(f"Shape must be rank {n} but is rank {x.shape.ndims} for "
                                   f"'{op.name}' (op: '{op.type}')")
    if x.shape.dims is None:
        return [(x.dtype, unknown_shape(n))]
    dims = list(x.shape.dims)
    for i in _spatial(fmt):
        dims[i], _ = _out_pads(dims[i], k[i], s[i], 1, op.get_attr("padding"), None)
    return [(x.dtype, TensorShape(dims))]


def _pool_pads(shape, ksize, strides, padding):
    return [_out_pads(d, k, s, 1, padding, None)[1] for d, k, s in zip(shape, ksize, strides)]


def _max_pool(m, x, ksize=(), strides=(), padding="VALID", data_format="NHWC"):
    pads = _pool_pads(x.shape, ksize, strides, padding)
    floating = np.dtype(x.dtype).kind == "f" or np.dtype(x.dtype) == BF16
    init = -np.inf if floating else np.iinfo(x.dtype).min
    return _lax().reduce_window(x, np.asarray(init, x.dtype), "max", ksize, strides, pads)


def _window_counts(shape, ksize, strides, pads, dtype) -> np.ndarray:
    """How many real (unpadded) elements each window covers, as a NumPy constant: the
    product over dimensions of the per-dimension counts."""
    counts = np.ones((), dtype)
    for d, (size, k, s, (lo, hi)) in enumerate(zip(shape, ksize, strides, pads)):
        n_out = (size + lo + hi - k) // s + 1
        start = np.arange(n_out) * s - lo
        c = np.minimum(start + k, size) - np.maximum(start, 0)
        counts = np.multiply.outer(counts, c.astype(dtype)) if d else c.astype(dtype)
    return counts


def _avg_pool(m, x, ksize=(), strides=(), padding="VALID", data_format="NHWC"):
    pads = _pool_pads(x.shape, ksize, strides, padding)
    total = _lax().reduce_window(x, np.zeros((), x.dtype), "sum", ksize, strides, pads)
    # `/`, not m.true_divide: when a constant input is folded while a cluster is traced,
    # reduce_window still returns a traced array, which numpy's ufunc cannot take
    return total / _window_counts(tuple(x.shape), ksize, strides, pads, np.dtype(x.dtype))


def _float_pool_infer(op):
    if not op.inputs[0].dtype.is_floating:
        raise InvalidTypeError(f"{op.type} supports floating-point inputs, got "
                               f"{op.inputs[0].dtype.name}")
    return _pool_infer(op)


register_op("MaxPool", infer=_pool_infer, attrs=_POOL_ATTRS)(_max_pool)
register_op("AvgPool", infer=_float_pool_infer, attrs=_POOL_ATTRS)(_avg_pool)
register_op("MaxPool3D", infer=_pool_infer, attrs=_POOL_ATTRS)(_max_pool)
register_op("AvgPool3D", infer=_float_pool_infer, attrs=_POOL_ATTRS)(_avg_pool)


def _max_pool_grad_kernel(m, x, y, g, ksize=(), strides=(), padding="VALID",
                          data_format="NHWC"):
    from xlapy.frontend.primitives.windowed import select_and_scatter_add
    pads = _pool_pads(x.shape, ksize, strides, padding)
    return select_and_scatter_add(g, x, "ge", ksize, strides, pads)


def _avg_pool_grad_kernel(m, input_shape, g, ksize=(), strides=(), padding="VALID",
                          data_format="NHWC"):
    shp = ints(input_shape)
    return _linear_transpose(
        lambda mm, x: _avg_pool(mm, x, ksize, strides, padding, data_format), shp, g.dtype, g,
        m)


for _n in ("MaxPoolGrad", "MaxPool3DGrad"):
    register_op(_n, attrs=_POOL_ATTRS,
                infer=lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)])(
        _max_pool_grad_kernel)
for _n in ("AvgPoolGrad", "AvgPool3DGrad"):
    register_op(_n, attrs=_POOL_ATTRS, const_inputs=(0,),
                infer=_shape_arg_infer(0, 1))(_avg_pool_grad_kernel)


def _pool_attrs(op):
    return {k: op.get_attr(k) for k in _POOL_ATTRS}


@register_gradient("MaxPool")
def _max_pool_grad(op, g):
    return [make("MaxPoolGrad", [op.inputs[0], op.outputs[0], g], _pool_attrs(op))]


@register_gradient("MaxPool3D")
def _max_pool3d_grad(op, g):
    return [make("MaxPool3DGrad", [op.inputs[0], op.outputs[0], g], _pool_attrs(op))]


@register_gradient("AvgPool")
def _avg_pool_grad(op, g):
    return [make("AvgPoolGrad", [_shape_of(op.inputs[0]), g], _pool_attrs(op))]


@register_gradient("AvgPool3D")
def _avg_pool3d_grad(op, g):
    return [make("AvgPool3DGrad", [_shape_of(op.inputs[0]), g], _pool_attrs(op))]


def _pool_fn(op_type, rank_default):
    def fn(value=None, ksize=None, strides=None, padding=None, data_format=None, name=None,
           input=None):
        x = tensor(value if value is not None else input)
        fmt = data_format or rank_default
        _check_format(fmt, len(fmt), op_type)
        if ksize is None or strides is None or padding is None:
            raise InvalidArgumentError(f"{op_type} needs ksize, strides and padding")
        p = str(padding).upper()
        if p not in ("SAME", "VALID"):
            raise InvalidArgumentError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
        n = len(fmt)
        k = _norm_list(ksize, n, fmt, "ksize")
        s = _norm_list(strides, n, fmt, "strides")
        return make(op_type, [x], {"ksize": tuple(k), "strides": tuple(s), "padding": p,
                                   "data_format": fmt}, name=name or op_type)
    fn.__name__ = op_type
    return fn


max_pool = _pool_fn("MaxPool", "NHWC")
avg_pool = _pool_fn("AvgPool", "NHWC")
max_pool3d = _pool_fn("MaxPool3D", "NDHWC")
avg_pool3d = _pool_fn("AvgPool3D", "NDHWC")


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    return max_pool(input, ksize, strides, padding, data_format, name)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    return avg_pool(input, ksize, strides, padding, data_format, name)



# ---- max_pool_with_argmax ----------------------------------------------------------------

_ARGMAX_ATTRS = ("ksize", "strides", "padding", "data_format", "Targmax",
                 "include_batch_in_index")


def _argmax_windows(m, x, ksize, strides, padding):
    """(window maxima, flat (y * W + x) * C + c index of each window's first maximum), NHWC."""
    n, h, w, c = x.shape
    (kh, kw), (sh, sw) = ksize[1:3], strides[1:3]
    pads = _pool_pads((h, w), (kh, kw), (sh, sw), padding)
    ho, wo = [_out_pads(d, k, s, 1, padding, None)[0] for d, k, s in
              zip((h, w), (kh, kw), (sh, sw))]
    low = np.asarray(-np.inf if np.dtype(x.dtype).kind == "f" else np.iinfo(x.dtype).min,
                     x.dtype)
    xp = m.pad(x, [(0, 0), pads[0], pads[1], (0, 0)], constant_values=low)
    taps = [xp[:, a:a + (ho - 1) * sh + 1:sh, b:b + (wo - 1) * sw + 1:sw, :]
            for a in range(kh) for b in range(kw)]
    win = m.stack(taps, axis=3)                                   # [N, Ho, Wo, K, C]
    k = m.argmax(win, axis=3)
    val = m.max(win, axis=3)
    oy = m.reshape(m.arange(ho), (1, ho, 1, 1))
    ox = m.reshape(m.arange(wo), (1, 1, wo, 1))
    ch = m.reshape(m.arange(c), (1, 1, 1, c))
    y = m.subtract(m.add(m.multiply(oy, sh), m.floor_divide(k, kw)), pads[0][0])
    xx = m.subtract(m.add(m.multiply(ox, sw), m.remainder(k, kw)), pads[1][0])
    return val, m.add(m.multiply(m.add(m.multiply(y, w), xx), c), ch)


def _argmax_infer(op):
    out = _pool_infer(op)[0]
    return [out, (op.get_attr("Targmax"), out[1])]


@register_op("MaxPoolWithArgmax", infer=_argmax_infer, attrs=_ARGMAX_ATTRS)
def _max_pool_with_argmax(m, x, ksize=(), strides=(), padding="VALID", data_format="NHWC",
                          Targmax=None, include_batch_in_index=False):
    val, idx = _argmax_windows(m, x, ksize, strides, padding)
    if include_batch_in_index:
        n = x.shape[0]
        idx = m.add(idx, m.reshape(m.arange(n), (n, 1, 1, 1)) * int(np.prod(x.shape[1:])))
    return val, m.astype(idx, Targmax.np)


@register_op("MaxPoolGradWithArgmax", attrs=_ARGMAX_ATTRS,
             infer=lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)])
def _max_pool_grad_with_argmax(m, x, g, argmax, ksize=(), strides=(), padding="VALID",
                               data_format="NHWC", Targmax=None, include_batch_in_index=False):
    n = x.shape[0]
    per = int(np.prod(x.shape[1:]))
    idx = m.astype(argmax, np.int64)
    if not include_batch_in_index:
        idx = m.add(idx, m.reshape(m.arange(n, dtype=np.int64), (n, 1, 1, 1)) * per)
    flat = m.zeros((n * per,), g.dtype)
    if m is np:
        np.add.at(flat, idx.reshape(-1), g.reshape(-1))
    else:
        flat = m.at(flat)[m.reshape(idx, (-1,))].add(m.reshape(g, (-1,)))
    return m.reshape(flat, x.shape)


# MaxPoolGradWithArgmax has no gradient here: a second derivative through it raises
# (LookupGradientError) rather than being silently zero


@register_gradient("MaxPoolWithArgmax")
def _max_pool_with_argmax_grad(op, g, g_idx=None):
    attrs = {k: op.get_attr(k) for k in _ARGMAX_ATTRS}
    return [make("MaxPoolGradWithArgmax", [op.inputs[0], g, op.outputs[1]], attrs)]


def max_pool_with_argmax(input, ksize, strides, padding, data_format="NHWC", Targmax=None,
                         name=None, output_dtype=None, include_batch_in_index=False):
    """(max pool, flat index of each window's maximum: (y * width + x) * channels + c, plus
    the batch offset when include_batch_in_index). NHWC only, as TF's."""
    from xlapy.compat.v1 import dtypes
    if data_format != "NHWC":
        raise InvalidArgumentError("max_pool_with_argmax supports data_format NHWC only")
    p = str(padding).upper()
    if p not in ("SAME", "VALID"):
        raise InvalidArgumentError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    t = dtypes.as_dtype(output_dtype or Targmax or dtypes.int64)
    op = make_op("MaxPoolWithArgmax", [tensor(input)],
                 {"ksize": tuple(_norm_list(ksize, 4, "NHWC", "ksize")),
                  "strides": tuple(_norm_list(strides, 4, "NHWC", "strides")), "padding": p,
                  "data_format": "NHWC", "Targmax": t,
                  "include_batch_in_index": bool(include_batch_in_index)},
                 name=name or "MaxPoolWithArgmax")
    return op.outputs[0], op.outputs[1]
