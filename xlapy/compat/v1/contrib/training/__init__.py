"""tf.contrib.training: HParams, the hyperparameter bag of TF 1.x model scripts (and the
bucketing input queues bucket / bucket_by_sequence_length, ops/queue_more_bucket.py).

    hparams = tf.contrib.training.HParams(learning_rate=0.1, layers=[64, 32], use_bn=False)
    hparams.parse("learning_rate=0.05,layers=[128,64]")   # command-line overrides
    hparams.learning_rate, hparams.values(), hparams.to_json()

Each hyperparameter keeps the type it was declared with: parse converts the override to it
(an int given to a float parameter becomes a float; a float to an int parameter, or a
list to a scalar, is an error, as TF's).
"""

from __future__ import annotations

import json
import re

from xlapy.compat.v1.errors import InvalidArgumentError

_ASSIGN = re.compile(r"\s*([A-Za-z_]\w*)\s*(\[\s*(\d+)\s*\])?\s*=\s*"
                     r"((\[[^\]]*\])|(\"[^\"]*\")|('[^']*')|[^,\[]*)\s*(,|$)")


def _cast(name, value, kind):
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
            return value.lower() in ("true", "1")
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise InvalidArgumentError(f"Could not parse hparam '{name}' of type 'bool' with "
                                   f"value {value!r}")
    try:
        if kind is int:
            if isinstance(value, float) and not value.is_integer():
                raise ValueError
            if isinstance(value, str) and not re.fullmatch(r"\s*[-+]?\d+\s*", value):
                raise ValueError
            return int(value)
        if kind is float:
            if isinstance(value, bool):
                raise ValueError
            return float(value)
        if kind is str:
            return value if isinstance(value, str) else str(value)
    except ValueError:
        raise InvalidArgumentError(f"Could not parse hparam '{name}' of type "
                                   f"'{kind.__name__}' with value {value!r}") from None
    return value


class HParams:
    def __init__(self, hparam_def=None, model_structure=None, **kwargs):
        if hparam_def is not None:
            raise InvalidArgumentError("HParams: hparam_def (a protobuf) is not supported")
        self._types: dict = {}
        self._model_structure = model_structure
        for k, v in kwargs.items():
            self.add_hparam(k, v)

    def add_hparam(self, name, value):
        if getattr(self, name, None) is not None or name in self._types:
            raise InvalidArgumentError(f"Hyperparameter name is reserved: {name}")
        if isinstance(value, (list, tuple)):
            if not value:
                raise InvalidArgumentError(f"Multi-valued hyperparameters cannot be empty: "
                                           f"{name}")
            self._types[name] = (type(value[0]), True)
        else:
            self._types[name] = (type(value), False)
        setattr(self, name, list(value) if isinstance(value, (list, tuple)) else value)

    def set_hparam(self, name, value):
        if name not in self._types:
            raise InvalidArgumentError(f"Unknown hyperparameter {name!r}")
        kind, is_list = self._types[name]
        if isinstance(value, (list, tuple)):
            if not is_list:
                raise InvalidArgumentError(f"Must not pass a list for single-valued parameter:"
                                           f" {name}")
            setattr(self, name, [_cast(name, v, kind) for v in value])
        else:
            if is_list:
                raise InvalidArgumentError(f"Must pass a list for multi-valued parameter: "
                                           f"{name}.")
            setattr(self, name, _cast(name, value, kind) if value is not None else None)

    def del_hparam(self, name):
        if name in self._types:
            delattr(self, name)
            del self._types[name]

    def parse(self, values: str):
        """Overrides from a comma-separated "name=value" string (lists as [a,b])."""
        pos = 0
        values = values or ""
        parsed = {}
        while pos < len(values):
            m = _ASSIGN.match(values, pos)
            if not m or m.end() == pos:
                raise InvalidArgumentError(f"Malformed hyperparameter value: "
                                           f"{values[pos:]!r}")
            pos = m.end()
            name, index, raw = m.group(1), m.group(3), m.group(4).strip()
            if name not in self._types:
                raise InvalidArgumentError(f"Unknown hyperparameter type for {name}")
            if raw.startswith("["):
                items = [s.strip() for s in raw[1:-1].split(",") if s.strip()]
                parsed[name] = [self._unquote(s) for s in items]
            elif index is not None:
                current = list(parsed.get(name, getattr(self, name)))
                i = int(index)
                while len(current) <= i:
                    current.append(current[-1] if current else None)
                current[i] = self._unquote(raw)
                parsed[name] = current
            else:
                parsed[name] = self._unquote(raw)
        return self.override_from_dict(parsed)

    @staticmethod
    def _unquote(s):
        if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'":
            return s[1:-1]
        return s

    def override_from_dict(self, values_dict):
        for k, v in values_dict.items():
            self.set_hparam(k, v)
        return self

    def set_model_structure(self, model_structure):
        self._model_structure = model_structure

    def get_model_structure(self):
        return self._model_structure

    def values(self) -> dict:
        return {k: getattr(self, k) for k in self._types}

    def to_json(self, indent=None, separators=None, sort_keys=False):
        return json.dumps(self.values(), indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def parse_json(self, values_json):
        return self.override_from_dict(json.loads(values_json))

    def get(self, key, default=None):
        if key not in self._types:
            return default
        return getattr(self, key)

    def __contains__(self, key):
        return key in self._types

    def __str__(self):
        return str(sorted(self.values().items()))

    def __repr__(self):
        return f"HParams({self.values()!r})"


from xlapy.compat.v1.contrib.training.train_ops import (  # noqa: E402
    add_gradients_summaries, clip_gradient_norms, create_train_op, multiply_gradients)
from xlapy.compat.v1.ops.queue_more_bucket import bucket, bucket_by_sequence_length  # noqa: E402
