"""Keras configs: a layer's get_config (its constructor's arguments, bound with their
defaults; activations by name, initializers / regularizers / constraints as
{'class_name', 'config'}), from_config, and the Sequential model's config that to_json,
model_from_json, Model.save and load_model carry."""

from __future__ import annotations

import inspect
import json

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError


def _activation_name(fn):
    from xlapy.compat.v1.keras import activations
    for name, f in activations._table().items():
        if f is fn and f is not None:
            return name
    name = getattr(fn, "__name__", None)
    if name is None:
        raise UnimplementedError(f"Cannot serialize the activation {fn!r}")
    return name


def _serialize(key, v):
    from xlapy.compat.v1.keras import constraints, initializers, regularizers
    from xlapy.compat.v1.keras.layers import _Keras
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        return v.item()
    if isinstance(v, (list, tuple)):
        return [_serialize(key, x) for x in v]
    if isinstance(v, dict):
        return {k: _serialize(k, x) for k, x in v.items()}
    if isinstance(v, _Keras):
        return {"class_name": type(v).__name__, "config": v.get_config()}
    if isinstance(v, initializers._Keras):
        return initializers.serialize(v)
    if isinstance(v, regularizers.Regularizer):
        return regularizers.serialize(v)
    if isinstance(v, constraints.Constraint):
        return constraints.serialize(v)
    if key.endswith("activation") and callable(v):
        return _activation_name(v)
    if key.endswith("initializer"):
        from xlapy.compat.v1 import init_ops, variables
        table = {variables.glorot_uniform_initializer: "glorot_uniform",
                 variables.zeros_initializer: "zeros", variables.ones_initializer: "ones",
                 init_ops.orthogonal_initializer: "orthogonal",
                 init_ops.glorot_normal_initializer: "glorot_normal"}
        if type(v) in table:
            return table[type(v)]
    if hasattr(v, "get_config") and callable(v.get_config):
        return {"class_name": type(v).__name__, "config": v.get_config()}
    if callable(v) and getattr(v, "__name__", "<lambda>") != "<lambda>":
        return v.__name__
    raise UnimplementedError(f"Cannot serialize {key}={v!r}: xlapy's Keras writes configs "
                             f"of named activations, Keras initializers, regularizers and "
                             f"constraints (not lambdas)")


def layer_config(layer) -> dict:
    args, kwargs = getattr(layer, "_init_args", ((), {}))
    sig = inspect.signature(type(layer).__init__)
    bound = sig.bind_partial(layer, *args, **kwargs)
    bound.apply_defaults()
    cfg: dict = {}
    for name, value in list(bound.arguments.items())[1:]:
        kind = sig.parameters[name].kind
        if kind == inspect.Parameter.VAR_KEYWORD:
            cfg.update(value)
        elif kind != inspect.Parameter.VAR_POSITIONAL:
            cfg[name] = value
    for k in ("input_shape", "input_dim", "weights"):
        cfg.pop(k, None)
    cfg["name"] = layer.name
    cfg["trainable"] = bool(layer.trainable)
    if getattr(layer, "_batch_input_shape", None) is not None:
        cfg["batch_input_shape"] = list(layer._batch_input_shape)
    cfg.setdefault("dtype", "float32")
    return {k: _serialize(k, v) for k, v in cfg.items()}


def _objects(custom_objects):
    from xlapy.compat.v1.keras import layers
    from xlapy.compat.v1.keras.utils import get_custom_objects
    table = {k: v for k, v in vars(layers).items() if isinstance(v, type)}
    table.update(get_custom_objects())
    table.update(custom_objects or {})
    return table


def _deserialize(key, v, custom_objects):
    from xlapy.compat.v1.keras import constraints, initializers, regularizers
    if isinstance(v, dict) and "class_name" in v:
        if key.endswith("initializer"):
            return initializers.deserialize(v, custom_objects)
        if key.endswith("regularizer"):
            return regularizers.deserialize(v, custom_objects)
        if key.endswith("constraint"):
            return constraints.deserialize(v, custom_objects)
        return deserialize_layer(v, custom_objects)
    if isinstance(v, str) and key.endswith("activation"):
        objs = _objects(custom_objects)
        return objs.get(v, v)
    if isinstance(v, str) and key.endswith(("initializer", "regularizer", "constraint")):
        return (custom_objects or {}).get(v, v)
    return v


def _name_in_use(name) -> bool:
    from xlapy.compat.v1.variables import global_variables
    return any(v.op.name.startswith(name + "/") for v in global_variables())


def layer_from_config(cls, config, custom_objects=None):
    cfg = {k: _deserialize(k, v, custom_objects) for k, v in dict(config).items()}
    if "batch_input_shape" in cfg and cfg["batch_input_shape"] is not None:
        cfg["batch_input_shape"] = tuple(cfg["batch_input_shape"])
    if cfg.get("name") and _name_in_use(cfg["name"]):
        cfg.pop("name")      # (the graph has that layer already: a new, unique name)
    if cfg.get("dtype") == "float32":
        cfg.pop("dtype")
    return cls(**cfg)


def deserialize_layer(config, custom_objects=None):
    table = _objects(custom_objects)
    name = config.get("class_name")
    cls = table.get(name)
    if cls is None:
        raise InvalidArgumentError(f"Unknown layer: {name}. Pass it in custom_objects (or a "
                                   f"CustomObjectScope)")
    if hasattr(cls, "from_config"):
        try:
            return cls.from_config(config["config"], custom_objects)
        except TypeError:
            return cls.from_config(config["config"])
    return cls(**config["config"])


def model_from_config(config, custom_objects=None):
    from xlapy.compat.v1.keras.models import Sequential
    name = config.get("class_name")
    if name == "Sequential":
        return Sequential.from_config(config["config"], custom_objects)
    table = _objects(custom_objects)
    if name in table and hasattr(table[name], "from_config"):
        return table[name].from_config(config["config"])
    raise UnimplementedError(f"model_from_config: {name} models are not supported by xlapy's "
                             f"Keras (Sequential models are)")


def model_from_json(json_string, custom_objects=None):
    return model_from_config(json.loads(json_string), custom_objects)
