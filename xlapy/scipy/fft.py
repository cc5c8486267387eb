"""xlapy.scipy.fft (jax.scipy.fft): the type-2 discrete cosine transform and its inverse.

dct(x, type=2, n=None, axis=-1, norm=None): y_k = 2 sum_n x_n cos(pi k (2n + 1) / (2N))
along axis (x first cut or zero-padded to n there); norm="ortho" scales y_0 by
sqrt(1 / (4N)) and the others by sqrt(1 / (2N)), making the transform orthonormal.
idct(...) inverts it (a type-3 transform, divided by 2N without norm). Both are computed
with one FFT of length N (Makhoul's reordering), so they jit, vmap and differentiate.
Only type 2 exists, as in JAX.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import UnsupportedError, XlapyError

__all__ = ["dct", "idct"]


def _prepare(name, x, type, n, axis, norm):
    import xlapy.numpy as xnp
    if type != 2:
        raise UnsupportedError(f"{name}: only type=2 is supported (as in JAX), got {type!r}")
    if norm not in (None, "ortho", "backward"):
        raise XlapyError(f"{name}: norm must be None, 'backward' or 'ortho', got {norm!r}")
    x = xnp.asarray(x)
    if x.ndim == 0:
        raise XlapyError(f"{name}: expects an array of rank >= 1")
    if not -x.ndim <= axis < x.ndim:
        raise XlapyError(f"{name}: axis {axis} is out of range for rank {x.ndim}")
    if x.dtype.kind not in "fc":
        x = x.astype(xnp.result_type(x, 1.0))
    x = xnp.moveaxis(x, axis, -1)
    if n is not None:
        if not isinstance(n, (int, np.integer)) or n < 1:
            raise XlapyError(f"{name}: n must be a positive integer, got {n!r}")
        m = x.shape[-1]
        x = x[..., :n] if n <= m else xnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, n - m)])
    return x


def _twiddle(N, dtype, sign):
    import xlapy.numpy as xnp
    k = np.arange(N)
    ctype = np.complex128 if np.dtype(dtype) == np.float64 else np.complex64
    return xnp.asarray(np.exp(sign * 1j * np.pi * k / (2 * N)).astype(ctype))


def dct(x, type=2, n=None, axis=-1, norm=None):
    import xlapy.numpy as xnp
    x = _prepare("dct", x, type, n, axis, norm)
    N = x.shape[-1]
    v = xnp.concatenate([x[..., ::2], xnp.flip(x[..., 1::2], -1)], axis=-1)
    y = 2 * xnp.real(xnp.fft.fft(v, axis=-1) * _twiddle(N, x.dtype, -1))
    y = y.astype(x.dtype)
    if norm == "ortho":
        scale = np.full(N, np.sqrt(1 / (2 * N)))
        scale[0] = np.sqrt(1 / (4 * N))
        y = y * xnp.asarray(scale.astype(x.dtype))
    return xnp.moveaxis(y, -1, axis)


def idct(x, type=2, n=None, axis=-1, norm=None):
    import xlapy.numpy as xnp
    y = _prepare("idct", x, type, n, axis, norm)
    N = y.shape[-1]
    if norm == "ortho":  # back to the unnormalized coefficients
        scale = np.full(N, np.sqrt(2 * N))
        scale[0] = np.sqrt(4 * N)
        y = y * xnp.asarray(scale.astype(y.dtype))
    # V_k = (y_k - i y_{N-k}) e^{i pi k / 2N} / 2 (y_N = 0); v = ifft(V); x from v's halves
    rev = xnp.concatenate([xnp.zeros_like(y[..., :1]), xnp.flip(y[..., 1:], -1)], axis=-1)
    V = (y - 1j * rev) * _twiddle(N, y.dtype, 1) / 2
    v = xnp.real(xnp.fft.ifft(V, axis=-1)).astype(y.dtype)
    half = (N + 1) // 2
    out = xnp.zeros_like(v)
    out = out.at[..., ::2].set(v[..., :half])
    out = out.at[..., 1::2].set(xnp.flip(v[..., half:], -1))
    return xnp.moveaxis(out, -1, axis)
