"""cpu backend: the lapack_?potrf_ffi custom-calls (lapack.py), against jax and NumPy."""

from __future__ import annotations

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
    with pytest.raises(LoweringError, match="potrf uplo must be L or U, got 'X'"):
        cpu_check.cpu(text, _spd((3, 3), np.float32))
