"""tf.saved_model.signature_def_utils: SignatureDef protos."""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.proto.meta_graph_pb import SignatureDef
from xlapy.compat.v1.saved_model import signature_constants as sc
from xlapy.compat.v1.saved_model.utils import build_tensor_info

__all__ = ["build_signature_def", "classification_signature_def", "is_valid_signature",
           "predict_signature_def", "regression_signature_def"]


def build_signature_def(inputs=None, outputs=None, method_name=None) -> SignatureDef:
    s = SignatureDef(method_name=method_name or "")
    for k, v in (inputs or {}).items():
        s.inputs[k].CopyFrom(v)
    for k, v in (outputs or {}).items():
        s.outputs[k].CopyFrom(v)
    return s


def predict_signature_def(inputs, outputs) -> SignatureDef:
    if not inputs:
        raise InvalidArgumentError("Prediction inputs cannot be None or empty.")
    if not outputs:
        raise InvalidArgumentError("Prediction outputs cannot be None or empty.")
    return build_signature_def({k: build_tensor_info(t) for k, t in inputs.items()},
                               {k: build_tensor_info(t) for k, t in outputs.items()},
                               sc.PREDICT_METHOD_NAME)


def regression_signature_def(examples, predictions) -> SignatureDef:
    return build_signature_def({sc.REGRESS_INPUTS: build_tensor_info(examples)},
                               {sc.REGRESS_OUTPUTS: build_tensor_info(predictions)},
                               sc.REGRESS_METHOD_NAME)


def classification_signature_def(examples, classes, scores) -> SignatureDef:
    outs = {}
    if classes is not None:
        outs[sc.CLASSIFY_OUTPUT_CLASSES] = build_tensor_info(classes)
    if scores is not None:
        outs[sc.CLASSIFY_OUTPUT_SCORES] = build_tensor_info(scores)
    return build_signature_def({sc.CLASSIFY_INPUTS: build_tensor_info(examples)}, outs,
                               sc.CLASSIFY_METHOD_NAME)


def is_valid_signature(signature_def) -> bool:
    return bool(signature_def.method_name) and len(signature_def.outputs) > 0
