"""tf.image.encode_jpeg and decode_gif: host-side codecs through Pillow, as the PNG ones
(ops/io_ops.py). EncodeJpeg takes a uint8 [h, w, 1 or 3] image (format "" picks grayscale or
rgb from the depth) and TF's quality (95 by default); DecodeGif returns every frame as
uint8 [num_frames, h, w, 3] RGB, each frame composited over the previous ones (Pillow's
frame seeking), as TF's decoder does.
"""

from __future__ import annotations

import io

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import make, tensor
from xlapy.compat.v1.ops.io_ops import _pil
from xlapy.compat.v1.tensor_shape import TensorShape


@register_op("EncodeJpeg", infer=lambda op: [(dtypes.string, TensorShape([]))], lowering=None,
             attrs=("format", "quality", "progressive", "optimize_size", "chroma_downsampling"))
def _encode_jpeg(m, image, format="", quality=95, progressive=False, optimize_size=False,
                 chroma_downsampling=True):
    Image = _pil()
    arr = np.asarray(image)
    if arr.ndim != 3 or arr.shape[2] not in (1, 3):
        raise InvalidArgumentError(f"image must be 3-dimensional [height, width, 1 or 3], got "
                                   f"shape {list(arr.shape)}")
    if format == "grayscale" and arr.shape[2] != 1 or format == "rgb" and arr.shape[2] != 3:
        raise InvalidArgumentError(f"format {format!r} does not match {arr.shape[2]} channels")
    img = Image.fromarray(arr[:, :, 0] if arr.shape[2] == 1 else arr,
                          "L" if arr.shape[2] == 1 else "RGB")
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=int(quality), progressive=bool(progressive),
             optimize=bool(optimize_size), subsampling=2 if chroma_downsampling else 0)
    return np.asarray(buf.getvalue(), dtype=object)


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300,
                xmp_metadata="", name=None):
    x = tensor(image)
    if x.dtype != dtypes.uint8:
        raise InvalidArgumentError(f"encode_jpeg: image must be uint8, got {x.dtype.name}")
    if format not in ("", "grayscale", "rgb"):
        raise InvalidArgumentError(f"format must be '', 'grayscale' or 'rgb', got {format!r}")
    if not 0 <= int(quality) <= 100:
        raise InvalidArgumentError(f"quality must be in [0,100], got {quality}")
    return make("EncodeJpeg", [x], {"format": format, "quality": int(quality),
                                    "progressive": bool(progressive),
                                    "optimize_size": bool(optimize_size),
                                    "chroma_downsampling": bool(chroma_downsampling)},
                name=name)


@register_op("DecodeGif", lowering=None,
             infer=lambda op: [(dtypes.uint8, TensorShape([None, None, None, 3]))])
def _decode_gif(m, contents):
    Image = _pil()
    data = contents.item() if isinstance(contents, np.ndarray) else contents
    try:
        img = Image.open(io.BytesIO(data))
        img.load()
    except Exception as e:  # Pillow's own error types
        raise InvalidArgumentError(f"decode_gif: the contents are not a valid image ({e})") \
            from None
    if img.format != "GIF":
        raise InvalidArgumentError(f"decode_gif: the contents are a {img.format} image")
    frames = []
    for i in range(getattr(img, "n_frames", 1)):
        img.seek(i)
        frames.append(np.asarray(img.convert("RGB"), dtype=np.uint8))
    return np.stack(frames)


def decode_gif(contents, name=None):
    return make("DecodeGif", [tensor(contents, dtype=dtypes.string)], name=name)


not_differentiable("EncodeJpeg", "DecodeGif")
