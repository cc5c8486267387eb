"""xlapy.image: jax.image's resize and scale_and_translate.

Resizing is separable: along each resized dimension the output is a weighted sum of input
samples, out[i] = sum_j w[i, j] in[j], with w built on the host from the (static) sizes:
the output sample i sits at input coordinate (i + 1/2) / scale - 1/2 - translation/scale
(half-pixel centres), the kernel (triangle for linear, Keys' cubic with a = -1/2,
Lanczos 3 and 5) is evaluated at the distance to each input sample, stretched by 1/scale
when shrinking with antialias=True, and each row is normalised to sum 1 over the samples
inside the input (rows with no weight, and output samples whose centre falls off the
input, give 0). "nearest" takes the input sample under the
output sample's centre. The contraction is one tensordot per resized dimension, so it
fuses, differentiates and batches like any product."""

from __future__ import annotations

import enum

import numpy as np

import xlapy.numpy as xnp
from xlapy.errors import XlapyError


class ResizeMethod(enum.Enum):
    NEAREST = "nearest"
    LINEAR = "linear"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    CUBIC = "cubic"

    @staticmethod
    def from_string(s: str) -> "ResizeMethod":
        names = {"nearest": "NEAREST", "linear": "LINEAR", "bilinear": "LINEAR",
                 "trilinear": "LINEAR", "triangle": "LINEAR", "cubic": "CUBIC",
                 "bicubic": "CUBIC", "tricubic": "CUBIC", "lanczos3": "LANCZOS3",
                 "lanczos5": "LANCZOS5"}
        if s.lower() not in names:
            raise XlapyError(f"resize: unknown method {s!r}: one of {', '.join(sorted(names))}")
        return ResizeMethod[names[s.lower()]]


def _triangle(x):
    return np.maximum(0.0, 1.0 - np.abs(x))


def _keys_cubic(x):
    x = np.abs(x)
    a = -0.5
    return np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                    np.where(x < 2, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0.0))


def _lanczos(radius):
    def k(x):
        x = np.asarray(x, np.float64)
        out = np.where(np.abs(x) < radius, np.sinc(x) * np.sinc(x / radius), 0.0)
        return out
    return k


_KERNELS = {ResizeMethod.LINEAR: (_triangle, 1.0), ResizeMethod.CUBIC: (_keys_cubic, 2.0),
            ResizeMethod.LANCZOS3: (_lanczos(3.0), 3.0),
            ResizeMethod.LANCZOS5: (_lanczos(5.0), 5.0)}


def _weights(n_in: int, n_out: int, scale: float, translation: float, method: ResizeMethod,
             antialias: bool) -> np.ndarray:
    """w[n_out, n_in] of one dimension."""
    centres = (np.arange(n_out) + 0.5 - translation) / scale - 0.5
    if method is ResizeMethod.NEAREST:
        src = np.floor(centres + 0.5).astype(np.int64)
        w = np.zeros((n_out, n_in))
        ok = (src >= 0) & (src < n_in)
        w[np.arange(n_out)[ok], src[ok]] = 1.0
        return w
    kernel, _ = _KERNELS[method]
    stretch = 1.0 / scale if antialias and scale < 1.0 else 1.0
    dist = (np.arange(n_in)[None, :] - centres[:, None]) / stretch
    w = kernel(dist)
    total = w.sum(axis=1, keepdims=True)
    w = np.where(np.abs(total) > 1e-12, w / np.where(total == 0, 1.0, total), 0.0)
    inside = (centres >= -0.5) & (centres <= n_in - 0.5)  # samples off the image are 0
    return np.where(inside[:, None], w, 0.0)


def scale_and_translate(image, shape, spatial_dims, scale, translation, method="linear",
                        antialias=True, precision=None):
    """image resampled to `shape` along spatial_dims with the given scale and translation
    per spatial dimension (output coordinate = input coordinate * scale + translation)."""
    x = xnp.asarray(image)
    m = method if isinstance(method, ResizeMethod) else ResizeMethod.from_string(method)
    if m is ResizeMethod.NEAREST:
        raise XlapyError("scale_and_translate: method 'nearest' is not supported (as JAX); "
                         "use resize")
    return _resample(x, tuple(shape), tuple(spatial_dims), [float(s) for s in scale],
                     [float(t) for t in translation], m, antialias)


def _resample(x, shape, dims, scales, translations, method, antialias):
    in_shape = xnp.shape(x)
    if len(shape) != len(in_shape):
        raise XlapyError(f"resize: shape {shape} must have the image's rank {len(in_shape)}")
    dt = x.dtype if np.dtype(x.dtype).kind in "fc" else np.dtype(np.float32)
    out = x.astype(dt) if dt != x.dtype else x
    for d, s, t in zip(dims, scales, translations):
        n_in, n_out = in_shape[d], shape[d]
        if n_in == n_out and s == 1.0 and t == 0.0:
            continue
        w = _weights(n_in, n_out, s, t, method, antialias).astype(
            np.float32 if np.dtype(dt).itemsize <= 4 else np.float64)
        moved = xnp.moveaxis(out, d, -1)
        res = xnp.tensordot(moved, xnp.asarray(w.T).astype(dt), axes=1)
        out = xnp.moveaxis(res, -1, d)
    return out  # (integer images give float32, as JAX's)


def resize(image, shape, method, antialias=True, precision=None):
    """image resized to `shape` (any dimension may change) by method: nearest, linear,
    cubic, lanczos3, lanczos5 (or their ResizeMethod)."""
    x = xnp.asarray(image)
    shape = tuple(int(d) for d in shape)
    in_shape = tuple(xnp.shape(x))
    if len(shape) != len(in_shape):
        raise XlapyError(f"resize: shape {shape} must have the image's rank {len(in_shape)}")
    if any(d < 0 for d in shape):
        raise XlapyError(f"resize: negative size in {shape}")
    m = method if isinstance(method, ResizeMethod) else ResizeMethod.from_string(method)
    dims = tuple(d for d in range(len(shape)) if shape[d] != in_shape[d])
    if any(in_shape[d] == 0 for d in dims):
        raise XlapyError("resize: cannot resize a dimension of size 0")
    scales = [shape[d] / in_shape[d] for d in dims]
    return _resample(x, shape, dims, scales, [0.0] * len(dims), m, antialias)


__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
