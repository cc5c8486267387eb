"""tf.keras.layers' other convolutional layers: Conv2DTranspose, SeparableConv2D (over
tf.layers), DepthwiseConv2D, Conv3D with MaxPooling3D / AveragePooling3D, and the
reshaping ones - UpSampling1D/2D (nearest), ZeroPadding1D/2D, Cropping1D/2D."""

from __future__ import annotations

from xlapy.compat.v1 import layers as _tl
from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError
from xlapy.compat.v1.keras import activations
from xlapy.compat.v1.keras.layers import _initializer, _Keras
from xlapy.compat.v1.layers.base import channels, data_format_tf, normalize_tuple


def _tf():
    import xlapy.compat.v1 as tf
    return tf


def _fmt(data_format):
    from xlapy.compat.v1.keras.backend_ops import image_data_format
    return data_format or image_data_format()


class Conv2DTranspose(_Keras, _tl.Conv2DTranspose):
    """Kernel [kh, kw, filters, in]; output size size * stride ('same') or size * stride +
    max(kernel - stride, 0) ('valid'), as Keras."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 output_padding=None, data_format=None, dilation_rate=(1, 1), activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 **kwargs):
        kwargs = self._keras_input(kwargs)
        if output_padding is not None:
            raise UnimplementedError("Conv2DTranspose(output_padding=...) is not supported by "
                                     "xlapy's Keras")
        if normalize_tuple(dilation_rate, 2, "dilation_rate") != (1, 1):
            raise UnimplementedError("Conv2DTranspose(dilation_rate > 1) is not supported by "
                                     "xlapy's Keras")
        super().__init__(filters, kernel_size, strides, padding, _fmt(data_format), 1,
                         activations.get(activation), use_bias,
                         _initializer(kernel_initializer), _initializer(bias_initializer),
                         **kwargs)


Convolution2DTranspose = Deconvolution2D = Deconv2D = Conv2DTranspose


class SeparableConv2D(_Keras, _tl.SeparableConv2D):
    """A depthwise then a 1x1 pointwise convolution (depthwise_kernel, pointwise_kernel,
    bias)."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format=None, dilation_rate=(1, 1), depth_multiplier=1, activation=None,
                 use_bias=True, depthwise_initializer="glorot_uniform",
                 pointwise_initializer="glorot_uniform", bias_initializer="zeros", **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(filters, kernel_size, strides, padding, _fmt(data_format),
                         dilation_rate, depth_multiplier, activations.get(activation),
                         use_bias, _initializer(depthwise_initializer),
                         _initializer(pointwise_initializer), _initializer(bias_initializer),
                         **kwargs)


SeparableConvolution2D = SeparableConv2D


class DepthwiseConv2D(_Keras, _tl.Layer):
    """Each input channel convolved with its own depth_multiplier filters:
    depthwise_kernel [kh, kw, in, depth_multiplier], bias [in * depth_multiplier]."""

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1,
                 data_format=None, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, **kwargs):
        kwargs = self._keras_input(dict(kwargs, depthwise_regularizer=depthwise_regularizer,
                                        bias_regularizer=bias_regularizer))
        self.depthwise_regularizer = kwargs.pop("depthwise_regularizer")
        self.bias_regularizer = kwargs.pop("bias_regularizer")
        super().__init__(**kwargs)
        from xlapy.compat.v1.layers.convolutional import _padding
        self.kernel_size = normalize_tuple(kernel_size, 2, "kernel_size")
        self.strides = normalize_tuple(strides, 2, "strides")
        self.padding = _padding(padding)
        self.depth_multiplier = int(depth_multiplier)
        self.data_format = _fmt(data_format)
        self._tf_fmt = data_format_tf(self.data_format, 4)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.depthwise_initializer = _initializer(depthwise_initializer)
        self.bias_initializer = _initializer(bias_initializer)

    def build(self, input_shape):
        cin = channels(input_shape, self.data_format, "DepthwiseConv2D")
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", list(self.kernel_size) + [cin, self.depth_multiplier],
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer)
        self.bias = self.add_weight("bias", [cin * self.depth_multiplier],
                                    initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer) \
            if self.use_bias else None

    def call(self, inputs):
        tf = _tf()
        f = self._tf_fmt
        strides = [1] + list(self.strides) + [1] if f == "NHWC" else [1, 1] + list(self.strides)
        out = tf.nn.depthwise_conv2d(inputs, self.depthwise_kernel, strides, self.padding,
                                     data_format=f)
        if self.bias is not None:
            out = tf.nn.bias_add(out, self.bias, data_format=f)
        return self.activation(out) if self.activation is not None else out


class Conv3D(_Keras, _tl.Layer):
    """kernel [kd, kh, kw, in, filters] over [batch, d, h, w, channels] (channels_last)."""

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format=None, dilation_rate=(1, 1, 1), activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, **kwargs):
        kwargs = self._keras_input(dict(kwargs, kernel_regularizer=kernel_regularizer,
                                        bias_regularizer=bias_regularizer))
        self.kernel_regularizer = kwargs.pop("kernel_regularizer")
        self.bias_regularizer = kwargs.pop("bias_regularizer")
        super().__init__(**kwargs)
        from xlapy.compat.v1.layers.convolutional import _padding
        if _fmt(data_format) != "channels_last":
            raise UnimplementedError("Conv3D(data_format='channels_first') is not supported by "
                                     "xlapy's Keras")
        self.filters = int(filters)
        self.kernel_size = normalize_tuple(kernel_size, 3, "kernel_size")
        self.strides = normalize_tuple(strides, 3, "strides")
        self.dilation_rate = normalize_tuple(dilation_rate, 3, "dilation_rate")
        self.padding = _padding(padding)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = _initializer(kernel_initializer)
        self.bias_initializer = _initializer(bias_initializer)

    def build(self, input_shape):
        cin = channels(input_shape, "channels_last", "Conv3D")
        self.kernel = self.add_weight("kernel", list(self.kernel_size) + [cin, self.filters],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer)
        self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer) \
            if self.use_bias else None

    def call(self, inputs):
        tf = _tf()
        out = tf.nn.conv3d(inputs, self.kernel, [1] + list(self.strides) + [1], self.padding,
                           dilations=[1] + list(self.dilation_rate) + [1])
        if self.bias is not None:
            out = tf.nn.bias_add(out, self.bias)
        return self.activation(out) if self.activation is not None else out


Convolution3D = Conv3D


class _Pooling3D(_Keras, _tl.Layer):
    op = "max"

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None,
                 **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(**kwargs)
        from xlapy.compat.v1.layers.convolutional import _padding
        if _fmt(data_format) != "channels_last":
            raise UnimplementedError("3-D pooling with data_format='channels_first' is not "
                                     "supported by xlapy's Keras")
        self.pool_size = normalize_tuple(pool_size, 3, "pool_size")
        self.strides = normalize_tuple(strides if strides is not None else pool_size, 3,
                                       "strides")
        self.padding = _padding(padding)

    def call(self, inputs):
        tf = _tf()
        fn = tf.nn.max_pool3d if self.op == "max" else tf.nn.avg_pool3d
        return fn(inputs, [1] + list(self.pool_size) + [1], [1] + list(self.strides) + [1],
                  self.padding)


class MaxPooling3D(_Pooling3D):
    op = "max"


class AveragePooling3D(_Pooling3D):
    op = "avg"


MaxPool3D, AvgPool3D = MaxPooling3D, AveragePooling3D


def _spatial_axes(data_format, rank):
    return list(range(1, rank + 1)) if data_format == "channels_last" else \
        list(range(2, rank + 2))


class _Reshaping(_Keras, _tl.Layer):
    supports_masking = False

    def __init__(self, data_format=None, **kwargs):
        kwargs = self._keras_input(kwargs)
        super().__init__(**kwargs)
        self.data_format = _fmt(data_format)


def _repeat(x, axis, n):
    """Each slice along axis repeated n times (nearest-neighbour upsampling)."""
    tf = _tf()
    dims = x.shape.as_list()
    if dims[axis] is None:
        raise InvalidArgumentError("UpSampling needs the spatial size of its input")
    y = tf.tile(tf.expand_dims(x, axis + 1), [1] * (axis + 1) + [n] + [1] * (
        len(dims) - axis - 1))
    new = [-1 if d is None else d for d in dims]
    new[axis] = dims[axis] * n
    if dims[0] is None:
        new[0] = -1
    return tf.reshape(y, new)


class UpSampling1D(_Reshaping):
    def __init__(self, size=2, **kwargs):
        super().__init__(data_format="channels_last", **kwargs)
        self.size = int(size)

    def call(self, inputs):
        return _repeat(inputs, 1, self.size)


class UpSampling2D(_Reshaping):
    """Rows and columns repeated size times ('nearest')."""

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        if interpolation != "nearest":
            raise UnimplementedError(f"UpSampling2D(interpolation={interpolation!r}) is not "
                                     f"supported by xlapy's Keras (only 'nearest')")
        self.size = normalize_tuple(size, 2, "size")
        self.interpolation = interpolation

    def call(self, inputs):
        h, w = _spatial_axes(self.data_format, 2)
        return _repeat(_repeat(inputs, h, self.size[0]), w, self.size[1])


def _pairs(v, rank, name):
    if isinstance(v, int):
        return [(v, v)] * rank
    v = list(v)
    if len(v) != rank:
        raise InvalidArgumentError(f"`{name}` should have {rank} elements. Found: {v}")
    return [(int(p), int(p)) if isinstance(p, int) else tuple(int(q) for q in p) for p in v]


class ZeroPadding1D(_Reshaping):
    def __init__(self, padding=1, **kwargs):
        super().__init__(data_format="channels_last", **kwargs)
        self.padding = tuple(padding) if not isinstance(padding, int) else (padding, padding)

    def call(self, inputs):
        return _tf().pad(inputs, [[0, 0], list(self.padding), [0, 0]])


class ZeroPadding2D(_Reshaping):
    """padding: an int, (rows, cols), or ((top, bottom), (left, right))."""

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.padding = tuple(_pairs(padding, 2, "padding"))

    def call(self, inputs):
        pads = [[0, 0]] * 4
        for ax, p in zip(_spatial_axes(self.data_format, 2), self.padding):
            pads[ax] = list(p)
        return _tf().pad(inputs, pads)


class Cropping1D(_Reshaping):
    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(data_format="channels_last", **kwargs)
        self.cropping = tuple(cropping) if not isinstance(cropping, int) else (cropping,) * 2

    def call(self, inputs):
        a, b = self.cropping
        return inputs[:, a:inputs.shape.as_list()[1] - b, :]


class Cropping2D(_Reshaping):
    """cropping: an int, (rows, cols), or ((top, bottom), (left, right))."""

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.cropping = tuple(_pairs(cropping, 2, "cropping"))

    def call(self, inputs):
        dims = inputs.shape.as_list()
        sl = [slice(None)] * 4
        for ax, (a, b) in zip(_spatial_axes(self.data_format, 2), self.cropping):
            if dims[ax] is None:
                raise InvalidArgumentError("Cropping2D needs the spatial size of its input")
            if a + b >= dims[ax]:
                raise InvalidArgumentError(f"Cropping {(a, b)} leaves nothing of size "
                                           f"{dims[ax]}")
            sl[ax] = slice(a, dims[ax] - b)
        return inputs[tuple(sl)]
