"""tf.keras.activations: activation functions by name (Keras' strings) or as callables."""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError


def _table():
    from xlapy.compat.v1.ops import activation_ops as a
    from xlapy.compat.v1.ops import nn_ops as n
    return {"relu": n.relu, "softmax": n.softmax, "sigmoid": n.sigmoid, "tanh": n.tanh,
            "elu": a.elu, "selu": a.selu, "softplus": a.softplus, "relu6": n.relu6,
            "linear": None}


def get(identifier):
    if identifier is None or callable(identifier):
        return identifier
    t = _table()
    if identifier not in t:
        raise InvalidArgumentError(f"Unknown activation function: {identifier!r} (known: "
                                   f"{', '.join(sorted(t))})")
    return t[identifier]
