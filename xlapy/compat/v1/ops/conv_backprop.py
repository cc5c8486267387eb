"""tf.nn.conv2d_backprop_input and conv2d_backprop_filter: the gradient ops of Conv2D
(conv_ops.py registers them, with kernels, lowerings and their own gradients) called
directly, as TF 1.x scripts (and conv2d_transpose's users) do."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import Tensor
from xlapy.compat.v1.ops._common import constant_value, make, tensor
from xlapy.compat.v1.ops.conv_ops import _conv_attrs
from xlapy.compat.v1.tensor_shape import TensorShape


def _sizes(v, what):
    if isinstance(v, Tensor):
        return v
    arr = np.asarray(v)
    if arr.shape != (4,):
        raise InvalidArgumentError(f"{what} must be a 4-element shape, got {arr.tolist()}")
    return tensor(arr.astype(np.int32))


def _set_static(out, sizes):
    v = constant_value(sizes)
    if v is not None:
        out.set_shape(TensorShape([int(d) for d in np.reshape(v, [-1])]))
    return out


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None,
                          padding=None, use_cudnn_on_gpu=True, data_format="NHWC",
                          dilations=(1, 1, 1, 1), name=None, filters=None):
    """The gradient of conv2d with respect to its input, of shape input_sizes."""
    g = tensor(out_backprop)
    w = tensor(filters if filters is not None else filter, dtype=g.dtype)
    if strides is None or padding is None:
        raise InvalidArgumentError("conv2d_backprop_input needs strides and padding")
    sizes = _sizes(input_sizes, "input_sizes")
    a = _conv_attrs(4, strides, padding, data_format, dilations, "conv2d_backprop_input")
    return _set_static(make("Conv2DBackpropInput", [sizes, w, g], a,
                            name=name or "Conv2DBackpropInput"), sizes)


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,
                           use_cudnn_on_gpu=True, data_format="NHWC",
                           dilations=(1, 1, 1, 1), name=None):
    """The gradient of conv2d with respect to its filter, of shape filter_sizes."""
    x = tensor(input)
    g = tensor(out_backprop, dtype=x.dtype)
    sizes = _sizes(filter_sizes, "filter_sizes")
    a = _conv_attrs(4, strides, padding, data_format, dilations, "conv2d_backprop_filter")
    return _set_static(make("Conv2DBackpropFilter", [x, sizes, g], a,
                            name=name or "Conv2DBackpropFilter"), sizes)
