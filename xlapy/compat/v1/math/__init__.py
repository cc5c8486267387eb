"""tf.math: the elementwise, reduction and segment math of TF 1.x under one namespace."""

from __future__ import annotations

from xlapy.compat.v1.ops.activation_ops import l2_normalize, softplus, softsign
from xlapy.compat.v1.ops.api import (count_nonzero, cumprod, cumsum, is_finite, is_inf,
                                     is_nan, logical_xor, reduce_logsumexp, segment_sum,
                                     truncatediv, truncatemod, unsorted_segment_sum)
from xlapy.compat.v1.ops.gather_ops import in_top_k, top_k
from xlapy.compat.v1.ops.math_ops import (abs, add, add_n, argmax, argmin, ceil, cos, divide,
                                          equal, exp, floor, floordiv, floormod, greater,
                                          greater_equal, less, less_equal, log, log1p,
                                          logical_and, logical_not, logical_or, maximum,
                                          minimum, mod, multiply, negative, not_equal, pow,
                                          realdiv, reciprocal, reduce_all, reduce_any,
                                          reduce_max, reduce_mean, reduce_min, reduce_prod,
                                          reduce_sum, rsqrt, scalar_mul, sign, sin, sqrt,
                                          square, squared_difference, subtract, truediv)
from xlapy.compat.v1.ops.nn_ops import log_softmax, sigmoid, softmax, tanh
from xlapy.compat.v1.ops.partition_ops import unsorted_segment_max, unsorted_segment_min
from xlapy.compat.v1.ops.special_math_ops import (accumulate_n, digamma, erf, erfc, expm1,
                                                  lgamma, log_sigmoid, round)
from xlapy.compat.v1.ops.special_math_ops import div_no_nan as divide_no_nan
from xlapy.compat.v1.ops.check_ops import is_non_decreasing, is_strictly_increasing
from xlapy.compat.v1.ops.stats_ops import (bincount, confusion_matrix, reduce_euclidean_norm,
                                           reduce_std, reduce_variance)
from xlapy.compat.v1.ops.trig_ops import (acos, acosh, asin, asinh, atan, atan2, atanh, cosh,
                                          multiply_no_nan, reciprocal_no_nan, rint, sinh, tan,
                                          xdivy, xlogy)
from xlapy.compat.v1.ops.spectral_ops import angle, conj, imag, real
from xlapy.compat.v1.ops.mathx_segment import (segment_max, segment_mean, segment_min,
                                               segment_prod, sparse_segment_mean,
                                               sparse_segment_sqrt_n, sparse_segment_sum,
                                               unsorted_segment_mean, unsorted_segment_prod,
                                               unsorted_segment_sqrt_n)
from xlapy.compat.v1.ops.mathx_special import (bessel_i0e, bessel_i1e, igamma, igammac, lbeta,
                                               nextafter, polygamma, polyval, zeta)
from xlapy.compat.v1.ops.cumulative_logsumexp import cumulative_logsumexp
from xlapy.compat.v1.ops.special_betainc import betainc
