"""tf.signal windows, stft / inverse_stft, dct / idct, linear_to_mel_weight_matrix and
mfccs_from_log_mel_spectrograms, as TF 1.15 defines them.

Windows are TF's raised cosines a - b cos(2 pi k / N) with N = length - 1, plus one for a
periodic window of even length (a length-1 window is [1]). stft frames the signal, applies
the window and takes rfft(fft_length, by default the next power of two of frame_length);
inverse_stft inverts with irfft, crops or pads each frame to frame_length, windows and
overlap-adds. The DCTs (types 2 and 3, norm None or "ortho", scipy.fft's definitions, which
are TF's) are matrix products with constant cosine matrices. The mel matrix is HTK's
(mel = 1127 ln(1 + f / 700), the DC bin zeroed), computed in float32 as TF's ops do.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.array_ops import reshape, tile
from xlapy.compat.v1.ops.manip_ops import pad, tensordot
from xlapy.compat.v1.ops.math_ops import cast, multiply, realdiv, reduce_sum, rsqrt, square
from xlapy.compat.v1.ops.spectral_ops import irfft, rfft
from xlapy.compat.v1.signal.shape_ops import frame, overlap_and_add, static_int


def _raised_cosine(length, periodic, dtype, a, b):
    n_len = static_int(length, "window_length")
    dt = dtypes.as_dtype(dtype)
    if not dt.is_floating:
        raise InvalidArgumentError(f"window dtype must be floating point, got {dt.name}")
    if n_len == 1:
        return tensor(np.ones([1], dt.np))
    even = 1 - n_len % 2
    n = dt.np.type(n_len + int(bool(periodic)) * even - 1)
    count = np.arange(n_len).astype(dt.np)
    w = dt.np.type(a) - dt.np.type(b) * np.cos(dt.np.type(2.0 * np.pi) * count / n)
    return tensor(w.astype(dt.np))


def hann_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    return _raised_cosine(window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    return _raised_cosine(window_length, periodic, dtype, 0.54, 0.46)


def _default_fft_length(frame_length):
    return 1 << int(np.ceil(np.log2(frame_length)))


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window,
         pad_end=False, name=None):
    """[..., frames, fft_length // 2 + 1] complex64 short-time Fourier transform."""
    x = tensor(signals)
    fl = static_int(frame_length, "frame_length")
    n = _default_fft_length(fl) if fft_length is None else static_int(fft_length, "fft_length")
    with get_default_graph().name_scope(name or "stft"):
        framed = frame(x, fl, frame_step, pad_end=pad_end)
        if window_fn is not None:
            framed = multiply(framed, window_fn(fl, dtype=x.dtype))
        return rfft(framed, [n])


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window,
                 name=None):
    s = tensor(stfts)
    fl = static_int(frame_length, "frame_length")
    n = _default_fft_length(fl) if fft_length is None else static_int(fft_length, "fft_length")
    with get_default_graph().name_scope(name or "inverse_stft"):
        real_frames = irfft(s, [n])
        r = real_frames.shape.ndims
        if n > fl:
            real_frames = real_frames[(Ellipsis, slice(0, fl))]
        elif n < fl:
            real_frames = pad(real_frames, [[0, 0]] * (r - 1) + [[0, fl - n]])
        if window_fn is not None:
            real_frames = multiply(real_frames, window_fn(fl, dtype=s.dtype.real_dtype))
        return overlap_and_add(real_frames, frame_step)


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """The window making inverse_stft invert stft with forward_window_fn (TF's)."""
    fs = static_int(frame_step, "frame_step")

    def inner(frame_length, dtype):
        fl = static_int(frame_length, "frame_length")
        fwd = forward_window_fn(fl, dtype=dtype)
        denom = square(fwd)
        overlaps = -(-fl // fs)
        denom = pad(denom, [[0, overlaps * fs - fl]])
        denom = reduce_sum(reshape(denom, [overlaps, fs]), [0], keepdims=True)
        denom = reshape(tile(denom, [overlaps, 1]), [overlaps * fs])
        return realdiv(fwd, denom[:fl])
    return inner


def _dct_matrix(n, type, norm):
    k, i = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")  # [out k, in i]
    if type == 2:
        m = 2.0 * np.cos(np.pi * k * (2 * i + 1) / (2 * n))
        if norm == "ortho":
            m[0] *= np.sqrt(1.0 / (4 * n))
            m[1:] *= np.sqrt(1.0 / (2 * n))
    else:
        m = 2.0 * np.cos(np.pi * i * (2 * k + 1) / (2 * n))
        m[:, 0] = 1.0
        if norm == "ortho":
            m = _dct_matrix(n, 2, "ortho")  # DCT-II's [in, out] matrix: the transpose
    return m.T  # [in, out]: y = x @ m


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):
    """DCT-II / DCT-III along the last axis (scipy.fft.dct's definitions)."""
    x = tensor(input)
    if type not in (2, 3):
        raise InvalidArgumentError(f"dct: only types 2 and 3 are supported here, got {type}")
    if axis != -1 or n is not None:
        raise InvalidArgumentError("dct: only axis=-1 and n=None are supported (as in TF)")
    if norm not in (None, "ortho"):
        raise InvalidArgumentError(f"dct: norm must be None or 'ortho', got {norm!r}")
    if not x.dtype.is_floating:
        raise InvalidArgumentError(f"dct: input must be float32 or float64, got {x.dtype.name}")
    length = x.shape.dims[-1] if x.shape.dims else None
    if length is None:
        raise InvalidArgumentError("dct: the last dimension must be known")
    with get_default_graph().name_scope(name or "dct"):
        return tensordot(x, tensor(_dct_matrix(length, type, norm).astype(x.dtype.np)),
                         [[x.shape.ndims - 1], [0]])


def idct(input, type=2, n=None, axis=-1, norm=None, name=None):
    """The inverse of dct(type) (a scaled DCT of the other type; exact with ortho)."""
    inverse = {2: 3, 3: 2}.get(type)
    if inverse is None:
        raise InvalidArgumentError(f"idct: only types 2 and 3 are supported here, got {type}")
    return dct(input, inverse, n, axis, norm, name or "idct")


def _hz_to_mel(f):
    return np.float32(1127.0) * np.log(np.float32(1.0) + f / np.float32(700.0))


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000,
                                lower_edge_hertz=125.0, upper_edge_hertz=3800.0,
                                dtype=dtypes.float32, name=None):
    """[num_spectrogram_bins, num_mel_bins] triangular mel filters (HTK's), a constant."""
    dt = dtypes.as_dtype(dtype)
    f = dt.np.type
    if num_mel_bins <= 0 or num_spectrogram_bins <= 0:
        raise InvalidArgumentError("num_mel_bins and num_spectrogram_bins must be positive")
    if lower_edge_hertz < 0.0 or lower_edge_hertz >= upper_edge_hertz or \
            upper_edge_hertz > sample_rate / 2:
        raise InvalidArgumentError(f"need 0 <= lower_edge_hertz < upper_edge_hertz <= "
                                   f"sample_rate / 2, got {lower_edge_hertz}, "
                                   f"{upper_edge_hertz}, {sample_rate}")
    nyq = f(sample_rate) / f(2.0)
    lin = np.linspace(0, nyq, num_spectrogram_bins, dtype=np.float64).astype(dt.np)[1:]
    spec_mel = _hz_to_mel(lin).astype(dt.np)[:, None]
    edges = np.linspace(_hz_to_mel(f(lower_edge_hertz)), _hz_to_mel(f(upper_edge_hertz)),
                        num_mel_bins + 2, dtype=np.float64).astype(dt.np)
    lower, center, upper = edges[None, :-2], edges[None, 1:-1], edges[None, 2:]
    lower_slopes = (spec_mel - lower) / (center - lower)
    upper_slopes = (upper - spec_mel) / (upper - center)
    w = np.maximum(f(0.0), np.minimum(lower_slopes, upper_slopes)).astype(dt.np)
    return tensor(np.pad(w, [[1, 0], [0, 0]]))


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """TF's MFCCs: the unnormalized DCT-II of the log mel spectrogram times
    rsqrt(2 num_mel_bins)."""
    x = tensor(log_mel_spectrograms)
    with get_default_graph().name_scope(name or "mfccs_from_log_mel_spectrograms"):
        n = x.shape.dims[-1] if x.shape.dims else None
        if n is None:
            raise InvalidArgumentError("mfccs: num_mel_bins (the last dimension) must be known")
        d = dct(x, type=2)
        return multiply(d, rsqrt(cast(tensor(np.asarray(2.0 * n, np.float32)), d.dtype)))
