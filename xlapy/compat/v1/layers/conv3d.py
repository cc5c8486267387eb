"""tf.layers.conv3d / Conv3D and conv3d_transpose / Conv3DTranspose: kernels [kd, kh, kw,
in, filters] (the transpose's [kd, kh, kw, filters, in]), data_format 'channels_last'
(NDHWC) or 'channels_first' (NCDHW), padding 'valid' or 'same', variables conv3d/kernel,
conv3d/bias (conv3d_transpose/...) as TF 1.x's."""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.layers.convolutional import _Conv
from xlapy.compat.v1.layers.input_spec import InputSpec
from xlapy.compat.v1.ops import conv_ops
from xlapy.compat.v1.ops.array_ops import shape, stack
from xlapy.compat.v1.ops.nn_ops import bias_add


class Conv3D(_Conv):
    """3-D convolution layer (NDHWC or NCDHW), with dilation_rate."""

    rank = 3

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1, 1), activation=None,
                 use_bias=True, kernel_initializer=None, bias_initializer=None,
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, trainable=trainable,
                         name=name, **kwargs)
        self.input_spec = InputSpec(ndim=5)

    def _conv(self, x):
        return conv_ops.conv3d(x, self.kernel, self._full(self.strides), self.padding,
                               data_format=self._fmt, dilations=self._full(self.dilation_rate))

    def _full(self, spatial):
        return [1] + list(spatial) + [1] if self._fmt == "NDHWC" else [1, 1] + list(spatial)

    def call(self, inputs):
        out = self._conv(inputs)
        if self.bias is not None:
            out = bias_add(out, self.bias, data_format=self._fmt)
        return self.activation(out) if self.activation is not None else out


class Conv3DTranspose(Conv3D):
    """The transpose of Conv3D: kernel [kd, kh, kw, filters, in]."""

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format="channels_last", activation=None, use_bias=True,
                 kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, 1, activation,
                         use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                         bias_regularizer, trainable=trainable, name=name, **kwargs)

    def _kernel_shape(self, cin):
        return list(self.kernel_size) + [self.filters, cin]

    def _conv(self, x):
        f = self._fmt
        axes = [f.index(c) for c in "DHW"]
        dims = x.shape.dims
        out = [None] * 5
        for j, ax in enumerate(axes):
            size = dims[ax] if dims else None
            if size is None:
                raise InvalidArgumentError("conv3d_transpose needs the spatial size of its "
                                           "input")
            k, s = self.kernel_size[j], self.strides[j]
            out[ax] = size * s if self.padding == "SAME" else size * s + max(k - s, 0)
        out[f.index("C")] = self.filters
        b = dims[0] if dims and dims[0] is not None else shape(x)[0]
        out[0] = b
        os_ = out if isinstance(b, int) else stack(out)
        return conv_ops.conv3d_transpose(x, self.kernel, os_, self._full(self.strides),
                                         self.padding, data_format=f)


def conv3d(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1, 1), activation=None,
           use_bias=True, kernel_initializer=None, bias_initializer=None,
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
           reuse=None):
    return Conv3D(filters, kernel_size, strides, padding, data_format, dilation_rate,
                  activation, use_bias, kernel_initializer, bias_initializer,
                  kernel_regularizer, bias_regularizer, trainable=trainable, name=name,
                  _reuse=reuse)(inputs)


def conv3d_transpose(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias=True,
                     kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                     bias_constraint=None, trainable=True, name=None, reuse=None):
    return Conv3DTranspose(filters, kernel_size, strides, padding, data_format, activation,
                           use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                           bias_regularizer, trainable=trainable, name=name,
                           _reuse=reuse)(inputs)
