"""The TensorSummary and AudioSummaryV2 ops (tf.summary.tensor_summary, tf.summary.audio):
a serialized `Summary` (a tf.string scalar) holding a TensorProto of any tensor, or up to
max_outputs clips encoded as 16-bit PCM WAV files (TF's encoding: floats in [-1, 1]
scaled by 32767, clipped)."""

from __future__ import annotations

import io
import wave

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.summary._tb import tb
from xlapy.compat.v1.summary.summary_ops import _bytes, _string_scalar, _summary


def tensor_proto(arr, dtype):
    from xlapy.compat.v1.graph_def import dtype_enum
    t = tb()
    arr = np.asarray(arr)
    shape = t.tensor_shape_pb2.TensorShapeProto(
        dim=[t.tensor_shape_pb2.TensorShapeProto.Dim(size=d) for d in arr.shape])
    if dtype == dtypes.string:
        return t.tensor_pb2.TensorProto(dtype=t.types_pb2.DT_STRING, tensor_shape=shape,
                                        string_val=[bytes(b) for b in arr.reshape(-1)])
    return t.tensor_pb2.TensorProto(dtype=dtype_enum(dtype), tensor_shape=shape,
                                    tensor_content=np.ascontiguousarray(
                                        arr.astype(dtype.np)).tobytes())


def _tensor_infer(op):
    return _string_scalar(op)


@register_op("TensorSummary", infer=_tensor_infer, lowering=None,
             attrs=("tag", "description", "display_name", "dtype"))
def _tensor_summary(m, value, tag="", description="", display_name="", dtype=None):
    pb = tb().summary_pb2
    meta = pb.SummaryMetadata(summary_description=description, display_name=display_name)
    v = pb.Summary.Value(tag=tag, metadata=meta, tensor=tensor_proto(value, dtype))
    return _bytes(_summary(v))


def wav(clip: np.ndarray, sample_rate: int) -> bytes:
    """A [frames, channels] float clip as a 16-bit PCM WAV file."""
    pcm = np.clip(np.asarray(clip, np.float64) * 32767.0, -32768, 32767).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(pcm.shape[1])
        w.setsampwidth(2)
        w.setframerate(int(sample_rate))
        w.writeframes(pcm.tobytes())
    return buf.getvalue()


def _audio_infer(op):
    x = op.inputs[0]
    if x.shape.ndims not in (None, 2, 3):
        raise InvalidArgumentError(f"tf.summary.audio '{op.get_attr('tag')}': tensor must be "
                                   f"[batch, frames] or [batch, frames, channels], not "
                                   f"{x.shape.tf_str()}")
    if not x.dtype.is_floating:
        raise InvalidArgumentError(f"tf.summary.audio '{op.get_attr('tag')}': tensor must be "
                                   f"float, not {x.dtype.name}")
    return _string_scalar(op)


@register_op("AudioSummaryV2", infer=_audio_infer, attrs=("tag", "max_outputs"),
             lowering=None)
def _audio_summary(m, tensor, sample_rate, tag="", max_outputs=3):
    a = np.asarray(tensor, np.float32)
    if a.ndim == 2:
        a = a[:, :, None]
    if a.ndim != 3:
        raise InvalidArgumentError(f"audio summary '{tag}': tensor must be [batch, frames] or "
                                   f"[batch, frames, channels], got {list(a.shape)}")
    rate = float(np.asarray(sample_rate))
    if rate <= 0:
        raise InvalidArgumentError(f"audio summary '{tag}': sample_rate must be positive, "
                                   f"got {rate}")
    pb = tb().summary_pb2
    values = []
    for i in range(min(max_outputs, a.shape[0])):
        name = f"{tag}/audio/{i}" if max_outputs > 1 else f"{tag}/audio"
        values.append(pb.Summary.Value(tag=name, audio=pb.Summary.Audio(
            sample_rate=rate, num_channels=a.shape[2], length_frames=a.shape[1],
            encoded_audio_string=wav(a[i], rate), content_type="audio/wav")))
    return _bytes(_summary(*values))


not_differentiable("TensorSummary", "AudioSummaryV2")
