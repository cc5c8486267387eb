"""cpu backend: scatter (scatter.py), against the interpreter and jax."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

RNG = np.random.default_rng(7)


def _data(shape, dtype=np.float32):
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(0, 50, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


# out-of-bounds (7, -1, 100) and duplicate (2, 2, 2) indices
IDX = np.array([0, 2, 2, 7, -1, 5, 2, 100, 3], np.int32)


@pytest.mark.parametrize("op", ["add", "set", "max", "min", "mul"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_at_rows(cpu_check, op, dtype):
    x, u = _data((6, 3), dtype), _data((len(IDX), 3), dtype)
    cpu_check.jax(lambda x, i, u: getattr(x.at[i], op)(u, mode="drop"), x, IDX, u,
                  bitwise=False)


@pytest.mark.parametrize("op", ["add", "set", "max"])
def test_at_elements(cpu_check, op):
    x, u = _data((6, 3)), _data(len(IDX))
    j = (IDX % 4).astype(np.int32)  # column 3 is out of bounds
    cpu_check.jax(lambda x, i, j, u: getattr(x.at[i, j], op)(u, mode="drop"), x, IDX, j, u,
                  bitwise=False)


def test_at_column(cpu_check):
    x, u = _data((6, 5)), _data((6, 4))
    cols = np.array([4, 0, 0, 9], np.int32)
    cpu_check.jax(lambda x, c, u: x.at[:, c].add(u, mode="drop"), x, cols, u, bitwise=False)


def test_at_slice_window(cpu_check):
    # dynamic_update_slice-like window scatter with a (2, 3) window per index pair
    x, u = _data((7, 8)), _data((4, 2, 3))
    starts = np.array([[0, 0], [5, 5], [6, 0], [2, 6]], np.int32)  # the last two leave x

    def f(x, s, u):
        dn = jax.lax.ScatterDimensionNumbers(update_window_dims=(1, 2),
                                             inserted_window_dims=(),
                                             scatter_dims_to_operand_dims=(0, 1))
        return jax.lax.scatter_add(x, s, u, dn, mode="drop")

    cpu_check.jax(f, x, starts, u, bitwise=False)


def test_index_vector_dim_first(cpu_check):
    text = """
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[6,3] parameter(0)
  i = s32[2,4] parameter(1)
  u = f32[4] parameter(2)
  ROOT s = f32[6,3] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=add
}
"""  # noqa: E501 (HLO text: one instruction a line)
    x, u = _data((6, 3)), _data(4)
    i = np.array([[0, 5, 5, 6], [2, 1, 1, 0]], np.int32)
    got, ref = cpu_check.run(text, x, i, u)
    cpu_check.same(got[0], ref[0])


def test_vmap_batched_scatter(cpu_check):
    x, u = _data((5, 7)), _data((5, 3))
    i = np.array([[0, 6, 6], [1, 1, 9], [-2, 3, 4], [0, 0, 0], [6, 5, 4]], np.int32)
    f = jax.vmap(lambda a, j, b: a.at[j].add(b, mode="drop"))
    cpu_check.jax(f, x, i, u, bitwise=False)


def test_vmap_batched_window_scatter(cpu_check):
    x, u = _data((3, 6, 4)), _data((3, 2, 4))
    i = np.array([[0, 5], [2, 2], [7, 1]], np.int32)
    f = jax.vmap(lambda a, j, b: a.at[j].set(b, mode="drop"))
    cpu_check.jax(f, x, i, u, bitwise=False)


@pytest.mark.parametrize("index_type", ["u8", "u32", "s64", "u64"])
def test_index_types_out_of_range(cpu_check, index_type):
    text = f"""
HloModule m
add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}
ENTRY e {{
  x = f32[300] parameter(0)
  i = {index_type}[5,1] parameter(1)
  u = f32[5] parameter(2)
  ROOT s = f32[300] scatter(x, i, u), update_window_dims={{}}, inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=add
}}
"""  # noqa: E501 (HLO text: one instruction a line)
    dtype = {"u8": np.uint8, "u32": np.uint32, "s64": np.int64, "u64": np.uint64}[index_type]
    vals = [0, 255, 299, 300, 2**31 + 5]
    if dtype == np.uint8:
        vals = [0, 255, 3, 255, 7]
    elif dtype in (np.uint64,):
        vals[4] = 2**63 + 5
    elif dtype == np.int64:
        vals[4] = -(2**40)
    i = np.array(vals, dtype).reshape(5, 1)
    x, u = _data(300), _data(5)
    got, ref = cpu_check.run(text, x, i, u)
    cpu_check.same(got[0], ref[0])


VARIADIC = """
HloModule m
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v1, v0), direction=GT
  v = f32[] select(gt, v1, v0)
  i = s32[] select(gt, i1, i0)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[5,3]{0,1} parameter(0)
  xi = s32[5,3] parameter(1)
  idx = s32[8,1] parameter(2)
  u = f32[8,3] parameter(3)
  ui = s32[3,8]{0,1} parameter(4)
  uit = s32[8,3] transpose(ui), dimensions={1,0}
  ROOT s = (f32[5,3]{1,0}, s32[5,3]{0,1}) scatter(x, xi, idx, u, uit), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=argmax
}
"""  # noqa: E501 (HLO text: one instruction a line)


def test_variadic_scatter_with_layouts(cpu_check):
    x = _data((5, 3))
    xi = np.full((5, 3), -1, np.int32)
    idx = np.array([[0], [4], [4], [1], [5], [0], [4], [-3]], np.int32)
    u = _data((8, 3))
    ui = np.arange(24, dtype=np.int32).reshape(3, 8)
    got, ref = cpu_check.run(VARIADIC, x, xi, idx, u, ui)
    cpu_check.same(got[0], ref[0])
    cpu_check.same(got[1], ref[1])


def test_scalar_operand(cpu_check):
    text = """
HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  x = s32[] parameter(0)
  i = s32[4,0] parameter(1)
  u = s32[4] parameter(2)
  ROOT s = s32[] scatter(x, i, u), update_window_dims={}, inserted_window_dims={}, scatter_dims_to_operand_dims={}, index_vector_dim=1, to_apply=add
}
"""  # noqa: E501 (HLO text: one instruction a line)
    x = np.array(5, np.int32)
    i = np.zeros((4, 0), np.int32)
    u = np.array([1, 2, 3, 4], np.int32)
    got, ref = cpu_check.run(text, x, i, u)
    cpu_check.same(got[0], ref[0])
    assert int(got[0]) == 15


@pytest.mark.parametrize("name", ["scatter_ops.hlo", "scatter_ops.opt.hlo",
                                  "mnist_sgd_step.hlo", "mnist_sgd_step.opt.hlo",
                                  "log_softmax_cross_entropy.hlo",
                                  "log_softmax_cross_entropy.opt.hlo"])
def test_corpus(cpu_check, name):
    cpu_check.corpus(name)
