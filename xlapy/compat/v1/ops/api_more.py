"""The tf.* names of the math, linear algebra, partition and random ops added for issue 21
(special_math_ops, linalg_ops, partition_ops, bits_ops, random_more_ops, placeholder_ops),
and the TF1-in-TF2 scaffolding (behavior.py), collected for xlapy.compat.v1's namespace."""

from __future__ import annotations

from xlapy.compat.v1.behavior import (disable_control_flow_v2, disable_eager_execution,
                                      disable_resource_variables, disable_v2_behavior,
                                      disable_v2_tensorshape, enable_eager_execution,
                                      enable_v2_behavior, executing_eagerly)
from xlapy.compat.v1.image.adjust import random_crop
from xlapy.compat.v1.ops.array_extra_ops import (batch_gather, matrix_set_diag,
                                                 matrix_triangular_solve, roll, setdiff1d,
                                                 tensor_scatter_add, tensor_scatter_nd_add,
                                                 tensor_scatter_nd_sub,
                                                 tensor_scatter_nd_update, tensor_scatter_sub,
                                                 tensor_scatter_update, unravel_index)
from xlapy.compat.v1.ops.io_ops import read_file, write_file
from xlapy.compat.v1.ops.parsing_ops import (FixedLenFeature, FixedLenSequenceFeature,
                                             SparseFeature, VarLenFeature, as_string,
                                             decode_csv, decode_raw, parse_example,
                                             parse_single_example, parse_single_sequence_example,
                                             string_to_number)
from xlapy.compat.v1.ops.nn_extra_ops import depth_to_space, space_to_depth
from xlapy.compat.v1.ops.bits_ops import bitcast, histogram_fixed_width, searchsorted, shape_n
from xlapy.compat.v1.ops.diag_ops import (diag, diag_part, eye, matrix_diag, matrix_diag_part,
                                          matrix_transpose, trace)
from xlapy.compat.v1.ops.linalg_ops import (cholesky, log_matrix_determinant,
                                            matrix_determinant, matrix_inverse, matrix_solve,
                                            qr, self_adjoint_eig, self_adjoint_eigvals, svd)
from xlapy.compat.v1.ops.partition_ops import (dynamic_partition, dynamic_stitch,
                                               invert_permutation, unique_with_counts,
                                               unsorted_segment_max, unsorted_segment_min)
from xlapy.compat.v1.ops.placeholder_ops import placeholder_with_default
from xlapy.compat.v1.ops.random_more_ops import multinomial, random_gamma, random_shuffle
from xlapy.compat.v1.ops.check_ops import (Assert, add_check_numerics_ops, assert_equal,
                                           assert_greater, assert_greater_equal,
                                           assert_integer, assert_less, assert_less_equal,
                                           assert_near, assert_negative, assert_non_negative,
                                           assert_non_positive, assert_none_equal,
                                           assert_positive, assert_proper_iterable,
                                           assert_rank, assert_rank_at_least, assert_rank_in,
                                           assert_same_float_dtype, assert_scalar,
                                           assert_type, check_numerics, is_non_decreasing,
                                           is_numeric_tensor, is_strictly_increasing,
                                           verify_tensor_all_finite)
from xlapy.compat.v1.ops.stats_ops import bincount, confusion_matrix
from xlapy.compat.v1.ops.trig_ops import (acos, acosh, asin, asinh, atan, atan2, atanh, cosh,
                                          rint, sinh, tan)
from xlapy.compat.v1.ops.special_math_ops import (accumulate_n, clip_by_average_norm, digamma,
                                                  div_no_nan, erf, erfc, expm1, lgamma,
                                                  log_sigmoid, round)

__all__ = [
    "disable_control_flow_v2", "disable_eager_execution", "disable_resource_variables",
    "disable_v2_behavior", "disable_v2_tensorshape", "enable_eager_execution",
    "enable_v2_behavior", "executing_eagerly",
    "bitcast", "histogram_fixed_width", "searchsorted", "shape_n",
    "cholesky", "diag", "diag_part", "eye", "log_matrix_determinant", "matrix_determinant",
    "matrix_diag", "matrix_diag_part", "matrix_inverse", "matrix_solve", "matrix_transpose",
    "qr", "self_adjoint_eig", "self_adjoint_eigvals", "svd", "trace",
    "dynamic_partition", "dynamic_stitch", "invert_permutation", "unique_with_counts",
    "unsorted_segment_max", "unsorted_segment_min",
    "placeholder_with_default",
    "multinomial", "random_gamma", "random_shuffle",
    "accumulate_n", "clip_by_average_norm", "digamma", "div_no_nan", "erf", "erfc", "expm1",
    "lgamma", "log_sigmoid", "round", "random_crop",
    "Assert", "add_check_numerics_ops", "assert_equal", "assert_greater",
    "assert_greater_equal", "assert_integer", "assert_less", "assert_less_equal",
    "assert_negative", "assert_non_negative", "assert_non_positive", "assert_none_equal",
    "assert_positive", "assert_rank", "assert_type", "check_numerics", "is_non_decreasing",
    "assert_near", "assert_proper_iterable", "assert_rank_at_least", "assert_rank_in",
    "assert_same_float_dtype", "assert_scalar", "is_numeric_tensor",
    "is_strictly_increasing", "verify_tensor_all_finite", "bincount", "confusion_matrix",
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cosh", "rint", "sinh", "tan",
    "batch_gather", "matrix_set_diag", "matrix_triangular_solve", "roll", "setdiff1d",
    "tensor_scatter_add", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
    "tensor_scatter_nd_update", "tensor_scatter_sub", "tensor_scatter_update",
    "unravel_index", "depth_to_space", "space_to_depth", "read_file", "write_file",
    "FixedLenFeature", "FixedLenSequenceFeature", "SparseFeature", "VarLenFeature",
    "as_string", "decode_csv", "decode_raw", "parse_example", "parse_single_example",
    "parse_single_sequence_example", "string_to_number",
]
