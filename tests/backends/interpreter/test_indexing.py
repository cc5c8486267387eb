"""Interpreter rules for dynamic-slice, dynamic-update-slice, gather and scatter.

Most tests lower a JAX function to HLO text, parse it, run xlapy's interpreter and compare
with what JAX/XLA computes; a few hand-written modules pin down XLA's clamping and
out-of-bounds rules directly.
"""

import numpy as np
import pytest

from xlapy.backends.interpreter import evaluate
from xlapy.errors import EvaluationError
from xlapy.hlo import parse

from .lowered import check, run_both

jax = pytest.importorskip("jax")
jnp = jax.numpy
lax = jax.lax

RNG = np.random.default_rng(1234)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ---- dynamic-slice / dynamic-update-slice --------------------------------------------------

DS_TEXT = """
HloModule ds
ENTRY e {
  x = f32[5,6] parameter(0)
  i = {t}[] parameter(1)
  j = {t}[] parameter(2)
  ROOT ds = f32[2,3] dynamic-slice(x, i, j), dynamic_slice_sizes={2,3}
}
"""
INDEX_TYPES = {"s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
               "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}


@pytest.mark.parametrize("t", sorted(INDEX_TYPES))
@pytest.mark.parametrize("i,j", [(0, 0), (1, 2), (4, 5), (3, 9), (120, 100)])
def test_dynamic_slice_clamps_starts(t, i, j):
    module = parse(DS_TEXT.replace("{t}", t))
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    got = evaluate(module, x, INDEX_TYPES[t](i), INDEX_TYPES[t](j))
    ci, cj = min(max(i, 0), 3), min(max(j, 0), 3)
    np.testing.assert_array_equal(got, x[ci:ci + 2, cj:cj + 3])


def test_dynamic_slice_negative_and_huge_unsigned_starts():
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    got = evaluate(parse(DS_TEXT.replace("{t}", "s32")), x, np.int32(-7), np.int32(-1))
    np.testing.assert_array_equal(got, x[0:2, 0:3])
    got = evaluate(parse(DS_TEXT.replace("{t}", "u64")), x, np.uint64(2**64 - 1),
                   np.uint64(2**63 + 1))
    np.testing.assert_array_equal(got, x[3:5, 3:6])


@pytest.mark.parametrize("starts", [(0, 0), (2, 1), (-3, 4), (7, -1), (4, 10)])
def test_dynamic_slice_matches_jax(starts):
    x = rand(6, 7)
    f = lambda x, i, j: lax.dynamic_slice(x, (i, j), (3, 4))
    check(f, x, np.int32(starts[0]), np.int32(starts[1]), opcode="dynamic-slice")


@pytest.mark.parametrize("starts", [(0, 0), (1, 3), (-2, 2), (9, 9)])
def test_dynamic_update_slice_matches_jax(starts):
    x, u = rand(5, 6), rand(2, 4)
    f = lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j))
    check(f, x, u, np.int32(starts[0]), np.int32(starts[1]), opcode="dynamic-update-slice")


def test_dynamic_update_slice_clamps_unsigned():
    module = parse("""
HloModule dus
ENTRY e {
  x = s32[4,4] parameter(0)
  u = s32[2,2] parameter(1)
  i = u32[] parameter(2)
  j = u32[] parameter(3)
  ROOT r = s32[4,4] dynamic-update-slice(x, u, i, j)
}""")
    x = np.zeros((4, 4), np.int32)
    u = np.array([[1, 2], [3, 4]], np.int32)
    got = evaluate(module, x, u, np.uint32(4000000000), np.uint32(1))
    want = x.copy()
    want[2:4, 1:3] = u
    np.testing.assert_array_equal(got, want)
    assert not x.any(), "the operand must not be modified in place"


# ---- gather -----------------------------------------------------------------------------

def test_take_axis1():
    x, idx = rand(4, 7, 3), np.array([[0, 6], [3, 3], [5, 1]], np.int32)
    check(lambda x, i: jnp.take(x, i, axis=1), x, idx, opcode="gather")


@pytest.mark.parametrize("mode", ["clip", "fill", "wrap"])
def test_take_out_of_bounds_modes(mode):
    x, idx = rand(5, 3), np.array([-9, -1, 0, 4, 5, 100], np.int32)
    check(lambda x, i: jnp.take(x, i, axis=0, mode=mode), x, idx, opcode="gather")


def test_getitem_out_of_bounds_indices_are_clamped_by_gather():
    x, idx = rand(5, 3), np.array([-9, -1, 0, 4, 5, 100], np.int32)
    check(lambda x, i: x[i], x, idx, opcode="gather")


def test_take_along_axis():
    x = rand(4, 6)
    idx = RNG.integers(0, 6, size=(4, 3)).astype(np.int32)
    check(lambda x, i: jnp.take_along_axis(x, i, axis=1), x, idx, opcode="gather")


def test_fancy_indexing_two_index_arrays():
    x = rand(5, 4, 6)
    i, j = np.array([0, 4, 2, 2], np.int32), np.array([5, 0, 3, 3], np.int32)
    check(lambda x, i, j: x[i, :, j], x, i, j, opcode="gather")


def test_gather_with_batching_dims_from_vmap():
    x, i = rand(3, 5, 4), np.array([1, 4, 0], np.int32)
    got, want = run_both(jax.vmap(lambda x, i: x[i]), x, i, opcode="gather")
    np.testing.assert_array_equal(got[0], want[0])


def test_vmapped_dynamic_slice_gathers_windows():
    x = rand(4, 10)
    starts = np.array([0, 3, 8, -2], np.int32)  # 8 and -2 are clamped by XLA/jax
    f = jax.vmap(lambda row, s: lax.dynamic_slice(row, (s,), (4,)))
    check(f, x, starts, opcode="gather")


def test_gather_implicit_index_vector_dim_and_clamping():
    # index_vector_dim == rank(indices): each index is a scalar; windows of 2 rows clamp.
    module = parse("""
HloModule g
ENTRY e {
  x = s32[6,3] parameter(0)
  i = s32[4] parameter(1)
  ROOT g = s32[4,2,3] gather(x, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={2,3}
}""")  # noqa: E501 (HLO text: one instruction a line)
    x = np.arange(18, dtype=np.int32).reshape(6, 3)
    i = np.array([0, 5, -4, 2], np.int32)
    got = evaluate(module, x, i)
    want = np.stack([x[s:s + 2] for s in (0, 4, 0, 2)])
    np.testing.assert_array_equal(got, want)


def test_gather_offset_dims_interleaved_with_batch_dims():
    # Output dims: batch, offset, batch (offset_dims={1}).
    module = parse("""
HloModule g
ENTRY e {
  x = f32[5,7] parameter(0)
  i = s32[2,3,1] parameter(1)
  ROOT g = f32[2,7,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,7}
}""")  # noqa: E501 (HLO text: one instruction a line)
    x = rand(5, 7)
    i = RNG.integers(0, 5, size=(2, 3, 1)).astype(np.int32)
    got = evaluate(module, x, i)
    want = np.transpose(x[i[..., 0]], (0, 2, 1))
    np.testing.assert_array_equal(got, want)


# ---- scatter ----------------------------------------------------------------------------

DUP_OOB = np.array([0, 2, 2, 5, -1, 7, 2, 0], np.int32)


@pytest.mark.parametrize("method", ["add", "set", "max", "min", "mul"])
@pytest.mark.parametrize("mode", ["drop", "clip", "promise_in_bounds"])
def test_scatter_methods_with_duplicates_and_out_of_bounds(method, mode):
    x, u = rand(6, 3), rand(len(DUP_OOB), 3)
    idx = DUP_OOB if mode != "promise_in_bounds" else np.abs(DUP_OOB) % 6
    f = lambda x, i, u: getattr(x.at[i], method)(u, mode=mode)
    check(f, x, idx, u, opcode="scatter", rtol=1e-5)


def test_scatter_set_duplicates_last_wins():
    x, u = np.zeros(4, np.float32), np.arange(1, 6, dtype=np.float32)
    idx = np.array([1, 1, 3, 1, 3], np.int32)
    got, want = run_both(lambda x, i, u: x.at[i].set(u, mode="drop"), x, idx, u,
                         opcode="scatter")
    np.testing.assert_array_equal(got[0], [0, 4, 0, 5])
    np.testing.assert_array_equal(got[0], want[0])


def test_scatter_integer_add_wraps():
    x = np.full(3, 100, np.int8)
    u = np.full(4, 50, np.int8)
    idx = np.array([0, 0, 1, 2], np.int32)
    got, want = run_both(lambda x, i, u: x.at[i].add(u), x, idx, u, opcode="scatter")
    np.testing.assert_array_equal(got[0], want[0])
    assert got[0][0] == np.int8(-56)


def test_scatter_generic_combiner_applies_duplicates_in_sequence():
    x = np.arange(5, dtype=np.float32)
    idx = np.array([1, 3, 1, 1, 4], np.int32)
    got, want = run_both(lambda x, i: x.at[i].apply(lambda v: v * 2.0 + 1.0), x, idx,
                         opcode="scatter")
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[0], [0, 15, 2, 7, 9])


def test_scatter_2d_index_vectors():
    x, u = rand(4, 5, 3), rand(6, 3)
    i = np.array([0, 3, 1, 1, 3, 0], np.int32)
    j = np.array([4, 0, 2, 2, 4, 9], np.int32)
    check(lambda x, i, j, u: x.at[i, j].add(u, mode="drop"), x, i, j, u, opcode="scatter",
          rtol=1e-5)


def test_scatter_with_batching_dims_from_vmap():
    x, i, u = rand(3, 5, 4), np.array([1, 4, 0], np.int32), rand(3, 4)
    check(jax.vmap(lambda x, i, u: x.at[i].add(u)), x, i, u, opcode="scatter")


def test_scatter_windows_partially_out_of_bounds_are_skipped_whole():
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(),
                                     scatter_dims_to_operand_dims=(0,))
    x = np.zeros((6, 4), np.float32)
    idx = np.array([[0], [4], [5], [-1], [3]], np.int32)
    u = np.ones((5, 2, 4), np.float32) * np.arange(1, 6, dtype=np.float32)[:, None, None]
    f = lambda x, i, u: lax.scatter_add(x, i, u, dn, mode="drop")
    got, want = run_both(f, x, idx, u, opcode="scatter")
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[0][:, 0], [1, 1, 0, 5, 7, 2])


def test_variadic_scatter_keeps_max_and_its_payload():
    module = parse("""
HloModule vs
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
  x = f32[4] parameter(0)
  xi = s32[4] parameter(1)
  idx = s32[6,1] parameter(2)
  u = f32[6] parameter(3)
  ui = s32[6] parameter(4)
  ROOT s = (f32[4], s32[4]) scatter(x, xi, idx, u, ui), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=argmax
}""")  # noqa: E501 (HLO text: one instruction a line)
    x = np.zeros(4, np.float32)
    xi = np.full(4, -1, np.int32)
    idx = np.array([[2], [0], [2], [9], [2], [0]], np.int32)
    u = np.array([1.0, -1.0, 3.0, 8.0, 2.0, 0.5], np.float32)
    ui = np.arange(10, 16, dtype=np.int32)
    v, i = evaluate(module, x, xi, idx, u, ui)
    np.testing.assert_array_equal(v, [0.5, 0, 3, 0])
    np.testing.assert_array_equal(i, [15, -1, 12, -1])


def test_gather_bad_index_vector_dim_is_a_project_error():
    module = parse("""
HloModule g
ENTRY e {
  x = f32[5] parameter(0)
  i = s32[3] parameter(1)
  ROOT g = f32[3] gather(x, i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=4, slice_sizes={1}
}""")  # noqa: E501 (HLO text: one instruction a line)
    with pytest.raises(EvaluationError, match="index_vector_dim"):
        evaluate(module, np.zeros(5, np.float32), np.zeros(3, np.int32))
