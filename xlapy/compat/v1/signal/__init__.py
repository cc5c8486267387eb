"""tf.signal (and tf.spectral): FFTs, framing, windows, STFTs, DCTs, mel filters, MFCCs."""

from xlapy.compat.v1.ops.spectral_ops import (fft, fft2d, ifft, ifft2d, irfft, irfft2d, rfft,
                                              rfft2d)
from xlapy.compat.v1.signal.shape_ops import frame, overlap_and_add
from xlapy.compat.v1.signal.spectral import (dct, hamming_window, hann_window, idct,
                                             inverse_stft, inverse_stft_window_fn,
                                             linear_to_mel_weight_matrix,
                                             mfccs_from_log_mel_spectrograms, stft)
from xlapy.compat.v1.ops.fft3d_ops import fft3d, ifft3d

__all__ = ["fft", "fft2d", "ifft", "ifft2d", "irfft", "irfft2d", "rfft", "rfft2d", "frame",
           "overlap_and_add", "dct", "hamming_window", "hann_window", "idct", "inverse_stft",
           "inverse_stft_window_fn", "linear_to_mel_weight_matrix",
           "mfccs_from_log_mel_spectrograms", "stft", "fft3d", "ifft3d"]
