"""Interpreter rules for the complex-number opcodes: complex, real, imag, and fft.

  complex(re, im)  c64 from two f32 arrays, c128 from two f64 arrays.
  real, imag       the parts of a complex array; on a float array real is the operand and
                   imag is zeros (as XLA defines them).
  fft              fft_type FFT (forward, unnormalized), IFFT (inverse, scaled by 1/N),
                   RFFT (real input, the n/2+1 non-negative frequencies of the last
                   dimension), IRFFT (the inverse of RFFT: the imaginary parts of the
                   self-conjugate bins are ignored, as pocketfft and XLA do), over the last
                   len(fft_length) dimensions; computed in c128/f64 with numpy.fft and
                   rounded to the result type.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import EvaluationError
from xlapy.hlo.evaluator.elementwise import operand_arrays, require_kinds
from xlapy.hlo.evaluator.evaluator import eval_rule
from xlapy.hlo.opcodes import OPCODES


@eval_rule("complex")
def _complex(ev, instr, operands):
    re, im = operand_arrays(instr, operands)
    require_kinds(instr, re, OPCODES["complex"].types)
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), dtype=instr.shape.dtype)
    out.real, out.imag = re, im
    return out


@eval_rule("real")
def _real(ev, instr, operands):
    (x,) = operand_arrays(instr, operands)
    require_kinds(instr, x, OPCODES["real"].types)
    return np.array(x.real)


@eval_rule("imag")
def _imag(ev, instr, operands):
    (x,) = operand_arrays(instr, operands)
    require_kinds(instr, x, OPCODES["imag"].types)
    return np.array(x.imag) if np.iscomplexobj(x) else np.zeros_like(x)


@eval_rule("fft")
def _fft(ev, instr, operands):
    (x,) = operand_arrays(instr, operands)
    kind = instr.attrs.get("fft_type")
    lengths = tuple(instr.attrs.get("fft_length") or ())
    if kind not in ("FFT", "IFFT", "RFFT", "IRFFT") or not 1 <= len(lengths) <= 3:
        raise EvaluationError(f"{instr.where()}fft needs fft_type=FFT|IFFT|RFFT|IRFFT and 1 to "
                              f"3 fft_length entries: {instr}")
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    out_dtype = instr.shape.dtype
    if x.size == 0 or 0 in lengths:
        return np.zeros(instr.shape.dims, dtype=out_dtype)
    if kind == "RFFT":
        y = np.fft.rfftn(x.astype(np.float64), s=lengths, axes=axes)
    elif kind == "IRFFT":
        y = np.fft.irfftn(x.astype(np.complex128), s=lengths, axes=axes)
    elif kind == "FFT":
        y = np.fft.fftn(x.astype(np.complex128), s=lengths, axes=axes)
    else:
        y = np.fft.ifftn(x.astype(np.complex128), s=lengths, axes=axes)
    return np.asarray(y.astype(out_dtype))
