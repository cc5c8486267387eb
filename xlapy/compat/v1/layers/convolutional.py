"""tf.layers.conv1d/conv2d/conv2d_transpose and max/average pooling (1-D and 2-D), with
their classes. Padding is 'valid' or 'same'; data_format 'channels_last' (NHWC) or
'channels_first' (NCHW); kernels are [k..., in, filters] (HWIO), as TF's."""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.layers.base import Layer, channels, data_format_tf, normalize_tuple
from xlapy.compat.v1.ops import conv_ops, pool_ops
from xlapy.compat.v1.ops.array_ops import expand_dims, squeeze
from xlapy.compat.v1.ops.nn_ops import bias_add
from xlapy.compat.v1.variables import zeros_initializer


def _padding(p: str) -> str:
    if p.lower() not in ("valid", "same"):
        raise InvalidArgumentError(f"The `padding` argument must be one of 'valid', 'same'. "
                                   f"Received: {p}")
    return p.upper()


class _Conv(Layer):
    rank = 2

    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        n = self.rank
        self.filters = int(filters)
        self.kernel_size = normalize_tuple(kernel_size, n, "kernel_size")
        self.strides = normalize_tuple(strides, n, "strides")
        self.padding = _padding(padding)
        self.data_format = data_format
        self.dilation_rate = normalize_tuple(dilation_rate, n, "dilation_rate")
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer or zeros_initializer()
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self._fmt = data_format_tf(data_format, n + 2)

    def _kernel_shape(self, cin):
        return list(self.kernel_size) + [cin, self.filters]

    def build(self, input_shape):
        cin = channels(input_shape, self.data_format, type(self).__name__)
        self.kernel = self.add_weight("kernel", self._kernel_shape(cin),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer)
        self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer) \
            if self.use_bias else None

    def _conv(self, x):
        f = self._fmt
        if self.rank == 1:
            return conv_ops.conv1d(x, self.kernel, self.strides[0], self.padding,
                                   data_format=f, dilations=self.dilation_rate[0])
        return conv_ops.conv2d(x, self.kernel, list(self.strides), self.padding,
                               data_format=f, dilations=list(self.dilation_rate))

    def call(self, inputs):
        out = self._conv(inputs)
        if self.bias is not None:
            out = bias_add(out, self.bias,
                           data_format="NCHW" if self.data_format == "channels_first"
                           else "NHWC")
        return self.activation(out) if self.activation is not None else out


class Conv2D(_Conv):
    rank = 2


class Conv1D(_Conv):
    rank = 1


class Conv2DTranspose(_Conv):
    """The transpose of Conv2D: kernel [kh, kw, filters, in]."""

    rank = 2

    def _kernel_shape(self, cin):
        return list(self.kernel_size) + [self.filters, cin]

    def _conv(self, x):
        from xlapy.compat.v1.ops.array_ops import shape, stack
        f = self._fmt
        hw = [f.index("H"), f.index("W")]
        dims = x.shape.dims
        out_sp = []
        for j, ax in enumerate(hw):
            size = dims[ax] if dims else None
            k, s = self.kernel_size[j], self.strides[j]
            if size is None:
                raise InvalidArgumentError("conv2d_transpose needs the spatial size of its "
                                           "input")
            out_sp.append(size * s if self.padding == "SAME" else size * s + max(k - s, 0))
        b = dims[0] if dims and dims[0] is not None else shape(x)[0]
        out = [b, 0, 0, 0]
        out[f.index("C")] = self.filters
        for ax, v in zip(hw, out_sp):
            out[ax] = v
        os_ = stack(out) if not isinstance(b, int) else out
        return conv_ops.conv2d_transpose(x, self.kernel, os_, [1] + list(self.strides) + [1]
                                         if f == "NHWC" else [1, 1] + list(self.strides),
                                         self.padding, data_format=f)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
           bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    return Conv2D(filters, kernel_size, strides, padding, data_format, dilation_rate,
                  activation, use_bias, kernel_initializer, bias_initializer,
                  kernel_regularizer, bias_regularizer, trainable=trainable, name=name,
                  _reuse=reuse)(inputs)


def conv1d(inputs, filters, kernel_size, strides=1, padding="valid",
           data_format="channels_last", dilation_rate=1, activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
           bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    return Conv1D(filters, kernel_size, strides, padding, data_format, dilation_rate,
                  activation, use_bias, kernel_initializer, bias_initializer,
                  kernel_regularizer, bias_regularizer, trainable=trainable, name=name,
                  _reuse=reuse)(inputs)


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias=True,
                     kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                     bias_constraint=None, trainable=True, name=None, reuse=None):
    return Conv2DTranspose(filters, kernel_size, strides, padding, data_format, 1, activation,
                           use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                           bias_regularizer, trainable=trainable, name=name,
                           _reuse=reuse)(inputs)


class _Pooling(Layer):
    rank = 2
    op = "max"

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size = normalize_tuple(pool_size, self.rank, "pool_size")
        self.strides = normalize_tuple(strides, self.rank, "strides")
        self.padding = _padding(padding)
        self.data_format = data_format

    def call(self, inputs):
        fn = pool_ops.max_pool if self.op == "max" else pool_ops.avg_pool
        if self.rank == 1:
            fmt = "NHWC" if self.data_format == "channels_last" else "NCHW"
            axis = 1 if fmt == "NHWC" else 2
            y = fn(expand_dims(inputs, axis), [1] + list(self.pool_size),
                   [1] + list(self.strides), self.padding, data_format=fmt)
            return squeeze(y, [axis])
        fmt = data_format_tf(self.data_format, 4)
        return fn(inputs, list(self.pool_size), list(self.strides), self.padding,
                  data_format=fmt)


class MaxPooling2D(_Pooling):
    rank, op = 2, "max"


class AveragePooling2D(_Pooling):
    rank, op = 2, "avg"


class MaxPooling1D(_Pooling):
    rank, op = 1, "max"


class AveragePooling1D(_Pooling):
    rank, op = 1, "avg"


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    return MaxPooling2D(pool_size, strides, padding, data_format, name=name)(inputs)


def average_pooling2d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None):
    return AveragePooling2D(pool_size, strides, padding, data_format, name=name)(inputs)


def max_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    return MaxPooling1D(pool_size, strides, padding, data_format, name=name)(inputs)


def average_pooling1d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None):
    return AveragePooling1D(pool_size, strides, padding, data_format, name=name)(inputs)
