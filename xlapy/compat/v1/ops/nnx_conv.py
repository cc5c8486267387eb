"""More of tf.nn, composed from existing ops (so they compile and differentiate as those
do): conv1d_transpose, atrous_conv2d_transpose, the depthwise convolution's backprop
functions, batch_norm_with_global_normalization, collapse_repeated and
compute_accidental_hits.

  conv1d_transpose         conv2d_transpose over [N, 1, W, C] (NWC) or [N, C, 1, W] (NCW)
                           with a [1, w, out, in] filter, squeezed back.
  atrous_conv2d_transpose  the gradient of atrous_conv2d with respect to its input: a
                           Conv2DBackpropInput with the filter dilated by `rate`.
  collapse_repeated        merges runs of equal labels (within seq_length); the result is
                           as wide as the longest collapsed sequence (data-dependent).
  compute_accidental_hits  for each (row i, true class j) whose class is among the sampled
                           candidates: (i, the candidate's position, -FLT_MAX); the position
                           is the last one holding that class, as TF's kernel reports it; the
                           hits come in row-major order of (i, j).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import Tensor, get_default_graph
from xlapy.compat.v1.ops._common import constant_value, make, tensor
from xlapy.compat.v1.ops.array_ops import (concat, expand_dims, fill, reshape, shape,
                                           squeeze)
from xlapy.compat.v1.ops.conv_ops import _conv_attrs, conv2d_transpose
from xlapy.compat.v1.ops.gather_ops import gather_nd
from xlapy.compat.v1.ops.index_ops import where
from xlapy.compat.v1.ops.manip_ops import cumsum, range_, reverse, sequence_mask
from xlapy.compat.v1.ops.math_ops import (argmax, cast, equal, logical_and, multiply,
                                          not_equal, reduce_any, reduce_max, reduce_sum,
                                          subtract)
from xlapy.compat.v1.ops.norm_ops import batch_normalization
from xlapy.compat.v1.tensor_shape import TensorShape

_FLT_MAX = float(np.finfo(np.float32).max)


# ---- transposed convolutions -----------------------------------------------------------------

def _one_stride(v, fmt, what):
    """conv1d's int / [s] / [1, s, 1] stride or dilation as one int."""
    if v is None:
        return 1
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    if len(v) == 3:
        c = fmt.index("C")
        if v[0] != 1 or v[c] != 1:
            raise InvalidArgumentError(f"conv1d_transpose: {what} must be 1 in the batch and "
                                       "channel dimensions")
        v = [v[1] if fmt == "NWC" else v[2]]
    if len(v) != 1:
        raise InvalidArgumentError(f"conv1d_transpose: {what} should be of length 1 or 3 but "
                                   f"was {len(v)}")
    return int(v[0])


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME",
                     data_format="NWC", dilations=None, name=None):
    """The transpose of conv1d: input [N, W, in] (NWC) or [N, in, W] (NCW), filters
    [w, out, in], output_shape the 3 entries of the result."""
    x = tensor(input)
    fmt = data_format or "NWC"
    if fmt not in ("NWC", "NCW"):
        raise InvalidArgumentError(f"data_format must be 'NWC' or 'NCW', got {fmt!r}")
    s, d = _one_stride(strides, fmt, "strides"), _one_stride(dilations, fmt, "dilations")
    fmt2, axis = ("NHWC", 1) if fmt == "NWC" else ("NCHW", 2)
    with get_default_graph().name_scope(name or "conv1d_transpose"):
        if isinstance(output_shape, Tensor):
            os_ = concat([output_shape[:axis], tensor(np.array([1], output_shape.dtype.np)),
                          output_shape[axis:]], 0)
        else:
            os_ = list(output_shape)
            if len(os_) != 3:
                raise InvalidArgumentError(f"conv1d_transpose: output_shape must have 3 "
                                           f"entries, got {output_shape!r}")
            os_ = os_[:axis] + [1] + os_[axis:]
        y = conv2d_transpose(expand_dims(x, axis), expand_dims(tensor(filters, x.dtype), 0),
                             os_, _full([1, s], fmt2), padding, data_format=fmt2,
                             dilations=_full([1, d], fmt2))
        return squeeze(y, [axis])


def _full(spatial, fmt):
    out = [1, 1, 1, 1]
    out[fmt.index("H")], out[fmt.index("W")] = spatial
    return out


def atrous_conv2d_transpose(value, filters, output_shape, rate, padding, name=None):
    """The transpose of atrous_conv2d (NHWC): filters [h, w, out, in]."""
    x = tensor(value)
    w = tensor(filters, x.dtype)
    if w.shape.ndims == 4 and x.shape.ndims == 4:
        ci, fi = x.shape.dims[3], w.shape.dims[3]
        if ci is not None and fi is not None and ci != fi:
            raise InvalidArgumentError("value's input channels does not match filters' input "
                                       "channels, {} != {}".format(ci, fi))
    if rate < 1:
        raise InvalidArgumentError(f"rate {rate} cannot be less than one")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise InvalidArgumentError(f"padding must be either VALID or SAME: {padding}")
    ov = constant_value(output_shape) if isinstance(output_shape, Tensor) else \
        np.asarray(output_shape)
    if ov is not None and w.shape.ndims == 4 and w.shape.dims[2] is not None:
        ov = np.reshape(ov, [-1])
        if ov.size != 4:
            raise InvalidArgumentError(f"output_shape must have shape (4,), got {ov.shape}")
        if int(ov[3]) != w.shape.dims[2]:
            raise InvalidArgumentError("output_shape does not match filter's output channels, "
                                       f"{int(ov[3])} != {w.shape.dims[2]}")
    return conv2d_transpose(x, w, output_shape, [1, 1, 1, 1], padding.upper(),
                            data_format="NHWC", dilations=[1, rate, rate, 1],
                            name=name or "atrous_conv2d_transpose")


def _sizes(v):
    return v if isinstance(v, Tensor) else tensor(np.asarray(v, np.int32))


def depthwise_conv2d_native_backprop_input(input_sizes, filter, out_backprop, strides,
                                           padding, data_format="NHWC", dilations=None,
                                           name=None):
    """The gradient of depthwise_conv2d_native with respect to its input."""
    g = tensor(out_backprop)
    a = _conv_attrs(4, strides, padding, data_format, dilations,
                    "depthwise_conv2d_native_backprop_input")
    sizes = _sizes(input_sizes)
    out = make("DepthwiseConv2dNativeBackpropInput", [sizes, tensor(filter, g.dtype), g], a,
               name=name or "DepthwiseConv2dNativeBackpropInput")
    v = constant_value(sizes)
    if v is not None:
        out.set_shape(TensorShape([int(d) for d in np.reshape(v, [-1])]))
    return out


def depthwise_conv2d_native_backprop_filter(input, filter_sizes, out_backprop, strides,
                                            padding, data_format="NHWC", dilations=None,
                                            name=None):
    """The gradient of depthwise_conv2d_native with respect to its filter."""
    x = tensor(input)
    a = _conv_attrs(4, strides, padding, data_format, dilations,
                    "depthwise_conv2d_native_backprop_filter")
    sizes = _sizes(filter_sizes)
    out = make("DepthwiseConv2dNativeBackpropFilter",
               [x, sizes, tensor(out_backprop, x.dtype)], a,
               name=name or "DepthwiseConv2dNativeBackpropFilter")
    v = constant_value(sizes)
    if v is not None:
        out.set_shape(TensorShape([int(d) for d in np.reshape(v, [-1])]))
    return out


# ---- normalization ---------------------------------------------------------------------------

def batch_norm_with_global_normalization(t=None, m=None, v=None, beta=None, gamma=None,
                                         variance_epsilon=None,
                                         scale_after_normalization=None, name=None,
                                         input=None, mean=None, variance=None):
    """(t - m) / sqrt(v + variance_epsilon) * gamma + beta (gamma only when
    scale_after_normalization)."""
    t = input if input is not None else t
    m = mean if mean is not None else m
    v = variance if variance is not None else v
    if t is None or m is None or v is None or variance_epsilon is None or \
            scale_after_normalization is None:
        raise InvalidArgumentError("batch_norm_with_global_normalization needs t, m, v, beta, "
                                   "gamma, variance_epsilon and scale_after_normalization")
    return batch_normalization(t, m, v, beta, gamma if scale_after_normalization else None,
                               variance_epsilon, name=name or "batchnorm")


# ---- CTC labels and sampled candidates -------------------------------------------------------

def collapse_repeated(labels, seq_length, name=None):
    """(collapsed labels [batch, longest collapsed length], their lengths)."""
    with get_default_graph().name_scope(name or "collapse_repeated_labels"):
        lab = tensor(labels)
        sl = tensor(seq_length)
        if lab.shape.ndims not in (None, 2):
            raise InvalidArgumentError(f"collapse_repeated: labels must be [batch, max_len], "
                                       f"got {lab.shape.tf_str()}")
        first = lab[:, :1]
        keep = concat([equal(first, first), not_equal(lab[:, 1:], lab[:, :-1])], 1)
        keep = logical_and(keep, sequence_mask(sl, maxlen=shape(lab)[1]))
        ik = cast(keep, dtypes.int32)
        new_len = reduce_sum(ik, 1)
        pos = subtract(cumsum(ik, 1), 1)
        k = range_(reduce_max(new_len))
        sel = logical_and(expand_dims(keep, 2), equal(expand_dims(pos, 2), k))
        out = reduce_sum(multiply(expand_dims(lab, 2), cast(sel, lab.dtype)), 1)
        return out, cast(new_len, sl.dtype)


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """(indices int32, ids int64, weights float32): the rows, the sampled positions and
    -FLT_MAX for the sampled candidates that are one of the row's true classes."""
    with get_default_graph().name_scope(name or "compute_accidental_hits"):
        tc = tensor(true_classes)
        if tc.shape.ndims not in (None, 2):
            raise InvalidArgumentError(f"true_classes must be a matrix, got "
                                       f"{tc.shape.tf_str()}")
        if tc.shape.ndims == 2 and tc.shape.dims[1] not in (None, int(num_true)):
            raise InvalidArgumentError(f"true_classes must have num_true columns, expected: "
                                       f"{tc.shape.dims[1]} was: {num_true}")
        tc = cast(tc, dtypes.int64) if tc.dtype != dtypes.int64 else tc
        sc = tensor(sampled_candidates)
        sc = cast(sc, dtypes.int64) if sc.dtype != dtypes.int64 else sc
        if sc.shape.ndims not in (None, 1):
            raise InvalidArgumentError(f"sampled_candidates must be a vector, got "
                                       f"{sc.shape.tf_str()}")
        eq = equal(expand_dims(tc, 2), reshape(sc, [1, 1, -1]))
        has = reduce_any(eq, 2)
        last = subtract(cast(shape(sc)[0] - 1, dtypes.int64),
                        argmax(reverse(cast(eq, dtypes.int32), [2]), 2))
        hits = where(has)
        indices = cast(hits[:, 0], dtypes.int32)
        ids = gather_nd(last, hits)
        weights = fill(shape(indices), np.float32(-_FLT_MAX))
        return indices, ids, weights
