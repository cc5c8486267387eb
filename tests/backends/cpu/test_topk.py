"""cpu backend: topk and XLA's TopK custom-call (sort.py), against the interpreter and jax."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest


jax = pytest.importorskip("jax")

RNG = np.random.default_rng(99)


def _with_specials(shape, dtype=np.float32):
    x = RNG.integers(-4, 5, shape).astype(dtype)  # many ties
    flat = x.reshape(-1)
    specials = np.array([np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf], dtype)
    pos = RNG.choice(flat.size, size=min(flat.size, 12), replace=False)
    flat[pos] = np.resize(specials, len(pos))
    return x


# k <= 16 (with n > 16) uses the k-best buffer, larger k the full sort
@pytest.mark.parametrize("k", [1, 3, 16, 17, 40])
@pytest.mark.parametrize("shape", [(40,), (3, 40), (2, 3, 40)])
def test_top_k_floats(cpu_check, k, shape):
    x = _with_specials(shape)
    cpu_check.jax(lambda x: jax.lax.top_k(x, k), x)


@pytest.mark.parametrize("k", [2, 40])
def test_top_k_many_rows(cpu_check, k):
    cpu_check.jax(lambda x: jax.lax.top_k(x, k), _with_specials((5000, 40)))


@pytest.mark.parametrize("k", [1, 5, 12])
def test_top_k_short_rows(cpu_check, k):
    cpu_check.jax(lambda x: jax.lax.top_k(x, k), _with_specials((4, 12)))


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int8, ml_dtypes.bfloat16, np.float16])
def test_top_k_dtypes(cpu_check, dtype):
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        x = RNG.integers(info.min, info.max, (3, 50), dtype=dtype, endpoint=True)
        x[:, :10] = x[:, 10:20]  # ties
    else:
        x = _with_specials((3, 50)).astype(dtype)
    cpu_check.jax(lambda x: jax.lax.top_k(x, 7), x)


def _topk_hlo(n, k, largest, t="f32"):
    return f"""
HloModule m
ENTRY e {{
  x = {t}[3,{n}] parameter(0)
  ROOT t = ({t}[3,{k}], s32[3,{k}]) topk(x), k={k}, largest={str(largest).lower()}
}}
"""


@pytest.mark.parametrize("k", [1, 4, 30])
def test_smallest_k(cpu_check, k):
    x = _with_specials((3, 30))
    got, ref = cpu_check.run(_topk_hlo(30, k, largest=False), x)
    cpu_check.same(got[0], ref[0])
    cpu_check.same(got[1], ref[1])
    bits = x.view(np.int32)
    key = np.where(bits < 0, bits ^ np.int32(0x7FFFFFFF), bits)
    np.testing.assert_array_equal(got[1], np.argsort(key, axis=1, kind="stable")[:, :k])


def test_smallest_k_unsigned(cpu_check):
    x = RNG.integers(0, 2**32, (3, 25), dtype=np.uint32)
    got, ref = cpu_check.run(_topk_hlo(25, 5, largest=False, t="u32"), x)
    cpu_check.same(got[1], ref[1])
    np.testing.assert_array_equal(got[1], np.argsort(x, axis=1, kind="stable")[:, :5])


# ---- custom-call TopK ----------------------------------------------------------------------

def _custom_topk_hlo(n, k, with_index):
    params = "p2 = s32[] parameter(2)\n  p3 = s32[] parameter(3)" if with_index else ""
    return f"""
HloModule m
cmp {{
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  {params}
  zero = s32[] constant(0)
  max = s32[] constant(2147483647)
  b0 = s32[] bitcast-convert(p0)
  b1 = s32[] bitcast-convert(p1)
  x0 = s32[] xor(max, b0)
  x1 = s32[] xor(max, b1)
  n0 = pred[] compare(b0, zero), direction=LT
  n1 = pred[] compare(b1, zero), direction=LT
  k0 = s32[] select(n0, x0, b0)
  k1 = s32[] select(n1, x1, b1)
  ROOT gt = pred[] compare(k0, k1), direction=GT
}}
ENTRY e {{
  x = f32[4,{n}] parameter(0)
  ROOT t = (f32[4,{k}], s32[4,{k}]) custom-call(x), custom_call_target="TopK", called_computations={{cmp}}
}}
"""  # noqa: E501 (HLO text: one instruction a line)


@pytest.mark.parametrize("with_index", [True, False])
@pytest.mark.parametrize("k", [1, 6, 33])
def test_custom_call_top_k(cpu_check, k, with_index):
    x = _with_specials((4, 33))
    got = cpu_check.cpu(_custom_topk_hlo(33, k, with_index), x)
    want = jax.lax.top_k(x, k)
    cpu_check.same(got[0], np.asarray(want[0]))
    cpu_check.same(got[1], np.asarray(want[1]))


@pytest.mark.parametrize("name", ["custom_call_top_k.hlo", "custom_call_top_k.opt.hlo"])
def test_corpus(cpu_check, name):
    module, inputs, expected = cpu_check.corpus_case(name)
    got = cpu_check.cpu(module, *inputs)
    for g, w in zip(got, expected):
        cpu_check.same(g, w)
