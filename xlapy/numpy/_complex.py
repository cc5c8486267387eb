"""Complex numbers in xlapy.numpy: real, imag, conj/conjugate, angle, and the dtype
predicates iscomplexobj, isrealobj, iscomplex, isreal (NumPy's functions; complex64 and
complex128 arrays, 64-bit canonicalized to complex64 when x64 is off, as in JAX).

real/imag/conj of a real array follow NumPy (real: the array, imag: zeros, conj: the
array), abs of a complex array is its magnitude in the component float type.
"""

from __future__ import annotations

import numpy as np

from xlapy.frontend.core import Tracer
from xlapy.frontend.dtypes import canonicalize_value
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives import complex as C
from xlapy.numpy._core import asarray, cast, dtype_of, float_dtype_for


def _is_complex(x) -> bool:
    return dtype_of(x).kind == "c"


def _copy(x):
    return x if isinstance(x, Tracer) else canonicalize_value(np.array(x, copy=True))


def real(val):
    x = asarray(val)
    return C.real(x) if _is_complex(x) else _copy(x)


def imag(val):
    x = asarray(val)
    return C.imag(x) if _is_complex(x) else B.full(np.shape(x) if not isinstance(x, Tracer)
                                                   else x.shape, 0, dtype_of(x))


def conjugate(x):
    x = asarray(x)
    return C.conj(x) if _is_complex(x) else _copy(x)


conj = conjugate


def angle(z, deg: bool = False):
    """The argument of z: atan2(imag, real) (float for real input, as NumPy)."""
    z = asarray(z)
    if _is_complex(z):
        re, im = C.real(z), C.imag(z)
    else:
        re = cast(z, float_dtype_for(dtype_of(z)))
        im = B.zeros_like(re)
    out = B.atan2(im, re)
    return B.mul(out, B.full_like(out, 180 / np.pi)) if deg else out


def iscomplexobj(x) -> bool:
    return _is_complex(x) if isinstance(x, Tracer) else np.iscomplexobj(x)


def isrealobj(x) -> bool:
    return not iscomplexobj(x)


def _imag_is_zero(x, real_dtype_answer: bool, compare):
    """compare(imag(x), 0) elementwise; the constant answer for a real dtype."""
    x = asarray(x)
    if not _is_complex(x):
        return B.full(x.shape if isinstance(x, Tracer) else np.shape(x), real_dtype_answer,
                      np.bool_)
    im = C.imag(x)
    return compare(im, B.zeros_like(im))


def iscomplex(x):
    return _imag_is_zero(x, False, B.ne)


def isreal(x):
    return _imag_is_zero(x, True, B.eq)
