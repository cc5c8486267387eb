"""tf.spectral / tf.signal: FFTs of complex64 tensors against NumPy, their gradients against
JAX (TF's convention is the conjugate of JAX's for complex inputs), framing, windows,
STFT / inverse STFT, DCTs against SciPy, the mel matrix against its HTK formula, and the
audio-recognition pipeline (stft -> |.| -> mel -> log -> mfccs) in the executor and with
every op on XLA_CPU."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.fft
import scipy.signal

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError

from .helpers import assert_close, run_executor_and_xla_cpu

R = np.random.default_rng(5)


def c64(*shape):
    return (R.standard_normal(shape) + 1j * R.standard_normal(shape)).astype(np.complex64)


def test_ffts_against_numpy():
    z, z2 = c64(3, 8), c64(2, 5, 6)
    x, x2 = R.standard_normal((3, 9)).astype(np.float32), \
        R.standard_normal((2, 5, 7)).astype(np.float32)

    def build():
        zt, z2t, xt, x2t = (tf.constant(v) for v in (z, z2, x, x2))
        return {"fft": tf.spectral.fft(zt), "ifft": tf.signal.ifft(zt), "fft_top": tf.fft(zt),
                "fft2d": tf.signal.fft2d(z2t), "ifft2d": tf.spectral.ifft2d(z2t),
                "rfft": tf.signal.rfft(xt), "rfft_16": tf.signal.rfft(xt, [16]),
                "rfft_6": tf.spectral.rfft(xt, [6]), "irfft": tf.signal.irfft(zt),
                "irfft_9": tf.signal.irfft(zt, [9]), "irfft_20": tf.signal.irfft(zt, [20]),
                "rfft2d": tf.signal.rfft2d(x2t), "rfft2d_s": tf.signal.rfft2d(x2t, [4, 10]),
                "irfft2d": tf.signal.irfft2d(z2t, [5, 9]),
                "abs": tf.abs(zt), "real": tf.real(zt), "imag": tf.imag(zt),
                "conj": tf.conj(zt), "angle": tf.angle(zt),
                "complex": tf.complex(xt, xt * 2.0)}
    want = {"fft": np.fft.fft(z), "ifft": np.fft.ifft(z), "fft_top": np.fft.fft(z),
            "fft2d": np.fft.fft2(z2), "ifft2d": np.fft.ifft2(z2), "rfft": np.fft.rfft(x),
            "rfft_16": np.fft.rfft(x, 16), "rfft_6": np.fft.rfft(x, 6),
            "irfft": np.fft.irfft(z, 14), "irfft_9": np.fft.irfft(z, 9),
            "irfft_20": np.fft.irfft(z, 20), "rfft2d": np.fft.rfft2(x2),
            "rfft2d_s": np.fft.rfft2(x2, [4, 10]), "irfft2d": np.fft.irfft2(z2, [5, 9]),
            "abs": np.abs(z), "real": z.real, "imag": z.imag, "conj": np.conj(z),
            "angle": np.angle(z), "complex": x + 2j * x}
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        for k, w in want.items():
            cplx = np.iscomplexobj(w) and k not in ("abs",)
            w = w.astype(np.complex64 if cplx else np.float32)
            assert got[k].dtype == w.dtype, k
            assert_close(got[k], w, 1e-4, 1e-4, what=f"{k}: ")


def test_fft_gradients_against_jax():
    z, x = c64(2, 8), R.standard_normal((2, 9)).astype(np.float32)
    z2, x2 = c64(3, 4, 5), R.standard_normal((3, 4, 6)).astype(np.float32)
    w = {k: R.standard_normal(s).astype(np.float32) for k, s in
         (("fft", (2, 8)), ("rfft", (2, 6)), ("irfft", (2, 12)), ("fft2d", (3, 4, 5)),
          ("rfft2d", (3, 3, 4)), ("irfft2d", (3, 4, 7)))}

    def loss(y, k):  # real and imaginary parts weighted differently
        if jnp.iscomplexobj(y):
            return (jnp.real(y) * w[k]).sum() + (jnp.imag(y) * w[k] * 0.7).sum()
        return (y * w[k]).sum()

    def tloss(y, k):
        if y.dtype.is_complex:
            return tf.reduce_sum(tf.real(y) * w[k]) + tf.reduce_sum(tf.imag(y) * (w[k] * 0.7))
        return tf.reduce_sum(y * w[k])
    wants = {
        "fft": np.conj(jax.grad(lambda v: loss(jnp.fft.fft(v), "fft"))(z)),
        "rfft": jax.grad(lambda v: loss(jnp.fft.rfft(v, 10), "rfft"))(x),
        "irfft": np.conj(jax.grad(lambda v: loss(jnp.fft.irfft(v[:, :7], 12), "irfft"))(z)),
        "fft2d": np.conj(jax.grad(lambda v: loss(jnp.fft.fft2(v), "fft2d"))(z2)),
        "rfft2d": jax.grad(lambda v: loss(jnp.fft.rfft2(v, (3, 6)), "rfft2d"))(x2),
        "irfft2d": np.conj(jax.grad(lambda v: loss(jnp.fft.irfft2(v, (4, 7)), "irfft2d"))(z2)),
    }

    def build():
        zt, xt, z2t, x2t = (tf.constant(v) for v in (z, x, z2, x2))
        outs = {"fft": (tf.signal.fft(zt), zt), "rfft": (tf.signal.rfft(xt, [10]), xt),
                "irfft": (tf.signal.irfft(zt, [12]), zt),
                "fft2d": (tf.signal.fft2d(z2t), z2t),
                "rfft2d": (tf.signal.rfft2d(x2t, [3, 6]), x2t),
                "irfft2d": (tf.signal.irfft2d(z2t, [4, 7]), z2t)}
        return {k: tf.gradients(tloss(y, k), v)[0] for k, (y, v) in outs.items()}
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        for k, want in wants.items():
            assert_close(got[k], np.asarray(want), 1e-4, 1e-4, what=f"{k}: ")


def _np_frame(x, fl, fs, pad_end=False, pad_value=0.0):
    n = x.shape[-1]
    if pad_end:
        num = -(-n // fs)
        need = max((num - 1) * fs + fl - n, 0)
        x = np.concatenate([x, np.full(x.shape[:-1] + (need,), pad_value, x.dtype)], -1)
    else:
        num = max(1 + (n - fl) // fs, 0)
    return np.stack([x[..., i * fs:i * fs + fl] for i in range(num)], -2) if num else \
        np.zeros(x.shape[:-1] + (0, fl), x.dtype)


def _np_ola(fr, fs):
    frames, fl = fr.shape[-2:]
    out = np.zeros(fr.shape[:-2] + ((frames - 1) * fs + fl,), fr.dtype)
    for i in range(frames):
        out[..., i * fs:i * fs + fl] += fr[..., i, :]
    return out


def test_frame_overlap_add_and_windows():
    x = R.standard_normal((2, 23)).astype(np.float32)
    fr = R.standard_normal((3, 5, 7)).astype(np.float32)

    def build():
        xt = tf.constant(x)
        o = {"f": tf.signal.frame(xt, 5, 3), "fp": tf.signal.frame(xt, 6, 4, pad_end=True,
                                                                    pad_value=-1.0),
             "fax": tf.signal.frame(tf.constant(x.T), 4, 4, axis=0),
             "fshort": tf.signal.frame(xt, 30, 2),
             "ola": tf.signal.overlap_and_add(tf.constant(fr), 3),
             "ola_gap": tf.signal.overlap_and_add(tf.constant(fr), 9),
             "ola_eq": tf.signal.overlap_and_add(tf.constant(fr), 7)}
        for n in (1, 7, 8):
            for p in (True, False):
                o[f"hann{n}{p}"] = tf.signal.hann_window(n, periodic=p)
                o[f"hamm{n}{p}"] = tf.signal.hamming_window(n, periodic=p)
        return o
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        assert_close(got["f"], _np_frame(x, 5, 3))
        assert_close(got["fp"], _np_frame(x, 6, 4, True, -1.0))
        assert_close(got["fax"], np.stack([x.T[i * 4:i * 4 + 4] for i in range(5)], 0))
        assert got["fshort"].shape == (2, 0, 30)
        for k, s in (("ola", 3), ("ola_gap", 9), ("ola_eq", 7)):
            assert_close(got[k], _np_ola(fr, s), 1e-5, 1e-5, what=k)
        for n in (1, 7, 8):
            for p in (True, False):
                # TF's periodic window only differs for even lengths
                sym = not p or n % 2 == 1
                for k, name in (("hann", "hann"), ("hamm", "hamming")):
                    want = np.ones(1) if n == 1 else scipy.signal.get_window(name, n,
                                                                             fftbins=not sym)
                    assert_close(got[f"{k}{n}{p}"], want.astype(np.float32), 1e-6, 1e-6,
                                 what=f"{k}{n}{p}")


def test_dct_and_mel_matrix_against_scipy_and_formula():
    x = R.standard_normal((4, 13)).astype(np.float32)

    def build():
        xt = tf.constant(x)
        return {"d2": tf.signal.dct(xt), "d2o": tf.spectral.dct(xt, norm="ortho"),
                "d3": tf.signal.dct(xt, type=3), "d3o": tf.signal.dct(xt, 3, norm="ortho"),
                "i2o": tf.signal.idct(tf.signal.dct(xt, norm="ortho"), norm="ortho"),
                "mel": tf.signal.linear_to_mel_weight_matrix(10, 33, 16000, 20.0, 4000.0),
                "mel_default": tf.signal.linear_to_mel_weight_matrix(),
                "mfcc": tf.signal.mfccs_from_log_mel_spectrograms(xt)}

    def mel(nm, ns, sr, lo, hi):
        def hz2mel(f):
            return 1127.0 * np.log1p(f / 700.0)
        lin = np.linspace(0, sr / 2, ns)[1:]
        edges = np.linspace(hz2mel(lo), hz2mel(hi), nm + 2)
        sm = hz2mel(lin)[:, None]
        lower = (sm - edges[:-2]) / (edges[1:-1] - edges[:-2])
        upper = (edges[2:] - sm) / (edges[2:] - edges[1:-1])
        return np.pad(np.maximum(0, np.minimum(lower, upper)), [[1, 0], [0, 0]])
    want = {"d2": scipy.fft.dct(x, 2), "d2o": scipy.fft.dct(x, 2, norm="ortho"),
            "d3": scipy.fft.dct(x, 3), "d3o": scipy.fft.dct(x, 3, norm="ortho"), "i2o": x,
            "mel": mel(10, 33, 16000, 20.0, 4000.0), "mel_default": mel(20, 129, 8000, 125.0,
                                                                          3800.0),
            "mfcc": scipy.fft.dct(x, 2) / np.sqrt(2 * 13)}
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        for k, w in want.items():
            assert_close(got[k], w.astype(np.float32), 1e-4, 1e-4, what=f"{k}: ")


def _np_stft(x, fl, fs, n, pad_end=False):
    win = scipy.signal.get_window("hann", fl, fftbins=fl % 2 == 0)
    return np.fft.rfft(_np_frame(x, fl, fs, pad_end) * win, n)


def test_stft_inverse_stft_and_audio_pipeline():
    x = R.standard_normal((2, 400)).astype(np.float32)
    mel = None

    def build():
        nonlocal mel
        xt = tf.constant(x)
        s = tf.signal.stft(xt, 40, 16)
        s2 = tf.signal.stft(xt, 25, 10, fft_length=30, pad_end=True)
        back = tf.signal.inverse_stft(s, 40, 16,
                                      window_fn=tf.signal.inverse_stft_window_fn(16))
        mag = tf.abs(s)
        mel = tf.signal.linear_to_mel_weight_matrix(12, 33, 8000, 40.0, 3900.0)
        log_mel = tf.log(tf.tensordot(mag, mel, 1) + 1e-6)
        mfcc = tf.signal.mfccs_from_log_mel_spectrograms(log_mel)[..., :8]
        return {"s": s, "s2": s2, "back": back, "mfcc": mfcc, "mel": mel}
    ref_s = _np_stft(x, 40, 16, 64)
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        assert got["s"].dtype == np.complex64 and got["s"].shape == (2, 23, 33)
        assert_close(got["s"], ref_s.astype(np.complex64), 1e-4, 1e-4)
        assert_close(got["s2"], _np_stft(x, 25, 10, 30, True).astype(np.complex64), 1e-4, 1e-4)
        # perfect reconstruction away from the edges (fewer than all overlaps there)
        assert_close(got["back"][:, 40:-40], x[:, 40:got["back"].shape[1] - 40], 1e-4, 1e-4)
        log_mel = np.log(np.abs(ref_s) @ got["mel"].astype(np.float64) + 1e-6)
        want = scipy.fft.dct(log_mel, 2)[..., :8] / np.sqrt(24)
        assert_close(got["mfcc"], want.astype(np.float32), 1e-3, 1e-3)


def test_stft_magnitude_gradient_against_jax():
    x = R.standard_normal((1, 120)).astype(np.float32)
    c = R.standard_normal((1, 6, 17)).astype(np.float32)

    def jstft(v):
        win = jnp.asarray(scipy.signal.get_window("hann", 32), jnp.float32)
        fr = jnp.stack([v[:, i * 16:i * 16 + 32] for i in range(6)], 1)
        return jnp.abs(jnp.fft.rfft(fr * win, 32))
    want = jax.grad(lambda v: (jstft(v) * c).sum())(x)

    def build():
        xt = tf.constant(x)
        return tf.gradients(tf.reduce_sum(tf.abs(tf.signal.stft(xt, 32, 16)) * c), xt)[0]
    for got in run_executor_and_xla_cpu(lambda: (build(), None)):
        assert_close(got, np.asarray(want), 1e-4, 1e-4)


def test_signal_errors():
    with pytest.raises(InvalidArgumentError, match="complex"):
        tf.signal.fft(tf.zeros([4]))
    with pytest.raises(InvalidArgumentError, match="float"):
        tf.signal.rfft(tf.zeros([4], tf.int32))
    with pytest.raises(InvalidArgumentError, match="known"):
        tf.signal.frame(tf.placeholder(tf.float32, [None]), 4, 2)
    with pytest.raises(InvalidArgumentError, match="types 2 and 3"):
        tf.signal.dct(tf.zeros([4]), type=1)
