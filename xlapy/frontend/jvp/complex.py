"""JVP rules of primitives/complex.py and fft.py: real, imag, complex, conj and fft are linear."""

from __future__ import annotations

from xlapy.frontend.jvp.rules import linear
from xlapy.frontend.primitives.complex import complex_p, conj_p, imag_p, real_p
from xlapy.frontend.primitives.fft import fft_p

for _p in (real_p, imag_p, complex_p, conj_p):
    linear(_p)
linear(fft_p)
