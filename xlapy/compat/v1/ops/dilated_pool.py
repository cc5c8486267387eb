"""tf.nn.with_space_to_batch, tf.nn.pool and tf.required_space_to_batch_paddings, as TF 1.x
builds them: a dilated op runs as space_to_batch_nd (block = the dilation rate), the op with
VALID padding, then batch_to_space_nd. With SAME padding the input is padded by the dilated
filter's half-widths first, with zeros that the op then sees (TF's behaviour: a dilated
SAME average pool counts those zeros, a max pool compares with them). Spatial sizes must be
known when the graph is built.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.ops._common import constant_value, tensor
from xlapy.compat.v1.ops.array_ops import expand_dims, squeeze
from xlapy.compat.v1.ops.space_batch_ops import batch_to_space_nd, space_to_batch_nd


def _static(v, what):
    c = constant_value(v) if hasattr(v, "op") else v
    if c is None:
        raise InvalidArgumentError(f"{what} must be known when the graph is built")
    return np.asarray(c, np.int64)


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None,
                                     name=None):
    """(paddings, crops) making input_shape + paddings divisible by block_shape."""
    shp = _static(input_shape, "input_shape").reshape(-1)
    blk = _static(block_shape, "block_shape").reshape(-1)
    base = np.zeros((len(blk), 2), np.int64) if base_paddings is None else \
        _static(base_paddings, "base_paddings").reshape(-1, 2)
    full = shp + base[:, 0] + base[:, 1]
    extra = (blk - full % blk) % blk
    pads = np.stack([base[:, 0], base[:, 1] + extra], 1).astype(np.int32)
    crops = np.stack([np.zeros_like(extra), extra], 1).astype(np.int32)
    return tensor(pads), tensor(crops)


def with_space_to_batch(input, dilation_rate, padding, op, filter_shape=None,
                        spatial_dims=None, data_format=None):
    x = tensor(input)
    rate = _static(dilation_rate, "dilation_rate").reshape(-1)
    k = len(rate)
    if spatial_dims is None:
        spatial_dims = list(range(1, k + 1)) if data_format is None or \
            not str(data_format).startswith("NC") else list(range(2, k + 2))
    spatial_dims = list(spatial_dims)
    if spatial_dims != list(range(spatial_dims[0], spatial_dims[0] + k)) or \
            spatial_dims[0] != 1:
        raise InvalidArgumentError("with_space_to_batch: only spatial dimensions 1..N "
                                   "(channels last) are supported here")
    if np.any(rate < 1):
        raise InvalidArgumentError(f"dilation_rate must be positive, got {rate.tolist()}")
    if np.all(rate == 1):
        return op(x, k, padding)
    pad = padding.upper() if isinstance(padding, str) else padding
    if pad == "SAME":
        if filter_shape is None:
            raise InvalidArgumentError("filter_shape must be specified for SAME padding")
        fs = _static(filter_shape, "filter_shape").reshape(-1)[:k]
        extra = fs + (fs - 1) * (rate - 1) - 1
        base = np.stack([extra // 2, extra - extra // 2], 1)
    elif pad == "VALID":
        base = np.zeros((k, 2), np.int64)
    else:
        raise InvalidArgumentError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    dims = x.shape.dims
    if dims is None or any(d is None for d in dims[1:k + 1]):
        raise InvalidArgumentError(f"with_space_to_batch: the spatial dimensions must be known, "
                                   f"got {x.shape.tf_str()}")
    pads, crops = required_space_to_batch_paddings(dims[1:k + 1], rate, base)
    blk = rate.astype(np.int32).tolist()
    converted = space_to_batch_nd(x, blk, pads)
    return batch_to_space_nd(op(converted, k, "VALID"), blk, crops)


def pool(input, window_shape, pooling_type, padding, dilation_rate=None, strides=None,
         name=None, data_format=None, dilations=None):
    """N-D (1 to 3 spatial dimensions) max or average pooling, dilated through
    with_space_to_batch; strides and dilation may not both exceed 1."""
    from xlapy.compat.v1.ops.pool_ops import avg_pool, avg_pool3d, max_pool, max_pool3d
    x = tensor(input)
    window = [int(w) for w in np.reshape(window_shape, [-1])]
    k = len(window)
    if k not in (1, 2, 3):
        raise InvalidArgumentError(f"pool: 1 to 3 spatial dimensions, got {k}")
    if data_format is not None and str(data_format).startswith("NC"):
        raise InvalidArgumentError("pool: only channels-last data formats are supported here")
    rate = dilation_rate if dilation_rate is not None else dilations
    rate = [1] * k if rate is None else [int(r) for r in np.reshape(rate, [-1])]
    strides = [1] * k if strides is None else [int(s) for s in np.reshape(strides, [-1])]
    if len(rate) != k or len(strides) != k:
        raise InvalidArgumentError("pool: dilation_rate and strides need one entry per "
                                   "spatial dimension")
    if any(r > 1 for r in rate) and any(s > 1 for s in strides):
        raise InvalidArgumentError("pool: strides > 1 not supported in conjunction with "
                                   "dilation_rate > 1")
    ptype = pooling_type.upper()
    if ptype not in ("MAX", "AVG"):
        raise InvalidArgumentError(f"pooling_type must be 'MAX' or 'AVG', got {pooling_type!r}")
    with get_default_graph().name_scope(name or f"{ptype.lower()}_pool"):
        one_d = k == 1
        if one_d:  # as TF: a 2-D pool over [batch, 1, width, channels]
            x = expand_dims(x, 1)
            window, strides, rate = [1] + window, [1] + strides, [1] + rate
        n = len(window)
        fn = {("MAX", 2): max_pool, ("AVG", 2): avg_pool, ("MAX", 3): max_pool3d,
              ("AVG", 3): avg_pool3d}[(ptype, n)]

        def op(t, _, pad):
            return fn(t, [1] + window + [1], [1] + strides + [1], pad)
        out = with_space_to_batch(x, rate, padding, op, filter_shape=window)
        return squeeze(out, [1]) if one_d else out
