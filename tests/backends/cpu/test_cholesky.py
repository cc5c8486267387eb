"""cpu backend: Cholesky through LAPACK potrf (lapack.py): the lapack_?potrf_ffi custom-calls,
against jax and NumPy, and the cholesky opcode, against the interpreter (which
tests/backends/interpreter/test_linalg.py checks against XLA) and through xlapy.lax.linalg
against jax."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from xlapy.errors import LoweringError

jax = pytest.importorskip("jax")
jnp = jax.numpy

RNG = np.random.default_rng(3)


def _spd(shape, dtype):
    a = RNG.standard_normal(shape).astype(dtype)
    n = shape[-1]
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(6, 6), (3, 2, 5, 5), (0, 4, 4), (1, 1)])
def test_jnp_cholesky(cpu_check, dtype, shape):
    a = _spd(shape, dtype)
    if a.size:
        a.reshape(-1, shape[-1], shape[-1])[0, 0, 0] = -1.0  # one matrix is not PD: NaN
    with jax.enable_x64(dtype == np.float64):
        text = jax.jit(jnp.linalg.cholesky).lower(a).as_text(dialect="hlo")
        want = np.asarray(jnp.linalg.cholesky(a))
    got = cpu_check.cpu(text, a)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-5 if dtype == np.float32 else 1e-12)
    assert np.array_equal(np.isnan(got), np.isnan(want))


@pytest.mark.parametrize("layout", ["{0,1}", "{1,0}"])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_raw_potrf(cpu_check, layout, uplo):
    text = f"""
HloModule m
ENTRY e {{
  a = f64[5,5] parameter(0)
  ROOT c = (f64[5,5]{layout}, s32[]) custom-call(a), custom_call_target="lapack_dpotrf_ffi", backend_config={{uplo = {ord(uplo)} : ui8}}
}}
"""  # noqa: E501 (HLO text: one instruction a line)
    a = _spd((5, 5), np.float64)
    a = a + np.triu(RNG.standard_normal((5, 5)), 1) if uplo == "L" else \
        a + np.tril(RNG.standard_normal((5, 5)), -1)  # the ignored triangle is kept as is
    factor, info = cpu_check.cpu(text, a)
    assert int(info) == 0
    sym = np.tril(a) + np.tril(a, -1).T if uplo == "L" else np.triu(a) + np.triu(a, 1).T
    chol = np.linalg.cholesky(sym)
    if uplo == "L":
        np.testing.assert_allclose(np.tril(factor), chol, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(np.triu(factor, 1), np.triu(a, 1))
    else:
        np.testing.assert_allclose(np.triu(factor), chol.T, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(np.tril(factor, -1), np.tril(a, -1))


def test_info_reports_the_failing_minor(cpu_check):
    text = """
HloModule m
ENTRY e {
  a = f32[2,3,3] parameter(0)
  ROOT c = (f32[2,3,3]{1,2,0}, s32[2]) custom-call(a), custom_call_target="lapack_spotrf_ffi", backend_config={uplo = 76 : ui8}
}
"""  # noqa: E501 (HLO text: one instruction a line)
    a = _spd((2, 3, 3), np.float32)
    a[1, 1, 1] = -100.0
    _, info = cpu_check.cpu(text, a)
    np.testing.assert_array_equal(info, [0, 2])


@pytest.mark.parametrize("name", ["custom_call_cholesky.hlo", "custom_call_cholesky.opt.hlo"])
def test_corpus(cpu_check, name):
    module, inputs, expected = cpu_check.corpus_case(name)
    got = cpu_check.cpu(module, *inputs)
    for g, w in zip(got, expected):
        cpu_check.close(g, w, rtol=1e-5, atol=1e-5)


def test_bad_uplo_is_a_lowering_error(cpu_check):
    text = """
HloModule m
ENTRY e {
  a = f32[3,3] parameter(0)
  ROOT c = (f32[3,3]{0,1}, s32[]) custom-call(a), custom_call_target="lapack_spotrf_ffi", backend_config={uplo = 88 : ui8}
}
"""  # noqa: E501 (HLO text: one instruction a line)
    with pytest.raises(LoweringError, match="lapack_spotrf_ffi: uplo must be one of L, U, got 'X'"):
        cpu_check.cpu(text, _spd((3, 3), np.float32))


# ---- the cholesky opcode -----------------------------------------------------------------------

def _cholesky_hlo(t, dims, lower, layout=""):
    d = ",".join(map(str, dims))
    return (f"HloModule m\nENTRY e {{\n  a = {t}[{d}]{layout} parameter(0)\n"
            f"  ROOT c = {t}[{d}] cholesky(a), lower={'true' if lower else 'false'}\n}}\n")


def _awkward(dims, dtype, lower):
    """SPD matrices, then: garbage in the triangle that is not read, a matrix that is not
    positive definite, a NaN in the read triangle."""
    a = _spd(dims, np.float64)
    m = a.reshape(-1, dims[-1], dims[-1])
    if m.shape[0] >= 4 and dims[-1] >= 3:
        other = np.triu(np.full(m.shape[1:], 9.0), 1)
        m[1] += other if lower else other.T
        m[2, 1, 1] = -50.0
        m[3, 2, 0] = m[3, 0, 2] = np.nan
    return a.astype(dtype)


@pytest.mark.parametrize("t,dtype", [("f32", np.float32), ("f64", np.float64),
                                     ("f16", np.float16), ("bf16", ml_dtypes.bfloat16)])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("layout", ["", "{1,2,0}", "{0,2,1}"])
def test_cholesky_opcode(cpu_check, t, dtype, lower, layout):
    a = _awkward((4, 6, 6), dtype, lower)
    (got,), (want,) = cpu_check.run(_cholesky_hlo(t, (4, 6, 6), lower, layout), a)
    tol = {"f32": 2e-6, "f64": 1e-14}.get(t, 0.0)  # f16/bf16: both factor in f32, round once
    cpu_check.close(got, want, rtol=tol, atol=tol)
    assert np.isnan(got[2:].astype(np.float64)).all() and not np.isnan(got[:2]).any()


@pytest.mark.parametrize("dims", [(1, 1), (0, 3, 3), (2, 0, 0), (3, 2, 40, 40)])
def test_cholesky_opcode_shapes(cpu_check, dims):
    a = _spd(dims, np.float32)
    (got,), (want,) = cpu_check.run(_cholesky_hlo("f32", dims, True), a)
    cpu_check.close(got, want, rtol=2e-5, atol=2e-5)


def test_cholesky_between_fused_ops(cpu_check):
    """The routine reads and writes buffers the fused kernels around it produce and read."""
    text = """
HloModule m
ENTRY e {
  a = f32[8,8] parameter(0)
  two = f32[] constant(2)
  b = f32[8,8] broadcast(two), dimensions={}
  s = f32[8,8] multiply(a, b)
  c = f32[8,8] cholesky(s), lower=true
  ROOT r = f32[8,8] add(c, c)
}
"""
    a = _spd((8, 8), np.float32)
    (got,), (want,) = cpu_check.run(text, a)
    cpu_check.close(got, want, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(got, 2 * np.linalg.cholesky(2 * a.astype(np.float64)),
                               rtol=1e-5)


def test_lax_linalg_cholesky_matches_jax(cpu_check):
    import xlapy as xp
    a = _spd((3, 5, 5), np.float32)
    a[0] += np.triu(RNG.standard_normal((5, 5)).astype(np.float32), 1)  # not symmetric
    a[2, 0, 0] = -40.0                                                 # not PD
    want = np.asarray(jax.lax.linalg.cholesky(a))
    for f in (xp.lax.linalg.cholesky, xp.jit(xp.lax.linalg.cholesky),
              xp.jit(xp.lax.linalg.cholesky, backend="interpreter")):
        got = np.asarray(f(a))
        np.testing.assert_allclose(got[:2], want[:2], rtol=2e-6, atol=2e-6)
        # not PD: NaN everywhere (XLA's opcode); jax's cpu custom-call leaves the upper zeros
        assert np.isnan(got[2]).all() and np.isnan(want[2][np.tril_indices(5)]).all()
    lower_only = xp.jit(lambda x: xp.lax.linalg.cholesky(x, symmetrize_input=False))(a[:2])
    np.testing.assert_allclose(lower_only,
                               jax.lax.linalg.cholesky(a[:2], symmetrize_input=False),
                               rtol=2e-6, atol=2e-6)


def test_lax_linalg_cholesky_errors():
    import xlapy as xp
    from xlapy.errors import ShapeError
    for bad, what in ((np.ones((3, 4), np.float32), r"square matrices .*f32\[3,4\]"),
                      (np.eye(3, dtype=np.int32),
                       r"floating-point or complex element type, got s32")):
        for f in (xp.lax.linalg.cholesky, xp.jit(xp.lax.linalg.cholesky)):
            with pytest.raises(ShapeError, match=f"cholesky: expects .*{what}"):
                f(bad)
    # (its derivatives: tests/frontend/test_linalg_grad.py)
