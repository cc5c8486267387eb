"""xlapy.numpy: the NumPy API, traceable by xlapy.jit and differentiable by xlapy.grad.

Outside jit every function runs eagerly on NumPy arrays and returns NumPy arrays; inside
jit (or grad) it records primitives. Promotion and broadcasting follow NumPy 2.
"""

from __future__ import annotations

import numpy as _np

from xlapy.numpy._core import (asarray, broadcast_arrays, broadcast_shapes, broadcast_to,
                               ndim, result_type, shape)
from xlapy.numpy._creation import (arange, empty, eye, full, full_like, identity, linspace,
                                   ones, ones_like, zeros, zeros_like)
from xlapy.numpy._indexing import getitem
from xlapy.numpy._linalg import dot, inner, matmul, outer, vdot
from xlapy.numpy._reductions import (all, amax, amin, any, argmax, argmin, logsumexp, max,
                                     mean, min, prod, std, sum, var)
from xlapy.numpy._shape_ops import (concatenate, expand_dims, flip, fliplr, flipud, hstack,
                                    moveaxis, ravel, reshape, split, squeeze, stack, swapaxes,
                                    transpose, vstack)
from xlapy.numpy._ufuncs import (abs, absolute, add, arctan2, around, bitwise_and, bitwise_not,
                                 bitwise_or, bitwise_xor, cbrt, ceil, clip, cos, divide, equal,
                                 exp, exp2, expm1, floor, floor_divide, fmax, fmin, fmod, greater,
                                 greater_equal, invert, isfinite, isinf, isnan, left_shift, less,
                                 less_equal, log, log1p, log2, log10, logical_and, logical_not,
                                 logical_or, logical_xor, maximum, minimum, mod, multiply,
                                 negative, not_equal, positive, power, reciprocal, remainder,
                                 right_shift, rint, round, sign, sin, sqrt, square, subtract, tan,
                                 tanh, true_divide, where)
from xlapy.numpy._advanced import at, cumprod, cumsum, einsum, tensordot, take, take_along_axis, sort, argsort, pad  # noqa: E501

# dtype objects, as in NumPy
bool_ = _np.bool_
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
float16, float32, float64 = _np.float16, _np.float32, _np.float64
import ml_dtypes as _ml  # noqa: E402

bfloat16 = _ml.bfloat16
dtype = _np.dtype
ndarray = _np.ndarray
pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None


def astype(x, dtype):
    return asarray(x, dtype)


def size(x) -> int:
    n = 1
    for d in shape(x):
        n *= d
    return n


def __getattr__(name):
    from xlapy.errors import XlapyError
    if hasattr(_np, name):
        raise XlapyError(f"numpy.{name} is not supported by xlapy.numpy yet")
    raise AttributeError(f"module 'xlapy.numpy' has no attribute '{name}'")


from xlapy.numpy import _methods  # noqa: E402,F401  (installs operators on traced values)
