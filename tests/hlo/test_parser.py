"""Parser and printer: literals, attributes, both text dialects, error positions."""

import math
import warnings

import ml_dtypes
import numpy as np
import pytest

from xlapy.errors import ParseError
from xlapy.hlo import ELIDED, module_diff, parse, parse_shape
from xlapy.hlo.attributes import ConvDimensionNumbers, PaddingConfig, Raw, SliceSpec, Window


def roundtrip(text):
    m = parse(text)
    m2 = parse(m.to_string())
    assert module_diff(m, m2) is None
    return m


def entry_instr(m, name):
    return m.entry.instruction(name)


JAX_STYLE = """HloModule jit_f, entry_computation_layout={(f32[4]{0})->f32[]}

region_0.1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main.2 {
  x = f32[4]{0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=region_0.1
}
"""


def test_jax_dialect_without_sigils_or_signatures():
    m = roundtrip(JAX_STYLE)
    assert m.entry.name == "main.2"
    r = m.entry.root
    assert r.opcode == "reduce" and r.attrs["dimensions"] == (0,)
    assert r.attrs["to_apply"].name == "region_0.1"
    assert [p.name for p in m.entry.parameters] == ["x"]
    assert m.computations[-1] is m.entry  # callees first


def test_printed_form_is_xla_optimized_style():
    text = parse(JAX_STYLE).to_string()
    assert "ENTRY %main.2 (x: f32[4]) -> f32[] {" in text
    assert "ROOT %r = f32[] reduce(%x, %z), dimensions={0}, to_apply=%region_0.1" in text
    assert text.startswith("HloModule jit_f, entry_computation_layout={(f32[4]{0})->f32[]}")


@pytest.mark.parametrize("shape_text,dims,layout", [
    ("f32[2,3]{1,0}", (2, 3), (1, 0)),
    ("f32[2,3]{0,1}", (2, 3), (0, 1)),
    ("s8[]", (), None),
    ("pred[0,4]", (0, 4), None),
    ("bf16[7]{0}", (7,), (0,)),
])
def test_shapes(shape_text, dims, layout):
    s = parse_shape(shape_text)
    assert s.dims == dims
    assert (s.layout.minor_to_major if s.layout else None) == layout
    assert str(s) == shape_text


def test_tuple_shape_and_tiled_layout_kept():
    s = parse_shape("(f32[4]{0}, (s32[], u8[2,2]{1,0:T(2,128)}))")
    assert s.is_tuple and s.tuple_shapes[1].tuple_shapes[1].layout.extra == "T(2,128)"
    assert str(s) == "(f32[4]{0}, (s32[], u8[2,2]{1,0:T(2,128)}))"


def _const(shape, value):
    m = roundtrip(f"HloModule m\nENTRY e {{\n  ROOT c = {shape} constant({value})\n}}\n")
    return m.entry.root


def test_float_literals_special_values_roundtrip_bitwise():
    c = _const("f32[6]", "{0, -0, inf, -inf, nan, 1.5e-45}")
    v = c.literal
    assert v.dtype == np.float32
    assert v[0] == 0 and math.copysign(1, v[1]) == -1
    assert v[2] == np.inf and v[3] == -np.inf and np.isnan(v[4])
    assert v[5] == np.float32(1.5e-45)  # smallest subnormal
    printed = c.to_string()
    assert "{0, -0, inf, -inf, nan, 1.4013e-45}" in printed  # %.6g reads back exactly


def test_nan_payload_and_negative_nan_roundtrip():
    c = _const("f32[2]", "{-nan, nan(0x1)}")
    bits = c.literal.view(np.uint32)
    assert bits[0] == 0xFFC00000 and bits[1] == 0x7F800001
    assert "{-nan, nan(0x1)}" in c.to_string()


def test_float_printing_matches_xla_digits():
    c = _const("f32[3]", "{0.1, 0.333333343, 16777216}")
    assert "{0.1, 0.333333343, 16777216}" in c.to_string()
    c = _const("bf16[2]", "{1.5, 3.140625}")
    assert c.literal.dtype == ml_dtypes.bfloat16
    assert "{1.5, 3.141}" in c.to_string() or "{1.5, 3.14}" in c.to_string()


def test_nested_literal_and_pred_and_ints():
    c = _const("s32[2,3]", "{ {1, -2, 3}, {4, 5, -2147483648} }")
    assert c.literal.tolist() == [[1, -2, 3], [4, 5, -2147483648]]
    c = _const("pred[3]", "{true, false, true}")
    assert c.literal.tolist() == [True, False, True]
    c = _const("u64[]", "18446744073709551615")
    assert int(c.literal) == 2**64 - 1


def test_tuple_literal_and_elided_constant():
    c = _const("(f32[], s32[2])", "(1.5, {3, 4})")
    assert c.literal[0] == 1.5 and c.literal[1].tolist() == [3, 4]
    c = _const("f32[100]", "{...}")
    assert c.literal is ELIDED
    assert "constant({...})" in c.to_string()


def test_typed_attributes():
    m = roundtrip("""HloModule m
ENTRY e {
  p = f32[8,8]{1,0} parameter(0)
  k = f32[3,3,1,1]{3,2,1,0} parameter(1)
  z = f32[] constant(0)
  s = f32[2,3]{1,0} slice(p), slice={[0:4:2], [1:4]}
  pd = f32[12,17]{1,0} pad(p, z), padding=1_3x0_1_1
  c4 = f32[1,8,8,1]{3,2,1,0} reshape(p)
  cv = f32[1,4,4,1]{3,2,1,0} convolution(c4, k), window={size=3x3 stride=2x2 pad=1_1x1_1 rhs_dilate=1x1}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[2,3]{1,0}, f32[12,17]{1,0}, f32[1,4,4,1]{3,2,1,0}) tuple(s, pd, cv)
}
""")  # noqa: E501 (HLO text: one instruction a line)
    e = m.entry
    assert e.instruction("s").attrs["slice"] == SliceSpec((0, 1), (4, 4), (2, 1))
    assert e.instruction("pd").attrs["padding"] == PaddingConfig((1, 0), (3, 1), (0, 1))
    w = e.instruction("cv").attrs["window"]
    assert isinstance(w, Window) and w.size == (3, 3) and w.stride == (2, 2) and w.pad_low == (1, 1)
    assert str(w) == "{size=3x3 stride=2x2 pad=1_1x1_1}"  # default fields are not printed
    dn = e.instruction("cv").attrs["dim_labels"]
    assert isinstance(dn, ConvDimensionNumbers)
    assert dn.input_feature == 3 and dn.kernel_output_feature == 3
    assert str(dn) == "b01f_01io->b01f"


def test_optimized_form_features():
    text = """HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[4]{0})->f32[4]{0}}, frontend_attributes={fingerprint_before_lhs="abc"}

FileNames
1 "/tmp/x.py"

StackFrames
1 {file_location_id=1 parent_frame_id=1}

%fused_computation (param_0: f32[4]) -> f32[4] {
  %param_0 = f32[4]{0} parameter(0)
  ROOT %e = f32[4]{0} exponential(f32[4]{0} %param_0), metadata={op_name="jit(f)/exp" source_file="/tmp/x.py" source_line=3 stack_frame_id=1}
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0), sharding={replicated}
  ROOT %f = f32[4]{0} fusion(%x), kind=kLoop, calls=%fused_computation, backend_config={"outer_dimension_partitions":["2"], "x":{"a":"}"}} /*a comment*/
}
"""  # noqa: E501 (HLO text: one instruction a line)
    m = roundtrip(text)
    assert m.attrs["is_scheduled"] == "true"
    assert m.header_blocks["FileNames"] == ['1 "/tmp/x.py"']
    f = m.entry.root
    assert f.attrs["kind"] == "kLoop" and f.fused_computation.root.opcode == "exponential"
    assert isinstance(f.attrs["backend_config"], Raw) and '"}"' in f.attrs["backend_config"]
    e = f.fused_computation.root
    assert e.metadata == {"op_name": "jit(f)/exp", "source_file": "/tmp/x.py", "source_line": 3,
                          "stack_frame_id": 1}


def test_unknown_attribute_is_kept_with_warning():
    text = "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), some_new_attr={a=1, b={2}}\n}\n"
    with pytest.warns(UserWarning, match="some_new_attr"):
        m = parse(text)
    assert m.entry.root.attrs["some_new_attr"] == "{a=1, b={2}}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert "some_new_attr={a=1, b={2}}" in m.to_string()


def test_forward_references_are_resolved():
    m = roundtrip("HloModule m\nENTRY e {\n  ROOT a = f32[] add(b, b)\n"
                  "  b = f32[] parameter(0)\n}\n")
    assert m.entry.root.operands[0].name == "b"


def test_index_comments_in_long_lists():
    m = parse("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n"
              "  ROOT t = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[]) "
              "tuple(a, a, a, a, a, /*index=5*/a)\n}\n")
    assert len(m.entry.root.operands) == 6


def _err(text):
    with pytest.raises(ParseError) as info:
        parse(text)
    return info.value


def test_error_has_line_column_caret_and_expectation():
    e = _err("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p\n}\n")
    assert (e.line, e.column) == (5, 1)
    assert "expected ',' or ')' in the operand list" in str(e)
    lines = str(e).splitlines()
    assert lines[0].startswith("<hlo>:5:1: error:")
    assert lines[2] == "^"


def test_error_unknown_operand_points_at_it():
    e = _err("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(q)\n}\n")
    assert (e.line, e.column) == (4, 26) and "unknown operand 'q'" in e.message


def test_error_unknown_opcode():
    e = _err("HloModule m\nENTRY e {\n  ROOT p = f32[4] frobnicate()\n}\n")
    assert "unknown opcode 'frobnicate'" in e.message and (e.line, e.column) == (3, 19)


def test_error_literal_count():
    e = _err("HloModule m\nENTRY e {\n  ROOT c = f32[3] constant({1, 2})\n}\n")
    assert "2 elements in dimension 0" in e.message


def test_error_int_out_of_range():
    e = _err("HloModule m\nENTRY e {\n  ROOT c = s8[] constant(300)\n}\n")
    assert "out of range for s8" in e.message


_ORDERED = """HloModule m
ENTRY e {
  a = %s[4] parameter(0)
  b = %s[4] parameter(1)
  ROOT c = pred[4] compare(a, b), direction=LT%s
}"""


def test_compare_order_attribute_of_newer_xla():
    """JAX 0.11's sort comparators print `order=TOTAL` (newer XLA's text for a comparison's
    order): read without a warning as type=TOTALORDER on floats, the one order on
    integers; PARTIAL is a float's default; anything else, or a contradicting type, is the
    parser's error naming the attribute."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        total = parse(_ORDERED % ("f32", "f32", ", order=TOTAL"))
        partial = parse(_ORDERED % ("f32", "f32", ", order=PARTIAL"))
        ints = parse(_ORDERED % ("s32", "s32", ", order=TOTAL"))
    assert total.entry.root.attrs.get("type") == "TOTALORDER"
    assert partial.entry.root.attrs.get("type") == "FLOAT"
    assert "type" not in ints.entry.root.attrs and "order" not in ints.entry.root.attrs
    with pytest.raises(ParseError, match="order=WEAK is not one of TOTAL, PARTIAL"):
        parse(_ORDERED % ("f32", "f32", ", order=WEAK"))
    with pytest.raises(ParseError, match="order=TOTAL contradicts type=FLOAT"):
        parse(_ORDERED % ("f32", "f32", ", type=FLOAT, order=TOTAL"))


def test_compare_order_total_runs_as_total_order():
    from xlapy.backends.base import get_platform
    a = np.array([-0.0, np.nan, 1, -np.nan], np.float32)
    b = np.array([0.0, 1, np.nan, 1], np.float32)
    for backend in ("interpreter", "cpu"):
        exe = get_platform(backend).compiler.compile(parse(_ORDERED % ("f32", "f32",
                                                                       ", order=TOTAL")))
        np.testing.assert_array_equal(exe.run_leaves(a, b)[0], [True, False, True, True])
