"""tf.keras.constraints: max_norm, non_neg, unit_norm, min_max_norm. A layer's
kernel_constraint / bias_constraint (and add_weight(constraint=)) is applied to the
variable after each optimizer update of fit / train_on_batch, as Keras does (an assign
that runs after the training op)."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError


def _norms(w, axis):
    from xlapy.compat.v1.ops.math_ops import reduce_sum, sqrt, square
    return sqrt(reduce_sum(square(w), axis=axis, keepdims=True))


def _eps():
    from xlapy.compat.v1.keras.backend import epsilon
    return np.float32(epsilon())


class Constraint:
    def __call__(self, w):
        return w

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class MaxNorm(Constraint):
    """w * clip(norm, 0, max_value) / (eps + norm), norms along axis."""

    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, w):
        from xlapy.compat.v1.ops.clip_ops import clip_by_value
        n = _norms(w, self.axis)
        desired = clip_by_value(n, np.float32(0), np.float32(self.max_value))
        return w * (desired / (_eps() + n))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    def __call__(self, w):
        from xlapy.compat.v1.ops.math_ops import cast, greater_equal
        return w * cast(greater_equal(w, np.float32(0)), w.dtype)


class UnitNorm(Constraint):
    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        return w / (_eps() + _norms(w, self.axis))

    def get_config(self):
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        from xlapy.compat.v1.ops.clip_ops import clip_by_value
        n = _norms(w, self.axis)
        desired = np.float32(self.rate) * clip_by_value(
            n, np.float32(self.min_value), np.float32(self.max_value)) + \
            np.float32(1 - self.rate) * n
        return w * (desired / (_eps() + n))

    def get_config(self):
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate,
                "axis": self.axis}


max_norm, non_neg, unit_norm, min_max_norm = MaxNorm, NonNeg, UnitNorm, MinMaxNorm
maxnorm, nonneg, unitnorm = MaxNorm, NonNeg, UnitNorm
_BY_NAME = {"MaxNorm": MaxNorm, "NonNeg": NonNeg, "UnitNorm": UnitNorm,
            "MinMaxNorm": MinMaxNorm, "max_norm": MaxNorm, "non_neg": NonNeg,
            "unit_norm": UnitNorm, "min_max_norm": MinMaxNorm}


def serialize(constraint):
    if constraint is None:
        return None
    if isinstance(constraint, Constraint):
        return {"class_name": type(constraint).__name__, "config": constraint.get_config()}
    return getattr(constraint, "__name__", None)


def deserialize(config, custom_objects=None):
    from xlapy.compat.v1.keras.utils import get_custom_objects
    table = {**_BY_NAME, **get_custom_objects(), **(custom_objects or {})}
    name = config["class_name"]
    if name not in table:
        raise InvalidArgumentError(f"Unknown constraint: {name}")
    return table[name].from_config(config.get("config", {}))


def get(identifier):
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise InvalidArgumentError(f"Unknown constraint: {identifier!r}")
        return _BY_NAME[identifier]()
    if callable(identifier):
        return identifier
    raise InvalidArgumentError(f"Could not interpret constraint identifier: {identifier!r}")
