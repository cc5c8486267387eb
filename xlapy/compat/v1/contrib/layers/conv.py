"""tf.contrib.layers' convolution, pooling, batch norm and dropout (TF 1.x's slim-style
layers): conv2d, conv2d_transpose, max_pool2d, avg_pool2d, batch_norm, dropout, with
contrib's argument names and defaults (activation_fn relu, padding "SAME", variables
`weights`/`biases` under scope "Conv", batch norm without gamma) so that checkpoints of
such models keep their variable names."""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import GraphKeys, get_default_graph
from xlapy.compat.v1.ops._common import tensor

_RELU = object()  # contrib's default activation_fn: tf.nn.relu


def _pair(v, what):
    if isinstance(v, int):
        return [v, v]
    v = list(v)
    if len(v) != 2:
        raise InvalidArgumentError(f"{what} must be an int or a pair, got {v!r}")
    return [int(a) for a in v]


def _nhwc(data_format):
    if data_format not in (None, "NHWC", "NCHW"):
        raise InvalidArgumentError(f"data_format must be NHWC or NCHW, got {data_format!r}")
    return data_format or "NHWC"


def _finish(out, normalizer_fn, normalizer_params, b_init, make_bias, activation_fn,
            outputs_collections):
    from xlapy.compat.v1.ops.nn_ops import bias_add, relu
    if normalizer_fn is not None:
        out = normalizer_fn(out, **(normalizer_params or {}))
    elif b_init is not None:
        out = bias_add(out, make_bias(), data_format=make_bias.data_format)
    act = relu if activation_fn is _RELU else activation_fn
    if act is not None:
        out = act(out)
    for c in outputs_collections or ():
        get_default_graph().add_to_collection(c, out)
    return out


def _conv(kind, inputs, num_outputs, kernel_size, stride, padding, data_format, rate,
          activation_fn, normalizer_fn, normalizer_params, weights_initializer,
          weights_regularizer, biases_initializer, biases_regularizer, reuse,
          variables_collections, outputs_collections, trainable, scope):
    from xlapy.compat.v1.contrib.layers import _collections, xavier_initializer
    from xlapy.compat.v1.ops import conv_ops
    from xlapy.compat.v1.ops.array_ops import shape, stack
    from xlapy.compat.v1.variables import get_variable, variable_scope, zeros_initializer
    x = tensor(inputs)
    fmt = _nhwc(data_format)
    if x.shape.ndims != 4:
        raise InvalidArgumentError(f"contrib.layers.{kind}: inputs must have rank 4, got "
                                   f"{x.shape.tf_str()}")
    c_in = x.shape.dims[3 if fmt == "NHWC" else 1]
    if c_in is None:
        raise InvalidArgumentError(f"contrib.layers.{kind}: the channel dimension of the "
                                   f"inputs must be known, got {x.shape.tf_str()}")
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(stride, "stride")
    strides = [1, sh, sw, 1] if fmt == "NHWC" else [1, 1, sh, sw]
    b_init = zeros_initializer() if biases_initializer is _RELU else biases_initializer
    n_out = int(num_outputs)
    default = "Conv" if kind == "conv2d" else "Conv2d_transpose"
    with variable_scope(scope, default_name=default, reuse=reuse):
        wshape = [kh, kw, c_in, n_out] if kind == "conv2d" else [kh, kw, n_out, c_in]
        w = get_variable("weights", wshape, dtype=x.dtype,
                         initializer=weights_initializer or xavier_initializer(),
                         regularizer=weights_regularizer, trainable=trainable,
                         collections=_collections(variables_collections, "weights"))
        if kind == "conv2d":
            r = _pair(rate, "rate")
            dil = [1, r[0], r[1], 1] if fmt == "NHWC" else [1, 1, r[0], r[1]]
            out = conv_ops.conv2d(x, w, strides, padding.upper(), data_format=fmt,
                                  dilations=dil)
        else:
            hw = (1, 2) if fmt == "NHWC" else (2, 3)
            sizes = []
            for ax, k, s in zip(hw, (kh, kw), (sh, sw)):
                d = x.shape.dims[ax]
                if d is None:
                    raise InvalidArgumentError("contrib.layers.conv2d_transpose needs the "
                                               "spatial size of its input")
                sizes.append(d * s if padding.upper() == "SAME" else d * s + max(k - s, 0))
            b = x.shape.dims[0] if x.shape.dims[0] is not None else shape(x)[0]
            dims = [b, *sizes, n_out] if fmt == "NHWC" else [b, n_out, *sizes]
            out = conv_ops.conv2d_transpose(x, w, stack(dims) if not isinstance(b, int)
                                            else dims, strides, padding.upper(),
                                            data_format=fmt)

        def make_bias():
            return get_variable("biases", [n_out], dtype=x.dtype, initializer=b_init,
                                regularizer=biases_regularizer, trainable=trainable,
                                collections=_collections(variables_collections, "biases"))
        make_bias.data_format = fmt
        return _finish(out, normalizer_fn, normalizer_params, b_init, make_bias,
                       activation_fn, outputs_collections)


def conv2d(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None,
           rate=1, activation_fn=_RELU, normalizer_fn=None, normalizer_params=None,
           weights_initializer=None, weights_regularizer=None, biases_initializer=_RELU,
           biases_regularizer=None, reuse=None, variables_collections=None,
           outputs_collections=None, trainable=True, scope=None):
    """activation_fn(conv(inputs, weights) + biases), contrib's defaults: relu, "SAME",
    xavier weights, zero biases (biases_initializer=None: none; a normalizer_fn replaces
    them)."""
    return _conv("conv2d", inputs, num_outputs, kernel_size, stride, padding, data_format,
                 rate, activation_fn, normalizer_fn, normalizer_params, weights_initializer,
                 weights_regularizer, biases_initializer, biases_regularizer, reuse,
                 variables_collections, outputs_collections, trainable, scope)


def conv2d_transpose(inputs, num_outputs, kernel_size, stride=1, padding="SAME",
                     data_format="NHWC", activation_fn=_RELU, normalizer_fn=None,
                     normalizer_params=None, weights_initializer=None,
                     weights_regularizer=None, biases_initializer=_RELU,
                     biases_regularizer=None, reuse=None, variables_collections=None,
                     outputs_collections=None, trainable=True, scope=None):
    return _conv("conv2d_transpose", inputs, num_outputs, kernel_size, stride, padding,
                 data_format, 1, activation_fn, normalizer_fn, normalizer_params,
                 weights_initializer, weights_regularizer, biases_initializer,
                 biases_regularizer, reuse, variables_collections, outputs_collections,
                 trainable, scope)


def _pool(op, inputs, kernel_size, stride, padding, data_format, outputs_collections,
          scope, default):
    fmt = _nhwc(data_format)
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(stride, "stride")
    ks = [1, kh, kw, 1] if fmt == "NHWC" else [1, 1, kh, kw]
    st = [1, sh, sw, 1] if fmt == "NHWC" else [1, 1, sh, sw]
    with get_default_graph().name_scope(scope or default):
        out = op(tensor(inputs), ks, st, padding.upper(), data_format=fmt)
    for c in outputs_collections or ():
        get_default_graph().add_to_collection(c, out)
    return out


def max_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC",
               outputs_collections=None, scope=None):
    from xlapy.compat.v1.ops.pool_ops import max_pool2d as op
    return _pool(op, inputs, kernel_size, stride, padding, data_format, outputs_collections,
                 scope, "MaxPool2D")


def avg_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC",
               outputs_collections=None, scope=None):
    from xlapy.compat.v1.ops.pool_ops import avg_pool2d as op
    return _pool(op, inputs, kernel_size, stride, padding, data_format, outputs_collections,
                 scope, "AvgPool2D")


def dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True,
            outputs_collections=None, scope=None, seed=None):
    """inputs with each element kept with probability keep_prob (scaled by 1/keep_prob) when
    is_training, else inputs unchanged; is_training may be a bool tensor."""
    from xlapy.compat.v1.ops.array_ops import identity
    from xlapy.compat.v1.ops.cond_ops import cond
    from xlapy.compat.v1.ops.nn_ops import dropout as nn_dropout
    x = tensor(inputs)
    with get_default_graph().name_scope(scope or "Dropout"):
        if isinstance(is_training, bool):
            out = nn_dropout(x, keep_prob=keep_prob, noise_shape=noise_shape, seed=seed) \
                if is_training else identity(x)
        else:
            out = cond(tensor(is_training),
                       lambda: nn_dropout(x, keep_prob=keep_prob, noise_shape=noise_shape,
                                          seed=seed),
                       lambda: identity(x))
    for c in outputs_collections or ():
        get_default_graph().add_to_collection(c, out)
    return out


def batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001,
               activation_fn=None, param_initializers=None, param_regularizers=None,
               updates_collections=GraphKeys.UPDATE_OPS, is_training=True, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               batch_weights=None, fused=None, data_format="NHWC", zero_debias_moving_mean=False,
               scope=None, renorm=False, renorm_clipping=None, renorm_decay=0.99,
               adjustment=None):
    """contrib's batch norm: tf.layers.batch_normalization under scope "BatchNorm" (variables
    BatchNorm/beta, gamma when scale, moving_mean, moving_variance), contrib's defaults
    (decay 0.999, no gamma); updates_collections=None runs the moving-average updates
    with the output instead of leaving them in UPDATE_OPS."""
    from xlapy.compat.v1.layers.normalization import batch_normalization
    from xlapy.compat.v1.ops.array_ops import identity
    from xlapy.compat.v1.framework import control_dependencies
    if batch_weights is not None or renorm:
        raise InvalidArgumentError("contrib.layers.batch_norm: batch_weights and renorm are "
                                   "not supported by xlapy")
    p = param_initializers or {}
    r = param_regularizers or {}
    graph = get_default_graph()
    before = list(graph.get_collection(GraphKeys.UPDATE_OPS))
    out = batch_normalization(
        inputs, axis=1 if data_format == "NCHW" else -1, momentum=decay, epsilon=epsilon,
        center=center, scale=scale, beta_initializer=p.get("beta"),
        gamma_initializer=p.get("gamma"), moving_mean_initializer=p.get("moving_mean"),
        moving_variance_initializer=p.get("moving_variance"),
        beta_regularizer=r.get("beta"), gamma_regularizer=r.get("gamma"),
        training=is_training, trainable=trainable, name=scope or "BatchNorm", reuse=reuse)
    ref = graph.get_collection_ref(GraphKeys.UPDATE_OPS)
    new = [u for u in ref if u not in before]
    if updates_collections is None and new:
        for u in new:
            ref.remove(u)
        with control_dependencies(new):
            out = identity(out)
    elif updates_collections not in (None, GraphKeys.UPDATE_OPS):
        for u in new:
            ref.remove(u)
            graph.add_to_collection(updates_collections, u)
    if activation_fn is not None:
        out = activation_fn(out)
    for c in outputs_collections or ():
        graph.add_to_collection(c, out)
    return out
