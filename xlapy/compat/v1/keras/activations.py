"""tf.keras.activations (TF 1.15): the activation functions Keras layers take by name or as
callables, and get / serialize / deserialize. get(None) is `linear`; a string is looked up
in the custom objects (keras.utils.get_custom_objects) and then among these functions. TF
1.15 has no `swish` here (it came with TF 2.2)."""

from __future__ import annotations

from xlapy.compat.v1 import framework as _fw
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.keras import backend_ops as _K
from xlapy.compat.v1.keras import utils as _utils
from xlapy.compat.v1.ops import activation_ops as _a
from xlapy.compat.v1.ops import clip_ops as _clip
from xlapy.compat.v1.ops import math_ops as _M
from xlapy.compat.v1.ops import nn_ops as _n


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x), axis), along `axis` (the last by default); x of rank >= 2."""
    x = _fw.convert_to_tensor(x)
    if x.shape.ndims is not None and x.shape.ndims < 2:
        raise InvalidArgumentError(f"Cannot apply softmax to a tensor that is 1D. Received "
                                   f"input: {x}")
    return _n.softmax(x, axis=axis)


def elu(x, alpha=1.0):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    return _K.elu(_fw.convert_to_tensor(x), alpha)


def selu(x):
    """scale * elu(x, alpha), alpha = 1.6732632, scale = 1.0507010 (Klambauer et al.)."""
    return _a.selu(x)


def softplus(x):
    """log(exp(x) + 1)."""
    return _a.softplus(x)


def softsign(x):
    """x / (abs(x) + 1)."""
    return _a.softsign(x)


def relu(x, alpha=0.0, max_value=None, threshold=0):
    """max(x, 0) by default; with the options: x for threshold < x < max_value,
    max_value from there on, alpha * (x - threshold) at or below the threshold."""
    return _K.relu(_fw.convert_to_tensor(x), alpha, max_value, threshold)


def tanh(x):
    return _n.tanh(x)


def sigmoid(x):
    return _n.sigmoid(x)


def exponential(x):
    """exp(x)."""
    return _M.exp(x)


def hard_sigmoid(x):
    """Keras' piecewise-linear sigmoid: clip(0.2 * x + 0.5, 0, 1)."""
    x = _fw.convert_to_tensor(x)
    dt = x.dtype.as_numpy_dtype
    return _clip.clip_by_value(_M.add(_M.multiply(x, dt(0.2)), dt(0.5)), dt(0), dt(1))


def linear(x):
    """The identity (no activation): returns x itself."""
    return x


def _table():
    """name -> function, the names get / deserialize know (relu6: xlapy also takes
    tf.nn's relu6 by name)."""
    return {"relu": relu, "softmax": softmax, "sigmoid": sigmoid, "tanh": tanh, "elu": elu,
            "selu": selu, "softplus": softplus, "softsign": softsign,
            "hard_sigmoid": hard_sigmoid, "exponential": exponential, "linear": linear,
            "relu6": _n.relu6}


def serialize(activation):
    """The activation's name (a function), or {'class_name', 'config'} for an object with a
    get_config (an advanced-activation layer)."""
    if hasattr(activation, "get_config") and not isinstance(activation, type):
        return {"class_name": type(activation).__name__, "config": activation.get_config()}
    for name, f in _table().items():
        if f is activation:
            return name
    name = getattr(activation, "__name__", None)
    if name is None or name == "<lambda>":
        raise InvalidArgumentError(f"Cannot serialize the activation {activation!r}: it has "
                                   f"no name")
    return name


def deserialize(name, custom_objects=None):
    """The activation function called `name`: from custom_objects, the global custom
    objects, then this module's functions."""
    if not isinstance(name, str):
        raise InvalidArgumentError(f"Could not interpret activation function identifier: "
                                   f"{name!r}")
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if name in _utils.get_custom_objects():
        return _utils.get_custom_objects()[name]
    t = _table()
    if name not in t:
        raise InvalidArgumentError(f"Unknown activation function: {name} (known: "
                                   f"{', '.join(sorted(t))})")
    return t[name]


def get(identifier):
    """None -> linear; a name -> deserialize(name); a callable as it is."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        return deserialize(identifier)
    if callable(identifier):
        return identifier
    raise InvalidArgumentError(f"Could not interpret activation function identifier: "
                               f"{identifier!r}")


__all__ = ["softmax", "elu", "selu", "softplus", "softsign", "relu", "tanh", "sigmoid",
           "exponential", "hard_sigmoid", "linear", "serialize", "deserialize", "get"]
