"""Whole-model saving for Sequential models: Model.save / load_model in Keras' HDF5 layout
(through h5py, the `keras` extra: root attributes model_config and training_config as
JSON, the group model_weights with layer_names and, per layer, weight_names and the
arrays, the group optimizer_weights), to_json / model_from_json, get_config /
from_config and clone_model. Functional and subclassed models save their weights only
(save_weights, load_weights)."""

from __future__ import annotations

import json

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError
from xlapy.compat.v1.keras.serialization import (deserialize_layer, model_from_config,
                                                 model_from_json)

KERAS_VERSION = "2.2.4-tf"


def _h5py():
    try:
        import h5py
    except ImportError:
        raise UnimplementedError("Model.save / load_model need h5py (pip install "
                                 "'xlapy[keras]'); save_weights / load_weights do not") from None
    return h5py


def _sequential_only(model, what):
    from xlapy.compat.v1.keras.models import Sequential
    if not isinstance(model, Sequential):
        raise UnimplementedError(f"{what}: xlapy's Keras serializes Sequential models only; "
                                 f"use save_weights / load_weights for {type(model).__name__}")


def _optimizer_config(opt):
    cfg = getattr(opt, "_keras_config", None)
    if cfg is None:
        raise UnimplementedError(f"Cannot save the optimizer {type(opt).__name__}: use one of "
                                 f"tf.keras.optimizers (or include_optimizer=False)")
    return cfg


def _optimizer_weights(opt) -> list:
    """The optimizer's variables: learning rate, step counter, then its slots and
    accumulators in creation order."""
    out = [opt.lr] + ([opt.iterations] if getattr(opt, "iterations", None) is not None
                      else [])
    return out + [v for v in (opt.variables() if hasattr(opt, "variables") else [])
                  if all(v is not o for o in out)]


class SavingMethods:
    """Model's get_config, from_config, to_json and save (a mixin)."""

    def get_config(self) -> dict:
        _sequential_only(self, "get_config")
        layers = [{"class_name": type(layer).__name__, "config": layer.get_config()}
                  for layer in self.layers]
        if layers and self._inputs is not None and \
                "batch_input_shape" not in layers[0]["config"]:   # (built from data)
            layers[0]["config"]["batch_input_shape"] = self._inputs.shape.as_list()
        return {"name": self.name, "layers": layers}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from xlapy.compat.v1.keras.models import Sequential
        if not issubclass(cls, Sequential):
            raise UnimplementedError("Model.from_config: only Sequential models are supported "
                                     "by xlapy's Keras")
        layers = config["layers"] if isinstance(config, dict) else config
        name = config.get("name") if isinstance(config, dict) else None
        return cls([deserialize_layer(c, custom_objects) for c in layers], name=name)

    def to_json(self, **kwargs) -> str:
        return json.dumps({"class_name": type(self).__name__, "config": self.get_config(),
                           "keras_version": KERAS_VERSION, "backend": "tensorflow"},
                          **kwargs)

    def to_yaml(self, **kwargs):
        raise UnimplementedError("to_yaml is not supported by xlapy's Keras (use to_json)")

    def save(self, filepath, overwrite=True, include_optimizer=True, save_format=None):
        save_model(self, filepath, overwrite, include_optimizer)


def save_model(model, filepath, overwrite=True, include_optimizer=True):
    """The model's config, weights and (compiled, include_optimizer) training config and
    optimizer state in an HDF5 file, in Keras' layout."""
    import os
    _sequential_only(model, "save")
    h5py = _h5py()
    if not overwrite and os.path.exists(filepath):
        raise InvalidArgumentError(f"save: {filepath} exists and overwrite=False")
    model._ensure_built()
    config = {"class_name": type(model).__name__, "config": model.get_config()}
    with h5py.File(filepath, "w") as f:
        f.attrs["keras_version"] = KERAS_VERSION.encode()
        f.attrs["backend"] = b"tensorflow"
        f.attrs["model_config"] = json.dumps(config).encode()
        g = f.create_group("model_weights")
        layers = model.layers
        g.attrs["layer_names"] = _names([layer.name for layer in layers])
        g.attrs["backend"] = b"tensorflow"
        g.attrs["keras_version"] = KERAS_VERSION.encode()
        for layer in layers:
            lg = g.create_group(layer.name)
            ws = layer.weights
            names = [w.name for w in ws]
            lg.attrs["weight_names"] = _names(names)
            for n, v in zip(names, layer.get_weights()):
                lg.create_dataset(n, data=v)
        args = getattr(model, "_compile_args", None)
        if include_optimizer and args is not None and model.optimizer is not None:
            loss = args["loss"]
            metrics = [m if isinstance(m, str) else getattr(m, "__name__", str(m))
                       for m in args["metrics"]]
            f.attrs["training_config"] = json.dumps({
                "optimizer_config": _optimizer_config(model.optimizer),
                "loss": loss if isinstance(loss, str) else loss.__name__,
                "metrics": metrics, "sample_weight_mode": None,
                "loss_weights": None}).encode()
            ow = _optimizer_weights(model.optimizer)
            og = f.create_group("optimizer_weights")
            og.attrs["weight_names"] = _names([w.name for w in ow])
            for w, v in zip(ow, model._session().run(ow)):
                og.create_dataset(w.name, data=v)


def _names(names):
    """Names as Keras stores them: a fixed-length bytes array."""
    return np.asarray([n.encode() for n in names], dtype="S")


def _attr_str(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def load_model(filepath, custom_objects=None, compile=True):
    """A model saved by Model.save (or Keras 2.2's / tf.keras 1.x's HDF5 Sequential
    models): rebuilt from model_config, weights set layer by layer in order, compiled
    with the saved optimizer (and its state), loss and metrics when compile."""
    from xlapy.compat.v1.keras import optimizers
    h5py = _h5py()
    with h5py.File(filepath, "r") as f:
        if "model_config" not in f.attrs:
            raise InvalidArgumentError(f"No model found in config file: {filepath}")
        model = model_from_config(json.loads(_attr_str(f.attrs["model_config"])),
                                  custom_objects)
        g = f["model_weights"] if "model_weights" in f else f
        names = [_attr_str(n) for n in g.attrs["layer_names"]]
        with_weights = [n for n in names
                        if len(g[n].attrs.get("weight_names", [])) > 0]
        layers = [layer for layer in model.layers if layer.weights]
        if len(with_weights) != len(layers):
            raise InvalidArgumentError(f"You are trying to load a weight file containing "
                                       f"{len(with_weights)} layers into a model with "
                                       f"{len(layers)} layers.")
        for layer, n in zip(layers, with_weights):
            lg = g[n]
            layer.set_weights([np.asarray(lg[_attr_str(w)])
                               for w in lg.attrs["weight_names"]])
        tc = f.attrs.get("training_config")
        if compile and tc is not None:
            tc = json.loads(_attr_str(tc))
            opt = optimizers.deserialize(tc["optimizer_config"])
            from xlapy.compat.v1.keras import losses as L
            loss = tc["loss"]
            if isinstance(loss, str) and custom_objects and loss in custom_objects:
                loss = custom_objects[loss]
            metrics = [(custom_objects or {}).get(m, m) for m in tc.get("metrics") or []]
            L.get(loss)
            model.compile(opt, loss, metrics)
            if "optimizer_weights" in f:
                og = f["optimizer_weights"]
                vals = [np.asarray(og[_attr_str(w)]) for w in og.attrs["weight_names"]]
                ws = _optimizer_weights(model.optimizer)
                s = model._session()
                if len(vals) == len(ws) and all(tuple(w.shape.as_list()) == v.shape
                                                for w, v in zip(ws, vals)):
                    for w, v in zip(ws, vals):
                        w.load(v, s)
                else:
                    import warnings
                    warnings.warn("Error in loading the saved optimizer state: the model "
                                  "was compiled again with a fresh optimizer", stacklevel=2)
    return model


def clone_model(model, input_tensors=None):
    """A new Sequential model of the same config (new weights)."""
    if input_tensors is not None:
        raise UnimplementedError("clone_model(input_tensors=...) is not supported by xlapy's "
                                 "Keras")
    _sequential_only(model, "clone_model")
    return type(model).from_config(model.get_config())


__all__ = ["load_model", "save_model", "model_from_json", "model_from_config", "clone_model"]
