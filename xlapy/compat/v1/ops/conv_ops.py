"""Convolutions: conv1d/2d/3d, conv2d_transpose, depthwise and separable convolutions,
with TF's gradient ops (pooling is in pool_ops.py).

The kernels are conv_math's patch extraction and matrix products (one implementation for
the executor and the XLA lowering). TF's conventions:
  - data_format NHWC / NCHW (NDHWC / NCDHW in 3-D); filters HWIO (DHWIO), depthwise
    filters [h, w, in_channels, channel_multiplier];
  - strides, dilations and ksize are given per dimension of data_format (batch and channel
    entries must be 1);
  - padding 'SAME' (output ceil(in / stride), the padding's odd element at the end),
    'VALID', or explicit pairs (the EXPLICIT padding of Conv2D);
  - gradients as TF builds them: Conv2D -> Conv2DBackpropInput / Conv2DBackpropFilter.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor
from xlapy.compat.v1.op_registry import register_gradient, register_op
from xlapy.compat.v1.ops import conv_math as cm
from xlapy.compat.v1.ops._common import (accumulate_f32, constant_value, ints, make,
                                         partial_shape_value, tensor)
from xlapy.compat.v1.ops.array_ops import _shape_of, expand_dims, squeeze
from xlapy.compat.v1.tensor_shape import TensorShape

_CONV_ATTRS = ("strides", "padding", "explicit_paddings", "data_format", "dilations")
_POOL_ATTRS = ("ksize", "strides", "padding", "data_format")


_spatial = cm.spatial_axes
_out_pads = cm.out_and_pads


def _check_format(fmt, rank, what):
    ok = {4: ("NHWC", "NCHW"), 5: ("NDHWC", "NCDHW")}.get(rank, ())
    if fmt not in ok:
        raise InvalidArgumentError(f"{what}: data_format {fmt!r} is not supported for rank "
                                   f"{rank} (use one of {ok})")


def _norm_list(v, n, fmt, what, default=1):
    """TF's int-or-list stride/ksize/dilation arguments as a full list in fmt order."""
    if v is None:
        return [default] * n
    if isinstance(v, (int, np.integer)):
        v = [int(v)] * (n - 2)
    v = [int(x) for x in v]
    if len(v) == n - 2:
        full = [1] * n
        for i, x in zip(_spatial(fmt), v):
            full[i] = x
        v = full
    elif len(v) == 1:
        full = [1] * n
        for i in _spatial(fmt):
            full[i] = v[0]
        v = full
    if len(v) != n:
        raise InvalidArgumentError(f"{what} should be of length 1, {n - 2} or {n} but was "
                                   f"{len(v)}")
    if v[fmt.index("N")] != 1 or v[fmt.index("C")] != 1:
        raise InvalidArgumentError(f"Current implementation does not yet support {what} in "
                                   "the batch and depth dimensions.")
    return v


def _padding_attrs(padding, fmt, n):
    if isinstance(padding, str):
        p = padding.upper()
        if p not in ("SAME", "VALID"):
            raise InvalidArgumentError(f"padding must be 'SAME', 'VALID' or explicit pairs, "
                                       f"got {padding!r}")
        return p, ()
    pairs = [tuple(int(a) for a in pr) for pr in padding]
    if len(pairs) != n or any(len(pr) != 2 for pr in pairs):
        raise InvalidArgumentError(f"explicit padding must be {n} [before, after] pairs, got "
                                   f"{padding!r}")
    if pairs[fmt.index("N")] != (0, 0) or pairs[fmt.index("C")] != (0, 0):
        raise InvalidArgumentError("Nonzero explicit padding in the batch or depth dimensions "
                                   "is not supported")
    return "EXPLICIT", tuple(a for pr in pairs for a in pr)


def _explicit(attrs, fmt):
    e = attrs.get("explicit_paddings") or ()
    return [(e[2 * i], e[2 * i + 1]) for i in _spatial(fmt)] if e else [None] * len(_spatial(fmt))


# ---- convolution (2-D and 3-D) ---------------------------------------------------------------

def _conv_geometry(in_shape, k_shape, attrs):
    """(output spatial sizes, pads) for static sizes (entries may be None)."""
    fmt = attrs["data_format"]
    sp = _spatial(fmt)
    outs, pads = [], []
    for j, (i, e) in enumerate(zip(sp, _explicit(attrs, fmt))):
        o, p = _out_pads(in_shape[i] if in_shape else None, k_shape[j] if k_shape else None,
                         attrs["strides"][i], attrs["dilations"][i], attrs["padding"], e)
        outs.append(o)
        pads.append(p)
    return outs, pads


def _attrs(op):
    return {k: op.get_attr(k) for k in _CONV_ATTRS}


def _conv_infer(op):
    x, w = op.inputs
    a = _attrs(op)
    fmt = a["data_format"]
    n = len(fmt)
    if x.dtype != w.dtype:
        raise InvalidTypeError(f"{op.type}: input is {x.dtype.name} but filter is "
                               f"{w.dtype.name}")
    if not x.dtype.is_floating:
        raise InvalidTypeError(f"{op.type} supports floating-point inputs, got {x.dtype.name}")
    xs = x.shape.with_rank(n) if x.shape.ndims in (None, n) else None
    ws = w.shape.with_rank(n) if w.shape.ndims in (None, n) else None
    if xs is None or ws is None:
        bad = x if xs is None else w
        raise InvalidArgumentError(f"Shape must be rank {n} but is rank {bad.shape.ndims} for "
                                   f"'{op.name}' (op: '{op.type}') with input shapes: "
                                   f"{x.shape.tf_str()}, {w.shape.tf_str()}.")
    cin, fin = xs.dims[fmt.index("C")], ws.dims[n - 2]
    if cin is not None and fin is not None and cin != fin:
        raise InvalidArgumentError(f"Depth of input ({cin}) is not a multiple of input depth "
                                   f"of filter ({fin}) for '{op.name}' (op: '{op.type}')")
    outs, _ = _conv_geometry(xs.dims, ws.dims[:n - 2], a)
    dims = [None] * n
    dims[fmt.index("N")] = xs.dims[fmt.index("N")]
    dims[fmt.index("C")] = ws.dims[n - 1]
    for i, o in zip(_spatial(fmt), outs):
        dims[i] = o
    return [(x.dtype, TensorShape(dims))]


def _args(attrs):
    fmt = attrs["data_format"]
    sp = _spatial(fmt)
    return ([attrs["strides"][i] for i in sp], [attrs["dilations"][i] for i in sp],
            attrs["padding"], _explicit(attrs, fmt), fmt)


def _conv(m, x, w, **attrs):
    return cm.conv(m, x, w, *_args(attrs))


def _conv_input_grad(m, input_sizes, w, g, **attrs):
    return cm.conv_input_grad(m, ints(input_sizes), w, g, *_args(attrs))


def _conv_filter_grad(m, x, filter_sizes, g, **attrs):
    return cm.conv_filter_grad(m, x, ints(filter_sizes), g, *_args(attrs))


def _shape_arg_infer(k: int, like: int):
    """Output: dtype of input `like`, shape given by the shape tensor input k."""
    def infer(op):
        return [(op.inputs[like].dtype, partial_shape_value(op.inputs[k]))]
    return infer


for _name, _kin, _kfil in (("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"),
                           ("Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2")):
    register_op(_name, infer=_conv_infer, attrs=_CONV_ATTRS)(accumulate_f32(_conv))
    register_op(_kin, infer=_shape_arg_infer(0, 1), attrs=_CONV_ATTRS,
                const_inputs=(0,))(accumulate_f32(_conv_input_grad))
    register_op(_kfil, infer=_shape_arg_infer(1, 0), attrs=_CONV_ATTRS,
                const_inputs=(1,))(accumulate_f32(_conv_filter_grad))


def _grad_names(op_type):
    return {"Conv2D": ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"),
            "Conv3D": ("Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2")}[op_type]


def _conv_family(t):
    return "Conv3D" if t.startswith("Conv3D") else "Conv2D"


def _conv_grad(op, g):
    fwd, kin, kfil = _grad_names(_conv_family(op.type))
    x, w = op.inputs
    a = _attrs(op)
    return [make(kin, [_shape_of(x), w, g], a), make(kfil, [x, _shape_of(w), g], a)]


def _conv_input_grad_grad(op, g):
    fwd, kin, kfil = _grad_names(_conv_family(op.type))
    sizes, w, dy = op.inputs
    a = _attrs(op)
    return [None, make(kfil, [g, _shape_of(w), dy], a), make(fwd, [g, w], a)]


def _conv_filter_grad_grad(op, g):
    fwd, kin, kfil = _grad_names(_conv_family(op.type))
    x, sizes, dy = op.inputs
    a = _attrs(op)
    return [make(kin, [_shape_of(x), g, dy], a), None, make(fwd, [x, g], a)]


for _t in ("Conv2D", "Conv3D"):
    register_gradient(_t)(_conv_grad)
for _t in ("Conv2DBackpropInput", "Conv3DBackpropInputV2"):
    register_gradient(_t)(_conv_input_grad_grad)
for _t in ("Conv2DBackpropFilter", "Conv3DBackpropFilterV2"):
    register_gradient(_t)(_conv_filter_grad_grad)


def _conv_attrs(rank, strides, padding, data_format, dilations, what):
    fmt = data_format or ("NHWC" if rank == 4 else "NDHWC")
    _check_format(fmt, rank, what)
    p, explicit = _padding_attrs(padding, fmt, rank)
    return {"strides": tuple(_norm_list(strides, rank, fmt, "strides")),
            "padding": p, "explicit_paddings": explicit, "data_format": fmt,
            "dilations": tuple(_norm_list(dilations, rank, fmt, "dilations"))}


def conv2d(input=None, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,
           data_format="NHWC", dilations=None, name=None, filters=None):
    x, w = tensor(input), tensor(filters if filters is not None else filter)
    if strides is None or padding is None:
        raise InvalidArgumentError("conv2d needs strides and padding")
    return make("Conv2D", [x, tensor(w, dtype=x.dtype)],
                _conv_attrs(4, strides, padding, data_format, dilations, "conv2d"),
                name=name or "Conv2D")


def conv3d(input, filter=None, strides=None, padding=None, data_format="NDHWC",
           dilations=None, name=None, filters=None):
    x, w = tensor(input), tensor(filters if filters is not None else filter)
    return make("Conv3D", [x, tensor(w, dtype=x.dtype)],
                _conv_attrs(5, strides, padding, data_format, dilations, "conv3d"),
                name=name or "Conv3D")


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None,
           data_format=None, name=None, input=None, dilations=None):
    """TF's construction: a 2-D convolution over [N, 1, W, C] with a [1, k, I, O] filter."""
    x = tensor(value if value is not None else input)
    fmt = data_format or "NWC"
    if fmt not in ("NWC", "NCW"):
        raise InvalidArgumentError(f"data_format must be 'NWC' or 'NCW', got {fmt!r}")
    fmt2, axis = ("NHWC", 1) if fmt == "NWC" else ("NCHW", 2)

    def one(v, what):
        if v is None:
            return 1
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        if len(v) == 3:
            v = [v[1] if fmt == "NWC" else v[2]]
        if len(v) != 1:
            raise InvalidArgumentError(f"conv1d: {what} must be an int or a list of 1 or 3")
        return int(v[0])
    s, d = one(stride, "stride"), one(dilations, "dilations")
    pad = padding
    if not isinstance(padding, str):
        pairs = [list(p) for p in padding]
        pad = pairs[:axis] + [[0, 0]] + pairs[axis:]
    y = conv2d(expand_dims(x, axis), expand_dims(tensor(filters), 0), [1, s],
               pad, data_format=fmt2, dilations=[1, d])
    return squeeze(y, [axis], name=name)


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None,
                     padding="SAME", data_format="NHWC", name=None, input=None, filters=None,
                     dilations=None):
    """The gradient of conv2d with respect to its input: filter is [h, w, out, in]."""
    x = tensor(value if value is not None else input)
    w = tensor(filters if filters is not None else filter, dtype=x.dtype)
    os_ = output_shape if isinstance(output_shape, Tensor) else tensor(
        output_shape, dtype="int32") if not (isinstance(output_shape, (list, tuple)) and any(
            isinstance(d, Tensor) for d in output_shape)) else tensor(output_shape)
    a = _conv_attrs(4, strides, padding, data_format, dilations, "conv2d_transpose")
    fmt = a["data_format"]
    if w.shape.ndims == 4 and x.shape.ndims == 4:
        ci, fo = x.shape.dims[fmt.index("C")], w.shape.dims[3]
        if ci is not None and fo is not None and ci != fo:
            raise InvalidArgumentError(f"input channels ({ci}) and the filter's output "
                                       f"channels, its last dimension ({fo}), must match")
    out = make("Conv2DBackpropInput", [os_, w, x], a, name=name or "conv2d_transpose")
    v = constant_value(os_)
    if v is not None:
        out.set_shape(TensorShape([int(d) for d in np.reshape(v, [-1])]))
    return out


def atrous_conv2d(value, filters, rate, padding, name=None):
    """conv2d with the filter dilated by rate (NHWC, stride 1)."""
    return conv2d(value, filters, [1, 1, 1, 1], padding, dilations=[1, rate, rate, 1],
                  name=name or "atrous_conv2d")


def convolution(input, filter=None, padding=None, strides=None, dilation_rate=None, name=None,
                data_format=None, filters=None, dilations=None):
    """conv1d / conv2d / conv3d by the rank of input; strides and dilation_rate give the
    spatial entries only."""
    x = tensor(input)
    w = filters if filters is not None else filter
    r = x.shape.ndims
    rate = dilation_rate if dilation_rate is not None else dilations
    if r == 3:
        return conv1d(x, w, (strides or [1])[0], padding, data_format=data_format, name=name,
                      dilations=(rate or [1])[0])
    if r not in (4, 5):
        raise InvalidArgumentError(f"convolution needs an input of rank 3, 4 or 5, got {r}")
    fn = conv2d if r == 4 else conv3d
    return fn(x, w, list(strides) if strides else 1, padding,
              data_format=data_format or ("NHWC" if r == 4 else "NDHWC"),
              dilations=list(rate) if rate else None, name=name)


def conv3d_transpose(value, filter=None, output_shape=None, strides=None, padding="SAME",
                     data_format="NDHWC", name=None, filters=None, dilations=None):
    x = tensor(value)
    w = tensor(filters if filters is not None else filter, dtype=x.dtype)
    os_ = output_shape if isinstance(output_shape, Tensor) else tensor(output_shape,
                                                                        dtype="int32")
    a = _conv_attrs(5, strides, padding, data_format, dilations, "conv3d_transpose")
    return make("Conv3DBackpropInputV2", [os_, w, x], a, name=name or "conv3d_transpose")


# ---- depthwise -------------------------------------------------------------------------------

def _depthwise_infer(op):
    x, w = op.inputs
    a = _attrs(op)
    fmt = a["data_format"]
    if x.dtype != w.dtype:
        raise InvalidTypeError(f"{op.type}: input is {x.dtype.name} but filter is "
                               f"{w.dtype.name}")
    xs, ws = x.shape.with_rank(4), w.shape.with_rank(4)
    cin, fin = xs.dims[fmt.index("C")], ws.dims[2]
    if cin is not None and fin is not None and cin != fin:
        raise InvalidArgumentError(f"input and filter must have the same depth: {cin} vs {fin}")
    outs, _ = _conv_geometry(xs.dims, ws.dims[:2], a)
    dims = [None] * 4
    dims[fmt.index("N")] = xs.dims[fmt.index("N")]
    c, mult = ws.dims[2] if ws.dims[2] is not None else cin, ws.dims[3]
    dims[fmt.index("C")] = None if c is None or mult is None else c * mult
    for i, o in zip(_spatial(fmt), outs):
        dims[i] = o
    return [(x.dtype, TensorShape(dims))]


def _depthwise(m, x, w, **attrs):
    return cm.depthwise(m, x, w, *_args(attrs))


def _depthwise_input_grad(m, input_sizes, w, g, **attrs):
    return cm.depthwise_input_grad(m, ints(input_sizes), w, g, *_args(attrs))


def _depthwise_filter_grad(m, x, filter_sizes, g, **attrs):
    return cm.depthwise_filter_grad(m, x, ints(filter_sizes), g, *_args(attrs))


register_op("DepthwiseConv2dNative", infer=_depthwise_infer,
            attrs=_CONV_ATTRS)(accumulate_f32(_depthwise))
register_op("DepthwiseConv2dNativeBackpropInput", infer=_shape_arg_infer(0, 1),
            attrs=_CONV_ATTRS, const_inputs=(0,))(accumulate_f32(_depthwise_input_grad))
register_op("DepthwiseConv2dNativeBackpropFilter", infer=_shape_arg_infer(1, 0),
            attrs=_CONV_ATTRS, const_inputs=(1,))(accumulate_f32(_depthwise_filter_grad))


@register_gradient("DepthwiseConv2dNative")
def _depthwise_grad(op, g):
    x, w = op.inputs
    a = _attrs(op)
    return [make("DepthwiseConv2dNativeBackpropInput", [_shape_of(x), w, g], a),
            make("DepthwiseConv2dNativeBackpropFilter", [x, _shape_of(w), g], a)]


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",
                            dilations=None, name=None):
    x = tensor(input)
    return make("DepthwiseConv2dNative", [x, tensor(filter, dtype=x.dtype)],
                _conv_attrs(4, strides, padding, data_format, dilations,
                            "depthwise_conv2d_native"), name=name or "DepthwiseConv2dNative")


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None,
                     data_format=None, dilations=None):
    rate = dilations if dilations is not None else rate
    if rate is not None and not isinstance(rate, (list, tuple)):
        rate = [rate, rate]
    if rate is not None and any(r != 1 for r in rate) and any(
            s != 1 for s in _norm_list(strides, 4, data_format or "NHWC", "strides")):
        raise InvalidArgumentError("strides > 1 not supported in conjunction with rate > 1")
    return depthwise_conv2d_native(input, filter, strides, padding,
                                   data_format=data_format or "NHWC",
                                   dilations=list(rate) if rate is not None else None,
                                   name=name or "depthwise")


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, rate=None,
                     name=None, data_format=None, dilations=None):
    """A depthwise convolution, then a 1x1 convolution mixing the channels."""
    d = depthwise_conv2d(input, depthwise_filter, strides, padding, rate=rate,
                         data_format=data_format, dilations=dilations,
                         name="depthwise")
    return conv2d(d, pointwise_filter, [1, 1, 1, 1], "VALID",
                  data_format=data_format or "NHWC", name=name or "separable_conv2d")
