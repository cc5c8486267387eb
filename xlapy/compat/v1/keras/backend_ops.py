"""tf.keras.backend's tensor functions (TF 1.15 semantics) that custom losses, metrics and
layers use: reductions, elementwise math, shapes, dot / batch_dot, activations, the
crossentropies, variables and placeholders, random tensors, switch / in_train_phase and
K.function. Re-exported by keras/backend.py."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError

__all__ = [
    "epsilon", "set_epsilon", "floatx", "set_floatx", "cast_to_floatx", "image_data_format",
    "set_image_data_format", "int_shape", "ndim", "dtype", "shape", "count_params",
    "is_tensor", "is_keras_tensor", "reshape", "flatten", "batch_flatten", "transpose",
    "permute_dimensions", "expand_dims", "squeeze", "concatenate", "stack", "tile", "repeat",
    "repeat_elements", "gather", "one_hot", "mean", "sum", "max", "min", "prod", "var",
    "std", "any", "all", "cumsum", "square", "sqrt", "exp", "log", "abs", "pow", "sign",
    "round", "clip", "maximum", "minimum", "cast", "dot", "batch_dot", "argmax", "argmin",
    "equal", "not_equal", "greater", "greater_equal", "less", "less_equal", "l2_normalize",
    "sigmoid", "hard_sigmoid", "tanh", "softmax", "softplus", "softsign", "elu", "relu",
    "categorical_crossentropy", "sparse_categorical_crossentropy", "binary_crossentropy",
    "variable", "constant", "zeros", "ones", "eye", "zeros_like", "ones_like", "placeholder",
    "random_normal", "random_uniform", "truncated_normal", "random_binomial", "dropout",
    "gradients", "stop_gradient", "update", "update_add", "update_sub",
    "moving_average_update", "bias_add", "switch", "in_train_phase", "in_test_phase",
    "Function", "function"]

_FLOATX = ["float32"]
_EPSILON = [1e-7]
_IMAGE_DATA_FORMAT = ["channels_last"]


def _tf():
    import xlapy.compat.v1 as tf
    return tf


def epsilon() -> float:
    return _EPSILON[0]


def set_epsilon(value) -> None:
    _EPSILON[0] = float(value)


def floatx() -> str:
    return _FLOATX[0]


def set_floatx(value) -> None:
    if value not in ("float16", "float32", "float64"):
        raise InvalidArgumentError(f"Unknown floatx type: {value}")
    _FLOATX[0] = str(value)


def cast_to_floatx(x):
    return np.asarray(x, dtype=floatx())


def image_data_format() -> str:
    return _IMAGE_DATA_FORMAT[0]


def set_image_data_format(data_format) -> None:
    if data_format not in ("channels_last", "channels_first"):
        raise InvalidArgumentError(f"Unknown data_format: {data_format}")
    _IMAGE_DATA_FORMAT[0] = str(data_format)


def _t(x):
    return _tf().convert_to_tensor(x)


# ---- shapes ---------------------------------------------------------------------------------
def int_shape(x):
    """The static shape as a tuple (None for unknown sizes)."""
    if hasattr(x, "shape") and hasattr(x.shape, "as_list"):
        try:
            return tuple(x.shape.as_list())
        except (ValueError, InvalidArgumentError):
            return None
    return tuple(np.shape(x))


def ndim(x):
    s = int_shape(x)
    return None if s is None else len(s)


def dtype(x) -> str:
    return _t(x).dtype.name


def shape(x):
    return _tf().shape(x)


def count_params(x) -> int:
    return int(np.prod(int_shape(x)))


def is_tensor(x) -> bool:
    return isinstance(x, _tf().Tensor) or hasattr(x, "op")


is_keras_tensor = is_tensor


def reshape(x, shape_):
    return _tf().reshape(x, shape_)


def flatten(x):
    return _tf().reshape(x, [-1])


def batch_flatten(x):
    tf = _tf()
    s = int_shape(x)
    if s is not None and None not in s[1:]:
        return tf.reshape(x, [-1, int(np.prod(s[1:]))])
    return tf.reshape(x, tf.stack([tf.shape(x)[0], -1]))


def transpose(x):
    return _tf().transpose(x)


def permute_dimensions(x, pattern):
    return _tf().transpose(x, list(pattern))


def expand_dims(x, axis=-1):
    return _tf().expand_dims(x, axis)


def squeeze(x, axis):
    return _tf().squeeze(x, [axis])


def concatenate(tensors, axis=-1):
    tf = _tf()
    if axis < 0:
        r = ndim(tensors[0])
        axis = axis % r if r else 0
    return tf.concat(list(tensors), axis)


def stack(x, axis=0):
    return _tf().stack(list(x), axis=axis)


def tile(x, n):
    return _tf().tile(x, [n] if isinstance(n, int) else list(n))


def repeat(x, n):
    """[batch, dim] -> [batch, n, dim]."""
    tf = _tf()
    return tf.tile(tf.expand_dims(x, 1), [1, n, 1])


def repeat_elements(x, rep, axis):
    tf = _tf()
    s = int_shape(x)
    parts = tf.split(x, s[axis], axis=axis)
    return tf.concat([p for p in parts for _ in range(rep)], axis)


def gather(reference, indices):
    return _tf().gather(reference, indices)


def one_hot(indices, num_classes):
    return _tf().one_hot(indices, depth=num_classes, axis=-1)


# ---- math -----------------------------------------------------------------------------------
def _bool_to_float(x):
    tf = _tf()
    x = _t(x)
    return tf.cast(x, floatx()) if x.dtype == tf.bool else x


def mean(x, axis=None, keepdims=False):
    return _tf().reduce_mean(_bool_to_float(x), axis=axis, keepdims=keepdims)


def sum(x, axis=None, keepdims=False):
    return _tf().reduce_sum(x, axis=axis, keepdims=keepdims)


def max(x, axis=None, keepdims=False):
    return _tf().reduce_max(x, axis=axis, keepdims=keepdims)


def min(x, axis=None, keepdims=False):
    return _tf().reduce_min(x, axis=axis, keepdims=keepdims)


def prod(x, axis=None, keepdims=False):
    return _tf().reduce_prod(x, axis=axis, keepdims=keepdims)


def var(x, axis=None, keepdims=False):
    tf = _tf()
    x = _bool_to_float(x)
    m = tf.reduce_mean(x, axis=axis, keepdims=True)
    return tf.reduce_mean(tf.square(x - m), axis=axis, keepdims=keepdims)


def std(x, axis=None, keepdims=False):
    return _tf().sqrt(var(x, axis, keepdims))


def any(x, axis=None, keepdims=False):
    tf = _tf()
    return tf.reduce_any(tf.cast(x, tf.bool), axis=axis, keepdims=keepdims)


def all(x, axis=None, keepdims=False):
    tf = _tf()
    return tf.reduce_all(tf.cast(x, tf.bool), axis=axis, keepdims=keepdims)


def cumsum(x, axis=0):
    return _tf().cumsum(x, axis=axis)


def square(x):
    return _tf().square(x)


def sqrt(x):
    """sqrt of x clipped at 0 (as Keras)."""
    tf = _tf()
    x = _t(x)
    return tf.sqrt(tf.clip_by_value(x, np.asarray(0, x.dtype.as_numpy_dtype),
                                    np.asarray(np.inf, x.dtype.as_numpy_dtype)))


def exp(x):
    return _tf().exp(x)


def log(x):
    return _tf().log(x)


def abs(x):
    return _tf().abs(x)


def pow(x, a):
    return _tf().pow(x, a)


def sign(x):
    return _tf().sign(x)


def round(x):
    return _tf().round(x)


def clip(x, min_value, max_value):
    """x clipped to [min_value, max_value] (None: unbounded; max below min: min)."""
    tf = _tf()
    x = _t(x)
    if min_value is None:
        min_value = -np.inf
    if max_value is None:
        max_value = np.inf
    if isinstance(max_value, (int, float)) and isinstance(min_value, (int, float)) and \
            max_value < min_value:
        max_value = min_value
    dt = x.dtype.as_numpy_dtype
    return tf.clip_by_value(x, np.asarray(min_value, dt), np.asarray(max_value, dt))


def maximum(x, y):
    return _tf().maximum(x, y)


def minimum(x, y):
    return _tf().minimum(x, y)


def cast(x, dtype_):
    return _tf().cast(x, dtype_)


def dot(x, y):
    """Keras' dot: matmul for 2-D; otherwise x's last axis against y's second-to-last
    ((2, 3) . (4, 3, 5) -> (2, 4, 5))."""
    tf = _tf()
    x, y = _t(x), _t(y)
    xr, yr = x.shape.ndims, y.shape.ndims
    if xr == 2 and yr == 2:
        return tf.matmul(x, y)
    if yr == 1:
        return tf.tensordot(x, y, [[xr - 1], [0]])
    return tf.tensordot(x, y, [[xr - 1], [yr - 2]])


def batch_dot(x, y, axes=None):
    """Keras 2.2's batch_dot: per-example dot over `axes` (default: x's last, y's
    second-to-last); a 1-D result becomes [batch, 1]."""
    tf = _tf()
    x, y = _t(x), _t(y)
    if isinstance(axes, int):
        axes = (axes, axes)
    xr, yr = x.shape.ndims, y.shape.ndims
    if axes is None:
        axes = [xr - 1, yr - 2] if yr > 1 else [xr - 1, yr - 1]
    axes = [a % r for a, r in zip(axes, (xr, yr))]
    diff = 0
    if xr > yr:
        diff = xr - yr
        y = tf.reshape(y, tf.concat([tf.shape(y), [1] * diff], 0))
    elif yr > xr:
        diff = yr - xr
        x = tf.reshape(x, tf.concat([tf.shape(x), [1] * diff], 0))
    if xr == 2 and yr == 2:
        if axes[0] == axes[1]:
            out = tf.reduce_sum(tf.multiply(x, y), axes[0])
        else:
            out = tf.reduce_sum(tf.multiply(tf.transpose(x, [1, 0]), y), axes[1])
    else:
        nx = ny = xr if xr > yr else yr
        adj_x = axes[0] != nx - 1
        adj_y = axes[1] == ny - 1
        out = tf.matmul(x, y, adjoint_a=adj_x, adjoint_b=adj_y)
    if diff:
        idx = xr + yr - 3 if xr > yr else xr - 1
        out = tf.squeeze(out, list(range(idx, idx + diff)))
    if out.shape.ndims == 1:
        out = tf.expand_dims(out, 1)
    return out


def argmax(x, axis=-1):
    return _tf().argmax(x, axis)


def argmin(x, axis=-1):
    return _tf().argmin(x, axis)


def equal(x, y):
    return _tf().equal(x, y)


def not_equal(x, y):
    return _tf().not_equal(x, y)


def greater(x, y):
    return _tf().greater(x, y)


def greater_equal(x, y):
    return _tf().greater_equal(x, y)


def less(x, y):
    return _tf().less(x, y)


def less_equal(x, y):
    return _tf().less_equal(x, y)


def l2_normalize(x, axis=None):
    return _tf().nn.l2_normalize(x, axis)


# ---- activations and losses -----------------------------------------------------------------
def sigmoid(x):
    return _tf().sigmoid(x)


def hard_sigmoid(x):
    from xlapy.compat.v1.keras.activations import hard_sigmoid as hs
    return hs(x)


def tanh(x):
    return _tf().tanh(x)


def softmax(x, axis=-1):
    return _tf().nn.softmax(x, axis=axis)


def softplus(x):
    return _tf().nn.softplus(x)


def softsign(x):
    return _tf().nn.softsign(x)


def elu(x, alpha=1.0):
    tf = _tf()
    res = tf.nn.elu(x)
    return res if alpha == 1 else tf.where(tf.greater(x, np.float32(0)), res,
                                           np.float32(alpha) * res)


def relu(x, alpha=0.0, max_value=None, threshold=0):
    """Keras' relu: x above threshold, alpha * (x - threshold) below, capped at
    max_value."""
    tf = _tf()
    x = _t(x)
    dt = x.dtype.as_numpy_dtype
    if alpha == 0 and threshold == 0 and max_value is None:
        return tf.nn.relu(x)
    neg = None
    if alpha != 0:
        neg = tf.nn.relu(-x + np.asarray(threshold, dt)) if threshold != 0 else tf.nn.relu(-x)
    if threshold != 0:
        x = x * tf.cast(tf.greater(x, np.asarray(threshold, dt)), x.dtype)
    else:
        x = tf.nn.relu(x)
    if max_value is not None:
        x = tf.clip_by_value(x, np.asarray(0, dt), np.asarray(max_value, dt))
    if neg is not None:
        x = x - np.asarray(alpha, dt) * neg
    return x


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    tf = _tf()
    if from_logits:
        return tf.nn.softmax_cross_entropy_with_logits_v2(labels=target, logits=output,
                                                          axis=axis)
    output = output / tf.reduce_sum(output, axis, keepdims=True)
    output = clip(output, epsilon(), 1.0 - epsilon())
    return -tf.reduce_sum(target * tf.log(output), axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    tf = _tf()
    output = _t(output)
    if not from_logits:
        output = tf.log(clip(output, epsilon(), 1.0 - epsilon()))
    n = output.shape.dims[-1]
    labels = tf.cast(tf.reshape(target, [-1]), tf.int64)
    res = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=tf.reshape(output, [-1, int(n)]))
    r = output.shape.ndims
    if r is not None and r >= 3:
        return tf.reshape(res, tf.shape(output)[:-1])
    return res


def binary_crossentropy(target, output, from_logits=False):
    """Elementwise (Keras' losses.binary_crossentropy takes the mean over the last axis)."""
    tf = _tf()
    if not from_logits:
        output = clip(output, epsilon(), 1.0 - epsilon())
        output = tf.log(output / (np.float32(1) - output))
    return tf.nn.sigmoid_cross_entropy_with_logits(labels=target, logits=output)


# ---- variables, placeholders, random --------------------------------------------------------
def variable(value, dtype=None, name=None, constraint=None):
    from xlapy.compat.v1.variables import Variable
    v = np.asarray(value, dtype or floatx())
    return Variable(v, name=name or "Variable")


def constant(value, dtype=None, shape=None, name=None):
    return _tf().constant(value, dtype=dtype or floatx(), shape=shape, name=name or "Const")


def zeros(shape_, dtype=None, name=None):
    return variable(np.zeros(shape_, dtype or floatx()), dtype, name)


def ones(shape_, dtype=None, name=None):
    return variable(np.ones(shape_, dtype or floatx()), dtype, name)


def eye(size, dtype=None, name=None):
    return variable(np.eye(size, dtype=dtype or floatx()), dtype, name)


def zeros_like(x, dtype=None, name=None):
    return _tf().zeros_like(x, dtype=dtype, name=name)


def ones_like(x, dtype=None, name=None):
    return _tf().ones_like(x, dtype=dtype, name=name)


def placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None):
    if sparse:
        from xlapy.compat.v1.errors import UnimplementedError
        raise UnimplementedError("K.placeholder(sparse=True) is not supported by xlapy's Keras")
    if shape is None and ndim is not None:
        shape = (None,) * ndim
    return _tf().placeholder(dtype or floatx(), shape=shape, name=name)


def random_normal(shape_, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return _tf().random_normal(shape_, mean, stddev, dtype=dtype or floatx(), seed=seed)


def random_uniform(shape_, minval=0.0, maxval=1.0, dtype=None, seed=None):
    return _tf().random_uniform(shape_, minval, maxval, dtype=dtype or floatx(), seed=seed)


def truncated_normal(shape_, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return _tf().truncated_normal(shape_, mean, stddev, dtype=dtype or floatx(), seed=seed)


def random_binomial(shape_, p=0.0, dtype=None, seed=None):
    tf = _tf()
    return tf.where(tf.random_uniform(shape_, dtype=dtype or floatx(), seed=seed) <= p,
                    tf.ones(shape_, dtype=dtype or floatx()),
                    tf.zeros(shape_, dtype=dtype or floatx()))


def dropout(x, level, noise_shape=None, seed=None):
    """Inverted dropout of rate `level` (always: not gated by the learning phase)."""
    return _tf().nn.dropout(x, rate=level, noise_shape=noise_shape, seed=seed)


def gradients(loss, variables):
    return _tf().gradients(loss, variables)


def stop_gradient(variables):
    tf = _tf()
    if isinstance(variables, (list, tuple)):
        return [tf.stop_gradient(v) for v in variables]
    return tf.stop_gradient(variables)


def update(x, new_x):
    return _tf().assign(x, new_x)


def update_add(x, increment):
    return _tf().assign_add(x, increment)


def update_sub(x, decrement):
    return _tf().assign_sub(x, decrement)


def moving_average_update(x, value, momentum):
    tf = _tf()
    return tf.assign(x, x * np.float32(momentum) + value * np.float32(1 - momentum))


def bias_add(x, bias, data_format=None):
    fmt = "NCHW" if (data_format or image_data_format()) == "channels_first" else "NHWC"
    return _tf().nn.bias_add(x, bias, data_format=fmt)


# ---- control --------------------------------------------------------------------------------
def switch(condition, then_expression, else_expression):
    """then if condition else else: a scalar condition (bool) picks one of the two (which
    may be callables); a tensor condition picks elementwise."""
    tf = _tf()
    cond = _t(condition)
    if cond.dtype != tf.bool:
        cond = tf.cast(cond, tf.bool)
    if cond.shape.ndims == 0:
        a = then_expression if callable(then_expression) else (lambda: then_expression)
        b = else_expression if callable(else_expression) else (lambda: else_expression)
        return tf.cond(cond, a, b)
    a = then_expression() if callable(then_expression) else then_expression
    b = else_expression() if callable(else_expression) else else_expression
    a, b = _t(a), _t(b)
    cr, er = cond.shape.ndims, a.shape.ndims
    if cr is not None and er is not None and cr < er:
        for _ in range(er - cr):
            cond = tf.expand_dims(cond, -1)
        cond = tf.logical_and(cond, tf.ones_like(a, dtype=tf.bool))
    return tf.where(cond, a, b)


def in_train_phase(x, alt, training=None):
    """x while training (the learning phase, or `training`), alt otherwise."""
    from xlapy.compat.v1.keras.backend import learning_phase
    if training is None:
        training = learning_phase()
    if training is True or (isinstance(training, int) and training == 1):
        return x() if callable(x) else x
    if training is False or (isinstance(training, int) and training == 0):
        return alt() if callable(alt) else alt
    return switch(training, x, alt)


def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training=training)


class Function:
    """K.function(inputs, outputs, updates): called on a list of arrays (one per input;
    the learning phase may be one of the inputs), returns the outputs' values."""

    def __init__(self, inputs, outputs, updates=None, name=None, **kwargs):
        self.inputs = list(inputs)
        self.outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        self._single = not isinstance(outputs, (list, tuple))
        self.updates = list(updates or [])

    def __call__(self, inputs):
        from xlapy.compat.v1.keras.backend import get_session
        if not isinstance(inputs, (list, tuple)):
            inputs = [inputs]
        if len(inputs) != len(self.inputs):
            raise InvalidArgumentError(f"K.function: {len(self.inputs)} inputs expected, got "
                                       f"{len(inputs)}")
        feed = dict(zip(self.inputs, inputs))
        fetches = self.outputs + self.updates
        out = get_session().run(fetches, feed)[:len(self.outputs)]
        return out[0] if self._single else list(out)


def function(inputs, outputs, updates=None, name=None, **kwargs):
    return Function(inputs, outputs, updates=updates, name=name, **kwargs)
