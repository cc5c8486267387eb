"""Complex-number primitives: real, imag, complex, conj (jax.lax's), and their rules.

Differentiation follows JAX's convention for complex values: VJPs are the transposes of the
(real-)linear tangent maps, without conjugation, so grad of a real loss through complex
intermediates is JAX's (the conjugate of the Wirtinger gradient dL/dz*, times 2: for
L = |z|^2 the gradient is 2 conj(z)):
  real(z)          linear; transpose of a real cotangent t: complex(t, 0)
  imag(z)          linear; transpose: complex(0, -t)
  complex(x, y)    linear; transpose of a complex cotangent t: (real(t), -imag(t))
  conj(z)          linear; transpose: conj(t) (real(t) when the operand is real)
conj has no HLO opcode: it lowers to complex(real(z), -imag(z)), as XLA's clients do; on a
real operand it returns the operand converted to the complex dtype `input_dtype` says, as
jax.lax.conj does.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ShapeError
from xlapy.frontend.core import ShapedArray, bind, primitive
from xlapy.frontend.eager import via_evaluator
from xlapy.frontend.primitives.basic import (aval_of, check_same, convert, is_complex,
                                             is_float, neg, real_dtype)

_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}


def complex_dtype(dtype) -> np.dtype:
    """The complex dtype whose parts have `dtype` (float32 -> complex64); complex dtypes
    are their own; f16/bf16 and integers promote to complex64 (as JAX)."""
    dt = np.dtype(dtype)
    if is_complex(dt):
        return dt
    return _COMPLEX_OF.get(dt, np.dtype(np.complex64))


def _part_aval(name):
    def aval(a):
        if not (is_complex(a.dtype) or is_float(a.dtype)):
            raise ShapeError(f"{name}: expects a floating-point or complex element type, got {a}")
        return ShapedArray(a.shape, real_dtype(a.dtype), a.weak_type)
    return aval


real_p = primitive("real")
real_p.def_impl(via_evaluator(real_p))
real_p.def_abstract_eval(_part_aval("real"))
real_p.def_lowering(lambda ctx, x: ctx.b.op("real", x))

imag_p = primitive("imag")
imag_p.def_impl(via_evaluator(imag_p))
imag_p.def_abstract_eval(_part_aval("imag"))
imag_p.def_lowering(lambda ctx, x: ctx.b.op("imag", x))

complex_p = primitive("complex")
complex_p.def_impl(via_evaluator(complex_p))


@complex_p.def_abstract_eval
def _complex_aval(x, y):
    a = check_same("complex", x, y)
    if a.dtype not in _COMPLEX_OF:
        raise ShapeError(f"complex: expects float32 or float64 parts, got {x} and {y}")
    return ShapedArray(a.shape, _COMPLEX_OF[a.dtype], a.weak_type)


complex_p.def_lowering(lambda ctx, x, y: ctx.b.op("complex", x, y))

conj_p = primitive("conj")
conj_p.def_impl(via_evaluator(conj_p))


@conj_p.def_abstract_eval
def _conj_aval(a, input_dtype):
    if not (is_complex(a.dtype) or is_float(a.dtype)):
        raise ShapeError(f"conj: expects a floating-point or complex element type, got {a}")
    return ShapedArray(a.shape, complex_dtype(a.dtype), a.weak_type)


def _conj_lowering(ctx, x, input_dtype):
    b = ctx.b
    if not x.shape.element_type.is_complex:
        return b.convert(x, complex_dtype(x.shape.element_type.np_dtype))
    return b.op("complex", b.op("real", x), b.negate(b.op("imag", x)))


conj_p.def_lowering(_conj_lowering)


def real(x):
    return bind(real_p, x)


def imag(x):
    return bind(imag_p, x)


def complex_(x, y):
    return bind(complex_p, x, y)


def conj(x):
    return bind(conj_p, x, input_dtype=np.dtype(aval_of(x).dtype))


def _zeros(x):
    from xlapy.frontend.primitives.basic import zeros_like
    return zeros_like(x)


real_p.def_vjp(lambda ct, x, out: (complex_(ct, _zeros(ct)) if is_complex(aval_of(x).dtype)
                                   else ct,))
imag_p.def_vjp(lambda ct, x, out: (complex_(_zeros(ct), neg(ct)) if is_complex(aval_of(x).dtype)
                                   else None,))
complex_p.def_vjp(lambda ct, x, y, out: (real(ct), neg(imag(ct))))
conj_p.def_vjp(lambda ct, x, out, input_dtype: (
    conj(ct) if is_complex(input_dtype) else convert(real(ct), input_dtype),))

__all__ = ["real", "imag", "complex_", "conj", "complex_dtype", "real_p", "imag_p",
           "complex_p", "conj_p"]
