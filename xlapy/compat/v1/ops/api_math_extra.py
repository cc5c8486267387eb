"""TF 1.x top-level math additions (segment reductions, special functions, edit distance,
...) and the functions tf.math / tf.linalg / tf.sparse / tf.sets take from here."""

from __future__ import annotations

from xlapy.compat.v1.ops.mathx_linalg import matrix_solve_ls
from xlapy.compat.v1.ops.mathx_segment import (segment_max, segment_mean, segment_min,
                                               segment_prod, sparse_segment_mean,
                                               sparse_segment_sqrt_n, sparse_segment_sum,
                                               sparse_segment_sum_with_num_segments,
                                               unsorted_segment_prod, unsorted_segment_sqrt_n)
from xlapy.compat.v1.ops.mathx_sets import edit_distance
from xlapy.compat.v1.ops.mathx_special import cross, igamma, igammac, lbeta, polygamma, zeta
from xlapy.compat.v1.ops.stats_ops import reduce_euclidean_norm

__all__: list = [
    "cross", "edit_distance", "igamma", "igammac", "lbeta", "matrix_solve_ls", "polygamma",
    "reduce_euclidean_norm", "segment_max", "segment_mean", "segment_min", "segment_prod",
    "sparse_segment_mean", "sparse_segment_sqrt_n", "sparse_segment_sum",
    "sparse_segment_sum_with_num_segments", "unsorted_segment_prod",
    "unsorted_segment_sqrt_n", "zeta",
]

