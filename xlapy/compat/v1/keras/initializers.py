"""tf.keras.initializers (TF 1.15): Keras' initializer classes with Keras' defaults
(RandomNormal / RandomUniform / TruncatedNormal at 0.05) over TF's initializers, each with
get_config for model_from_json; get takes a name ('glorot_uniform', 'he_normal', ...), a
{'class_name', 'config'} dict, an instance or a callable."""

from __future__ import annotations

from xlapy.compat.v1 import init_ops as _io
from xlapy.compat.v1 import variables as _v
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.variables import Initializer


class _Keras(Initializer):
    """Calls the TF initializer self._make(); remembers its arguments for get_config."""

    def __init__(self, **config):
        super().__init__()
        self._config = config

    def __call__(self, shape, dtype=None, partition_info=None):
        return self._make()(shape, dtype=dtype, partition_info=partition_info)

    def get_config(self) -> dict:
        return dict(self._config)

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("dtype", None)
        return cls(**config)


class Zeros(_Keras):
    def __init__(self):
        super().__init__()

    def _make(self):
        return _v.zeros_initializer()


class Ones(_Keras):
    def __init__(self):
        super().__init__()

    def _make(self):
        return _v.ones_initializer()


class Constant(_Keras):
    def __init__(self, value=0):
        super().__init__(value=value)

    def _make(self):
        return _v.constant_initializer(self._config["value"])


class RandomNormal(_Keras):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(mean=mean, stddev=stddev, seed=seed)

    def _make(self):
        return _v.random_normal_initializer(**self._config)


class RandomUniform(_Keras):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(minval=minval, maxval=maxval, seed=seed)

    def _make(self):
        return _v.random_uniform_initializer(**self._config)


class TruncatedNormal(_Keras):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(mean=mean, stddev=stddev, seed=seed)

    def _make(self):
        return _v.truncated_normal_initializer(**self._config)


class VarianceScaling(_Keras):
    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        _io.variance_scaling_initializer(scale, mode, distribution, seed)   # (checks)
        super().__init__(scale=scale, mode=mode, distribution=distribution, seed=seed)

    def _make(self):
        return _io.variance_scaling_initializer(**self._config)


class Orthogonal(_Keras):
    def __init__(self, gain=1.0, seed=None):
        super().__init__(gain=gain, seed=seed)

    def _make(self):
        return _io.orthogonal_initializer(**self._config)


class Identity(_Keras):
    def __init__(self, gain=1.0):
        super().__init__(gain=gain)

    def _make(self):
        return _io.identity_initializer(**self._config)


def _scaling(name, scale, mode, distribution):
    def init(self, seed=None):
        VarianceScaling.__init__(self, scale, mode, distribution, seed)
        self._config = {"seed": seed}

    def make(self):
        return _io.variance_scaling_initializer(scale, mode, distribution,
                                                self._config["seed"])
    return type(name, (VarianceScaling,), {"__init__": init, "_make": make,
                                           "__module__": __name__,
                                           "__doc__": f"VarianceScaling({scale}, {mode!r}, "
                                                      f"{distribution!r})"})


GlorotUniform = _scaling("GlorotUniform", 1.0, "fan_avg", "uniform")
GlorotUniform._make = lambda self: _v.glorot_uniform_initializer(self._config["seed"])
GlorotNormal = _scaling("GlorotNormal", 1.0, "fan_avg", "truncated_normal")
HeNormal = _scaling("HeNormal", 2.0, "fan_in", "truncated_normal")
HeUniform = _scaling("HeUniform", 2.0, "fan_in", "uniform")
LecunNormal = _scaling("LecunNormal", 1.0, "fan_in", "truncated_normal")
LecunUniform = _scaling("LecunUniform", 1.0, "fan_in", "uniform")

zeros, ones, constant = Zeros, Ones, Constant
random_normal = normal = RandomNormal
random_uniform = uniform = RandomUniform
truncated_normal = TruncatedNormal
orthogonal, identity = Orthogonal, Identity
glorot_uniform, glorot_normal = GlorotUniform, GlorotNormal
he_normal, he_uniform = HeNormal, HeUniform
lecun_normal, lecun_uniform = LecunNormal, LecunUniform

_BY_NAME = {c.__name__: c for c in (
    Zeros, Ones, Constant, RandomNormal, RandomUniform, TruncatedNormal, VarianceScaling,
    Orthogonal, Identity, GlorotUniform, GlorotNormal, HeNormal, HeUniform, LecunNormal,
    LecunUniform)}
_BY_NAME.update(zeros=Zeros, ones=Ones, constant=Constant, random_normal=RandomNormal,
                normal=RandomNormal, random_uniform=RandomUniform, uniform=RandomUniform,
                truncated_normal=TruncatedNormal, orthogonal=Orthogonal, identity=Identity,
                glorot_uniform=GlorotUniform, glorot_normal=GlorotNormal, he_normal=HeNormal,
                he_uniform=HeUniform, lecun_normal=LecunNormal, lecun_uniform=LecunUniform,
                variance_scaling=VarianceScaling)


def serialize(initializer):
    if isinstance(initializer, _Keras):
        return {"class_name": type(initializer).__name__, "config": initializer.get_config()}
    return None


def deserialize(config, custom_objects=None):
    from xlapy.compat.v1.keras.utils import get_custom_objects
    name = config["class_name"]
    table = {**_BY_NAME, **get_custom_objects(), **(custom_objects or {})}
    if name not in table:
        raise InvalidArgumentError(f"Unknown initializer: {name}")
    cls = table[name]
    cfg = config.get("config", {})
    return cls.from_config(cfg) if hasattr(cls, "from_config") else cls(**cfg)


def get(identifier):
    if identifier is None or isinstance(identifier, Initializer):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        from xlapy.compat.v1.keras.utils import get_custom_objects
        c = get_custom_objects().get(identifier) or _BY_NAME.get(identifier)
        if c is None:
            raise InvalidArgumentError(f"Unknown initializer: {identifier!r} (known: "
                                       f"{', '.join(sorted(_BY_NAME))})")
        return c()
    if callable(identifier):
        return identifier
    raise InvalidArgumentError(f"Could not interpret initializer identifier: {identifier!r}")
