"""The summary ops: each computes a serialized `Summary` protobuf (a tf.string scalar).

    ScalarSummary     one simple_value
    HistogramSummary  a HistogramProto with TF's default buckets (encoders.histogram)
    ImageSummary      up to max_images PNG images, tagged <tag>/image or <tag>/image/<i>
    TensorSummaryV2   a string tensor for TensorBoard's text plugin (tf.summary.text)
    MergeSummary      the union of several serialized Summaries (duplicate tags refused)

They have no XLA lowering: under XLA they run in the executor on the values the compiled
clusters produce (summaries are strings, which XLA does not compute).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.summary import encoders
from xlapy.compat.v1.summary._tb import tb
from xlapy.compat.v1.tensor_shape import TensorShape


def _string_scalar(op):
    return [(dtypes.string, TensorShape([]))]


def _scalar_infer(op):
    x = op.inputs[0]
    if x.shape.ndims not in (None, 0):
        raise InvalidArgumentError(f"tags and values not the same shape: [] != "
                                   f"{x.shape.as_list()} (tag '{op.get_attr('tag')}', op "
                                   f"'{op.name}'); tf.summary.scalar takes a scalar")
    if not (x.dtype.is_floating or x.dtype.is_integer or x.dtype.is_bool):
        raise InvalidArgumentError(f"tf.summary.scalar '{op.get_attr('tag')}': values of "
                                   f"dtype {x.dtype.name} are not numbers")
    return _string_scalar(op)


def _bytes(b: bytes) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = b
    return out


def _summary(*values) -> bytes:
    return tb().summary_pb2.Summary(value=list(values)).SerializeToString()


@register_op("ScalarSummary", infer=_scalar_infer, attrs=("tag",), lowering=None)
def _scalar_summary(m, value, tag=""):
    v = tb().summary_pb2.Summary.Value(tag=tag, simple_value=float(np.asarray(value)))
    return _bytes(_summary(v))


@register_op("HistogramSummary", infer=_string_scalar, attrs=("tag",), lowering=None)
def _histogram_summary(m, values, tag=""):
    pb = tb().summary_pb2
    h = pb.HistogramProto(**encoders.histogram(values, tag))
    return _bytes(_summary(pb.Summary.Value(tag=tag, histo=h)))


def _image_infer(op):
    x = op.inputs[0]
    if x.shape.ndims not in (None, 4):
        raise InvalidArgumentError(f"Tensor must be 4-D with last dim 1, 3, or 4, not "
                                   f"{x.shape.tf_str()} (tf.summary.image '{op.name}')")
    if x.shape.ndims == 4 and x.shape.dims[3] not in (None, 1, 3, 4):
        raise InvalidArgumentError(f"Tensor must be 4-D with last dim 1, 3, or 4, not "
                                   f"{x.shape.tf_str()} (tf.summary.image '{op.name}')")
    if not (x.dtype == dtypes.uint8 or x.dtype.is_floating):
        raise InvalidArgumentError(f"tf.summary.image '{op.name}': images must be uint8 or "
                                   f"float, not {x.dtype.name}")
    return _string_scalar(op)


@register_op("ImageSummary", infer=_image_infer, attrs=("tag", "max_images"), lowering=None)
def _image_summary(m, images, tag="", max_images=3):
    if images.ndim != 4 or images.shape[3] not in (1, 3, 4):
        raise InvalidArgumentError(f"Tensor must be 4-D with last dim 1, 3, or 4, not "
                                   f"{list(images.shape)} (image summary '{tag}')")
    pb = tb().summary_pb2
    values = []
    for i in range(min(max_images, images.shape[0])):
        img = encoders.image_to_uint8(images[i])
        name = f"{tag}/image/{i}" if max_images > 1 else f"{tag}/image"
        h, w, c = img.shape
        values.append(pb.Summary.Value(tag=name, image=pb.Summary.Image(
            height=h, width=w, colorspace=c, encoded_image_string=encoders.png(img))))
    return _bytes(_summary(*values))


def _text_infer(op):
    if op.inputs[0].dtype != dtypes.string:
        raise InvalidArgumentError(f"tf.summary.text '{op.get_attr('tag')}' takes a string "
                                   f"tensor, got {op.inputs[0].dtype.name}")
    return _string_scalar(op)


@register_op("TensorSummaryV2", infer=_text_infer, attrs=("tag",), lowering=None)
def _text_summary(m, text, tag=""):
    t = tb()
    arr = np.asarray(text, dtype=object)
    shape = t.tensor_shape_pb2.TensorShapeProto(
        dim=[t.tensor_shape_pb2.TensorShapeProto.Dim(size=d) for d in arr.shape])
    tensor = t.tensor_pb2.TensorProto(dtype=t.types_pb2.DT_STRING, tensor_shape=shape,
                                      string_val=[bytes(b) for b in arr.reshape(-1)])
    meta = t.summary_pb2.SummaryMetadata(
        plugin_data=t.summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
    return _bytes(_summary(t.summary_pb2.Summary.Value(tag=tag, metadata=meta,
                                                        tensor=tensor)))


def _merge_infer(op):
    for x in op.inputs:
        if x.dtype != dtypes.string:
            raise InvalidArgumentError(f"tf.summary.merge: input {x.name} is a "
                                       f"{x.dtype.name} tensor, not a serialized summary")
    return _string_scalar(op)


@register_op("MergeSummary", infer=_merge_infer, lowering=None)
def _merge_summary(m, *inputs):
    pb = tb().summary_pb2
    merged = pb.Summary()
    tags: set = set()
    for raw in inputs:
        s = pb.Summary.FromString(bytes(np.asarray(raw, dtype=object)[()]))
        for v in s.value:
            if v.tag in tags:
                raise InvalidArgumentError(f"Duplicate tag {v.tag} found in summary inputs")
            tags.add(v.tag)
        merged.MergeFrom(s)
    return _bytes(merged.SerializeToString())


not_differentiable("ScalarSummary", "HistogramSummary", "ImageSummary", "TensorSummaryV2",
                   "MergeSummary")
