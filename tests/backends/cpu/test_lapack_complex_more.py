"""The complex LAPACK custom-calls of cholesky, eigh and qr (lapack_[cz]potrf_ffi,
lapack_[cz]heevd_ffi, lapack_[cz]geqrf_ffi, lapack_[cz]ungqr_ffi; hlo/lapack_calls.py): the
modules jax lowers for them run on the interpreter and on the cpu backend, which agree with
each other bitwise (one plan, one routine) and with XLA (jax.jit of the same function); and
the `cholesky` opcode on complex matrices (the cpu backend's potrf emitter and the
evaluator's rule)."""

from __future__ import annotations

import numpy as np
import pytest

from xlapy.backends.base import get_platform
from xlapy.errors import EvaluationError, LoweringError
from xlapy.hlo import parse
from xlapy.hlo.evaluator import evaluate

from xlapy_tests_cpu_jax_lowered import run_lowered
from xlapy.hlo.lapack_calls import is_lapack_target, targets

jax = pytest.importorskip("jax")
jnp, jsl = jax.numpy, jax.scipy.linalg
RNG = np.random.default_rng(23)
TOL = {np.complex64: 1e-5, np.complex128: 1e-12}


def _c(*shape, dtype=np.complex64):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def _hpd(*shape, dtype=np.complex64):
    """Well-conditioned Hermitian positive definite matrices."""
    a = _c(*shape, dtype=np.complex128)
    h = a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])
    return h.astype(dtype)


def _run_all(f, *args, bitwise=True):
    """(interpreter, cpu, xla) outputs of f lowered by jax; the text too."""
    text, ref, want = run_lowered(jax, f, *args, bitwise=bitwise)
    return text, ref


def test_the_complex_targets_are_listed():
    for t in "cz":
        for r in ("potrf", "heevd", "geqrf", "ungqr"):
            assert is_lapack_target(f"lapack_{t}{r}_ffi") and f"lapack_{t}{r}_ffi" in targets()
    for bad in ("lapack_sheevd_ffi", "lapack_dungqr_ffi", "lapack_csyevd_ffi",
                "lapack_zorgqr_ffi"):
        assert not is_lapack_target(bad) and bad not in targets()


CASES = {   # name: (function, argument maker, the targets it must call, bitwise)
    "cholesky": (jnp.linalg.cholesky, lambda dt: [_hpd(2, 5, 5, dtype=dt)], ("potrf",), True),
    "cholesky_upper": (lambda x: jnp.linalg.cholesky(x, upper=True),
                       lambda dt: [_hpd(4, 4, dtype=dt)], ("potrf",), True),
    "cho_solve": (lambda a, b: jsl.cho_solve(jsl.cho_factor(a), b),
                  lambda dt: [_hpd(5, 5, dtype=dt), _c(5, 2, dtype=dt)], ("potrf", "trsm"),
                  True),
    "eigh": (jnp.linalg.eigh, lambda dt: [_hpd(2, 6, 6, dtype=dt)], ("heevd",), True),
    "eigh_upper": (lambda x: jnp.linalg.eigh(x, UPLO="U"), lambda dt: [_c(5, 5, dtype=dt)],
                   ("heevd",), True),
    "eigvalsh": (jnp.linalg.eigvalsh, lambda dt: [_c(6, 6, dtype=dt)], ("heevd",), True),
    "qr": (jnp.linalg.qr, lambda dt: [_c(2, 6, 4, dtype=dt)], ("geqrf", "ungqr"), True),
    "qr_complete": (lambda x: jnp.linalg.qr(x, mode="complete"),
                    lambda dt: [_c(6, 4, dtype=dt)], ("geqrf", "ungqr"), True),
    "qr_wide": (jnp.linalg.qr, lambda dt: [_c(3, 5, dtype=dt)], ("geqrf", "ungqr"), True),
    "qr_r": (lambda x: jnp.linalg.qr(x, mode="r"), lambda dt: [_c(5, 3, dtype=dt)],
             ("geqrf",), True),
}


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["c64", "c128"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_jax_complex_linalg_modules(name, dtype):
    f, make, routines, bitwise = CASES[name]
    text, _ = _run_all(f, *make(dtype), bitwise=bitwise)
    t = "c" if dtype == np.complex64 else "z"
    for r in routines:
        assert f"lapack_{t}{r}_ffi" in text


def test_jax_complex_results_are_right():
    """The modules' results are the factorizations NumPy computes (not only XLA's bits)."""
    a = _hpd(3, 5, 5, dtype=np.complex128)
    _, (chol,) = _run_all(jnp.linalg.cholesky, a)
    np.testing.assert_allclose(chol, np.linalg.cholesky(a), rtol=1e-12, atol=1e-12)
    _, (w, v) = _run_all(jnp.linalg.eigh, a)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], rtol=1e-10, atol=1e-10)
    x = _c(6, 4, dtype=np.complex128)
    _, (q, r) = _run_all(jnp.linalg.qr, x)
    np.testing.assert_allclose(q @ r, x, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.conj(q.T) @ q, np.eye(4), atol=1e-12)


def test_not_positive_definite_and_nan_follow_jax():
    bad = np.array([[1, 2j], [-2j, 1]], np.complex64)          # Hermitian, eigenvalues -1, 3
    nan = _hpd(3, 3)
    nan[1, 1] = np.nan
    for f in (jnp.linalg.cholesky, jnp.linalg.eigh):
        for a in (bad, nan):
            _run_all(f, a)
    _, (out,) = _run_all(jnp.linalg.cholesky, bad)
    assert np.isnan(out[np.tril_indices(2)]).all()   # (jax zeros the upper triangle)


@pytest.mark.parametrize("shape", [(0, 3, 3), (2, 0, 0), (1, 1)])
def test_empty_and_one_by_one(shape):
    a = _c(*shape) + 3 * np.eye(shape[-1], dtype=np.complex64)
    for f in (jnp.linalg.eigh, jnp.linalg.qr, jnp.linalg.cholesky):
        _run_all(f, a)


def _hlo(result, operands, target, config):
    params = "\n".join(f"  p{i} = {s} parameter({i})" for i, s in enumerate(operands))
    names = ", ".join(f"p{i}" for i in range(len(operands)))
    return (f"HloModule m\n\nENTRY e {{\n{params}\n  ROOT c = {result} custom-call({names}), "
            f"custom_call_target=\"{target}\", api_version=API_VERSION_TYPED_FFI, "
            f"backend_config={{{config}}}\n}}\n")


@pytest.mark.parametrize("result,operands,target,config,message", [
    ("(c64[3,3], c64[3], s32[])", ["c64[3,3]"], "lapack_cheevd_ffi", "mode = 86 : ui8",
     "result 1 must be a float32 array"),
    ("(c128[3,3], f64[3], s32[])", ["c128[3,3]"], "lapack_zheevd_ffi", "mode = 79 : ui8",
     "mode must be one of V, N, got 'O'"),
    ("c64[3,4]", ["c64[3,4]", "c64[2]"], "lapack_cungqr_ffi", "", "needs m >= n >= k"),
    ("(c64[3,3], s32[])", ["c128[3,3]"], "lapack_cpotrf_ffi", "uplo = 76 : ui8",
     "operand 0 must be a complex64 array"),
])
def test_contract_errors_name_the_problem(result, operands, target, config, message):
    text = _hlo(result, operands, target, config)
    dts = {"c64": np.complex64, "c128": np.complex128}
    args = [np.zeros([int(d) for d in s[s.index("[") + 1:-1].split(",")], dts[s[:s.index("[")]])
            for s in operands]
    with pytest.raises(EvaluationError, match=rf"line \d+:\d+: {target}: .*{message}"):
        evaluate(parse(text), *args)
    with pytest.raises(LoweringError, match=rf"line \d+:\d+: {target}: .*{message}"):
        get_platform("cpu").compiler.compile(parse(text))


def test_real_targets_under_complex_names_are_unknown():
    text = _hlo("(f32[3,3], f32[3], s32[])", ["f32[3,3]"], "lapack_sheevd_ffi", "")
    with pytest.raises(EvaluationError):
        evaluate(parse(text), np.eye(3, dtype=np.float32))


# ---- the cholesky opcode on complex matrices ------------------------------------------------

def _cholesky_module(t, dims, lower, layout="{1,0}"):
    d = ",".join(map(str, dims))
    mm = "{2,1,0}" if len(dims) == 3 else layout
    return (f"HloModule m\n\nENTRY e {{\n  a = {t}[{d}]{mm} parameter(0)\n"
            f"  ROOT c = {t}[{d}]{mm} cholesky(a), lower={'true' if lower else 'false'}\n}}\n")


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["c64", "c128"])
@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_opcode_complex(dtype, lower):
    """XLA's cholesky on a complex type: the Hermitian matrix of the `lower` triangle (the
    other triangle is not read), a = L L^H or U^H U; zeros in the other triangle."""
    t = "c64" if dtype == np.complex64 else "c128"
    h = _hpd(3, 4, 4, dtype=dtype)
    junk = h.copy()   # the unread triangle is garbage: not read
    k = np.triu_indices(4, 1) if lower else np.tril_indices(4, -1)
    junk[:, k[0], k[1]] = 7 + 9j
    want = np.linalg.cholesky(h)
    want = want if lower else np.conj(np.swapaxes(want, -1, -2))
    text = _cholesky_module(t, (3, 4, 4), lower)
    ev = np.asarray(evaluate(parse(text), junk))
    cpu = np.asarray(get_platform("cpu").compiler.compile(parse(text)).run(junk))
    for got in (ev, cpu):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)
    np.testing.assert_allclose(cpu, ev, rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["c64", "c128"])
def test_cholesky_opcode_complex_not_positive_definite_and_layout(dtype):
    t = "c64" if dtype == np.complex64 else "c128"
    bad = np.array([[1, 2j], [-2j, 1]], dtype)
    for lower in (True, False):
        text = _cholesky_module(t, (2, 2), lower)
        for got in (evaluate(parse(text), bad),
                    get_platform("cpu").compiler.compile(parse(text)).run(bad)):
            assert np.isnan(np.asarray(got)).all()
    h = _hpd(5, 5, dtype=dtype)   # a column-major operand and result
    text = _cholesky_module(t, (5, 5), True, layout="{0,1}")
    got = np.asarray(get_platform("cpu").compiler.compile(parse(text)).run(h))
    np.testing.assert_allclose(got, np.linalg.cholesky(h), rtol=TOL[dtype] * 10,
                               atol=TOL[dtype] * 10)


def test_self_contained_code_refuses_complex_potrf():
    """Ahead-of-time code has no LAPACK, only its own real IR potrf: complex cholesky (the
    opcode or the custom-call) is a LoweringError there, never the real routine."""
    import xlapy.aot as aot
    from xlapy.errors import XlapyError
    opcode = _cholesky_module("c64", (3, 3), True)
    call = _hlo("(c128[3,3], s32[])", ["c128[3,3]"], "lapack_zpotrf_ffi", "uplo = 76 : ui8")
    for text, what in ((opcode, "the cholesky of c64 matrices"), (call, "zpotrf")):
        with pytest.raises(XlapyError, match=f"self-contained .* has no LAPACK: {what}"):
            aot.compile(text, entry_point="chol")
