"""Interpreter rules for reduce, reduce-window and select-and-scatter, compared with JAX/XLA
on the HLO text JAX emits (plus hand-written modules for cases JAX does not emit)."""

import ml_dtypes
import numpy as np
import pytest

from xlapy.backends.interpreter import evaluate
from xlapy.errors import EvaluationError
from xlapy.hlo import parse

from .lowered import check, run_both

jax = pytest.importorskip("jax")
jnp = jax.numpy
lax = jax.lax

RNG = np.random.default_rng(99)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ---- reduce -------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [jnp.sum, jnp.max, jnp.min, jnp.prod, jnp.mean, jnp.any,
                                jnp.all])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), ((0, 2), True),
                                           ((1, 2), False), (-1, True)])
def test_reductions_over_axes(fn, axis, keepdims):
    x = rand(3, 4, 5)
    if fn in (jnp.any, jnp.all):
        x = x > 0.3
    check(lambda x: fn(x, axis=axis, keepdims=keepdims), x, opcode="reduce", rtol=1e-5)


def test_max_min_propagate_nan():
    x = rand(4, 6)
    x[1, 2] = np.nan
    x[3, 0] = np.nan
    got, want = run_both(lambda x: (jnp.max(x, axis=1), jnp.min(x, axis=0), jnp.max(x)), x,
                         opcode="reduce")
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert np.isnan(got[0][1]) and np.isnan(got[2])


@pytest.mark.parametrize("fn", [jnp.argmax, jnp.argmin])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_argmax_argmin_with_ties_and_nan(fn, axis):
    x = np.array([[1, 3, 3, 0], [2, 2, np.nan, 2], [5, -1, 5, -1]], np.float32)
    check(lambda x: fn(x, axis=axis), x, opcode="reduce", exact=True)


def test_argmax_int_and_pred_inputs():
    x = RNG.integers(-3, 3, size=(5, 7)).astype(np.int32)
    check(lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x, axis=0), jnp.argmax(x > 0, axis=1)),
          x, opcode="reduce", exact=True)


def test_integer_sum_wraps():
    x = np.full((10,), 100, np.int8)
    check(lambda x: lax.reduce(x, np.int8(0), lax.add, (0,)), x, opcode="reduce", exact=True)
    u = np.full((7,), 2**31 + 5, np.uint32)
    check(lambda u: lax.reduce(u, np.uint32(0), lax.add, (0,)), u, opcode="reduce", exact=True)


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16])
def test_low_precision_sum_accumulates_in_f32(dtype):
    x = np.ones((3, 3000), dtype)
    got, want = run_both(lambda x: lax.reduce(x, dtype(0), lax.add, (1,)), x, opcode="reduce")
    np.testing.assert_array_equal(got[0].astype(np.float32), want[0].astype(np.float32))
    # sequential low-precision adds would stall at 256 (bf16) / 2048 (f16)
    assert got[0].dtype == np.dtype(dtype) and float(got[0][0]) == float(dtype(3000))


def test_generic_single_input_reducer():
    x = rand(6, 9)
    f = lambda x: lax.reduce(x, -np.inf, lambda a, b: jnp.maximum(a, b) * 1.0, (1,))
    check(f, x, opcode="reduce", exact=True)


def test_generic_reducer_with_init_value_and_odd_sizes():
    x = RNG.integers(-5, 5, size=(7, 13)).astype(np.int32)
    f = lambda x: lax.reduce(x, np.int32(3), lambda a, b: a + b + 0, (0, 1))
    check(f, x, opcode="reduce", exact=True)


def test_variadic_reduce_sum_and_max():
    x, y = rand(5, 8), rand(5, 8)
    f = lambda x, y: lax.reduce((x, y), (0.0, -np.inf),
                                lambda a, b: (a[0] + b[0], jnp.maximum(a[1], b[1])), (1,))
    check(f, x, y, opcode="reduce", rtol=1e-5)


def test_reduce_of_empty_dimension_gives_init():
    module = parse("""
HloModule r
max { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }
gen { a = f32[] parameter(0)  b = f32[] parameter(1)  c = f32[] constant(2)
      m = f32[] multiply(b, c)  ROOT s = f32[] add(a, m) }
ENTRY e {
  x = f32[3,0] parameter(0)
  z = f32[] constant(-2)
  r0 = f32[3] reduce(x, z), dimensions={1}, to_apply=max
  r1 = f32[3] reduce(x, z), dimensions={1}, to_apply=gen
  ROOT t = (f32[3], f32[3]) tuple(r0, r1)
}""")
    r0, r1 = evaluate(module, np.zeros((3, 0), np.float32))
    np.testing.assert_array_equal(r0, [-2, -2, -2])
    np.testing.assert_array_equal(r1, [-2, -2, -2])


def test_reducer_that_is_not_elementwise_falls_back_to_per_element_calls():
    # The reshape makes the reducer unusable on whole arrays; the result must not change.
    module = parse("""
HloModule r
odd { a = s32[] parameter(0)  b = s32[] parameter(1)  c = s32[1] reshape(b)
      d = s32[] reshape(c)  ROOT s = s32[] add(a, d) }
inner { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT m = s32[] maximum(a, b) }
viacall { a = s32[] parameter(0)  b = s32[] parameter(1)
          ROOT c = s32[] call(a, b), to_apply=inner }
ENTRY e {
  x = s32[5,7] parameter(0)
  z = s32[] constant(1)
  r0 = s32[5] reduce(x, z), dimensions={1}, to_apply=odd
  r1 = s32[7] reduce(x, z), dimensions={0}, to_apply=viacall
  ROOT t = (s32[5], s32[7]) tuple(r0, r1)
}""")
    x = RNG.integers(-10, 10, size=(5, 7)).astype(np.int32)
    r0, r1 = evaluate(module, x)
    np.testing.assert_array_equal(r0, x.sum(axis=1) + 1)
    np.testing.assert_array_equal(r1, np.maximum(x.max(axis=0), 1))


def test_reduce_rejects_out_of_range_dimensions():
    module = parse("""
HloModule r
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={3}, to_apply=add
}""")
    with pytest.raises(EvaluationError, match="out of range"):
        evaluate(module, np.zeros(4, np.float32))


# ---- reduce-window -------------------------------------------------------------------------

POOLS = [
    ((2, 2), (2, 2), "VALID"),
    ((3, 3), (1, 1), "SAME"),
    ((3, 3), (2, 2), "SAME"),
    ((2, 3), (1, 2), ((1, 0), (2, 1))),
]


@pytest.mark.parametrize("win,strides,padding", POOLS)
@pytest.mark.parametrize("kind", ["max", "sum", "min"])
def test_pooling(win, strides, padding, kind):
    x = rand(2, 7, 8, 3)
    init, op = {"max": (-np.inf, lax.max), "sum": (0.0, lax.add), "min": (np.inf, lax.min)}[kind]
    f = lambda x: lax.reduce_window(x, init, op, (1, *win, 1), (1, *strides, 1),
                                    padding if isinstance(padding, str)
                                    else ((0, 0), *padding, (0, 0)))
    check(f, x, opcode="reduce-window", rtol=1e-5)


def test_avg_pool():
    x = rand(2, 3, 9, 9)
    f = lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 1, 3, 3), (1, 1, 2, 2), "SAME") / 9.0
    check(f, x, opcode="reduce-window", rtol=1e-5)


def test_reduce_window_base_and_window_dilation():
    x = rand(5, 6)
    f = lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 2), ((1, 0), (0, 1)),
                                    base_dilation=(2, 1), window_dilation=(1, 2))
    check(f, x, opcode="reduce-window", rtol=1e-5)
    g = lambda x: lax.reduce_window(x, -np.inf, lax.max, (3, 2), (2, 1), ((2, 2), (1, 1)),
                                    base_dilation=(3, 2), window_dilation=(2, 1))
    check(g, x, opcode="reduce-window")


@pytest.mark.parametrize("fn", [jnp.cumsum, jnp.cumprod, lax.cummax, lax.cummin])
def test_cumulative_ops(fn):
    x = rand(4, 6)
    check(lambda x: (fn(x, axis=1), fn(x, axis=0)), x, rtol=1e-5)


def test_reduce_window_bf16_sum_accumulates_in_f32():
    x = np.ones((1000,), ml_dtypes.bfloat16)
    f = lambda x: lax.reduce_window(x, ml_dtypes.bfloat16(0), lax.add, (1000,), (1,), "VALID")
    got, want = run_both(f, x, opcode="reduce-window")
    assert float(got[0][0]) == float(want[0][0]) == 1000.0


def test_reduce_window_generic_reducer():
    x = rand(6, 7)
    f = lambda x: lax.reduce_window(x, -np.inf, lambda a, b: jnp.maximum(a, b) * 1.0,
                                    (2, 3), (1, 2), "SAME")
    check(f, x, opcode="reduce-window", exact=True)


def test_variadic_reduce_window_argmax_pool():
    x = rand(6, 6)
    idx = np.arange(36, dtype=np.int32).reshape(6, 6)

    def reducer(a, b):
        take_b = (b[0] > a[0]) | ((b[0] == a[0]) & (b[1] < a[1]))
        return jnp.where(take_b, b[0], a[0]), jnp.where(take_b, b[1], a[1])

    f = lambda x, i: lax.reduce_window((x, i), (-np.inf, np.int32(2**30)), reducer,
                                       (2, 2), (2, 2), "VALID")
    check(f, x, idx, opcode="reduce-window", exact=True)


def test_reduce_window_int_max_pads_with_init():
    x = RNG.integers(-50, -10, size=(5, 5)).astype(np.int32)
    f = lambda x: lax.reduce_window(x, np.int32(-100), lax.max, (3, 3), (1, 1), "SAME")
    check(f, x, opcode="reduce-window", exact=True)


# ---- select-and-scatter -----------------------------------------------------------------------

def _max_pool(x, window, strides, padding):
    return lax.reduce_window(x, -np.inf, lax.max, window, strides, padding)


@pytest.mark.parametrize("window,strides,padding", [
    ((1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
    ((1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
    ((1, 3, 3, 1), (1, 1, 1, 1), "SAME"),
    ((1, 2, 3, 1), (1, 1, 2, 1), ((0, 0), (1, 2), (0, 1), (0, 0))),
])
def test_max_pool_gradient_with_ties(window, strides, padding):
    # Integer-valued inputs make many ties inside windows; XLA picks the first maximum.
    x = RNG.integers(0, 3, size=(2, 7, 6, 2)).astype(np.float32)
    ct = rand(*jax.eval_shape(lambda x: _max_pool(x, window, strides, padding), x).shape)
    f = lambda x, ct: jax.vjp(lambda x: _max_pool(x, window, strides, padding), x)[1](ct)
    check(f, x, ct, opcode="select-and-scatter", rtol=1e-5)


def test_min_pool_gradient():
    x = RNG.integers(0, 3, size=(6, 6)).astype(np.float32)
    f = jax.grad(lambda x: (lax.reduce_window(x, np.inf, lax.min, (2, 2), (1, 1), "SAME")
                            * jnp.arange(36.0).reshape(6, 6)).sum())
    check(f, x, opcode="select-and-scatter", rtol=1e-5)


def test_select_and_scatter_padding_is_never_selected():
    # All operand values are below the padding value 0 a reduce-window would use; the
    # gradient must still land only on real elements.
    module = parse("""
HloModule sas
ge { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=GE }
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[3] parameter(0)
  src = f32[3] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[3] select-and-scatter(x, src, z), window={size=3 pad=1_1}, select=ge, scatter=add
}""")
    x = np.array([-3.0, -1.0, -2.0], np.float32)
    src = np.array([10.0, 20.0, 40.0], np.float32)
    got = evaluate(module, x, src)
    np.testing.assert_array_equal(got, [0.0, 70.0, 0.0])
