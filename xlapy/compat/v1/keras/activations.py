"""tf.keras.activations: activation functions by name (Keras' strings) or as callables."""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError


def _table():
    from xlapy.compat.v1.ops import activation_ops as a
    from xlapy.compat.v1.ops import nn_ops as n
    return {"relu": n.relu, "softmax": n.softmax, "sigmoid": n.sigmoid, "tanh": n.tanh,
            "elu": a.elu, "selu": a.selu, "softplus": a.softplus, "relu6": n.relu6,
            "hard_sigmoid": hard_sigmoid, "softsign": a.softsign, "exponential": _exp,
            "linear": None}


def hard_sigmoid(x):
    """Keras' piecewise-linear sigmoid: clip(0.2 * x + 0.5, 0, 1)."""
    import numpy as np
    from xlapy.compat.v1.ops.clip_ops import clip_by_value
    from xlapy.compat.v1.ops.math_ops import add, multiply
    return clip_by_value(add(multiply(x, np.float32(0.2)), np.float32(0.5)), np.float32(0),
                         np.float32(1))


def _exp(x):
    from xlapy.compat.v1.ops.math_ops import exp
    return exp(x)


def get(identifier):
    if identifier is None or callable(identifier):
        return identifier
    t = _table()
    if identifier not in t:
        raise InvalidArgumentError(f"Unknown activation function: {identifier!r} (known: "
                                   f"{', '.join(sorted(t))})")
    return t[identifier]
