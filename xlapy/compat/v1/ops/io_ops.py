"""File and image codec ops: tf.read_file / tf.io.read_file, tf.write_file,
tf.image.decode_png / decode_jpeg / decode_image / encode_png.

They run in the executor (bytes in, bytes or pixels out; XLA computes neither). The image
codecs use Pillow, an optional dependency: without it they raise UnimplementedError saying
so. decode_* return uint8 [height, width, channels] (channels=0: as stored; 1 grey, 3 RGB,
4 RGBA on request), as TF's.
"""

from __future__ import annotations

import io

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, NotFoundError, UnimplementedError
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import make, make_op, tensor
from xlapy.compat.v1.tensor_shape import TensorShape


def _str(v) -> str:
    v = v.item() if isinstance(v, np.ndarray) else v
    return v.decode() if isinstance(v, bytes) else str(v)


def _scalar_string(op, what):
    t = op.inputs[0]
    if t.dtype != dtypes.string:
        raise InvalidArgumentError(f"{what}: expected a string tensor, got {t.dtype.name}")


def _read_infer(op):
    _scalar_string(op, "read_file")
    return [(dtypes.string, TensorShape([]))]


@register_op("ReadFile", lowering=None, stateful=True, infer=_read_infer)
def _read_file(m, filename):
    path = _str(filename)
    try:
        with open(path, "rb") as f:
            return np.asarray(f.read(), dtype=object)
    except FileNotFoundError:
        raise NotFoundError(f"{path}; No such file or directory") from None


@register_op("WriteFile", lowering=None, stateful=True, infer=lambda op: [])
def _write_file(m, filename, contents):
    import os
    path = _str(filename)
    if os.path.dirname(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    data = contents.item() if isinstance(contents, np.ndarray) else contents
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else str(data).encode())
    return ()


def read_file(filename, name=None):
    return make("ReadFile", [tensor(filename, dtype=dtypes.string)], name=name)


def write_file(filename, contents, name=None):
    return make_op("WriteFile", [tensor(filename, dtype=dtypes.string),
                                 tensor(contents, dtype=dtypes.string)], name=name)


# ---- image codecs --------------------------------------------------------------------------

def _pil():
    try:
        from PIL import Image
    except ImportError:
        raise UnimplementedError("tf.image.decode_* / encode_png need Pillow to read and write "
                                 "image files: pip install Pillow") from None
    return Image


_MODES = {1: "L", 3: "RGB", 4: "RGBA"}


def _decode_infer(op):
    c = op.get_attr("channels")
    return [(dtypes.uint8, TensorShape([None, None, c if c else None]))]


@register_op("DecodeImage", infer=_decode_infer, attrs=("channels", "format"), lowering=None)
def _decode(m, contents, channels=0, format=""):
    Image = _pil()
    data = contents.item() if isinstance(contents, np.ndarray) else contents
    try:
        img = Image.open(io.BytesIO(data))
        img.load()
    except Exception as e:  # Pillow's own error types
        raise InvalidArgumentError(f"decode_{format or 'image'}: the contents are not a "
                                   f"valid image ({e})") from None
    if format and img.format and img.format.lower() not in (format, "mpo"):
        if not (format == "jpeg" and img.format == "JPEG"):
            raise InvalidArgumentError(f"decode_{format}: the contents are a "
                                       f"{img.format} image")
    if channels:
        img = img.convert(_MODES[channels])
    elif img.mode not in ("L", "RGB", "RGBA"):
        img = img.convert("RGBA" if "A" in img.mode or img.mode == "P" and
                          "transparency" in img.info else "RGB")
    arr = np.asarray(img, dtype=np.uint8)
    return arr[:, :, None] if arr.ndim == 2 else arr


def _decode_fn(fmt):
    def decode(contents, channels=0, name=None, **kwargs):
        c = int(channels or 0)
        if c not in (0, 1, 3, 4):
            raise InvalidArgumentError(f"channels must be 0, 1, 3 or 4, got {c}")
        return make("DecodeImage", [tensor(contents, dtype=dtypes.string)],
                    {"channels": c, "format": fmt}, name=name)
    return decode


decode_png = _decode_fn("png")
decode_jpeg = _decode_fn("jpeg")
decode_image = _decode_fn("")


@register_op("EncodePng", infer=lambda op: [(dtypes.string, TensorShape([]))], lowering=None,
             attrs=("compression",))
def _encode_png(m, image, compression=-1):
    Image = _pil()
    arr = np.asarray(image)
    if arr.ndim != 3 or arr.shape[2] not in (1, 3, 4):
        raise InvalidArgumentError(f"encode_png: image must be [height, width, 1, 3 or 4], "
                                   f"got shape {list(arr.shape)}")
    img = Image.fromarray(arr[:, :, 0] if arr.shape[2] == 1 else arr, _MODES[arr.shape[2]])
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=9 if compression < 0 else int(compression))
    return np.asarray(buf.getvalue(), dtype=object)


def encode_png(image, compression=-1, name=None):
    x = tensor(image)
    if x.dtype != dtypes.uint8:
        raise InvalidArgumentError(f"encode_png: image must be uint8 here, got {x.dtype.name}")
    return make("EncodePng", [x], {"compression": int(compression)}, name=name)


not_differentiable("ReadFile", "WriteFile", "DecodeImage", "EncodePng")
