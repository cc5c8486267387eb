"""What the gpu fuzz campaigns found (tests/fuzz/campaign.py --backends gpu|gpu-emulator
--reference interpreter-ieee), checked on the emulated gpu (the same program and kernels,
run on the host).

Buffers cross computation boundaries as they are on the gpu, so a called computation's
parameter laid out unlike the value passed to it needs a copy (the boundary-layouts pass, as
on the cpu): found on an H100 (jax seed 17001645), a conditional of a transposed operand
({2,0,1}) whose branches take {2,1,0} returned the operand's bytes in the wrong order."""

from __future__ import annotations

import re

import numpy as np
import pytest

from xlapy.backends.base import flatten, get_platform
from xlapy.hlo.parser import parse

CONDITIONAL = """HloModule m
b0 {
  ROOT p = s8[8,4,8]{2,1,0} parameter(0)
}
b1 {
  p = s8[8,4,8]{2,1,0} parameter(0)
  ROOT r = s8[8,4,8]{2,1,0} reverse(p), dimensions={0}
}
ENTRY e {
  a = s8[4,8,8]{2,1,0} parameter(0)
  i = s32[] parameter(1)
  t = s8[8,4,8]{2,0,1} transpose(a), dimensions={1,0,2}
  n = s8[8,4,8]{2,0,1} negate(t)
  ROOT c = s8[8,4,8]{2,1,0} conditional(i, n, n), branch_computations={b0, b1}
}"""

WHILE = """HloModule m
cond {
  s = (s32[], f32[3,5]{1,0}) parameter(0)
  k = s32[] get-tuple-element(s), index=0
  two = s32[] constant(2)
  ROOT lt = pred[] compare(k, two), direction=LT
}
body {
  s = (s32[], f32[3,5]{1,0}) parameter(0)
  k = s32[] get-tuple-element(s), index=0
  x = f32[3,5]{1,0} get-tuple-element(s), index=1
  one = s32[] constant(1)
  k1 = s32[] add(k, one)
  x1 = f32[3,5]{1,0} multiply(x, x)
  ROOT t = (s32[], f32[3,5]{1,0}) tuple(k1, x1)
}
ENTRY e {
  a = f32[5,3]{1,0} parameter(0)
  t = f32[3,5]{0,1} transpose(a), dimensions={1,0}
  zero = s32[] constant(0)
  init = (s32[], f32[3,5]{1,0}) tuple(zero, t)
  w = (s32[], f32[3,5]{1,0}) while(init), condition=cond, body=body
  ROOT r = f32[3,5]{1,0} get-tuple-element(w), index=1
}"""


@pytest.mark.parametrize("branch", [0, 1])
def test_conditional_of_a_transposed_operand(branch):
    module = parse(CONDITIONAL)
    a = (np.arange(256) - 128).astype(np.int8).reshape(4, 8, 8)
    inputs = [a, np.int32(branch)]
    want = flatten(get_platform("interpreter").compiler.compile(module).run(*inputs))
    got = flatten(get_platform("gpu-emulator").compiler.compile(module).run(*inputs))
    np.testing.assert_array_equal(got[0], want[0])
    expected = -a.transpose(1, 0, 2)
    np.testing.assert_array_equal(want[0], expected[::-1] if branch else expected)


def test_while_of_a_transposed_operand():
    module = parse(WHILE)
    a = np.arange(15, dtype=np.float32).reshape(5, 3) / 7
    got = flatten(get_platform("gpu-emulator").compiler.compile(module).run(a))
    np.testing.assert_array_equal(got[0], (a.T * a.T) * (a.T * a.T))


EMPTY_SCATTER = """HloModule m
mn {
  x = u64[] parameter(0)
  y = u64[] parameter(1)
  ROOT m = u64[] minimum(x, y)
}
ENTRY e {
  p0 = u64[2,7] parameter(0)
  p5 = s64[4,4] parameter(1)
  p6 = u64[4,4,0] parameter(2)
  ROOT s = u64[2,7] scatter(p0, p5, p6), update_window_dims={2}, inserted_window_dims={1},
      scatter_dims_to_operand_dims={1}, index_vector_dim=2, to_apply=mn
}"""


def test_scatter_of_empty_windows_changes_nothing():
    """gpu fuzz hlo 17000002 (emulated): a window of no elements still ran once, reading
    past the updates (0 written at [0, 0]; a SIGSEGV in hlo 17000331)."""
    module = parse(EMPTY_SCATTER)
    x = np.ones((2, 7), np.uint64)
    got = flatten(get_platform("gpu-emulator").compiler.compile(module).run(
        x, np.zeros((4, 4), np.int64), np.zeros((4, 4, 0), np.uint64)))
    np.testing.assert_array_equal(got[0], x)


def test_convert_of_a_subnormal_to_pred_is_true():
    """The gpu keeps subnormals (as XLA:GPU): convert(1e-40) to pred is true there, while
    the cpu, running with denormals flushed, reads it as zero (gpu fuzz hlo 17000026)."""
    module = parse("""HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = pred[4] convert(p)
}""")
    x = np.float32([1e-40, -1e-41, 0.0, -0.0])
    got = flatten(get_platform("gpu-emulator").compiler.compile(module).run(x))
    np.testing.assert_array_equal(got[0], [True, True, False, False])


SHIFTS = """HloModule m
ENTRY e {
  x = s64[6] parameter(0)
  y = s64[6] parameter(1)
  l = s64[6] shift-right-logical(x, y)
  a = s64[6] shift-right-arithmetic(x, y)
  s = s64[6] shift-left(x, y)
  ROOT t = (s64[6], s64[6], s64[6]) tuple(l, a, s)
}"""


def _gpu_or_skip():
    from xlapy.backends.gpu.runtime import cuda
    from xlapy.errors import XlapyError
    try:
        cuda.default_context()
    except XlapyError as e:
        pytest.skip(f"needs a CUDA GPU: {e}")


@pytest.mark.parametrize("backend", ["gpu-emulator", "gpu"])
def test_64_bit_shift_amounts_beyond_32_bits(backend):
    """A shift amount of 2^63 + 1 shifts everything out (HLO: amounts of the width or more
    give 0, or the sign fill): on an H100 -5 >> 0x8000000000000001 gave -5 >> 1 (hlo
    25001038), LLVM's NVPTX backend having folded the guarded shift into PTX's own clamping
    shr, whose amount is 32 bits."""
    if backend == "gpu":
        _gpu_or_skip()
    x = np.array([-5, 7, -8, 1 << 40, -1, 3], np.int64)
    y = np.array([-9223372036854775807, (1 << 32) + 1, 63, 64, 1 << 33, 1], np.int64)
    module = parse(SHIFTS)
    want = flatten(get_platform("interpreter").compiler.compile(module).run(x, y))
    got = flatten(get_platform(backend).compiler.compile(module).run(x, y))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)
    np.testing.assert_array_equal(want[0], [0, 0, 1, 0, 0, 1])
    np.testing.assert_array_equal(want[1], [-1, 0, -1, 0, -1, 1])


def test_64_bit_shift_amount_clamped_before_ptx_narrows_it():
    """Without a GPU: the PTX of a 64-bit shift narrows its amount only after clamping it
    to the width (a 64-bit minimum against 64, written as setp + selp, before the 32-bit
    shr/shl operand)."""
    from xlapy.backends.gpu.compiler import compile_program
    ptx = compile_program(parse(SHIFTS), 90).ptx
    assert re.search(r"setp\.lt\.u64\s+%xlapy_mm, %rd\d+, 64;", ptx) and "shr.u64" in ptx, ptx


SORT_RELAID = """HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  x = s32[] parameter(2)
  y = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
ENTRY e {
  p = f32[6,2,6]{0,2,1} parameter(0)
  i = s32[6,2,6]{2,1,0} parameter(1)
  ROOT s = (f32[6,2,6]{2,1,0}, s32[6,2,6]{1,2,0}) sort(p, i), dimensions={2}, to_apply=cmp
}"""


@pytest.mark.parametrize("backend", ["gpu-emulator", "gpu"])
def test_sort_into_results_laid_out_unlike_its_operands(backend):
    """The sort kernel copies each row into the outputs and sorts them there: it must
    address the outputs by their own layouts (jax 25200290, found on an H100: a jnp.sort
    of a transposed f32[6,2,6] returned elements in the operand's byte order)."""
    if backend == "gpu":
        _gpu_or_skip()
    rng = np.random.default_rng(3)
    p = rng.standard_normal((6, 2, 6)).astype(np.float32)
    i = np.arange(72, dtype=np.int32).reshape(6, 2, 6)
    module = parse(SORT_RELAID)
    got = flatten(get_platform(backend).compiler.compile(module).run(p, i))
    order = np.argsort(p, axis=2, kind="stable")
    np.testing.assert_array_equal(np.asarray(got[0]), np.take_along_axis(p, order, 2))
    np.testing.assert_array_equal(np.asarray(got[1]), np.take_along_axis(i, order, 2))


MINMAX_OF_NEGATED = """HloModule m
mx {
  a = s16[] parameter(0)
  b = s16[] parameter(1)
  ROOT m = s16[] maximum(a, b)
}
mn {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] minimum(a, b)
}
ENTRY e {
  x = s32[3,2] parameter(0)
  y = s16[8,2] parameter(1)
  c = s32[] constant(2147483647)
  d = s16[] constant(-32768)
  n = s32[3,2] negate(x)
  m = s16[8,2] negate(y)
  r = s32[] reduce(n, c), dimensions={0,1}, to_apply=mn
  s = s16[] reduce(m, d), dimensions={0,1}, to_apply=mx
  ROOT t = (s32[], s16[]) tuple(r, s)
}"""


@pytest.mark.parametrize("backend", ["gpu-emulator", "gpu"])
def test_integer_min_max_of_negated_values(backend):
    """ptxas (sm_90) fused min.s32 chains over negations into VIMNMX3 and dropped some
    negations: on an H100 min(-x) of [3, -12, 3, -12, -11, -9] was -12 (jax 25201251) and
    an s16 max(-y) 12 instead of 10 (hlo 25300813). The PTX now computes integer min/max
    as setp + selp (ptx_workarounds.py)."""
    if backend == "gpu":
        _gpu_or_skip()
    x = np.array([[3, -12], [3, -12], [-11, -9]], np.int32)
    y = np.array([0, 8, 5, -1, -7, 12, -9, -1, -5, -10, -4, 0, -5, -5, -5, -10],
                 np.int16).reshape(8, 2)
    got = flatten(get_platform(backend).compiler.compile(parse(MINMAX_OF_NEGATED)).run(x, y))
    assert int(np.asarray(got[0])) == -3 and int(np.asarray(got[1])) == 10


def test_integer_min_max_are_compare_and_select_in_the_ptx():
    """Without a GPU: no integer min/max instruction is left in the PTX, each is a setp
    and a selp on the function's own predicate register."""
    from xlapy.backends.gpu.compiler import compile_program
    from xlapy.backends.gpu.ptx_workarounds import integer_minmax_as_select
    ptx = compile_program(parse(MINMAX_OF_NEGATED), 90).ptx
    assert not re.search(r"\b(min|max)\.[su](16|32|64)\s", ptx), ptx
    assert "selp.b32" in ptx and "selp.b16" in ptx and ".reg .pred \t%xlapy_mm;" in ptx
    before = ("\t.visible .entry k(\n)\n{\n\tmin.u64 \t%rd3, %rd1, 7;\n"
              "\tmax.s16 \t%rs1, %rs2, %rs3;\n\tmin.f32 \t%f1, %f2, %f3;\n}\n")
    assert integer_minmax_as_select(before) == (
        "\t.visible .entry k(\n)\n{\n\t.reg .pred \t%xlapy_mm;\n"
        "\tsetp.lt.u64 \t%xlapy_mm, %rd1, 7;\n\tselp.b64 \t%rd3, %rd1, 7, %xlapy_mm;\n"
        "\tsetp.gt.s16 \t%xlapy_mm, %rs2, %rs3;\n\tselp.b16 \t%rs1, %rs2, %rs3, %xlapy_mm;\n"
        "\tmin.f32 \t%f1, %f2, %f3;\n}\n")
