"""tf.keras.regularizers: L1L2 (l1, l2, l1_l2) - sum(l1 * |w|) + sum(l2 * w^2) - and get.
kernel_regularizer / bias_regularizer losses (and activity_regularizer's, divided by the
batch size as tf.keras 1.15) go into the REGULARIZATION_LOSSES collection and so into the
training loss that compile builds."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError


class Regularizer:
    def __call__(self, x):
        return 0.0

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class L1L2(Regularizer):
    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x):
        from xlapy.compat.v1.ops.math_ops import abs as abs_
        from xlapy.compat.v1.ops.math_ops import reduce_sum, square
        from xlapy.compat.v1.ops.array_ops import zeros
        out = None
        if self.l1:
            out = reduce_sum(abs_(x)) * np.float32(self.l1)
        if self.l2:
            t = reduce_sum(square(x)) * np.float32(self.l2)
            out = t if out is None else out + t
        return zeros([], x.dtype) if out is None else out

    def get_config(self) -> dict:
        return {"l1": self.l1, "l2": self.l2}


def l1(l=0.01):
    return L1L2(l1=l)


def l2(l=0.01):
    return L1L2(l2=l)


def l1_l2(l1=0.01, l2=0.01):
    return L1L2(l1=l1, l2=l2)


def serialize(regularizer):
    if regularizer is None:
        return None
    if isinstance(regularizer, Regularizer):
        return {"class_name": type(regularizer).__name__, "config": regularizer.get_config()}
    return getattr(regularizer, "__name__", None)


def deserialize(config, custom_objects=None):
    from xlapy.compat.v1.keras.utils import get_custom_objects
    table = {"L1L2": L1L2, "Regularizer": Regularizer, **get_custom_objects(),
             **(custom_objects or {})}
    name = config["class_name"]
    if name not in table:
        raise InvalidArgumentError(f"Unknown regularizer: {name}")
    cls = table[name]
    return cls.from_config(config.get("config", {}))


def get(identifier):
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        fn = {"l1": l1, "l2": l2, "l1_l2": l1_l2}.get(identifier)
        if fn is None:
            raise InvalidArgumentError(f"Unknown regularizer: {identifier!r} (known: l1, l2, "
                                       f"l1_l2)")
        return fn()
    if callable(identifier):
        return identifier
    raise InvalidArgumentError(f"Could not interpret regularizer identifier: {identifier!r}")
