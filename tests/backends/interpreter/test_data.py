"""Data-movement and structure rules: broadcast, reshape, transpose, slice, concatenate,
pad, reverse, iota, copy, bitcast, constant, tuple, get-tuple-element, after-all.

Most cases run the same HLO text on XLA:CPU (the oracle of test_elementwise.py); bitcast
with layouts cannot run there (XLA rejects bitcast before layout assignment), so it is
checked against the physical-order definition with NumPy.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from xlapy.backends.interpreter import evaluate
from xlapy.hlo.evaluator.numerics import TOKEN
from xlapy.errors import EvaluationError
from xlapy.hlo import parse

from .test_elementwise import check

pytest.importorskip("jax")


def one_op(param_shapes: list[str], out_shape: str, op: str) -> str:
    params = "".join(f"  p{i} = {s} parameter({i})\n" for i, s in enumerate(param_shapes))
    return f"HloModule m\nENTRY e {{\n{params}  ROOT r = {out_shape} {op}\n}}\n"


def arange(shape, dtype=np.float32):
    return (np.arange(int(np.prod(shape))) + 1).astype(dtype).reshape(shape)


@pytest.mark.parametrize("src,dst,dims", [
    ("f32[]", "f32[2,3]", "{}"), ("f32[3]", "f32[2,3]", "{1}"), ("f32[2]", "f32[2,3]", "{0}"),
    ("f32[2,3]", "f32[2,4,3]", "{0,2}"), ("f32[2,3]", "f32[3,5,2]", "{2,0}"),
    ("f32[0]", "f32[2,0]", "{1}"), ("s8[3]", "s8[3,0]", "{0}"), ("pred[2]", "pred[2,2]", "{1}"),
])
def test_broadcast(src, dst, dims):
    shape = [int(d) for d in src[src.index("[") + 1:-1].split(",") if d]
    dtype = {"f": np.float32, "s": np.int8, "p": np.bool_}[src[0]]
    check(one_op([src], dst, f"broadcast(p0), dimensions={dims}"), arange(shape, dtype))


@pytest.mark.parametrize("src,dst", [
    ([2, 3, 4], [6, 4]), ([2, 3, 4], [4, 3, 2]), ([], [1, 1]), ([1, 1], []), ([0, 3], [3, 0]),
    ([12], [2, 2, 3]),
])
def test_reshape(src, dst):
    s, d = ",".join(map(str, src)), ",".join(map(str, dst))
    check(one_op([f"s32[{s}]"], f"s32[{d}]", "reshape(p0)"), arange(src, np.int32))


@pytest.mark.parametrize("perm", [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1),
                                  (2, 1, 0)])
def test_transpose(perm):
    x = arange([2, 3, 4])
    out = ",".join(str(x.shape[p]) for p in perm)
    got = check(one_op(["f32[2,3,4]"], f"f32[{out}]",
                       f"transpose(p0), dimensions={{{','.join(map(str, perm))}}}"), x)[0]
    np.testing.assert_array_equal(got, np.transpose(x, perm))


@pytest.mark.parametrize("spec,out", [
    ("{[0:5], [0:7]}", "5,7"), ("{[1:4], [2:7:2]}", "3,3"), ("{[0:5:3], [6:7]}", "2,1"),
    ("{[2:2], [0:7]}", "0,7"), ("{[4:5:4], [1:7:5]}", "1,2"),
])
def test_slice(spec, out):
    check(one_op(["f32[5,7]"], f"f32[{out}]", f"slice(p0), slice={spec}"), arange([5, 7]))


def test_concatenate():
    text = ("HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[2,0] parameter(1)\n"
            "  c = f32[2,2] parameter(2)\n  d = f32[1,3] parameter(3)\n"
            "  x = f32[2,5] concatenate(a, b, c), dimensions={1}\n"
            "  y = f32[3,3] concatenate(a, d), dimensions={0}\n"
            "  ROOT r = (f32[2,5], f32[3,3]) tuple(x, y)\n}\n")
    check(text, arange([2, 3]), arange([2, 0]), -arange([2, 2]), 10 * arange([1, 3]))


@pytest.mark.parametrize("padding,out", [
    ("1_2x0_1", "6,5"), ("0_0_1x0_0_2", "5,10"), ("-1_1x2_-2", "3,4"),
    ("-2_-1_1x1_-3_2", "2,8"), ("2_3_0x-1_-1_0", "8,2"), ("-3_0x0_0", "0,4"),
    ("-1_-1_3x0_0", "7,4"),
])
def test_pad(padding, out):
    x = arange([3, 4])
    check(one_op(["f32[3,4]", "f32[]"], f"f32[{out}]", f"pad(p0, p1), padding={padding}"),
          x, np.float32(-0.5))


def test_pad_zero_size_operand():
    check(one_op(["f32[0,2]", "f32[]"], "f32[3,9]", "pad(p0, p1), padding=2_1_4x1_1_5"),
          np.zeros((0, 2), np.float32), np.float32(7))


@pytest.mark.parametrize("dims", ["{}", "{0}", "{1}", "{0,2}", "{0,1,2}"])
def test_reverse(dims):
    check(one_op(["s16[2,3,4]"], "s16[2,3,4]", f"reverse(p0), dimensions={dims}"),
          arange([2, 3, 4], np.int16))


@pytest.mark.parametrize("shape,dim", [
    ("s32[5,3]", 0), ("s32[5,3]", 1), ("u8[300]", 0), ("f16[2,3000]", 1), ("bf16[300]", 0),
    ("f32[4,0]", 0), ("s64[3]", 0), ("f64[2,2,2]", 2), ("u32[3,2]", 1),
])
def test_iota(shape, dim):
    out = check(f"HloModule m\nENTRY e {{\n  ROOT r = {shape} iota(), iota_dimension={dim}\n}}\n")
    assert out[0].size == 0 or out[0].max() > 0


def test_copy_tuple_get_tuple_element_are_values():
    text = ("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = s32[] parameter(1)\n"
            "  t = (f32[2], s32[]) tuple(a, b)\n  c = (f32[2], s32[]) copy(t)\n"
            "  g = s32[] get-tuple-element(c), index=1\n"
            "  h = f32[2] get-tuple-element(t), index=0\n"
            "  ROOT r = (s32[], f32[2], (f32[2], s32[])) tuple(g, h, c)\n}\n")
    a = np.array([1.5, -2], np.float32)
    g, h, c = evaluate(parse(text), a, np.int32(7))
    assert g == 7 and h.tolist() == [1.5, -2] and c[1] == 7
    a[0] = 99  # copy makes a new array
    assert c[0][0] == 1.5


def test_optimization_barrier_and_after_all():
    text = ("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  tok = token[] after-all()\n"
            "  b = f32[2] opt-barrier(a)\n  ROOT r = (f32[2], token[]) tuple(b, tok)\n}\n")
    b, tok = evaluate(parse(text), np.array([1, 2], np.float32))
    assert b.tolist() == [1, 2] and tok is TOKEN


# ---- bitcast: physical element order ---------------------------------------------------------

def physical(x: np.ndarray, minor_to_major) -> np.ndarray:
    """x's elements in memory order for a layout (major-to-minor = reversed minor_to_major)."""
    return np.transpose(x, list(reversed(minor_to_major))).reshape(-1)


@pytest.mark.parametrize("src,dst", [
    ("f32[4,5]{1,0}", "f32[5,4]{0,1}"),        # a transpose
    ("f32[2,3,4]{2,1,0}", "f32[6,4]{1,0}"),    # a reshape
    ("f32[2,3,4]{0,1,2}", "f32[4,3,2]{2,1,0}"),
    ("f32[3,4]{0,1}", "f32[12]{0}"),
    ("f32[1,6]{1,0}", "f32[6]{0}"), ("f32[2,3]", "f32[3,2]"), ("f32[1]{0}", "f32[]"),
    ("f32[4,6]{1,0}", "s32[2,12]{0,1}"),        # same width, other type
])
def test_bitcast_reinterprets_the_physical_order(src, dst):
    m = parse(one_op([src], dst, "bitcast(p0)"))
    in_shape, out_shape = m.entry.parameters[0].shape, m.entry.root.shape
    x = arange(in_shape.dims)
    got = evaluate(m, x)
    assert got.shape == out_shape.dims and got.dtype == out_shape.dtype
    np.testing.assert_array_equal(physical(got, out_shape.minor_to_major).view(np.float32),
                                  physical(x, in_shape.minor_to_major))
    if src == "f32[4,5]{1,0}":
        np.testing.assert_array_equal(got, x.T)


# ---- constants -------------------------------------------------------------------------------

def test_constants():
    text = ("HloModule m\nENTRY e {\n  a = f32[2,2] constant({ {1, -2.5}, {inf, nan} })\n"
            "  b = bf16[2] constant({0.1, 3})\n  c = (s8[], pred[2]) constant((-3, {1, 0}))\n"
            "  d = u64[] constant(18446744073709551615)\n"
            "  ROOT r = (f32[2,2], bf16[2], (s8[], pred[2]), u64[]) tuple(a, b, c, d)\n}\n")
    a, b, c, d = evaluate(parse(text))
    np.testing.assert_array_equal(a, np.array([[1, -2.5], [np.inf, np.nan]], np.float32))
    assert b.dtype == ml_dtypes.bfloat16 and b.tolist() == [np.float32(0.1).astype(b.dtype), 3]
    assert c[0] == -3 and c[0].dtype == np.int8 and c[1].tolist() == [True, False]
    assert d == np.iinfo(np.uint64).max


def test_elided_constant_is_an_evaluation_error():
    text = ("HloModule m\nENTRY e {\n  ROOT a = f32[100] constant({...})\n}\n")
    with pytest.raises(EvaluationError, match=r"line 3:\d+: constant a was printed as \{\.\.\.\}"
                                              r".*large constants"):
        evaluate(parse(text))


@pytest.mark.parametrize("op,shapes,out,message", [
    ("reshape(p0)", ["f32[2,3]"], "f32[5]", "changes the element count"),
    ("slice(p0), slice={[0:4]}", ["f32[3]"], "f32[4]", "does not fit operand shape"),
    ("transpose(p0), dimensions={0,0}", ["f32[2,2]"], "f32[2,2]", "is not a permutation"),
    ("broadcast(p0), dimensions={0}", ["f32[3]"], "f32[2,3]", "do not map operand shape"),
    ("pad(p0, p1), padding=-3_-2", ["f32[3]", "f32[]"], "f32[0]", "negative dimension"),
    ("bitcast(p0)", ["f32[3]"], "f32[4]", "changes the size in bytes"),
])
def test_bad_attributes_are_evaluation_errors(op, shapes, out, message):
    text = one_op(shapes, out, op)
    args = [np.zeros(parse(text).entry.parameters[i].shape.dims, np.float32)
            for i in range(len(shapes))]
    with pytest.raises(EvaluationError, match=rf"line \d+:\d+: .*{message}.*: %r = "):
        evaluate(parse(text), *args)
