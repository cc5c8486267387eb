"""What the summary ops compute, in NumPy: TF's histogram buckets, image normalization and
PNG encoding. The protobuf messages themselves are tensorboardX's (summary/_tb.py)."""

from __future__ import annotations

import struct
import sys
import zlib

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError


def _default_bucket_limits() -> np.ndarray:
    """TF's default histogram buckets: limits growing by 10% from 1e-12 to 1e20, mirrored
    for negative values, with 0 and +-DBL_MAX at the ends."""
    pos = []
    v = 1e-12
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    pos.append(sys.float_info.max)
    pos = np.array(pos)
    return np.concatenate([-pos[::-1], [0.0], pos])


BUCKET_LIMITS = _default_bucket_limits()


def histogram(values: np.ndarray, where: str) -> dict:
    """The fields of a HistogramProto for `values`: each value v counts in the first bucket
    whose limit is greater than v; runs of empty buckets are merged into their last one."""
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(v)):
        kind = "Nan" if np.isnan(v).any() else "Infinity"
        raise InvalidArgumentError(f"{kind} in summary histogram for: {where}")
    counts = np.bincount(np.searchsorted(BUCKET_LIMITS, v, side="right"),
                         minlength=len(BUCKET_LIMITS))[:len(BUCKET_LIMITS)]
    limits, buckets = [], []
    i, n = 0, len(BUCKET_LIMITS)
    while i < n:
        end, count = BUCKET_LIMITS[i], counts[i]
        i += 1
        if count <= 0:
            while i < n and counts[i] <= 0:
                end, count = BUCKET_LIMITS[i], counts[i]
                i += 1
        limits.append(float(end))
        buckets.append(float(count))
    return {"min": float(v.min()) if v.size else sys.float_info.max,
            "max": float(v.max()) if v.size else -sys.float_info.max,
            "num": float(v.size), "sum": float(v.sum()), "sum_squares": float((v * v).sum()),
            "bucket_limit": limits, "bucket": buckets}


BAD_COLOR = np.array([255, 0, 0, 255], np.uint8)


def image_to_uint8(img: np.ndarray) -> np.ndarray:
    """One [h, w, c] image as uint8, as TF's ImageSummary scales floats: all values >= 0 are
    scaled so that the largest is 255; otherwise 0 maps to 128 and the values are scaled so
    that the largest magnitude reaches 127. Non-finite pixels get the bad color (red)."""
    if img.dtype == np.uint8:
        return img
    x = np.asarray(img, dtype=np.float64)
    finite = np.isfinite(x).all(axis=-1)
    vals = x[finite]
    lo = float(vals.min()) if vals.size else 0.0
    hi = float(vals.max()) if vals.size else 0.0
    if lo < 0:
        big = max(-lo, hi)
        scale, offset = (127.0 / big if big > 0 else 0.0), 128.0
    else:
        scale, offset = (255.0 / hi if hi > 0 else 0.0), 0.0
    out = np.clip(np.where(finite[..., None], x, 0.0) * scale + offset, 0, 255)
    out = (out + 0.5).astype(np.uint8)
    if not finite.all():
        out[~finite] = BAD_COLOR[:img.shape[-1]]
    return out


def png(img: np.ndarray) -> bytes:
    """A PNG file of an [h, w, c] uint8 image, c = 1 (gray), 3 (RGB) or 4 (RGBA)."""
    h, w, c = img.shape
    color = {1: 0, 3: 2, 4: 6}[c]
    rows = np.concatenate([np.zeros((h, 1), np.uint8), img.reshape(h, w * c)], axis=1)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + \
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + chunk(b"IEND", b""))
