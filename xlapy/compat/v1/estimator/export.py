"""tf.estimator.export: what Estimator.export_savedmodel serves, as TF 1.x's export.py and
export_output.py.

    def serving_input_receiver_fn():
        examples = tf.placeholder(tf.string, [None], name="input_example_tensor")
        features = tf.parse_example(examples, feature_spec)
        return tf.estimator.export.ServingInputReceiver(features, {"examples": examples})

or the two builders: build_parsing_serving_input_receiver_fn(feature_spec) (the above) and
build_raw_serving_input_receiver_fn({"x": tf.placeholder(tf.float32, [None, 4])}) (a
placeholder per feature, fed directly).

A model_fn's EstimatorSpec(export_outputs={key: output}) names the SavedModel's
signatures: PredictOutput(dict or tensor) gives a predict signature over every receiver
tensor; ClassificationOutput(scores, classes) and RegressionOutput(value) the classify and
regress signatures, which take one string tensor of serialized Examples (with other
receivers they are left out, as TF logs and leaves them out). Without export_outputs the
signature serving_default predicts the spec's predictions.
"""

from __future__ import annotations

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor
from xlapy.compat.v1.tensor_shape import as_shape

_DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
_SINGLE_FEATURE_DEFAULT_NAME = "feature"
_SINGLE_RECEIVER_DEFAULT_NAME = "input"

__all__ = ["ServingInputReceiver", "TensorServingInputReceiver", "PredictOutput",
           "ClassificationOutput", "RegressionOutput", "ExportOutput",
           "build_raw_serving_input_receiver_fn", "build_parsing_serving_input_receiver_fn"]


def _as_tensor(t):
    return t._to_tensor() if hasattr(t, "_to_tensor") else t


def _tensor_dict(value, single_name, what):
    if value is None:
        raise InvalidArgumentError(f"{what} must be defined.")
    if not isinstance(value, dict):
        value = {single_name: value}
    out = {}
    for k, v in value.items():
        if not isinstance(k, str):
            raise InvalidArgumentError(f"{what} keys must be strings: {k!r}.")
        v = _as_tensor(v)
        from xlapy.compat.v1.sparse_tensor import SparseTensor
        if not isinstance(v, (Tensor, SparseTensor)):
            raise InvalidArgumentError(f"{what} must be a Tensor, SparseTensor, or a dict of "
                                       f"them; {k!r} is {v!r}.")
        out[k] = v
    return out


class ServingInputReceiver:
    """features: what the model_fn receives; receiver_tensors: what serving feeds (the
    signatures' inputs)."""

    def __init__(self, features, receiver_tensors, receiver_tensors_alternatives=None):
        self.features = _tensor_dict(features, _SINGLE_FEATURE_DEFAULT_NAME, "features")
        self.receiver_tensors = _tensor_dict(receiver_tensors, _SINGLE_RECEIVER_DEFAULT_NAME,
                                             "receiver_tensors")
        alts = {}
        for name, rt in (receiver_tensors_alternatives or {}).items():
            alts[name] = _tensor_dict(rt, _SINGLE_RECEIVER_DEFAULT_NAME,
                                      f"receiver_tensors_alternatives[{name!r}]")
        self.receiver_tensors_alternatives = alts


class TensorServingInputReceiver(ServingInputReceiver):
    """As ServingInputReceiver, but the model_fn receives `features` as one tensor."""

    def __init__(self, features, receiver_tensors, receiver_tensors_alternatives=None):
        if isinstance(features, dict):
            raise InvalidTypeError("TensorServingInputReceiver: features must be a Tensor")
        super().__init__(features, receiver_tensors, receiver_tensors_alternatives)
        self.features = self.features[_SINGLE_FEATURE_DEFAULT_NAME]


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A serving_input_receiver_fn feeding one placeholder per feature, shaped as the given
    tensors with the first dimension default_batch_size (None: any)."""
    from xlapy.compat.v1.ops.array_ops import placeholder
    single = not isinstance(features, dict)
    specs = {}
    for k, t in ({"feature": features} if single else features).items():
        t = _as_tensor(t)
        if not hasattr(t, "dtype") or not hasattr(t, "shape"):
            raise InvalidTypeError(f"build_raw_serving_input_receiver_fn: feature {k!r} is "
                                   f"{t!r}, not a Tensor")
        shape = as_shape(t.shape)
        dims = None if shape.ndims is None else shape.as_list()
        dt = dtypes.as_dtype(t.dtype)
        specs[k] = (dt, [default_batch_size] + dims[1:] if dims else None)

    def serving_input_receiver_fn():
        receivers = {k: placeholder(dt, shape, name=k) for k, (dt, shape) in specs.items()}
        if single:
            return TensorServingInputReceiver(receivers["feature"], receivers)
        return ServingInputReceiver(dict(receivers), receivers)
    return serving_input_receiver_fn


def build_parsing_serving_input_receiver_fn(feature_spec, default_batch_size=None):
    """A serving_input_receiver_fn taking serialized tf.train.Examples ('examples', the
    placeholder input_example_tensor) parsed by tf.parse_example(feature_spec)."""
    from xlapy.compat.v1.ops.array_ops import placeholder
    from xlapy.compat.v1.ops.parsing_ops import parse_example

    def serving_input_receiver_fn():
        examples = placeholder(dtypes.string, [default_batch_size],
                               name="input_example_tensor")
        return ServingInputReceiver(parse_example(examples, feature_spec),
                                    {"examples": examples})
    return serving_input_receiver_fn


# ---- export outputs ----------------------------------------------------------------------

class ExportOutput:
    def as_signature_def(self, receiver_tensors):
        raise NotImplementedError


def _one_string_input(receiver_tensors, what):
    if len(receiver_tensors) != 1:
        raise InvalidArgumentError(f"{what} input must be a single string Tensor; got "
                                   f"{receiver_tensors}")
    (_, examples), = receiver_tensors.items()
    if examples.dtype != dtypes.string:
        raise InvalidArgumentError(f"{what} input must be a single string Tensor; got "
                                   f"{receiver_tensors}")
    return examples


class ClassificationOutput(ExportOutput):
    def __init__(self, scores=None, classes=None):
        scores, classes = _as_tensor(scores), _as_tensor(classes)
        if scores is not None and not (isinstance(scores, Tensor) and
                                       scores.dtype == dtypes.float32):
            raise InvalidArgumentError(f"Classification scores must be a float32 Tensor; got "
                                       f"{scores}")
        if classes is not None and not (isinstance(classes, Tensor) and
                                        classes.dtype == dtypes.string):
            raise InvalidArgumentError(f"Classification classes must be a string Tensor; got "
                                       f"{classes}")
        if scores is None and classes is None:
            raise InvalidArgumentError("At least one of scores and classes must be set.")
        self.scores, self.classes = scores, classes

    def as_signature_def(self, receiver_tensors):
        from xlapy.compat.v1.saved_model.signature_def_utils import \
            classification_signature_def
        examples = _one_string_input(receiver_tensors, "Classification")
        return classification_signature_def(examples, self.classes, self.scores)


class RegressionOutput(ExportOutput):
    def __init__(self, value):
        value = _as_tensor(value)
        if not (isinstance(value, Tensor) and value.dtype.is_floating):
            raise InvalidArgumentError(f"Regression output value must be a float32 Tensor; "
                                       f"got {value}")
        self.value = value

    def as_signature_def(self, receiver_tensors):
        from xlapy.compat.v1.saved_model.signature_def_utils import regression_signature_def
        examples = _one_string_input(receiver_tensors, "Regression")
        return regression_signature_def(examples, self.value)


class PredictOutput(ExportOutput):
    def __init__(self, outputs):
        outs = outputs if isinstance(outputs, dict) else {"output": outputs}
        self.outputs = {}
        for k, v in outs.items():
            v = _as_tensor(v)
            if not isinstance(k, str) or not isinstance(v, Tensor):
                raise InvalidArgumentError(f"Prediction output key must be a string and value "
                                           f"must be a Tensor; got {k!r}: {v!r}")
            self.outputs[k] = v

    def as_signature_def(self, receiver_tensors):
        from xlapy.compat.v1.saved_model.signature_def_utils import predict_signature_def
        return predict_signature_def(receiver_tensors, self.outputs)
