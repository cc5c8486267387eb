"""tf.layers.separable_conv2d and SeparableConv2D: a depthwise convolution (kernel
[kh, kw, in, depth_multiplier], "depthwise_kernel") then a 1x1 convolution
([1, 1, in * depth_multiplier, filters], "pointwise_kernel") and a bias, as TF 1.x's
layer (tf.nn.separable_conv2d)."""

from __future__ import annotations

from xlapy.compat.v1.layers.base import Layer, channels, data_format_tf, normalize_tuple
from xlapy.compat.v1.layers.convolutional import _padding
from xlapy.compat.v1.ops import conv_ops
from xlapy.compat.v1.ops.nn_ops import bias_add
from xlapy.compat.v1.variables import zeros_initializer


class SeparableConv2D(Layer):
    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1), depth_multiplier=1,
                 activation=None, use_bias=True, depthwise_initializer=None,
                 pointwise_initializer=None, bias_initializer=None, depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                 trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        self.filters = int(filters)
        self.kernel_size = normalize_tuple(kernel_size, 2, "kernel_size")
        self.strides = normalize_tuple(strides, 2, "strides")
        self.padding = _padding(padding)
        self.data_format = data_format
        self.dilation_rate = normalize_tuple(dilation_rate, 2, "dilation_rate")
        self.depth_multiplier = int(depth_multiplier)
        self.activation = activation
        self.use_bias = use_bias
        self.depthwise_initializer = depthwise_initializer
        self.pointwise_initializer = pointwise_initializer
        self.bias_initializer = bias_initializer or zeros_initializer()
        self.depthwise_regularizer = depthwise_regularizer
        self.pointwise_regularizer = pointwise_regularizer
        self.bias_regularizer = bias_regularizer
        self._fmt = data_format_tf(data_format, 4)

    def build(self, input_shape):
        cin = channels(input_shape, self.data_format, "SeparableConv2D")
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", list(self.kernel_size) + [cin, self.depth_multiplier],
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", [1, 1, cin * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer)
        self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer) \
            if self.use_bias else None

    def call(self, inputs):
        f = self._fmt
        strides = [1] + list(self.strides) + [1] if f == "NHWC" else [1, 1] + list(self.strides)
        out = conv_ops.separable_conv2d(inputs, self.depthwise_kernel, self.pointwise_kernel,
                                        strides, self.padding, rate=list(self.dilation_rate),
                                        data_format=f)
        if self.bias is not None:
            out = bias_add(out, self.bias, data_format=f)
        return self.activation(out) if self.activation is not None else out


def separable_conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", dilation_rate=(1, 1), depth_multiplier=1,
                     activation=None, use_bias=True, depthwise_initializer=None,
                     pointwise_initializer=None, bias_initializer=None,
                     depthwise_regularizer=None, pointwise_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None,
                     depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                     trainable=True, name=None, reuse=None):
    return SeparableConv2D(filters, kernel_size, strides, padding, data_format, dilation_rate,
                           depth_multiplier, activation, use_bias, depthwise_initializer,
                           pointwise_initializer, bias_initializer, depthwise_regularizer,
                           pointwise_regularizer, bias_regularizer, trainable=trainable,
                           name=name, _reuse=reuse)(inputs)
