"""JAX's LAPACK custom-calls (hlo/lapack_calls.py): modules jax lowers for jnp.linalg and
jax.scipy.linalg run on the interpreter (hlo/evaluator/lapack.py) and the cpu backend
(emitters/lapack_calls.py); both call scipy's LAPACK as jaxlib does, so they agree bitwise
with each other and with XLA (jax.jit of the same function) up to the surrounding HLO."""

from __future__ import annotations

import numpy as np
import pytest

from xlapy.backends.base import flatten, get_platform
from xlapy.errors import EvaluationError, LoweringError
from xlapy.hlo import parse
from xlapy.hlo.evaluator import evaluate

from xlapy_tests_cpu_jax_lowered import run_lowered

jax = pytest.importorskip("jax")
jnp, jsl = jax.numpy, jax.scipy.linalg
RNG = np.random.default_rng(7)


def _run_all(f, *args, bitwise=True):
    """(interpreter, cpu, xla) output lists of f lowered by jax."""
    text, ref, want = run_lowered(jax, f, *args, bitwise=bitwise)
    return ref, want


def _m(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


CASES = {   # name: (function, argument shapes, bitwise against jax)
    "inv": (jnp.linalg.inv, [(2, 5, 5)], True),
    "solve": (jnp.linalg.solve, [(5, 5), (5, 3)], True),
    "det": (jnp.linalg.det, [(3, 4, 4)], False),   # its product: XLA's own reduce order
    "slogdet": (jnp.linalg.slogdet, [(4, 4)], True),
    "eigh": (jnp.linalg.eigh, [(2, 6, 6)], True),
    "eigvalsh": (jnp.linalg.eigvalsh, [(6, 6)], True),
    "svd_full": (jnp.linalg.svd, [(2, 6, 4)], True),
    "svd_thin": (lambda x: jnp.linalg.svd(x, full_matrices=False), [(4, 6)], True),
    "svdvals": (lambda x: jnp.linalg.svd(x, compute_uv=False), [(6, 4)], True),
    "svd_qr": (lambda x: jax.lax.linalg.svd(x, algorithm=jax.lax.linalg.SvdAlgorithm.QR),
               [(5, 3)], True),
    "qr": (jnp.linalg.qr, [(2, 6, 4)], True),
    "qr_complete": (lambda x: jnp.linalg.qr(x, mode="complete"), [(6, 4)], True),
    "qr_wide": (jnp.linalg.qr, [(3, 5)], True),
    "cholesky": (lambda x: jnp.linalg.cholesky(x @ jnp.swapaxes(x, -1, -2)), [(2, 5, 5)],
                 False),   # the dot before it is not bitwise XLA's in f64
    "lstsq": (lambda a, b: jnp.linalg.lstsq(a, b)[0], [(6, 4), (6, 2)], False),
    "pinv": (jnp.linalg.pinv, [(6, 4)], False),
    "matrix_rank": (jnp.linalg.matrix_rank, [(6, 4)], True),
    "norm2": (lambda x: jnp.linalg.norm(x, 2), [(6, 4)], True),
    "lu": (jsl.lu, [(5, 5)], True),
    "lu_solve": (lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b), [(5, 5), (5, 2)], True),
    "solve_triangular": (lambda a, b: jsl.solve_triangular(a, b, lower=True, trans=1),
                         [(5, 5), (5, 3)], True),
    "solve_triangular_unit": (lambda a, b: jsl.solve_triangular(a, b, unit_diagonal=True),
                              [(5, 5), (5,)], True),
    "right_trsm": (lambda a, b: jax.lax.linalg.triangular_solve(a, b, left_side=False,
                                                                lower=True), [(4, 4), (3, 4)],
                   True),
    "cho_solve": (lambda a, b: jsl.cho_solve(jsl.cho_factor(a @ a.T + 5 * jnp.eye(5)), b),
                  [(5, 5), (5, 2)], False),
    "schur": (jsl.schur, [(5, 5)], True),
    "hessenberg": (lambda a: jsl.hessenberg(a, calc_q=True), [(5, 5)], True),
    "tridiagonal": (jax.lax.linalg.tridiagonal, [(5, 5)], True),
    "tridiagonal_solve": (jax.lax.linalg.tridiagonal_solve, [(5,), (5,), (5,), (5, 2)], True),
    "expm": (lambda a: jsl.expm(a / 4), [(4, 4)], False),   # lu_solve inside a conditional
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_jax_linalg_modules(name, dtype):
    f, shapes, bitwise = CASES[name]
    _run_all(f, *[_m(*s, dtype=dtype) for s in shapes], bitwise=bitwise)


def test_singular_and_nan_inputs_follow_jax():
    """info > 0 (singular / not positive definite / NaN): jax's masking of the result runs
    in the module; the routine's outputs and info must be XLA's for it to come out right."""
    sing = np.array([[1, 2, 3], [2, 4, 6], [1, 0, 1]], np.float32)
    nan = _m(3, 3)
    nan[1, 1] = np.nan
    for f in (jnp.linalg.inv, jnp.linalg.det, jnp.linalg.slogdet, jnp.linalg.cholesky,
              jnp.linalg.eigh, jnp.linalg.svd):
        for a in (sing, nan, np.stack([sing, nan, np.eye(3, dtype=np.float32)])):
            _run_all(f, a)


@pytest.mark.parametrize("shape", [(0, 3, 3), (2, 0, 0), (1, 1)])
def test_empty_and_one_by_one(shape):
    a = _m(*shape) + 3 * np.eye(shape[-1], dtype=np.float32)
    for f in (jnp.linalg.inv, jnp.linalg.eigh, jnp.linalg.qr, jnp.linalg.det):
        _run_all(f, a)


def _geev_input(dtype, *shape):
    rng = np.random.default_rng(3)   # its own: the other tests' draws stay as they were
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_geev(dtype):
    """eig, eigvals, and left eigenvectors too (real geev: packed conjugate-pair vectors
    unpacked into complex columns, as jaxlib's kernel does)."""
    a = _geev_input(dtype, 3, 5, 5)
    _run_all(jnp.linalg.eig, a)
    _run_all(jnp.linalg.eigvals, a[0])
    _run_all(lambda x: jax.lax.linalg.eig(x, compute_left_eigenvectors=True), a[1])


def test_geev_nonfinite_and_real_pairs():
    """Inputs with inf or NaN skip geev (NaN results, as jaxlib); a rotation has a
    conjugate pair."""
    bad = _geev_input(np.float32, 3, 4, 4)
    bad[0, 1, 2], bad[1, 0, 0] = np.inf, np.nan
    rot = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]], np.float32)
    for a in (bad, rot, (bad * (1 - 2j)).astype(np.complex64)):
        _run_all(jnp.linalg.eig, a)
        _run_all(jnp.linalg.eigvals, a)


def _hlo(result, operands, target, config=""):
    params = "\n".join(f"  p{i} = {s} parameter({i})" for i, s in enumerate(operands))
    args = ", ".join(f"p{i}" for i in range(len(operands)))
    cfg = f", backend_config={{{config}}}" if config else ""
    return (f"HloModule m\nENTRY e {{\n{params}\n  ROOT c = {result} custom-call({args}), "
            f'custom_call_target="{target}"{cfg}\n}}\n')


def test_row_major_results_and_raw_getrf_pivots():
    """Results in any layout (here row-major, as xlapy's own builder makes them); pivots are
    LAPACK's 1-based ones, info the first zero pivot."""
    import scipy.linalg
    text = _hlo("(f64[2,4,4], s32[2,4], s32[2])", ["f64[2,4,4]"], "lapack_dgetrf_ffi")
    a = _m(2, 4, 4, dtype=np.float64)
    a[1, :, 2] = 0.0                                  # singular: U[2,2] = 0
    lu, piv, info = (np.asarray(x) for x in flatten(
        get_platform("cpu").compiler.compile(parse(text)).run(a)))
    for k in range(2):
        want_lu, want_piv, want_info = scipy.linalg.lapack.dgetrf(a[k])
        np.testing.assert_array_equal(lu[k], want_lu)
        np.testing.assert_array_equal(piv[k], want_piv + 1)
        assert info[k] == want_info
    assert info[1] == 3
    ref = [np.asarray(x) for x in flatten(evaluate(parse(text), a))]
    for g, r in zip((lu, piv, info), ref):
        np.testing.assert_array_equal(g, r)


@pytest.mark.parametrize("result,operands,target,config,message", [
    ("(f32[3,3], s32[])", ["f32[3,4]"], "lapack_spotrf_ffi", "uplo = 76 : ui8",
     "needs square matrices"),
    ("(f64[3,3], s32[])", ["f32[3,3]"], "lapack_dpotrf_ffi", "uplo = 76 : ui8",
     "operand 0 must be a float64 array"),
    ("(f32[4,3], f32[3], f32[4,4], f32[3,3], s32[])", ["f32[4,3]"], "lapack_sgesdd_ffi",
     "mode = 79 : ui8", "mode must be one of A, S, N, got 'O'"),
    ("(f32[4,3], f32[3], f32[4,3], f32[3,3], s32[])", ["f32[4,3]"], "lapack_sgesdd_ffi",
     "mode = 65 : ui8", r"result 2 must have dims \[4, 4\], got \[4, 3\]"),
    ("f32[3,2]", ["f32[2,2]", "f32[3,2]"], "lapack_strsm_ffi", "side = 76 : ui8",
     "the triangular matrix must be 3x3"),
    ("(f32[4,4], f32[4,4], f32[4], f32[4], s32[], s32[])", ["f32[4,4]"], "lapack_sgees_ffi",
     "mode = 86 : ui8, sort = 83 : ui8", r"sorting the eigenvalues \(sort = S\)"),
    ("(f32[3], f32[3], f32[3,3], f32[3,3], s32[])", ["f32[3,3]"], "lapack_sgeev_ffi",
     "compute_left = 78 : ui8, compute_right = 86 : ui8", "result 2 must be a complex64 array"),
    ("(f64[3], f64[3], c128[3,3], c128[3,3], s32[])", ["f64[3,3]"], "lapack_dgeev_ffi",
     "compute_right = 79 : ui8", "compute_right must be one of V, N, got 'O'"),
])
def test_contract_errors_name_the_problem(result, operands, target, config, message):
    text = _hlo(result, operands, target, config)
    args = [np.zeros([int(d) for d in s[4:-1].split(",")], np.float32 if s[:3] == "f32"
                     else np.float64) for s in operands]
    with pytest.raises(EvaluationError, match=rf"line \d+:\d+: {target}: .*{message}"):
        evaluate(parse(text), *args)
    with pytest.raises(LoweringError, match=rf"line \d+:\d+: {target}: .*{message}"):
        get_platform("cpu").compiler.compile(parse(text))
