"""JAX's own StableHLO, lowered live (`jax.jit(f).lower(*args).as_text()`), for programs
beyond the corpus: every CHLO op JAX emits (special values included), custom calls,
while/case/if, sorts of several operands, scatters, grouped convolutions, bf16/f16/f64,
dot algorithms, composites. Each is parsed by xlapy, run on the interpreter and compared
with JAX's result; a few are also read in MLIR's generic op form and with locations
(`as_text(debug_info=True)`, whose #loc aliases are defined at the end of the text).
"""

from __future__ import annotations

import jax
import ml_dtypes
import numpy as np
import pytest

import xlapy_tests_interpreter_corpus as ic
import xlapy_tests_stablehlo as util
from xlapy.backends.base import flatten, get_platform
from xlapy.backends.interpreter import evaluate
from xlapy.errors import EvaluationError, ParseError
from xlapy.hlo import parse_stablehlo

jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

F32, F64, F16, BF16 = np.float32, np.float64, np.float16, ml_dtypes.bfloat16
R = np.random.default_rng(7)
NAN, INF = np.nan, np.inf


def _f(values, dtype=F32):
    return np.asarray(values, dtype=dtype)


def _n(*shape, dtype=F32, scale=1.0):
    return (R.standard_normal(shape) * scale).astype(dtype)


SPECIAL = _f([0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.5, 1e-30, 30.0, -30.0, INF, -INF, NAN])
UNIT = _f([-1.0, 1.0, 0.0, -0.0, 0.5, -0.999, 0.999999, 1.5, -1.5, NAN])
GAMMA = _f([0.0, -1.0, -2.0, -2.5, 0.5, 1.0, 2.0, 3.5, 1e-3, 1e30, -1e30, INF, -INF, NAN])

# name, function, arguments, x64
PROGRAMS = [
    ("erf_inv", lax.erf_inv, [UNIT], False),
    ("erf_inv_f64", lax.erf_inv, [UNIT.astype(F64)], True),
    ("erf_inv_f16", lax.erf_inv, [UNIT.astype(F16)], False),
    ("erf_erfc", lambda x: (lax.erf(x), lax.erfc(x)), [SPECIAL], False),
    ("lgamma_digamma", lambda x: (lax.lgamma(x), lax.digamma(x)), [GAMMA], False),
    ("lgamma_digamma_f64", lambda x: (lax.lgamma(x), lax.digamma(x)), [GAMMA.astype(F64)],
     True),
    ("inverse_trig", lambda x: (jnp.arcsin(x), jnp.arccos(x), jnp.arctan(x), jnp.arctanh(x)),
     [UNIT], False),
    ("hyperbolic", lambda x: (jnp.sinh(x), jnp.cosh(x), jnp.arcsinh(x), jnp.arccosh(x)),
     [np.concatenate([SPECIAL, _f([89.0, -89.0, 1e20, 1.0000001])])], False),
    ("square_tan_nextafter", lambda x, y: (lax.square(x), jnp.tan(x), lax.nextafter(x, y)),
     [_n(12), _n(12)], False),
    ("top_k", lambda x: lax.top_k(x, 3), [_n(4, 9)], False),
    ("while_tuple", lambda x: lax.while_loop(lambda c: c[0] < 5,
                                             lambda c: (c[0] + 1, c[1] * 1.5 + c[0]),
                                             (0, x)), [_n(6)], False),
    ("fori_closure", lambda x, y: lax.fori_loop(0, 4, lambda i, c: c * y + i, x),
     [_n(5), _n(5)], False),
    ("switch_and_cond", lambda i, p, x: (
        lax.switch(i, [jnp.sin, jnp.cos, lambda v: v * 2.0], x),
        lax.cond(p, lambda v: v + 1.0, lambda v: -v, x)),
     [np.int32(2), np.bool_(True), _n(4)], False),
    ("sort_three_operands", lambda a, b, c: lax.sort((a, b, c), num_keys=2),
     [_f([3, 1, 2, 1, 3, 2, 1]), _f([1, 2, 3, 1, 0, 5, 2]), np.arange(7, dtype=np.int32)],
     False),
    ("scatters", lambda x, i, v: (x.at[i].add(v), x.at[i].max(v), x.at[i].set(v),
                                  x.at[i].mul(v)),
     [_n(6, 3), np.array([0, 5, 0, 2], np.int32), _n(4, 3)], False),
    ("gather", lambda x, i: jnp.take_along_axis(x, i, axis=1),
     [_n(4, 6), R.integers(0, 6, (4, 3)).astype(np.int32)], False),
    ("conv_feature_groups", lambda x, w: lax.conv_general_dilated(
        x, w, (1, 2), [(1, 1), (0, 1)], rhs_dilation=(1, 2), feature_group_count=2,
        dimension_numbers=("NCHW", "OIHW", "NCHW")), [_n(2, 4, 7, 7), _n(6, 2, 3, 2)], False),
    ("conv_batch_groups", lambda x, w: lax.conv_general_dilated(
        x, w, (1,), [(0, 0)], batch_group_count=2, dimension_numbers=("NCH", "OIH", "NCH")),
     [_n(4, 3, 8), _n(4, 3, 3)], False),
    ("bf16", lambda a, b: (a * b + a, jnp.dot(a, b.T, preferred_element_type=F32),
                           jnp.sum(a, axis=1)),
     [_n(4, 5, dtype=BF16), _n(4, 5, dtype=BF16)], False),
    ("f16_math", lambda a: (jnp.exp(a), jnp.tanh(a) / 3, lax.erf_inv(a / 8)),
     [_n(7, dtype=F16)], False),
    ("x64_ints", lambda a, b: (a // b, a % b, a * b, jnp.cumsum(a)),
     [np.arange(-5, 5, dtype=np.int64), np.array([3, -2, 7, 1, -1, 2, 5, -3, 4, 9], np.int64)],
     True),
    ("argmax_cumulative_pool", lambda x: (
        jnp.argmax(x, axis=1), jnp.cumsum(x, axis=1), jnp.cumprod(x, axis=0),
        jax.grad(lambda v: lax.reduce_window(v, -jnp.inf, lax.max, (2, 2), (2, 2),
                                             "VALID").sum())(x)), [_n(4, 6)], False),
    ("dot_algorithm_precision", lambda a, b: (
        lax.dot(a, b, precision=lax.DotAlgorithmPreset.F32_F32_F32),
        jnp.dot(a, b, precision="highest")), [_n(3, 4), _n(4, 2)], False),
    ("barrier_reduce_precision", lambda a: (lax.optimization_barrier((a, a * 2)),
                                            lax.reduce_precision(a, 5, 10)), [_n(5)], False),
    ("composite_and_nested_jit", lambda a: lax.composite(
        lambda x, scale: jax.jit(jnp.tanh)(x) * scale, name="my.scaled_tanh")(a, scale=3.0),
     [_n(5)], False),
    ("clamp_remainder_pow", lambda a, b: (jnp.clip(a, -0.5, 0.5), jnp.remainder(a, b),
                                          a ** 3, lax.rem(a, b)), [_n(6), _n(6)], False),
]


def _jax_outputs(fn, args, x64):
    with jax.enable_x64(x64):
        out = jax.jit(fn)(*args)
        return [np.asarray(v) for v in jax.tree_util.tree_leaves(out)]


def _lower(fn, args, x64, **kw):
    with jax.enable_x64(x64):
        lowered = jax.jit(fn).lower(*args)
        if kw.get("generic"):
            return lowered.compiler_ir().operation.get_asm(print_generic_op_form=True)
        return lowered.as_text(**kw)


def _check(module, args, want):
    got = flatten(evaluate(module, *args))
    assert len(got) == len(want)
    text = module.to_string()  # f16[ / bf16[ in it loosen the tolerance as in the corpus
    for i, w in enumerate(want):
        ic.assert_matches([np.asarray(got[i])], w, f"output {i}", text)


@pytest.mark.parametrize("name,fn,args,x64", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_jax_program(name, fn, args, x64):
    module = parse_stablehlo(_lower(fn, args, x64), name)
    _check(module, args, _jax_outputs(fn, args, x64))


@pytest.mark.parametrize("name", ["while_tuple", "switch_and_cond", "sort_three_operands",
                                  "argmax_cumulative_pool", "composite_and_nested_jit"])
def test_generic_form_and_locations(name):
    _, fn, args, x64 = next(p for p in PROGRAMS if p[0] == name)
    plain = parse_stablehlo(_lower(fn, args, x64), "plain")
    debug_text = _lower(fn, args, x64, debug_info=True)
    assert "loc(" in debug_text and "#loc" in debug_text.rsplit("}", 1)[1]  # aliases at the end
    debug = parse_stablehlo(debug_text, "debug")
    generic = parse_stablehlo(_lower(fn, args, x64, generic=True), "generic")
    want = flatten(evaluate(plain, *args))
    for m in (debug, generic):
        got = flatten(evaluate(m, *args))
        assert all(util.same_bits(g, w) for g, w in zip(got, want))
    assert any(i.metadata.get("op_name", "").startswith("jit(")
               for i in debug.instructions()), "locations become metadata"


def test_custom_call_runs_where_implemented():
    """jnp.linalg.cholesky is a LAPACK custom call: the interpreter (scipy's LAPACK) and the
    cpu backend both run it and give JAX's result; an unknown target is named."""
    a = _n(5, 5)
    a = a @ a.T + 5 * np.eye(5, dtype=F32)
    text = _lower(jnp.linalg.cholesky, [a], False)
    module = parse_stablehlo(text)
    want = np.asarray(jnp.linalg.cholesky(a))
    np.testing.assert_allclose(flatten(evaluate(module, a))[0], want, rtol=2e-5, atol=1e-5)
    got = flatten(get_platform("cpu").compiler.compile(module).run(a))
    np.testing.assert_allclose(got[0], want, rtol=2e-5, atol=1e-5)
    bogus = parse_stablehlo(text.replace("lapack_spotrf_ffi", "no_such_target"))
    with pytest.raises(EvaluationError, match="no_such_target"):
        evaluate(bogus, a)


def test_debug_print_parses_and_names_its_callback():
    """jax.debug.print: an sdy.mesh declaration and a side-effecting custom call without
    results; the host callback cannot run outside JAX, and says so."""
    fn = lambda x: (jax.debug.print("x={}", x), x + 1)[1]
    text = _lower(fn, [_n(3)], False)
    assert "sdy.mesh" in text
    module = parse_stablehlo(text)
    (call,) = [i for i in module.entry.instructions if i.opcode == "custom-call"]
    assert call.attrs["custom_call_has_side_effect"] is True and call.shape.tuple_shapes == ()
    with pytest.raises(EvaluationError, match="xla_ffi_python_cpu_callback"):
        evaluate(module, _n(3))


def test_rng_bit_generator_is_a_clear_error():
    from xlapy.hlo.opcodes import OPCODES
    if "rng-bit-generator" in OPCODES:
        pytest.skip("xlapy has an rng-bit-generator opcode now")
    text = _lower(lambda k: lax.rng_bit_generator(k, (4,), dtype=np.uint32),
                  [np.zeros(4, np.uint32)], False)
    with pytest.raises(ParseError, match="rng_bit_generator.*no rng-bit-generator") as info:
        parse_stablehlo(text, "rbg.mlir")
    util.assert_positioned(info.value)
