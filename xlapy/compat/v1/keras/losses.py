"""tf.keras.losses and metrics by name: per-example losses on a model's outputs (Keras'
crossentropies take probabilities, clipped to [eps, 1 - eps], as TF 1.x's Keras backend)."""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError


def _clipped(p):
    from xlapy.compat.v1.ops.clip_ops import clip_by_value
    from xlapy.compat.v1.keras.backend import epsilon
    return clip_by_value(p, epsilon(), 1.0 - epsilon())


def sparse_categorical_crossentropy(y_true, y_pred):
    from xlapy.compat.v1.ops.math_ops import cast, log
    from xlapy.compat.v1.ops.nn_ops import sparse_softmax_cross_entropy_with_logits
    from xlapy.compat.v1.ops.array_ops import reshape
    from xlapy.compat.v1 import dtypes
    labels = cast(reshape(y_true, [-1]), dtypes.int64)
    logits = log(_clipped(y_pred))
    if y_pred.shape.ndims is not None and y_pred.shape.ndims > 2:   # (per time step)
        logits = reshape(logits, [-1, y_pred.shape.dims[-1]])
    return sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)


def categorical_crossentropy(y_true, y_pred):
    from xlapy.compat.v1.ops.math_ops import log, multiply, negative, reduce_sum
    p = y_pred / reduce_sum(y_pred, axis=-1, keepdims=True)
    return negative(reduce_sum(multiply(y_true, log(_clipped(p))), axis=-1))


def binary_crossentropy(y_true, y_pred):
    from xlapy.compat.v1.ops.math_ops import log, reduce_mean
    p = _clipped(y_pred)
    return reduce_mean(-(y_true * log(p) + (1.0 - y_true) * log(1.0 - p)), axis=-1)


def mean_squared_error(y_true, y_pred):
    from xlapy.compat.v1.ops.math_ops import reduce_mean, square
    return reduce_mean(square(y_pred - y_true), axis=-1)


def mean_absolute_error(y_true, y_pred):
    from xlapy.compat.v1.ops.math_ops import abs as abs_, reduce_mean
    return reduce_mean(abs_(y_pred - y_true), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    from xlapy.compat.v1.ops.clip_ops import clip_by_value
    from xlapy.compat.v1.ops.math_ops import abs as abs_, reduce_mean
    from xlapy.compat.v1.keras.backend import epsilon
    import numpy as np
    d = abs_((y_true - y_pred) / clip_by_value(abs_(y_true), epsilon(), np.float32(np.inf)))
    return np.float32(100.0) * reduce_mean(d, axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    from xlapy.compat.v1.ops.clip_ops import clip_by_value
    from xlapy.compat.v1.ops.math_ops import log, reduce_mean, square
    from xlapy.compat.v1.keras.backend import epsilon
    import numpy as np
    big = np.float32(np.inf)
    a = log(clip_by_value(y_pred, epsilon(), big) + np.float32(1))
    b = log(clip_by_value(y_true, epsilon(), big) + np.float32(1))
    return reduce_mean(square(a - b), axis=-1)


def hinge(y_true, y_pred):
    from xlapy.compat.v1.ops.math_ops import maximum, reduce_mean
    import numpy as np
    return reduce_mean(maximum(np.float32(1) - y_true * y_pred, np.float32(0)), axis=-1)


def squared_hinge(y_true, y_pred):
    from xlapy.compat.v1.ops.math_ops import maximum, reduce_mean, square
    import numpy as np
    return reduce_mean(square(maximum(np.float32(1) - y_true * y_pred, np.float32(0))),
                       axis=-1)


def logcosh(y_true, y_pred):
    from xlapy.compat.v1.ops.activation_ops import softplus
    from xlapy.compat.v1.ops.math_ops import reduce_mean
    import numpy as np
    x = y_pred - y_true
    return reduce_mean(x + softplus(np.float32(-2) * x) - np.float32(np.log(2.0)), axis=-1)


def poisson(y_true, y_pred):
    from xlapy.compat.v1.ops.math_ops import log, reduce_mean
    from xlapy.compat.v1.keras.backend import epsilon
    return reduce_mean(y_pred - y_true * log(y_pred + epsilon()), axis=-1)


def kullback_leibler_divergence(y_true, y_pred):
    from xlapy.compat.v1.ops.math_ops import log, reduce_sum
    t, p = _clipped01(y_true), _clipped01(y_pred)
    return reduce_sum(t * log(t / p), axis=-1)


def _clipped01(p):
    import numpy as np
    from xlapy.compat.v1.ops.clip_ops import clip_by_value
    from xlapy.compat.v1.keras.backend import epsilon
    return clip_by_value(p, epsilon(), np.float32(1))


def cosine_proximity(y_true, y_pred):
    from xlapy.compat.v1.ops.math_ops import negative, reduce_sum
    from xlapy.compat.v1.ops.activation_ops import l2_normalize
    return negative(reduce_sum(l2_normalize(y_true, -1) * l2_normalize(y_pred, -1), axis=-1))


mse, mae = mean_squared_error, mean_absolute_error
mape, msle = mean_absolute_percentage_error, mean_squared_logarithmic_error
kld, cosine = kullback_leibler_divergence, cosine_proximity
MSE, MAE, MAPE, MSLE, KLD = mse, mae, mape, msle, kld
_BY_NAME = {"sparse_categorical_crossentropy": sparse_categorical_crossentropy,
            "categorical_crossentropy": categorical_crossentropy,
            "binary_crossentropy": binary_crossentropy, "mean_squared_error": mse,
            "mse": mse, "mean_absolute_error": mae, "mae": mae,
            "mean_absolute_percentage_error": mape, "mape": mape,
            "mean_squared_logarithmic_error": msle, "msle": msle, "hinge": hinge,
            "squared_hinge": squared_hinge, "logcosh": logcosh, "poisson": poisson,
            "kullback_leibler_divergence": kld, "kld": kld, "cosine_proximity": cosine,
            "cosine": cosine}


def get(identifier):
    if callable(identifier):
        return identifier
    from xlapy.compat.v1.keras.utils import get_custom_objects
    if identifier in get_custom_objects():
        return get_custom_objects()[identifier]
    if identifier not in _BY_NAME:
        raise InvalidArgumentError(f"Unknown loss function: {identifier!r} (known: "
                                   f"{', '.join(sorted(_BY_NAME))})")
    return _BY_NAME[identifier]


def accuracy_for(loss_fn, y_true, y_pred):
    """Keras' 'accuracy' for the loss: the class index for sparse crossentropy, the argmax
    of the targets for categorical, the rounded output for binary (and MSE)."""
    from xlapy.compat.v1 import dtypes
    from xlapy.compat.v1.ops.array_ops import reshape
    from xlapy.compat.v1.ops.math_ops import argmax, cast, equal, reduce_mean
    from xlapy.compat.v1.ops.special_math_ops import round as rnd
    if loss_fn is sparse_categorical_crossentropy:
        hit = equal(cast(reshape(y_true, [-1]), dtypes.int64),
                    reshape(argmax(y_pred, -1), [-1]))
    elif loss_fn is categorical_crossentropy:
        hit = equal(argmax(y_true, -1), argmax(y_pred, -1))
    else:
        hit = equal(y_true, rnd(y_pred))
    return reduce_mean(cast(hit, dtypes.float32))
