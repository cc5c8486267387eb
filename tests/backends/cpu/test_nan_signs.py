"""The sign of a NaN that a float function returns, on cpu and the interpreter, as XLA gives
it (bit for bit): a TOTALORDER compare or sort sees it (hlo 14002262: tanh of log's NaNs,
sorted). XLA passes an argument's NaN through tanh, erf, exp ... with its sign, flips it in
logistic (1 / (1 + exp(-x))), and its pow returns x's NaN before y's."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

NEG_NAN = np.copysign(np.nan, -1)


def _check(cpu_check, fn, *args):
    """cpu and the interpreter give XLA's NaNs with XLA's signs (the other elements to a few
    ulps: these functions are approximations); returns XLA's output."""
    text = jax.jit(fn).lower(*args).as_text(dialect="hlo")
    got, ref = cpu_check.run(text, *args)
    want = np.asarray(jax.jit(fn)(*args))
    for g, what in ((np.asarray(got[0]), "cpu"), (np.asarray(ref[0]), "interpreter")):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(want), err_msg=what)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(want), err_msg=what)
        np.testing.assert_allclose(g, want, rtol=1e-6, err_msg=what)
    return want


def _with_nans(dtype):
    return np.array([np.nan, NEG_NAN, 0.5, -0.5, NEG_NAN, np.nan, 2.0, np.inf], dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,fn", [
    ("tanh", jnp.tanh), ("erf", jax.scipy.special.erf), ("sigmoid", jax.nn.sigmoid),
    ("exp", jnp.exp), ("expm1", jnp.expm1), ("sin", jnp.sin), ("sqrt", jnp.sqrt),
])
def test_nan_sign_of_unary_functions(cpu_check, name, fn, dtype):
    if dtype == np.float64:
        jax.config.update("jax_enable_x64", True)
    try:
        x = _with_nans(dtype)
        got = _check(cpu_check, fn, x)
        assert np.isnan(got[:2]).all() and np.signbit(got[0]) != np.signbit(got[1])
    finally:
        jax.config.update("jax_enable_x64", False)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_sign_of_power_takes_x_first(cpu_check, dtype):
    if dtype == np.float64:
        jax.config.update("jax_enable_x64", True)
    try:
        x = np.array([np.nan, NEG_NAN, np.nan, NEG_NAN, 2.0, 2.0, NEG_NAN, -2.0], dtype)
        y = np.array([np.nan, NEG_NAN, NEG_NAN, np.nan, np.nan, NEG_NAN, 0.5, 0.5], dtype)
        got = _check(cpu_check, lambda a, b: jax.lax.pow(a, b), x, y)
        np.testing.assert_array_equal(np.signbit(got), [0, 1, 0, 1, 0, 1, 1, 1])
    finally:
        jax.config.update("jax_enable_x64", False)


@pytest.mark.parametrize("ty", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("n", [2, 8])
def test_logistic_flips_the_sign_of_a_nan(cpu_check, ty, n):
    """HLO's logistic opcode (JAX lowers sigmoid to a division, so the text is written
    here): XLA:CPU computes 1 / (1 + exp(-x)) and gives -NaN for NaN and NaN for -NaN
    (measured with jaxlib on f32/f64/f16/bf16 [1..100]: tests/fuzz's xla.run_text)."""
    import ml_dtypes
    dt = {"f32": np.float32, "f64": np.float64, "f16": np.float16,
          "bf16": ml_dtypes.bfloat16}[ty]
    text = (f"HloModule m\nENTRY e {{\n  x = {ty}[{n}] parameter(0)\n"
            f"  ROOT r = {ty}[{n}] logistic(x)\n}}")
    x = np.resize(np.array([np.nan, NEG_NAN]), n).astype(dt)
    got, ref = cpu_check.run(text, x)
    for g in (got[0], ref[0]):
        g = np.asarray(g).astype(np.float32)
        assert np.isnan(g).all()
        np.testing.assert_array_equal(np.signbit(g), ~np.signbit(x.astype(np.float32)))
