"""cpu backend: sort (sort.py), checked against the interpreter and jax, bit for bit."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

RNG = np.random.default_rng(1234)


def _special_floats(n, dtype=np.float32):
    x = RNG.standard_normal(n).astype(dtype)
    specials = np.array([np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, 1.0, 1.0], dtype)
    pos = RNG.choice(n, size=min(n, 3 * len(specials)), replace=False)
    x[pos] = np.resize(specials, len(pos))
    return x


@pytest.mark.parametrize("n", [1, 2, 15, 16, 17, 100, 1000, 10_000])
def test_sort_1d_special_values(cpu_check, n):
    # 10_000: the scratch arrays go to the heap (malloc)
    cpu_check.jax(lambda x: jnp.sort(x), _special_floats(n))


@pytest.mark.parametrize("axis,shape", [(0, (37, 5)), (1, (5, 37)), (1, (4, 50, 3)),
                                        (0, (40, 3, 2)), (2, (3, 2, 33))])
def test_sort_along_any_dim(cpu_check, axis, shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    cpu_check.jax(lambda x: jnp.sort(x, axis=axis), x)


@pytest.mark.parametrize("shape,axis", [((3000, 40), 1), ((40, 3000), 0)])
def test_many_rows_run_on_the_thread_pool(cpu_check, shape, axis):
    x = RNG.integers(0, 9, shape).astype(np.float32)
    cpu_check.jax(lambda x: jnp.argsort(x, axis=axis, stable=True), x)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint32, np.int64,
                                   np.float64, np.float16, ml_dtypes.bfloat16, np.bool_])
def test_sort_dtypes(cpu_check, dtype):
    if dtype == np.bool_:
        x = RNG.integers(0, 2, (3, 70)).astype(bool)
    elif np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        x = RNG.integers(info.min, info.max, (3, 70), dtype=dtype, endpoint=True)
    else:
        x = _special_floats(210, np.float32).astype(dtype).reshape(3, 70)
    with jax.enable_x64(dtype in (np.int64, np.float64)):
        cpu_check.jax(lambda x: jnp.sort(x, axis=1), x)


@pytest.mark.parametrize("n", [7, 64, 300])
def test_argsort_is_stable(cpu_check, n):
    keys = RNG.integers(0, 5, (3, n)).astype(np.int32)  # many ties
    got = cpu_check.jax(lambda k: jnp.argsort(k, axis=1, stable=True), keys)[0]
    np.testing.assert_array_equal(got, np.argsort(keys, axis=1, kind="stable"))


def test_argsort_floats_with_ties_and_nans(cpu_check):
    x = _special_floats(500)
    cpu_check.jax(lambda x: jnp.argsort(x, stable=True), x)


def test_sort_descending(cpu_check):
    x = _special_floats(200)
    cpu_check.jax(lambda x: jnp.argsort(x, stable=True, descending=True), x)


def test_lexicographic_multi_operand_sort(cpu_check):
    a = RNG.integers(0, 3, 150).astype(np.int32)
    b = RNG.standard_normal(150).astype(np.float32)
    c = np.arange(150, dtype=np.int32)
    cpu_check.jax(lambda a, b, c: jax.lax.sort((a, b, c), num_keys=2), a, b, c)


def test_sort_key_val(cpu_check):
    k = RNG.integers(0, 10, (4, 33)).astype(np.int32)
    v = RNG.standard_normal((4, 33)).astype(np.float32)
    cpu_check.jax(lambda k, v: jax.lax.sort_key_val(k, v, dimension=1), k, v)


# ---- hand-written HLO: comparators, layouts, degenerate sizes ----------------------------------

TOTALORDER = """
HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
ENTRY e {
  x = f32[64] parameter(0)
  ROOT s = f32[64] sort(x), dimensions={0}, is_stable=true, to_apply=cmp
}
"""


def test_totalorder_comparator_orders_nan_and_signed_zero(cpu_check):
    x = _special_floats(64)
    got, ref = cpu_check.run(TOTALORDER, x)
    cpu_check.same(got[0], ref[0])
    bits = got[0].view(np.int32)
    key = np.where(bits < 0, bits ^ np.int32(0x7FFFFFFF), bits)
    assert np.all(np.diff(key) >= 0)  # -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN


BY_SECOND_DESCENDING = """
HloModule m
cmp {
  a0 = s32[] parameter(0)
  b0 = s32[] parameter(1)
  a1 = f32[] parameter(2)
  b1 = f32[] parameter(3)
  a2 = u8[] parameter(4)
  b2 = u8[] parameter(5)
  ROOT gt = pred[] compare(a1, b1), direction=GT
}
ENTRY e {
  x = s32[3,40] parameter(0)
  y = f32[3,40] parameter(1)
  z = u8[3,40] parameter(2)
  ROOT s = (s32[3,40], f32[3,40], u8[3,40]) sort(x, y, z), dimensions={1}, to_apply=cmp
}
"""


def test_sort_by_second_operand_descending(cpu_check):
    x = np.arange(120, dtype=np.int32).reshape(3, 40)
    y = RNG.integers(0, 6, (3, 40)).astype(np.float32)  # ties: stable order of x
    z = RNG.integers(0, 255, (3, 40)).astype(np.uint8)
    got, ref = cpu_check.run(BY_SECOND_DESCENDING, x, y, z)
    for g, r in zip(got, ref):
        cpu_check.same(g, r)
    order = np.argsort(-y, axis=1, kind="stable")
    np.testing.assert_array_equal(got[0], np.take_along_axis(x, order, axis=1))
    np.testing.assert_array_equal(got[2], np.take_along_axis(z, order, axis=1))


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("in_layout,out_layout", [("{0,1}", "{0,1}"), ("{0,1}", "{1,0}"),
                                                  ("{1,0}", "{0,1}")])
def test_sort_non_default_layouts(cpu_check, dim, in_layout, out_layout):
    text = f"""
HloModule m
cmp {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}}
ENTRY e {{
  x = f32[20,25]{in_layout} parameter(0)
  i = s32[20,25]{{1,0}} iota(), iota_dimension={dim}
  ROOT s = (f32[20,25]{out_layout}, s32[20,25]{{0,1}}) sort(x, i), dimensions={{{dim}}}, to_apply=cmp
}}
"""  # noqa: E501 (HLO text: one instruction a line)
    x = RNG.integers(0, 7, (20, 25)).astype(np.float32)
    got, ref = cpu_check.run(text, x)
    for g, r in zip(got, ref):
        cpu_check.same(g, r)
    np.testing.assert_array_equal(got[1], np.argsort(x, axis=dim, kind="stable"))


@pytest.mark.parametrize("shape,dim", [((0, 5), 1), ((5, 0), 1), ((3, 1), 1), ((1,), 0),
                                       ((4, 1, 3), 1)])
def test_degenerate_sizes(cpu_check, shape, dim):
    dims = ",".join(map(str, shape))
    text = f"""
HloModule m
cmp {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}}
ENTRY e {{
  x = f32[{dims}] parameter(0)
  ROOT s = f32[{dims}] sort(x), dimensions={{{dim}}}, to_apply=cmp
}}
"""
    x = RNG.standard_normal(shape).astype(np.float32)
    got, ref = cpu_check.run(text, x)
    cpu_check.same(got[0], ref[0])


@pytest.mark.parametrize("name", ["sorting.hlo", "sorting.opt.hlo"])
def test_corpus(cpu_check, name):
    cpu_check.corpus(name, rtol=0, atol=0)
