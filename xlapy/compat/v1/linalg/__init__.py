"""tf.linalg: TF 1.x's linear algebra namespace (batched over leading dimensions;
tf.linalg.matmul is tf.matmul, BatchMatMulV2 above rank 2)."""

from __future__ import annotations

from xlapy.compat.v1.ops.activation_ops import l2_normalize
from xlapy.compat.v1.ops.api import einsum, matrix_band_part as band_part, norm, tensordot
from xlapy.compat.v1.ops.diag_ops import (eye, matrix_diag as diag,
                                          matrix_diag_part as diag_part,
                                          matrix_transpose as transpose, trace)
from xlapy.compat.v1.ops.linalg_ops import (cholesky, logdet, matrix_determinant as det,
                                            matrix_inverse as inv, matrix_solve as solve,
                                            matvec, qr, self_adjoint_eig as eigh,
                                            self_adjoint_eigvals as eigvalsh, svd)
from xlapy.compat.v1.ops.linalg_ops import log_matrix_determinant as slogdet
from xlapy.compat.v1.ops.math_ops import matmul
from xlapy.compat.v1.ops.array_extra_ops import (matrix_set_diag as set_diag,
                                                 matrix_triangular_solve as triangular_solve)
from xlapy.compat.v1.ops.clip_ops import global_norm
from xlapy.compat.v1.ops.diag_ops import matrix_transpose
from xlapy.compat.v1.ops.mathx_linalg import cholesky_solve, expm, lstsq, pinv
from xlapy.compat.v1.ops.mathx_special import cross
from xlapy.compat.v1.ops.matrix_sqrt_ops import sqrtm
from xlapy.compat.v1.linalg.linear_operator import (LinearOperator, LinearOperatorDiag,
                                                    LinearOperatorFullMatrix,
                                                    LinearOperatorIdentity)


def adjoint(matrix, name=None):
    """The conjugate transpose of the innermost two dimensions (tf.linalg.adjoint)."""
    return matrix_transpose(matrix, name=name or "adjoint", conjugate=True)
