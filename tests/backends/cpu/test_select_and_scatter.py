"""cpu backend: select-and-scatter (select_and_scatter.py), against the interpreter and jax."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

RNG = np.random.default_rng(5)


def _max_pool_grad(window, strides, padding):
    def pool(x):
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, window, strides, padding)

    return lambda x: jax.grad(lambda x: (pool(x) ** 2).sum())(x)


@pytest.mark.parametrize("window,strides,padding", [
    ((1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
    ((1, 3, 3, 1), (1, 2, 2, 1), "SAME"),          # overlapping windows, padding
    ((1, 3, 3, 1), (1, 1, 1, 1), "VALID"),         # heavy overlap
    ((1, 3, 2, 1), (1, 2, 1, 1), ((0, 0), (2, 1), (1, 0), (0, 0))),
])
def test_max_pool_grad(cpu_check, window, strides, padding):
    x = RNG.standard_normal((2, 9, 8, 3)).astype(np.float32)
    x[0, 1, 1, 0] = x[0, 1, 2, 0] = x[0, 2, 1, 0]  # ties: the first in window order wins
    x = x.round(1)  # more ties
    assert "select-and-scatter" in jax.jit(_max_pool_grad(window, strides, padding)).lower(
        x).as_text(dialect="hlo")
    cpu_check.jax(_max_pool_grad(window, strides, padding), x, bitwise=False)


def _sas_hlo(t, dims, src_dims, window, layout="", select_dir="GE", init="0"):
    d = ",".join(map(str, dims))
    s = ",".join(map(str, src_dims))
    return f"""
HloModule m
sel {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  ROOT c = pred[] compare(a, b), direction={select_dir}
}}
add {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  ROOT s = {t}[] add(a, b)
}}
ENTRY e {{
  x = {t}[{d}]{layout} parameter(0)
  src = {t}[{s}] parameter(1)
  init = {t}[] constant({init})
  ROOT r = {t}[{d}] select-and-scatter(x, src, init), window={window}, select=sel, scatter=add
}}
"""


@pytest.mark.parametrize("select_dir", ["GE", "LE", "GT"])
def test_integer_min_max_select(cpu_check, select_dir):
    text = _sas_hlo("s32", (7, 6), (4, 3), "{size=3x2 stride=2x2 pad=1_1x0_0}",
                    select_dir=select_dir, init="3")
    x = RNG.integers(0, 4, (7, 6)).astype(np.int32)  # many ties
    src = RNG.integers(-5, 5, (4, 3)).astype(np.int32)
    got, ref = cpu_check.run(text, x, src)
    cpu_check.same(got[0], ref[0])


def test_window_dilation_and_padding(cpu_check):
    text = _sas_hlo("f32", (8, 9), (4, 3), "{size=2x3 stride=2x2 pad=1_1x1_0 rhs_dilate=2x2}")
    x = RNG.standard_normal((8, 9)).astype(np.float32)
    src = RNG.standard_normal((4, 3)).astype(np.float32)
    got, ref = cpu_check.run(text, x, src)
    cpu_check.same(got[0], ref[0])


def test_windows_entirely_in_padding(cpu_check):
    # pad 3 with a window of 2: the first source rows see only padding and scatter nothing
    text = _sas_hlo("f32", (4, 4), (4, 3), "{size=2x2 stride=2x1 pad=3_1x0_0}")
    x = RNG.standard_normal((4, 4)).astype(np.float32)
    src = RNG.standard_normal((4, 3)).astype(np.float32)
    got, ref = cpu_check.run(text, x, src)
    cpu_check.same(got[0], ref[0])


def test_non_default_layout(cpu_check):
    text = _sas_hlo("f32", (6, 10), (3, 5), "{size=2x2 stride=2x2}", layout="{0,1}")
    x = RNG.standard_normal((6, 10)).astype(np.float32)
    src = RNG.standard_normal((3, 5)).astype(np.float32)
    got, ref = cpu_check.run(text, x, src)
    cpu_check.same(got[0], ref[0])


@pytest.mark.parametrize("name", ["max_pool_and_grad.hlo", "max_pool_and_grad.opt.hlo",
                                  "cnn_train_step.hlo", "cnn_train_step.opt.hlo"])
def test_corpus(cpu_check, name):
    cpu_check.corpus(name)
