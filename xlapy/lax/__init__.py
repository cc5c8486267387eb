"""xlapy.lax: the strict, XLA-shaped API under xlapy.numpy (like jax.lax).

Control flow (xlapy.lax.control): fori_loop, while_loop, cond, switch, scan.
Array operations (xlapy.lax.ops): dynamic slicing, convolution, windowed reductions, ...
Sorting, scans, gather/scatter with dimension numbers, special functions
(xlapy.lax.more_ops): sort, top_k, cumsum, associative_scan, map, gather, scatter_add, ...
More (xlapy.lax.more_ops2): tile, stack, unstack, mulhi, reduce_xor, scatter_sub,
scatter_apply, index_take, conv_general_dilated_patches, the *_shape_tuple helpers,
platform_dependent, betainc, empty; rng_bit_generator (XLA's cpu bits) and rng_uniform
(xlapy.lax.random_bits).
Linear algebra (xlapy.lax.linalg): cholesky, qr, svd, eigh, triangular_solve, lu;
custom_linear_solve, custom_root (xlapy.lax.implicit): solves differentiated implicitly.
Precision (per-operand precision= of dots and convolutions), RoundingMethod (lax.round),
reduce_precision, nextafter (xlapy.lax.float_bits).
Complex numbers and Fourier transforms: complex, real, imag, conj, fft (FftType).
Collectives over a vmap's named axis (xlapy.lax.collectives): psum, pmean, pmax, pmin, ...
"""

from xlapy.frontend.primitives.bitcast import bitcast_convert_type
from xlapy.lax import linalg
from xlapy.lax.collectives import (all_gather, all_to_all, axis_index, pmax, pmean, pmin,
                                   ppermute, pswapaxes, psum, psum_scatter)
from xlapy.lax.control import cond, fori_loop, scan, switch, while_loop
from xlapy.lax.ops import *  # noqa: F403
from xlapy.lax.more_ops import *  # noqa: F403
from xlapy.lax.more_ops2 import *  # noqa: F403
from xlapy.lax.random_bits import RandomAlgorithm, rng_bit_generator, rng_uniform
from xlapy.frontend.primitives.complex import complex_ as complex, conj, imag, real
from xlapy.lax.fft import FftType, fft
from xlapy.frontend.precision import Precision, RoundingMethod
from xlapy.lax.float_bits import nextafter, reduce_precision
from xlapy.lax.implicit import custom_linear_solve, custom_root
