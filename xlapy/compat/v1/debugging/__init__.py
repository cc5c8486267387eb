"""tf.debugging: run-time checks (tf.Assert, check_numerics, the assert_* family)."""

from __future__ import annotations

from xlapy.compat.v1.ops.check_ops import (Assert, assert_all_finite, assert_equal,
                                           assert_greater, assert_greater_equal,
                                           assert_integer, assert_less, assert_less_equal,
                                           assert_near, assert_negative, assert_non_negative,
                                           assert_non_positive, assert_none_equal,
                                           assert_positive, assert_proper_iterable,
                                           assert_rank, assert_rank_at_least, assert_rank_in,
                                           assert_same_float_dtype, assert_scalar,
                                           assert_type, check_numerics, is_non_decreasing,
                                           is_numeric_tensor, is_strictly_increasing)
from xlapy.compat.v1.ops.api import is_finite, is_inf, is_nan
