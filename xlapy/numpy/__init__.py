"""xlapy.numpy: the NumPy API, traceable by xlapy.jit and differentiable by xlapy.grad.

Outside jit every function runs eagerly on NumPy arrays and returns NumPy arrays; inside
jit (or grad) it records primitives. Promotion and broadcasting follow NumPy 2.
"""

from __future__ import annotations

import numpy as _np

from xlapy.numpy._core import (asarray, broadcast_arrays, broadcast_shapes, broadcast_to,
                               ndim, result_type, shape)
from xlapy.numpy._creation import (arange, array, copy, empty, empty_like, eye, full, full_like,
                                   identity, linspace, logspace, meshgrid, ones, ones_like, tri,
                                   zeros, zeros_like)
from xlapy.numpy._indexing import getitem
from xlapy.numpy._linalg import dot, inner, matmul, outer, trace, vdot
from xlapy.numpy._reductions import (all, allclose, amax, amin, any, argmax, argmin,
                                     array_equal, average, count_nonzero, logsumexp, max, mean,
                                     min, nanmax, nanmean, nanmin, nansum, prod, ptp, std, sum,
                                     var)
from xlapy.numpy._shape_ops import (array_split, atleast_1d, atleast_2d, atleast_3d,
                                    column_stack, concat, concatenate, diag, diagonal, diff,
                                    dstack, expand_dims, flip, fliplr, flipud, hstack,
                                    matrix_transpose, moveaxis, permute_dims, ravel, repeat,
                                    reshape, roll, rot90, split, squeeze, stack, swapaxes, tile,
                                    transpose, tril, triu, vstack)
from xlapy.numpy._ufuncs import (abs, absolute, acos, acosh, add, arccos, arccosh, arcsin,
                                 arcsinh, arctan, arctan2, arctanh, around, asin, asinh, atan,
                                 atan2, atanh, bitwise_and, bitwise_invert, bitwise_left_shift,
                                 bitwise_not, bitwise_or, bitwise_right_shift, bitwise_xor, cbrt,
                                 ceil, clip, copysign, cos, cosh, deg2rad,
                                 degrees, divide, divmod, equal, exp, exp2, expm1, fix,
                                 float_power, floor, floor_divide, fmax, fmin, fmod, greater,
                                 greater_equal, heaviside, hypot, invert, isclose, isfinite,
                                 isinf, isnan, isneginf, isposinf, left_shift, less, less_equal,
                                 log, log1p, log2, log10, logaddexp, logaddexp2, logical_and,
                                 logical_not, logical_or, logical_xor, maximum, minimum, mod,
                                 multiply, nan_to_num, negative, not_equal, positive, pow, power,
                                 rad2deg, radians, reciprocal, remainder, right_shift, rint,
                                 round, sign, signbit, sin, sinh, sqrt, square, subtract, tan,
                                 tanh, true_divide, trunc)
from xlapy.numpy._advanced import (at, cumprod, cumsum, einsum, tensordot, take, take_along_axis,
                                   sort, argsort, pad)
from xlapy.numpy._extras import (argwhere, bincount, corrcoef, cov, digitize, flatnonzero,
                                 histogram, interp, intersect1d, isin, isscalar, kron, nonzero,
                                 polyval, searchsorted, setdiff1d, union1d, unique, where)
from xlapy.numpy._vectorize import vectorize
from xlapy.numpy._index_tricks import (diag_indices, diag_indices_from, fill_diagonal, index_exp,
                                       indices, ix_, mgrid, ogrid, ravel_multi_index, s_,
                                       tril_indices, tril_indices_from, triu_indices,
                                       triu_indices_from, unravel_index)
from xlapy.numpy._more_functions import (append, apply_along_axis, block, cross,
                                         cumulative_prod, cumulative_sum, delete, euler_gamma,
                                         fabs, frexp, fromfunction, gcd, i0, insert, lcm, ldexp,
                                         matvec, modf, polyadd, polyder, polyint, polymul,
                                         polysub, rollaxis, select, sinc, unstack, vecdot,
                                         vecmat)
from xlapy.numpy._signals import (bartlett, blackman, convolve, correlate, ediff1d, geomspace,
                                  gradient, hamming, hanning, kaiser, trapezoid, unwrap, vander)
from xlapy.numpy._quantiles import (median, nanargmax, nanargmin, nancumprod, nancumsum,
                                    nanmedian, nanpercentile, nanprod, nanquantile, nanstd,
                                    nanvar, percentile, quantile)
from xlapy.numpy._complex import (angle, conj, conjugate, imag, iscomplex, iscomplexobj, isreal,
                                  isrealobj, real)
from xlapy.numpy._selection import (argpartition, compress, extract, isdtype, lexsort,
                                    partition, piecewise, polyfit, put_along_axis)
from xlapy.numpy._index_more import c_, r_
from xlapy.numpy._numpy_more2 import (apply_over_axes, array_equiv, bitwise_count, choose,
                                      diagflat, dsplit, hsplit, mask_indices, nextafter,
                                      packbits, place, put, resize, sort_complex, spacing,
                                      trim_zeros, unpackbits, vsplit)
from xlapy.numpy._unique_more import (setxor1d, unique_all, unique_counts, unique_inverse,
                                      unique_values)
from xlapy.numpy._histograms import histogram2d, histogram_bin_edges, histogramdd
from xlapy.numpy._polynomials import poly, polydiv, roots
from xlapy.numpy._numpy_host import *  # noqa: F403  (printing, files, NumPy's classes, narrow types)
from xlapy.numpy import fft

# dtype objects, as in NumPy
bool_ = _np.bool_
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
float16, float32, float64 = _np.float16, _np.float32, _np.float64
complex64, complex128 = _np.complex64, _np.complex128
import ml_dtypes as _ml  # noqa: E402

bfloat16 = _ml.bfloat16
bool = _np.bool_
dtype = _np.dtype
# dtype classes and queries (pure metadata: NumPy's own)
generic, number, integer, signedinteger, unsignedinteger, inexact, floating = (
    _np.generic, _np.number, _np.integer, _np.signedinteger, _np.unsignedinteger, _np.inexact,
    _np.floating)
complexfloating = _np.complexfloating
# NumPy's aliases (canonicalized on use as every dtype: 64-bit ones become 32-bit unless x64)
single, double, csingle, cdouble = _np.float32, _np.float64, _np.complex64, _np.complex128
int_, uint, float_, complex_ = _np.int64, _np.uint64, _np.float64, _np.complex128
iinfo, finfo, issubdtype, promote_types, can_cast = (_np.iinfo, _np.finfo, _np.issubdtype,
                                                     _np.promote_types, _np.can_cast)
ndarray = _np.ndarray
pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None


def astype(x, dtype, /, *, copy=True):  # noqa: F811 (NumPy's keyword)
    """x converted to dtype. Float -> int conversions saturate (NaN -> 0), as in XLA, both
    eagerly and under jit (NumPy leaves out-of-range conversions undefined)."""
    return asarray(x, dtype, _where="astype")


def size(x) -> int:
    n = 1
    for d in shape(x):
        n *= d
    return n


def __getattr__(name):
    if name == "linalg":  # imported on first use: it imports xlapy.lax (about 20 ms)
        import xlapy.numpy.linalg as linalg
        return linalg
    # AttributeError in both cases, so hasattr(xlapy.numpy, name) works
    from xlapy.errors import UnsupportedError
    if not name.startswith("_") and hasattr(_np, name):
        raise UnsupportedError(f"numpy.{name} is not supported by xlapy.numpy yet (module "
                               f"'xlapy.numpy' has no attribute '{name}')")
    raise AttributeError(f"module 'xlapy.numpy' has no attribute '{name}'")


from xlapy.numpy import _methods  # noqa: E402  (installs operators on traced values)
