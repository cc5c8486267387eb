"""Shape inference: every opcode has a rule, and each rule's results and error paths.

POSITIVE lists (opcode, operand shapes, attrs, declared, expected result); NEGATIVE lists
(opcode, operand shapes, attrs, declared, regex the ShapeError message must match). Each
opcode of the table must appear in POSITIVE, so a new opcode without a test fails here.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from xlapy.errors import ShapeError
from xlapy.hlo import ELIDED, OPCODES, F32, S32, parse_shape
from xlapy.hlo.attributes import (ConvDimensionNumbers, PaddingConfig, ReplicaGroups, SliceSpec,
                                  Window)
from xlapy.hlo.builder import Builder
from xlapy.hlo.shape_inference import SHAPE_RULES, infer_shape


def comp(params, fn, name="c"):
    """A computation taking `params` (shape strings) with root fn(builder, *params)."""
    b = Builder(name)
    ps = [b.parameter(parse_shape(s), f"p{i}") for i, s in enumerate(params)]
    return b.build(fn(b, *ps))


ADD = comp(["f32[]", "f32[]"], lambda b, x, y: b.add(x, y))
_RG = ReplicaGroups(((0, 1), (2, 3)))
ADD_S32 = comp(["s32[]", "s32[]"], lambda b, x, y: b.add(x, y))
GE = comp(["f32[]", "f32[]"], lambda b, x, y: b.compare(x, y, "GE"))
LT2 = comp(["f32[]", "f32[]", "s32[]", "s32[]"], lambda b, x, y, i, j: b.compare(x, y, "LT"))
ARGMAX = comp(["f32[]", "s32[]", "f32[]", "s32[]"],
              lambda b, v, i, w, j: b.tuple([b.maximum(v, w), b.minimum(i, j)]))
COND = comp(["s32[]"], lambda b, i: b.compare(i, b.constant(10), "LT"))
BODY = comp(["s32[]"], lambda b, i: b.add(i, b.constant(1)))
NEG2 = comp(["f32[2]"], lambda b, x: b.negate(x))
EXP2 = comp(["f32[2]"], lambda b, x: b.exponential(x))
FMA = comp(["f32[2]", "f32[2]"], lambda b, x, y: b.multiply(x, y))
TO_S32 = comp(["f32[]"], lambda b, x: b.convert(x, S32))

W = Window.make
GATHER_ROWS = dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,),
                   index_vector_dim=1, slice_sizes=(1, 3))
SCATTER_ROWS = dict(update_window_dims=(1,), inserted_window_dims=(0,),
                    scatter_dims_to_operand_dims=(0,), index_vector_dim=1, to_apply=ADD)
NHWC = ConvDimensionNumbers.parse("b01f_01io->b01f")

POSITIVE = [
    ("parameter", [], {}, "(f32[2], token[])", "(f32[2], token[])"),
    ("constant", [], {}, "f32[2]", "f32[2]"),
    ("iota", [], {"iota_dimension": 1}, "s32[2,3]", "s32[2,3]"),
    ("tuple", ["f32[2]", "s32[]"], {}, None, "(f32[2], s32[])"),
    ("get-tuple-element", ["(f32[2], s32[])"], {"index": 1}, None, "s32[]"),
    ("copy", ["(f32[2], s32[])"], {}, None, "(f32[2], s32[])"),
    ("bitcast", ["f32[2,3]"], {}, "s32[6]", "s32[6]"),
    ("opt-barrier", ["(f32[2], s32[])"], {}, None, "(f32[2], s32[])"),
    ("after-all", ["token[]", "token[]"], {}, None, "token[]"),
    ("after-all", [], {}, None, "token[]"),
    ("abs", ["s32[3]"], {}, None, "s32[3]"),
    ("negate", ["u8[3]"], {}, None, "u8[3]"),
    ("sign", ["f16[3]"], {}, None, "f16[3]"),
    ("not", ["pred[3]"], {}, None, "pred[3]"),
    ("not", ["u16[3]"], {}, None, "u16[3]"),
    ("is-finite", ["bf16[3]"], {}, None, "pred[3]"),
    ("popcnt", ["u32[3]"], {}, None, "u32[3]"),
    ("count-leading-zeros", ["s64[3]"], {}, None, "s64[3]"),
    ("add", ["pred[2]", "pred[2]"], {}, None, "pred[2]"),
    ("subtract", ["s8[2,3]", "s8[2,3]"], {}, None, "s8[2,3]"),
    ("atan2", ["f64[2]", "f64[2]"], {}, None, "f64[2]"),
    ("and", ["pred[2]", "pred[2]"], {}, None, "pred[2]"),
    ("xor", ["u8[2]", "u8[2]"], {}, None, "u8[2]"),
    ("shift-right-logical", ["u32[2]", "u32[2]"], {}, None, "u32[2]"),
    ("compare", ["f32[2,3]", "f32[2,3]"], {"direction": "LT"}, None, "pred[2,3]"),
    ("compare", ["f32[2]", "f32[2]"], {"direction": "EQ", "type": "TOTALORDER"}, None,
     "pred[2]"),
    ("compare", ["u8[]", "u8[]"], {"direction": "GE", "type": "UNSIGNED"}, None, "pred[]"),
    ("select", ["pred[2,3]", "f32[2,3]", "f32[2,3]"], {}, None, "f32[2,3]"),
    ("select", ["pred[]", "s32[2,3]", "s32[2,3]"], {}, None, "s32[2,3]"),
    ("clamp", ["f32[]", "f32[4]", "f32[4]"], {}, None, "f32[4]"),
    ("convert", ["s32[2,3]"], {}, "f16[2,3]", "f16[2,3]"),
    ("bitcast-convert", ["f32[4]"], {}, "s32[4]", "s32[4]"),
    ("bitcast-convert", ["f32[4]"], {}, "u8[4,4]", "u8[4,4]"),
    ("bitcast-convert", ["u16[4,2]"], {}, "f32[4]", "f32[4]"),
    ("reduce-precision", ["f32[4]"], {"exponent_bits": 5, "mantissa_bits": 10}, None, "f32[4]"),
    ("broadcast", ["f32[3]"], {"dimensions": (1,)}, "f32[2,3,4]", "f32[2,3,4]"),
    ("broadcast", ["f32[3,2]"], {"dimensions": (1, 0)}, "f32[2,3]", "f32[2,3]"),
    ("broadcast", ["f32[]"], {"dimensions": ()}, "f32[2,3]", "f32[2,3]"),
    ("reshape", ["f32[2,3]"], {}, "f32[3,1,2]", "f32[3,1,2]"),
    ("reshape", ["f32[0,3]"], {}, "f32[3,0]", "f32[3,0]"),
    ("transpose", ["f32[2,3,4]"], {"dimensions": (2, 0, 1)}, None, "f32[4,2,3]"),
    ("slice", ["f32[10,5]"], {"slice": SliceSpec((1, 0), (8, 5), (3, 1))}, None, "f32[3,5]"),
    ("slice", ["f32[10]"], {"slice": SliceSpec((4,), (4,), (1,))}, None, "f32[0]"),
    ("concatenate", ["f32[2,3]", "f32[5,3]", "f32[0,3]"], {"dimensions": (0,)}, None,
     "f32[7,3]"),
    ("pad", ["f32[4,3]", "f32[]"], {"padding": PaddingConfig((1, -1), (2, 0), (1, 0))}, None,
     "f32[10,2]"),
    ("pad", ["f32[0]", "f32[]"], {"padding": PaddingConfig((1,), (1,), (5,))}, None, "f32[2]"),
    ("reverse", ["f32[2,3]"], {"dimensions": (0, 1)}, None, "f32[2,3]"),
    ("dynamic-slice", ["f32[10,5]", "s32[]", "s32[]"], {"dynamic_slice_sizes": (3, 5)}, None,
     "f32[3,5]"),
    ("dynamic-update-slice", ["f32[10,5]", "f32[3,5]", "u32[]", "u32[]"], {}, None, "f32[10,5]"),
    ("gather", ["f32[5,3]", "s32[4,1]"], GATHER_ROWS, None, "f32[4,3]"),
    ("gather", ["f32[5,3]", "s32[4]"], GATHER_ROWS, None, "f32[4,3]"),
    ("gather", ["f32[5,3]", "s32[2,4,1]"], {**GATHER_ROWS, "offset_dims": (2,),
                                            "index_vector_dim": 2}, None, "f32[2,4,3]"),
    ("gather", ["f32[2,5,3]", "s32[2,4,1]"],
     dict(offset_dims=(2,), collapsed_slice_dims=(1,), start_index_map=(1,), index_vector_dim=2,
          slice_sizes=(1, 1, 3), operand_batching_dims=(0,), start_indices_batching_dims=(0,)),
     None, "f32[2,4,3]"),
    ("gather", ["f32[5,3]", "s32[4,2]"],
     dict(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1),
          index_vector_dim=1, slice_sizes=(2, 2)), None, "f32[4,2,2]"),
    ("scatter", ["f32[5,3]", "s32[4,1]", "f32[4,3]"], SCATTER_ROWS, None, "f32[5,3]"),
    ("scatter", ["f32[5,3]", "s32[4,1]", "f32[4,2]"], SCATTER_ROWS, None, "f32[5,3]"),
    ("scatter", ["f32[5]", "s32[5]", "s32[4,1]", "f32[4]", "s32[4]"],
     dict(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
          index_vector_dim=1, to_apply=ARGMAX), None, "(f32[5], s32[5])"),
    ("scatter", ["f32[2,5,3]", "s32[2,4,1]", "f32[2,4,3]"],
     dict(update_window_dims=(2,), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
          index_vector_dim=2, input_batching_dims=(0,), scatter_indices_batching_dims=(0,),
          to_apply=ADD), None, "f32[2,5,3]"),
    ("reduce", ["f32[2,3,4]", "f32[]"], {"dimensions": (0, 2), "to_apply": ADD}, None, "f32[3]"),
    ("reduce", ["f32[5,6]", "s32[5,6]", "f32[]", "s32[]"],
     {"dimensions": (0,), "to_apply": ARGMAX}, None, "(f32[6], s32[6])"),
    ("reduce-window", ["f32[4,6]", "f32[]"], {"window": W((2, 3), (2, 3)), "to_apply": ADD},
     None, "f32[2,2]"),
    ("reduce-window", ["f32[5]", "f32[]"],
     {"window": W((3,), pad_low=(1,), pad_high=(1,), rhs_dilate=(2,)), "to_apply": ADD}, None,
     "f32[3]"),
    ("reduce-window", ["f32[3]", "f32[]"], {"window": W((2,), lhs_dilate=(2,)), "to_apply": ADD},
     None, "f32[4]"),
    ("select-and-scatter", ["f32[4,6]", "f32[2,3]", "f32[]"],
     {"window": W((2, 2), (2, 2)), "select": GE, "scatter": ADD}, None, "f32[4,6]"),
    ("dot", ["f32[2,3]", "f32[3,4]"], {"lhs_contracting_dims": (1,), "rhs_contracting_dims": (0,)},
     None, "f32[2,4]"),
    ("dot", ["f32[3,2]", "f32[4,3]"], {"lhs_contracting_dims": (0,), "rhs_contracting_dims": (1,)},
     None, "f32[2,4]"),
    ("dot", ["f32[5,2,3]", "f32[3,5,4]"],
     {"lhs_batch_dims": (0,), "lhs_contracting_dims": (2,), "rhs_batch_dims": (1,),
      "rhs_contracting_dims": (0,)}, None, "f32[5,2,4]"),
    ("dot", ["f32[2]", "f32[3]"], {}, None, "f32[2,3]"),
    ("dot", ["s8[2,3]", "s8[3,4]"], {"lhs_contracting_dims": (1,), "rhs_contracting_dims": (0,)},
     "s32[2,4]", "s32[2,4]"),
    ("dot", ["f32[2,3]", "f32[3]"], {"lhs_contracting_dims": (1,), "rhs_contracting_dims": (0,)},
     "bf16[2]", "bf16[2]"),
    ("cholesky", ["f32[4,4]"], {"lower": True}, None, "f32[4,4]"),
    ("complex", ["f32[2,3]", "f32[2,3]"], {}, None, "c64[2,3]"),
    ("complex", ["f64[]", "f64[]"], {}, None, "c128[]"),
    ("real", ["c128[4]"], {}, None, "f64[4]"),
    ("imag", ["c64[4]"], {}, None, "f32[4]"),
    ("real", ["f32[4]"], {}, None, "f32[4]"),
    ("abs", ["c64[4]"], {}, None, "f32[4]"),
    ("convert", ["f32[4]"], {}, "c64[4]", "c64[4]"),
    ("dot", ["c64[2,3]", "c64[3,4]"], {"lhs_contracting_dims": (1,), "rhs_contracting_dims": (0,)},
     None, "c64[2,4]"),
    ("fft", ["c64[3,8]"], {"fft_type": "FFT", "fft_length": (8,)}, None, "c64[3,8]"),
    ("fft", ["c128[2,4,6]"], {"fft_type": "IFFT", "fft_length": (4, 6)}, None, "c128[2,4,6]"),
    ("fft", ["f32[3,8]"], {"fft_type": "RFFT", "fft_length": (8,)}, None, "c64[3,5]"),
    ("fft", ["f64[2,3,7]"], {"fft_type": "RFFT", "fft_length": (2, 3, 7)}, None, "c128[2,3,4]"),
    ("fft", ["c64[3,5]"], {"fft_type": "IRFFT", "fft_length": (8,)}, None, "f32[3,8]"),
    ("fft", ["c128[4,5]"], {"fft_type": "IRFFT", "fft_length": (4, 9)}, None, "f64[4,9]"),
    ("cholesky", ["bf16[2,3,0,0]"], {}, None, "bf16[2,3,0,0]"),
    ("convolution", ["f32[1,5,5,3]", "f32[3,3,3,8]"], {"window": W((3, 3)), "dim_labels": NHWC},
     None, "f32[1,3,3,8]"),
    ("convolution", ["f32[1,5,5,3]", "f32[3,3,3,8]"],
     {"window": W((3, 3), (2, 2), (1, 1), (1, 1)), "dim_labels": NHWC}, None, "f32[1,3,3,8]"),
    ("convolution", ["f32[2,4,5,5]", "f32[6,2,3,3]"],
     {"window": W((3, 3)), "dim_labels": ConvDimensionNumbers.parse("bf01_oi01->bf01"),
      "feature_group_count": 2}, None, "f32[2,6,3,3]"),
    ("convolution", ["f32[4,3,5]", "f32[6,3,2]"],
     {"window": W((2,)), "dim_labels": ConvDimensionNumbers.parse("bf0_oi0->bf0"),
      "batch_group_count": 2}, None, "f32[2,6,4]"),
    ("convolution", ["f32[1,4,3]", "f32[2,3,1]"],
     {"window": W((2,), lhs_dilate=(2,), rhs_dilate=(2,)),
      "dim_labels": ConvDimensionNumbers.parse("b0f_0io->b0f")}, None, "f32[1,5,1]"),
    ("sort", ["f32[3,4]"], {"dimensions": (1,), "to_apply": GE}, None, "f32[3,4]"),
    ("sort", ["f32[3,4]", "s32[3,4]"], {"dimensions": (0,), "is_stable": True, "to_apply": LT2},
     None, "(f32[3,4], s32[3,4])"),
    ("topk", ["f32[3,5]"], {"k": 2, "largest": True}, None, "(f32[3,2], s32[3,2])"),
    ("while", ["s32[]"], {"condition": COND, "body": BODY}, None, "s32[]"),
    ("conditional", ["pred[]", "f32[2]", "f32[2]"],
     {"true_computation": NEG2, "false_computation": EXP2}, None, "f32[2]"),
    ("conditional", ["s32[]", "f32[2]", "f32[2]", "f32[2]"],
     {"branch_computations": [NEG2, EXP2, NEG2]}, None, "f32[2]"),
    ("call", ["f32[2]", "f32[2]"], {"to_apply": FMA}, None, "f32[2]"),
    ("map", ["f32[3,4]", "f32[3,4]"], {"dimensions": (0, 1), "to_apply": ADD}, None, "f32[3,4]"),
    ("map", ["f32[3]"], {"to_apply": TO_S32}, None, "s32[3]"),
    ("fusion", ["f32[2]", "f32[2]"], {"kind": "kLoop", "calls": FMA}, None, "f32[2]"),
    ("custom-call", ["f32[2]"], {"custom_call_target": "foo"}, "(f32[2], s8[7])",
     "(f32[2], s8[7])"),
    # collectives (more in tests/hlo/test_collectives.py)
    ("all-reduce", ["f32[2]", "f32[3]"], {"to_apply": ADD, "replica_groups": _RG}, None,
     "(f32[2], f32[3])"),
    ("all-gather", ["f32[2,3]"], {"dimensions": (1,), "replica_groups": _RG}, "f32[2,6]",
     "f32[2,6]"),
    ("reduce-scatter", ["f32[4]"], {"dimensions": (0,), "to_apply": ADD}, "f32[1]", "f32[1]"),
    ("all-to-all", ["f32[4,2]"], {"dimensions": (0,), "replica_groups": _RG}, None,
     "f32[4,2]"),
    ("all-to-all", ["f32[3]", "f32[3]"], {"replica_groups": _RG}, None, "(f32[3], f32[3])"),
    ("collective-permute", ["s32[3]"], {"source_target_pairs": _RG}, None, "s32[3]"),
    ("replica-id", [], {}, None, "u32[]"),
    ("partition-id", [], {}, None, "u32[]"),
]

_LITERALS = {"constant": np.zeros(2, np.float32)}


def run(opcode, operands, attrs, declared, literal=None):
    shapes = [parse_shape(s) for s in operands]
    d = parse_shape(declared) if declared else None
    if literal is None:
        literal = _LITERALS.get(opcode)
    return infer_shape(opcode, shapes, attrs, declared=d, literal=literal)


# Element kinds each elementwise opcode accepts (pred, s = signed int, u = unsigned, f = float),
# as in XLA's InferUnaryOpShape / InferBinaryOpShape.
ACCEPTS = {
    "abs": "s f c", "negate": "s u f c", "sign": "s f c", "not": "pred s u", "popcnt": "s u",
    "count-leading-zeros": "s u", "is-finite": "f",
    **{op: "f" for op in ("floor", "ceil", "round-nearest-afz", "round-nearest-even", "cbrt",
                          "erf", "atan2")},
    **{op: "f c" for op in ("exponential", "exponential-minus-one", "log", "log-plus-one",
                            "logistic", "sqrt", "rsqrt", "sine", "cosine", "tan", "tanh")},
    **{op: "pred s u f" for op in ("maximum", "minimum")},
    **{op: "pred s u f c" for op in ("add", "multiply", "compare")},
    **{op: "s u f c" for op in ("subtract", "divide", "power")},
    "remainder": "s u f",
    **{op: "pred s u" for op in ("and", "or", "xor")},
    **{op: "s u" for op in ("shift-left", "shift-right-arithmetic", "shift-right-logical")},
}
KIND_TYPES = {"pred": ["pred"], "s": ["s8", "s32", "s64"], "u": ["u8", "u16", "u64"],
              "f": ["f16", "bf16", "f32", "f64"], "c": ["c64", "c128"]}


@pytest.mark.parametrize("opcode", sorted(ACCEPTS))
def test_elementwise_element_types(opcode):
    n = OPCODES[opcode].arity
    attrs = {"direction": "EQ"} if opcode == "compare" else {}
    for kind, types in KIND_TYPES.items():
        for t in types:
            if kind in ACCEPTS[opcode].split():
                got = run(opcode, [f"{t}[2,3]"] * n, attrs, None)
                assert got.dims == (2, 3)
                want = ("pred" if opcode in ("compare", "is-finite")
                        else {"c64": "f32", "c128": "f64"}[t] if opcode == "abs" and kind == "c"
                        else t)
                assert got.element_type.name == want
            else:
                with pytest.raises(ShapeError, match=rf"^{opcode}: .*{t}\[2,3\]"):
                    run(opcode, [f"{t}[2,3]"] * n, attrs, None)


def test_every_opcode_has_a_rule_and_a_test():
    missing_rule = sorted(set(OPCODES) - set(SHAPE_RULES))
    assert not missing_rule, f"opcodes without a shape rule: {missing_rule}"
    assert set(OPCODES[o].category for o in ACCEPTS) >= {"unary", "binary"}
    unary_binary = {o for o, i in OPCODES.items() if i.category in ("unary", "binary")}
    assert not unary_binary - set(ACCEPTS), f"no type test: {unary_binary - set(ACCEPTS)}"
    tested = {case[0] for case in POSITIVE} | set(ACCEPTS)
    assert not sorted(set(OPCODES) - tested), f"untested: {sorted(set(OPCODES) - tested)}"


@pytest.mark.parametrize("case", POSITIVE, ids=[f"{c[0]}-{i}" for i, c in enumerate(POSITIVE)])
def test_positive(case):
    opcode, operands, attrs, declared, expected = case
    got = run(opcode, operands, attrs, declared)
    assert got.compatible(parse_shape(expected)), f"{opcode}: got {got}, expected {expected}"


FLOAT_ONLY = sorted(n for n, i in OPCODES.items() if i.float_only and i.arity in (1, 2)
                    and i.elementwise and n not in ("reduce-precision", "complex"))


@pytest.mark.parametrize("opcode", FLOAT_ONLY)
def test_float_only_ops(opcode):
    n = OPCODES[opcode].arity
    result = run(opcode, ["bf16[2,3]"] * n, {}, None)
    assert result.dims == (2, 3)
    for t in ("s32", "u8", "pred"):
        with pytest.raises(ShapeError, match=rf"^{opcode}: .*floating-point.*{t}\[2,3\]"):
            run(opcode, [f"{t}[2,3]"] * n, {}, None)


def test_constant_literals():
    assert run("constant", [], {}, "f32[]", np.float32(3)).compatible(parse_shape("f32[]"))
    assert run("constant", [], {}, "s32[2]", ELIDED).compatible(parse_shape("s32[2]"))
    tup = (np.zeros(2, np.float32), (np.int32(1),))
    assert run("constant", [], {}, "(f32[2], (s32[]))", tup).is_tuple
    with pytest.raises(ShapeError,
                       match=r"literal is a int32\[2\] array but the shape is f32\[2\]"):
        run("constant", [], {}, "f32[2]", np.zeros(2, np.int32))
    with pytest.raises(ShapeError, match=r"literal is a float32\[3\] array but the shape"):
        run("constant", [], {}, "f32[2]", np.zeros(3, np.float32))
    with pytest.raises(ShapeError, match="must be a tuple of 2 values"):
        run("constant", [], {}, "(f32[2], s32[])", np.zeros(2, np.float32))
    with pytest.raises(ShapeError, match="element 1 is a float32"):
        run("constant", [], {}, "(f32[2], s32[])", (np.zeros(2, np.float32), np.float32(1)))
    with pytest.raises(ShapeError, match="must be a NumPy array"):
        run("constant", [], {}, "f32[]", 1.0)


NEGATIVE = [
    ("add", ["f32[2]"], {}, None, r"expects 2 operand\(s\), got 1"),
    ("add", ["f32[2,3]", "f32[3,2]"], {}, None, r"identical dimensions.*f32\[2,3\] and f32\[3,2\]"),
    ("add", ["f32[2]", "f32[]"], {}, None, r"no implicit broadcasting"),
    ("add", ["f32[2]", "f64[2]"], {}, None, "same element type"),
    ("add", ["(f32[2])", "f32[2]"], {}, None, r"operand 0 must be an array"),
    ("subtract", ["pred[2]", "pred[2]"], {}, None, "integer, floating-point or complex"),
    ("and", ["f32[2]", "f32[2]"], {}, None, "pred or integer"),
    ("shift-left", ["f32[2]", "f32[2]"], {}, None, "an integer element type"),
    ("shift-left", ["pred[2]", "pred[2]"], {}, None, "an integer element type"),
    ("abs", ["u32[2]"], {}, None, "signed integer, floating-point or complex"),
    ("not", ["f32[2]"], {}, None, "pred or integer"),
    ("negate", ["pred[2]"], {}, None, "integer, floating-point or complex"),
    ("complex", ["f32[2]", "f64[2]"], {}, None, "same element type"),
    ("complex", ["f16[2]", "f16[2]"], {}, None, r"f32 or f64 parts, got f16\[2\]"),
    ("real", ["s32[2]"], {}, None, "floating-point or complex element type"),
    ("imag", ["pred[2]"], {}, None, "floating-point or complex element type"),
    ("compare", ["c64[2]", "c64[2]"], {"direction": "LT"}, None, "not ordered"),
    ("convert", ["c64[2]"], {}, "f32[2]", "cannot convert complex"),
    ("fft", ["f32[8]"], {"fft_type": "FFT", "fft_length": (8,)}, None, "complex operand"),
    ("fft", ["c64[8]"], {"fft_type": "RFFT", "fft_length": (8,)}, None, "f32 or f64 operand"),
    ("fft", ["c64[8]"], {"fft_type": "IRFFT", "fft_length": (8,)}, None, r"must be \{5\}"),
    ("fft", ["c64[8]"], {"fft_type": "FFT", "fft_length": (4,)}, None, "must equal"),
    ("fft", ["c64[8]"], {"fft_type": "DCT", "fft_length": (8,)}, None, "not one of"),
    ("fft", ["c64[2,2,2,2]"], {"fft_type": "FFT", "fft_length": (2, 2, 2, 2)}, None,
     "1 to 3 entries"),
    ("fft", ["c64[8]"], {"fft_type": "FFT", "fft_length": (2, 8)}, None, "fewer dimensions"),
    ("popcnt", ["f32[2]"], {}, None, "an integer"),
    ("is-finite", ["s32[2]"], {}, None, "floating-point"),
    ("compare", ["f32[2]", "f32[2]"], {}, None, "missing required attribute direction="),
    ("compare", ["f32[2]", "f32[2]"], {"direction": "LTE"}, None, "direction=LTE is not one of"),
    ("compare", ["s32[2]", "s32[2]"], {"direction": "LT", "type": "FLOAT"}, None,
     "type=FLOAT does not suit s32"),
    ("select", ["s32[2]", "f32[2]", "f32[2]"], {}, None, "predicate must have element type pred"),
    ("select", ["pred[3]", "f32[2]", "f32[2]"], {}, None, r"predicate pred\[3\] must be a scalar"),
    ("select", ["pred[2]", "f32[2]", "s32[2]"], {}, None, "must have the same shape"),
    ("select", ["pred[]", "(f32[2])", "(f32[2])"], {}, None, "operand 1 must be an array"),
    ("clamp", ["f32[3]", "f32[4]", "f32[]"], {}, None, r"min f32\[3\] must be a scalar"),
    ("clamp", ["s32[]", "f32[4]", "f32[]"], {}, None, "different element types"),
    ("convert", ["f32[2]"], {}, None, r"declared shape"),
    ("convert", ["(f32[2])"], {}, "f32[2]", "must be an array"),
    ("bitcast-convert", ["f32[4]"], {}, "pred[4]", "between pred and another type"),
    ("bitcast-convert", ["u16[4,3]"], {}, "f32[4]", "needs a last dimension of size 2"),
    ("bitcast-convert", ["u16[]"], {}, "f32[]", "needs a last dimension of size 2"),
    ("reduce-precision", ["s32[4]"], {"exponent_bits": 5, "mantissa_bits": 2}, None,
     "floating-point"),
    ("reduce-precision", ["f32[4]"], {"exponent_bits": 0, "mantissa_bits": 2}, None,
     "exponent_bits=0"),
    ("reduce-precision", ["f32[4]"], {"mantissa_bits": 2}, None, "missing required attribute "
     "exponent_bits="),
    ("broadcast", ["f32[3]"], {}, "f32[2,3]", "missing required attribute dimensions="),
    ("broadcast", ["f32[3]"], {"dimensions": (0,)}, "f32[2,3]",
     r"operand dimension 0 has size 3 but output dimension 0"),
    ("broadcast", ["f32[1]"], {"dimensions": (1,)}, "f32[2,3]", "must be equal"),
    ("broadcast", ["f32[3]"], {"dimensions": (2,)}, "f32[2,3]", "out of range"),
    ("broadcast", ["f32[3,3]"], {"dimensions": (1, 1)}, "f32[3,3]", "repeated"),
    ("broadcast", ["f32[3]"], {"dimensions": ()}, "f32[2,3]", "one output dimension per operand"),
    ("broadcast", ["f32[3]"], {"dimensions": (1,)}, "s32[2,3]", "cannot change the element type"),
    ("broadcast", ["f32[3]"], {"dimensions": "{1}"}, "f32[2,3]", "must be a list of integers"),
    ("reshape", ["f32[2,3]"], {}, "f32[5]", r"6 elements.*5 elements"),
    ("reshape", ["f32[2,3]"], {}, "s32[6]", "cannot change the element type"),
    ("transpose", ["f32[2,3]"], {"dimensions": (0, 0)}, None, "not a permutation"),
    ("transpose", ["f32[2,3]"], {"dimensions": (1, 0, 2)}, None, "not a permutation"),
    ("slice", ["f32[10]"], {"slice": SliceSpec((0,), (11,), (1,))}, None, "exceeds size 10"),
    ("slice", ["f32[10]"], {"slice": SliceSpec((-1,), (5,), (1,))}, None, "negative start"),
    ("slice", ["f32[10]"], {"slice": SliceSpec((6,), (5,), (1,))}, None, "greater than limit"),
    ("slice", ["f32[10]"], {"slice": SliceSpec((0,), (5,), (0,))}, None, "must be positive"),
    ("slice", ["f32[10,2]"], {"slice": SliceSpec((0,), (5,), (1,))}, None, "has 1 ranges"),
    ("slice", ["f32[10]"], {}, None, "missing required attribute slice="),
    ("concatenate", [], {"dimensions": (0,)}, None, "at least 1 operand"),
    ("concatenate", ["f32[2,3]", "f32[2,4]"], {"dimensions": (0,)}, None,
     "may differ only in dimension 0"),
    ("concatenate", ["f32[2,3]", "f32[2]"], {"dimensions": (0,)}, None, "different ranks"),
    ("concatenate", ["f32[2]", "s32[2]"], {"dimensions": (0,)}, None, "different element types"),
    ("concatenate", ["f32[2]"], {"dimensions": (1,)}, None, "out of range"),
    ("concatenate", ["f32[2]"], {"dimensions": (0, 0)}, None, "exactly one dimension"),
    ("pad", ["f32[4]", "f32[1]"], {"padding": PaddingConfig((0,), (0,), (0,))}, None,
     "padding value must be a scalar"),
    ("pad", ["f32[4]", "s32[]"], {"padding": PaddingConfig((0,), (0,), (0,))}, None,
     "different element types"),
    ("pad", ["f32[4]", "f32[]"], {"padding": PaddingConfig((0,), (0,), (-1,))}, None,
     "interior padding -1"),
    ("pad", ["f32[4]", "f32[]"], {"padding": PaddingConfig((-3,), (-2,), (0,))}, None,
     r"negative \(-1\)"),
    ("pad", ["f32[4,2]", "f32[]"], {"padding": PaddingConfig((0,), (0,), (0,))}, None,
     "has 1 dimensions but the operand"),
    ("reverse", ["f32[2]"], {"dimensions": (1,)}, None, "out of range"),
    ("reverse", ["f32[2,2]"], {"dimensions": (1, 1)}, None, "repeated"),
    ("iota", [], {"iota_dimension": 1}, "s32[3]", "iota_dimension=1 is out of range"),
    ("iota", [], {"iota_dimension": 0}, "s32[]", "does not support scalars"),
    ("iota", [], {"iota_dimension": 0}, "pred[3]", "integer or floating-point"),
    ("iota", ["f32[]"], {"iota_dimension": 0}, "s32[3]", r"expects 0 operand\(s\)"),
    ("get-tuple-element", ["(f32[2])"], {"index": 1}, None, "index=1 is out of range"),
    ("get-tuple-element", ["f32[2]"], {"index": 0}, None, "operand must be a tuple"),
    ("get-tuple-element", ["(f32[2])"], {}, None, "missing required attribute index="),
    ("bitcast", ["f32[2,3]"], {}, "f32[5]", "keep the byte size"),
    ("after-all", ["f32[]"], {}, None, "operands must be tokens"),
    ("parameter", [], {}, None, "declared shape"),
    ("dynamic-slice", ["f32[10,5]", "s32[]"], {"dynamic_slice_sizes": (3, 5)}, None,
     "one scalar start index per dimension"),
    ("dynamic-slice", ["f32[10]", "s32[1]"], {"dynamic_slice_sizes": (3,)}, None,
     "start index 0 must be an integer scalar"),
    ("dynamic-slice", ["f32[10]", "f32[]"], {"dynamic_slice_sizes": (3,)}, None,
     "start index 0 must be an integer scalar"),
    ("dynamic-slice", ["f32[10,2]", "s32[]", "s64[]"], {"dynamic_slice_sizes": (3, 1)}, None,
     "same type"),
    ("dynamic-slice", ["f32[10]", "s32[]"], {"dynamic_slice_sizes": (11,)}, None,
     r"not within \[0, 10\]"),
    ("dynamic-slice", ["f32[10]", "s32[]"], {}, None, "missing required attribute "
     "dynamic_slice_sizes="),
    ("dynamic-update-slice", ["f32[10]", "f32[11]", "s32[]"], {}, None, "does not fit"),
    ("dynamic-update-slice", ["f32[10]", "s32[1]", "s32[]"], {}, None, "different element types"),
    ("dynamic-update-slice", ["f32[10]", "f32[1,1]", "s32[]"], {}, None, "must have the rank"),
    ("gather", ["f32[5,3]", "f32[4,1]"], GATHER_ROWS, None, "indices must be integers"),
    ("gather", ["f32[5,3]", "s32[4,1]"], {**GATHER_ROWS, "index_vector_dim": 3}, None,
     "index_vector_dim=3 must be within"),
    ("gather", ["f32[5,3]", "s32[4,1]"], {**GATHER_ROWS, "slice_sizes": (2, 3)}, None,
     "slice size must be 0 or 1"),
    ("gather", ["f32[5,3]", "s32[4,1]"], {**GATHER_ROWS, "slice_sizes": (1, 4)}, None,
     r"slice size 4 of dimension 1 is not within \[0, 3\]"),
    ("gather", ["f32[5,3]", "s32[4,1]"], {**GATHER_ROWS, "slice_sizes": (1,)}, None,
     "one size per dimension"),
    ("gather", ["f32[5,3]", "s32[4,2]"], GATHER_ROWS, None, "start_index_map .* has 1 entries"),
    ("gather", ["f32[5,3]", "s32[4,1]"], {**GATHER_ROWS, "offset_dims": (2,)}, None,
     "offset_dims .* out of range"),
    ("gather", ["f32[5,3]", "s32[4,1]"], {**GATHER_ROWS, "collapsed_slice_dims": ()}, None,
     "operand rank 2 must equal"),
    ("gather", ["f32[5,3]", "s32[4,1]"], {**GATHER_ROWS, "start_index_map": (2,)}, None,
     "start_index_map .* out of range"),
    ("gather", ["f32[5,3]", "s32[4,2]"],
     dict(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 0),
          index_vector_dim=1, slice_sizes=(2, 2)), None, "repeated"),
    ("gather", ["f32[3,5,3]", "s32[2,4,1]"],
     dict(offset_dims=(2,), collapsed_slice_dims=(1,), start_index_map=(1,), index_vector_dim=2,
          slice_sizes=(1, 1, 3), operand_batching_dims=(0,), start_indices_batching_dims=(0,)),
     None, "batching dimension 0 .* different sizes"),
    ("gather", ["f32[2,5,3]", "s32[2,4,1]"],
     dict(offset_dims=(2,), collapsed_slice_dims=(1,), start_index_map=(1,), index_vector_dim=2,
          slice_sizes=(1, 1, 3), operand_batching_dims=(0,), start_indices_batching_dims=(2,)),
     None, "must not contain index_vector_dim"),
    ("gather", ["f32[5,3]", "s32[4,1]"], {**GATHER_ROWS, "offset_dims": None}, None,
     "offset_dims must be a list of integers"),
    ("scatter", ["f32[5,3]", "s32[4,1]"], SCATTER_ROWS, None, "odd count >= 3"),
    ("scatter", ["f32[5,3]", "s32[4,1]", "f32[4,4]"], SCATTER_ROWS, None,
     "window dimension 1 of the updates .* is larger"),
    ("scatter", ["f32[5,3]", "s32[4,1]", "f32[3,3]"], SCATTER_ROWS, None,
     "scatter dimension 0 of the updates"),
    ("scatter", ["f32[5,3]", "s32[4,1]", "f32[4,3,1]"], SCATTER_ROWS, None, "must have rank 2"),
    ("scatter", ["f32[5,3]", "s32[4,1]", "s32[4,3]"], SCATTER_ROWS, None,
     "different element types"),
    ("scatter", ["f32[5,3]", "s32[4,1]", "f32[4,3]"], {**SCATTER_ROWS, "to_apply": GE}, None,
     r"parameter 0 is f32\[\] but result 0 \(the accumulator\) is pred\[\]"),
    ("scatter", ["s32[5,3]", "s32[4,1]", "s32[4,3]"], SCATTER_ROWS, None,
     r"accumulator 0 is f32\[\] but the init value is s32\[\]"),
    ("scatter", ["f32[5,3]", "s32[4,1]", "f32[4,3]"],
     {k: v for k, v in SCATTER_ROWS.items() if k != "to_apply"}, None,
     "missing required attribute to_apply="),
    ("reduce", ["f32[2,3]"], {"dimensions": (0,), "to_apply": ADD}, None, "even count"),
    ("reduce", ["f32[2,3]", "f32[1]"], {"dimensions": (0,), "to_apply": ADD}, None,
     "init value 0 must be a scalar"),
    ("reduce", ["f32[2,3]", "f32[]"], {"dimensions": (2,), "to_apply": ADD}, None,
     "out of range"),
    ("reduce", ["f32[2,3]", "f32[]"], {"dimensions": (0, 0), "to_apply": ADD}, None, "repeated"),
    ("reduce", ["f32[2,3]", "f32[]"], {"dimensions": (0,)}, None,
     "missing required attribute to_apply="),
    ("reduce", ["f32[2,3]", "f32[]"], {"to_apply": ADD}, None,
     "missing required attribute dimensions="),
    ("reduce", ["f32[2,3]", "f32[]"], {"dimensions": (0,), "to_apply": ARGMAX}, None,
     r"must take 2 parameter\(s\), but takes 4"),
    ("reduce", ["f32[2,3]", "f32[]"], {"dimensions": (0,), "to_apply": NEG2}, None,
     r"must take 2 parameter\(s\)"),
    ("reduce", ["s32[2,3]", "f32[]"], {"dimensions": (0,), "to_apply": ADD}, None,
     "input element type is s32"),
    ("reduce", ["f32[2,3]", "s32[2]", "f32[]", "s32[]"], {"dimensions": (0,), "to_apply": ARGMAX},
     None, "same dimensions"),
    ("reduce", ["f32[2,3]", "f32[]"], {"dimensions": (0,), "to_apply": "add"}, None,
     "to_apply must be a computation"),
    ("reduce-window", ["f32[4,6]", "f32[]"], {"window": W((2,)), "to_apply": ADD}, None,
     "has 1 dimensions but the input"),
    ("reduce-window", ["f32[4]", "f32[]"], {"window": W((0,)), "to_apply": ADD}, None,
     "non-positive size"),
    ("reduce-window", ["f32[4]", "f32[]"], {"window": W((2,), (0,)), "to_apply": ADD}, None,
     "non-positive stride"),
    ("reduce-window", ["f32[4]", "f32[]"], {"window": W((2,), pad_low=(-5,)), "to_apply": ADD},
     None, "negative"),
    ("select-and-scatter", ["f32[4,6]", "f32[2,2]", "f32[]"],
     {"window": W((2, 2), (2, 2)), "select": GE, "scatter": ADD}, None,
     r"source f32\[2,2\] must have the dimensions of the windowed operand \[2, 3\]"),
    ("select-and-scatter", ["f32[4,6]", "f32[2,3]", "f32[]"],
     {"window": W((2, 2), (2, 2)), "select": ADD, "scatter": ADD}, None, "must return pred"),
    ("select-and-scatter", ["s32[4,6]", "s32[2,3]", "s32[]"],
     {"window": W((2, 2), (2, 2)), "select": GE, "scatter": ADD_S32}, None,
     "operand element type is s32"),
    ("dot", ["f32[2,3]", "f32[4,5]"], {"lhs_contracting_dims": (1,), "rhs_contracting_dims": (0,)},
     None, "contracting dimension sizes do not match"),
    ("dot", ["f32[2,3]", "f32[3,5]"], {"lhs_contracting_dims": (1,)}, None, "same length"),
    ("dot", ["f32[2,3]", "f32[3,5]"], {"lhs_contracting_dims": (2,), "rhs_contracting_dims": (0,)},
     None, "out of range"),
    ("dot", ["f32[2,3]", "f32[3,5]"], {"lhs_contracting_dims": (1,), "rhs_contracting_dims": (0,),
                                       "lhs_batch_dims": (1,), "rhs_batch_dims": (1,)}, None,
     "repeated"),
    ("dot", ["f32[4,2,3]", "f32[5,3,5]"], {"lhs_batch_dims": (0,), "rhs_batch_dims": (0,),
                                           "lhs_contracting_dims": (2,),
                                           "rhs_contracting_dims": (1,)}, None,
     "batch dimension sizes do not match"),
    ("dot", ["f32[2,3]", "s32[3,5]"], {"lhs_contracting_dims": (1,), "rhs_contracting_dims": (0,)},
     None, "incompatible"),
    ("cholesky", ["s32[3,3]"], {}, None,
     r"a floating-point or complex element type, got s32\[3,3\]"),
    ("cholesky", ["f32[3,4]"], {}, None, r"square matrices .*got f32\[3,4\]"),
    ("cholesky", ["f32[3]"], {}, None, r"square matrices in the two minor dimensions \(rank >= 2"),
    ("cholesky", ["f32[3,3]"], {"lower": 1}, None, "attribute lower must be true or false"),
    ("dot", ["s32[2,3]", "s32[3,5]"], {"lhs_contracting_dims": (1,), "rhs_contracting_dims": (0,)},
     "s8[2,5]", "must not be narrower"),
    ("convolution", ["f32[1,5,5,3]", "f32[3,3,4,8]"], {"window": W((3, 3)), "dim_labels": NHWC},
     None, "input feature size 3 must be feature_group_count=1 times"),
    ("convolution", ["f32[1,5,5,3]", "f32[3,3,3,8]"], {"window": W((2, 2)), "dim_labels": NHWC},
     None, "does not match the kernel's spatial dims"),
    ("convolution", ["f32[1,5,5,3]", "f32[3,3,3,8]"], {"window": W((3,)), "dim_labels": NHWC},
     None, "window .* has 1 dimensions"),
    ("convolution", ["f32[1,5,5]", "f32[3,3,3,8]"], {"window": W((3, 3)), "dim_labels": NHWC},
     None, r"describe rank 4 but the lhs is f32\[1,5,5\]"),
    ("convolution", ["f32[1,5,5,4]", "f32[3,3,2,7]"],
     {"window": W((3, 3)), "dim_labels": NHWC, "feature_group_count": 2}, None,
     "divisible by feature_group_count=2"),
    ("convolution", ["f32[3,5,5,4]", "f32[3,3,4,8]"],
     {"window": W((3, 3)), "dim_labels": NHWC, "batch_group_count": 2}, None,
     "input batch size 3 must be divisible"),
    ("convolution", ["f32[4,5,5,4]", "f32[3,3,2,8]"],
     {"window": W((3, 3)), "dim_labels": NHWC, "batch_group_count": 2, "feature_group_count": 2},
     None, "cannot both be greater than 1"),
    ("convolution", ["f32[1,5,5,3]", "f32[3,3,3,8]"], {"window": W((3, 3))}, None,
     "missing required attribute dim_labels="),
    ("sort", ["f32[3,4]", "s32[3]"], {"dimensions": (0,), "to_apply": LT2}, None,
     "same dimensions"),
    ("sort", ["f32[3,4]"], {"dimensions": (2,), "to_apply": GE}, None, "out of range"),
    ("sort", ["f32[3,4]"], {"dimensions": (0,), "to_apply": ADD}, None, r"must return pred\[\]"),
    ("sort", ["f32[3,4]"], {"dimensions": (0,), "to_apply": LT2}, None,
     r"must take 2 parameter\(s\), but takes 4"),
    ("sort", ["s32[3,4]"], {"dimensions": (0,), "to_apply": GE}, None,
     r"parameter 0 is f32\[\], expected s32\[\]"),
    ("sort", [], {"dimensions": (0,), "to_apply": GE}, None, "at least 1 operand"),
    ("topk", ["f32[3,5]"], {"k": 6}, None, r"k=6 must be within \[0, 5\]"),
    ("topk", ["f32[]"], {"k": 0}, None, "rank >= 1"),
    ("while", ["s32[]"], {"condition": BODY, "body": BODY}, None, r"must return pred\[\]"),
    ("while", ["f32[]"], {"condition": COND, "body": BODY}, None, "differs from the loop state"),
    ("while", ["s32[]"], {"condition": COND, "body": TO_S32}, None, "differs from the loop state"),
    ("while", ["s32[]"], {"condition": COND, "body": FMA}, None, r"must take 1 parameter\(s\)"),
    ("while", ["s32[]"], {"body": BODY}, None, "missing required attribute condition="),
    ("conditional", ["f32[]", "f32[2]"], {"branch_computations": [NEG2]}, None,
     r"index must be pred\[\] or s32\[\]"),
    ("conditional", ["pred[]", "f32[2]"], {"branch_computations": [NEG2]}, None,
     "exactly two branches"),
    ("conditional", ["s32[]", "f32[2]", "f32[2]"], {"branch_computations": [NEG2]}, None,
     "1 branch computations but 2 branch operands"),
    ("conditional", ["s32[]", "f32[3]"], {"branch_computations": [NEG2]}, None,
     r"takes f32\[2\] but its operand is f32\[3\]"),
    ("conditional", ["s32[]", "f32[2]", "f32[]"], {"branch_computations": [NEG2, TO_S32]}, None,
     "must return the same shape"),
    ("conditional", ["s32[]", "f32[2]"], {"true_computation": NEG2}, None,
     "needs branch_computations"),
    ("conditional", ["pred[]", "f32[2]", "f32[2]"], {"true_computation": NEG2}, None,
     "missing required attribute false_computation="),
    ("call", ["f32[2]"], {"to_apply": FMA}, None,
     r"takes 2 parameter\(s\) \(f32\[2\], f32\[2\]\) but is given 1 operand"),
    ("call", ["f32[2]", "f32[3]"], {"to_apply": FMA}, None, r"parameter 1 is f32\[2\] but"),
    ("map", ["f32[3,4]", "f32[4,3]"], {"to_apply": ADD}, None, "same dimensions"),
    ("map", ["f32[3,4]", "f32[3,4]"], {"dimensions": (0,), "to_apply": ADD}, None,
     "must be all dimensions"),
    ("map", ["s32[3]", "s32[3]"], {"to_apply": ADD}, None, r"expected the scalar s32\[\]"),
    ("map", ["f32[2]"], {"to_apply": NEG2}, None, r"parameter 0 is f32\[2\]"),
    ("fusion", ["f32[2]", "f32[2]"], {"calls": FMA}, None, "missing required attribute kind="),
    ("fusion", ["f32[2]", "f32[2]"], {"kind": "kFoo", "calls": FMA}, None, "kind=kFoo"),
    ("fusion", ["f32[2]"], {"kind": "kLoop", "calls": FMA}, None, r"is given 1 operand"),
    ("custom-call", [], {}, "f32[]", "missing required attribute custom_call_target="),
    ("custom-call", [], {"custom_call_target": "x"}, None, "declared shape"),
    ("all-reduce", ["s32[2]"], {"to_apply": ADD}, None, r"init value is s32\[\]"),
    ("all-gather", ["f32[2]"], {"dimensions": (0,), "replica_groups": _RG}, "f32[6]",
     "which is 2 times its size"),
    ("reduce-scatter", ["f32[4]"], {"dimensions": (1,), "to_apply": ADD}, "f32[1]",
     "out of range"),
    ("all-to-all", ["f32[3]"], {"dimensions": (0,), "replica_groups": _RG}, None,
     "not divisible by the group size 2"),
    ("collective-permute", ["f32[3]"], {}, None, "missing required attribute source_target"),
    ("replica-id", ["f32[3]"], {}, None, r"expects 0 operand\(s\)"),
    ("partition-id", ["f32[3]"], {}, None, r"expects 0 operand\(s\)"),
]


@pytest.mark.parametrize("case", NEGATIVE, ids=[f"{c[0]}-{i}" for i, c in enumerate(NEGATIVE)])
def test_negative(case):
    opcode, operands, attrs, declared, pattern = case
    with pytest.raises(ShapeError) as info:
        run(opcode, operands, attrs, declared)
    message = str(info.value)
    assert message.startswith(f"{opcode}: "), message
    assert re.search(pattern, message), f"{message!r} does not match {pattern!r}"


def test_every_opcode_has_an_error_test():
    tested = {case[0] for case in NEGATIVE} | set(ACCEPTS) | {"constant"}
    # Ops whose only checks are structural (any operands are valid).
    always_valid = {"tuple", "copy", "opt-barrier"}
    missing = sorted(set(OPCODES) - tested - always_valid)
    assert not missing, f"opcodes without a negative shape test: {missing}"


def test_unknown_opcode_and_bad_operands():
    with pytest.raises(ShapeError, match="unknown opcode 'frobnicate'"):
        infer_shape("frobnicate", [], {})
    with pytest.raises(ShapeError, match="operand 1 has no shape"):
        infer_shape("add", [parse_shape("f32[]"), "f32[]"], {})


def test_results_have_no_layout_and_ignore_operand_layouts():
    got = run("add", ["f32[2,3]{0,1}", "f32[2,3]{1,0}"], {}, None)
    assert got.layout is None and got.dims == (2, 3) and got.element_type is F32


def test_incomplete_called_computation_is_reported():
    from xlapy.hlo.ir import Computation
    empty = Computation("empty")
    with pytest.raises(ShapeError, match="to_apply computation empty has no root"):
        run("call", [], {"to_apply": empty}, None)
