"""The MLIR syntax the StableHLO reader accepts, one feature per test, each parsed, run on
the interpreter and checked against NumPy: dense constants in every spelling, result groups
and uses, locations and their aliases, implicit captures in regions, custom calls, the
less common ops, argument attributes, comments, aliases and the entry function."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import xlapy_tests_stablehlo as util
from xlapy.backends.base import flatten
from xlapy.backends.interpreter import evaluate
from xlapy.errors import EvaluationError
from xlapy.hlo import parse_stablehlo, to_stablehlo
from xlapy.hlo.aliasing import module_aliases


def run(text: str, *args):
    module = parse_stablehlo(text, "test.mlir")
    again = parse_stablehlo(to_stablehlo(module), "printed")  # the writer keeps up
    out = [np.asarray(v) for v in flatten(evaluate(module, *args))]
    assert all(util.same_bits(a, b) for a, b in zip(out, flatten(evaluate(again, *args))))
    return out


def constant(literal: str, mlir_type: str) -> np.ndarray:
    return run(f"func.func @main() -> {mlir_type} {{\n"
               f"  %0 = stablehlo.constant {literal} : {mlir_type}\n"
               f"  return %0 : {mlir_type}\n}}\n")[0]


@pytest.mark.parametrize("literal,mlir_type,want", [
    ("dense<1.5>", "tensor<2x2xf32>", np.full((2, 2), 1.5, np.float32)),
    ("dense<[[1, 2], [3, -4]]>", "tensor<2x2xi8>", np.array([[1, 2], [3, -4]], np.int8)),
    ('dense<"0x0000803F000000C0">', "tensor<2xf32>", np.array([1.0, -2.0], np.float32)),
    ('dense<"0x0000C07F">', "tensor<3xf32>", np.full(3, np.nan, np.float32)),
    ("dense<[true, false, true]>", "tensor<3xi1>", np.array([True, False, True])),
    ("dense<[1.5, -2.25]>", "tensor<2xbf16>", np.array([1.5, -2.25], ml_dtypes.bfloat16)),
    ("dense<[0x7C00, 0xFC00, 1.0]>", "tensor<3xf16>", np.array([np.inf, -np.inf, 1], np.float16)),
    ("dense<18446744073709551615>", "tensor<ui64>", np.uint64(2 ** 64 - 1)),
    ("dense<-0.0>", "tensor<f64>", np.float64(-0.0)),
    ("dense<>", "tensor<0x3xf32>", np.zeros((0, 3), np.float32)),
    ("dense<[[[1.0e+00], [2.5E-1]]]>", "tensor<1x2x1xf64>", np.array([[[1.0], [0.25]]])),
])
def test_dense_constants(literal, mlir_type, want):
    got = constant(literal, mlir_type)
    assert got.dtype == np.asarray(want).dtype
    assert util.same_bits(got, np.asarray(want)) or (
        np.isnan(want).all() and np.isnan(got).all())


def test_nan_payloads_survive():
    got = constant("dense<[0x7FC00001, 0xFFC00000]>", "tensor<2xf32>")
    assert got.view(np.uint32).tolist() == [0x7FC00001, 0xFFC00000]


def test_result_groups_and_uses():
    text = """func.func @main(%k: tensor<5xf32>, %v: tensor<5xi32>) -> (tensor<5xi32>, tensor<5xf32>) {
  %keys, %vals:2 = "stablehlo.sort"(%k, %v, %k) <{dimension = 0 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>, %e: tensor<f32>, %f: tensor<f32>):
    %lt = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<5xf32>, tensor<5xi32>, tensor<5xf32>) -> (tensor<5xf32>, tensor<5xi32>, tensor<5xf32>)
  %s = stablehlo.add %keys, %vals#1 : tensor<5xf32>
  return %vals#0, %s : tensor<5xi32>, tensor<5xf32>
}"""  # noqa: E501 (MLIR text: one operation a line)
    k = np.array([3, 1, 2, 5, 4], np.float32)
    v = np.arange(5, dtype=np.int32)
    order, total = run(text, k, v)
    np.testing.assert_array_equal(order, np.argsort(k))
    np.testing.assert_array_equal(total, 2 * np.sort(k))


LOCATED = """#loc1 = loc("x.py":3:4 to :9)
// a comment
module @located attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32> {mhlo.sharding = "{replicated}", mhlo.layout_mode = "default", jax.arg_info = "x"} loc("x")) -> (tensor<3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.negate %arg0 : tensor<3xf32> loc(#loc3)
    %1 = "stablehlo.abs"(%0) : (tensor<3xf32>) -> tensor<3xf32> loc(fused[#loc3, "other"])
    %2 = stablehlo.add %0, %1 : tensor<3xf32> loc(callsite(#loc2 at #loc1))
    return %2 : tensor<3xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(f)/add"(#loc1))
#loc3 = loc("jit(f)/neg"("y.py":7:1))
{-#
  dialect_resources: {}
#-}
"""  # noqa: E501 (MLIR text: one operation a line)


def test_locations_and_aliases_defined_at_the_end():
    x = np.array([1.0, -2.0, 3.0], np.float32)
    (got,) = run(LOCATED, x)
    np.testing.assert_array_equal(got, -x + np.abs(x))
    m = parse_stablehlo(LOCATED)
    by_op = {i.opcode: i.metadata for i in m.entry.instructions}
    assert by_op["negate"] == {"op_name": "jit(f)/neg", "source_file": "y.py", "source_line": 7}
    assert by_op["add"]["op_name"] == "jit(f)/add" and by_op["add"]["source_line"] == 3
    assert m.name == "located"


def test_implicit_captures_in_while_case_and_if():
    text = """func.func @main(%x: tensor<3xf32>, %i: tensor<i32>, %p: tensor<i1>) -> (tensor<3xf32>, tensor<3xf32>) {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %w:2 = stablehlo.while(%n = %zero, %acc = %x) : tensor<i32>, tensor<3xf32>
    cond {
      %lt = stablehlo.compare LT, %n, %i, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %m = stablehlo.add %n, %one : tensor<i32>
      %a = stablehlo.add %acc, %x : tensor<3xf32>
      stablehlo.return %m, %a : tensor<i32>, tensor<3xf32>
    }
  %c = "stablehlo.case"(%i) ({
    stablehlo.return %x : tensor<3xf32>
  }, {
    %r = "stablehlo.if"(%p) ({
      %neg = stablehlo.negate %w#1 : tensor<3xf32>
      stablehlo.return %neg : tensor<3xf32>
    }, {
      stablehlo.return %x : tensor<3xf32>
    }) : (tensor<i1>) -> tensor<3xf32>
    stablehlo.return %r : tensor<3xf32>
  }) : (tensor<i32>) -> tensor<3xf32>
  return %w#1, %c : tensor<3xf32>, tensor<3xf32>
}"""  # noqa: E501 (MLIR text: one operation a line)
    x = np.array([1.0, 2.0, -3.0], np.float32)
    acc, chosen = run(text, x, np.int32(2), np.bool_(True))
    np.testing.assert_array_equal(acc, 3 * x)
    np.testing.assert_array_equal(chosen, -3 * x)
    _, chosen = run(text, x, np.int32(5), np.bool_(False))  # index past the end: last branch
    np.testing.assert_array_equal(chosen, x)


def test_custom_calls():
    text = """func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.custom_call @my_kernel(%x) {backend_config = "opaque \\"cfg\\"", has_side_effect = true, api_version = 2 : i32} : (tensor<3xf32>) -> tensor<3xf32>
  %1:2 = stablehlo.custom_call @ffi_kernel(%0, %x) {backend_config = {n = 3 : i64}, called_computations = [@helper]} : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>)
  return %1#0 : tensor<3xf32>
}
func.func private @helper(%a: tensor<f32>) -> tensor<f32> {
  return %a : tensor<f32>
}"""  # noqa: E501 (MLIR text: one operation a line)
    m = parse_stablehlo(text)
    first, second = [i for i in m.entry.instructions if i.opcode == "custom-call"]
    assert first.attrs["custom_call_target"] == "my_kernel"
    assert first.attrs["custom_call_has_side_effect"] is True
    assert first.attrs["api_version"] == "API_VERSION_STATUS_RETURNING"
    assert str(first.attrs["backend_config"]) == '"opaque \\"cfg\\""'
    assert second.attrs["api_version"] == "API_VERSION_TYPED_FFI"
    assert str(second.attrs["backend_config"]) == "{n = 3 : i64}"
    assert [c.name for c in second.attrs["called_computations"]] == ["helper"]
    with pytest.raises(EvaluationError, match="'my_kernel'"):
        evaluate(m, np.zeros(3, np.float32))
    back = parse_stablehlo(to_stablehlo(m))
    assert [i.attrs for i in back.entry.instructions if i.opcode == "custom-call"][1][
        "backend_config"] == second.attrs["backend_config"]


def test_less_common_ops():
    text = """!vec = tensor<4xf32>
func.func @main(%x: !vec, %y: !vec) -> (tensor<f32>, tensor<2x4xf32>, tensor<i32>, !vec, !vec, tensor<4xf32>, tensor<4xf32>) {
  %d = stablehlo.dot %x, %y, precision = [HIGHEST, DEFAULT] : (!vec, !vec) -> tensor<f32>
  %b = stablehlo.broadcast %x, sizes = [2] : (!vec) -> tensor<2x4xf32>
  %n = stablehlo.get_dimension_size %x, dim = 0 : (!vec) -> tensor<i32>
  %t = stablehlo.tuple %x, %y : tuple<!vec, !vec>
  %e = stablehlo.get_tuple_element %t[1] : (tuple<!vec, !vec>) -> !vec
  %r = stablehlo.reduce_precision %x, format = e5m2 : !vec
  %c = stablehlo.composite "my.double" %y {composite_attributes = {k = 2 : i64}, decomposition = @double} : (!vec) -> !vec
  %m = "stablehlo.map"(%x, %y) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<f32>, %b2: tensor<f32>):
    %mx = stablehlo.maximum %a, %b2 : tensor<f32>
    stablehlo.return %mx : tensor<f32>
  }) : (!vec, !vec) -> !vec
  %tok = stablehlo.create_token : !stablehlo.token
  %tok2 = stablehlo.after_all %tok, %tok : !stablehlo.token
  return %d, %b, %n, %e, %r, %c, %m : tensor<f32>, tensor<2x4xf32>, tensor<i32>, !vec, !vec, tensor<4xf32>, tensor<4xf32>
}
func.func private @double(%a: tensor<4xf32>) -> tensor<4xf32> {
  %s = stablehlo.add %a, %a : tensor<4xf32>
  return %s : tensor<4xf32>
}"""  # noqa: E501 (MLIR text: one operation a line)
    x = np.array([1.0, 0.3, -2.0, 1000.1], np.float32)
    y = np.array([0.5, 2.0, 4.0, -1.0], np.float32)
    d, b, n, e, r, c, m = run(text, x, y)
    np.testing.assert_allclose(d, x @ y, rtol=1e-6)
    np.testing.assert_array_equal(b, np.stack([x, x]))
    assert n == 4
    np.testing.assert_array_equal(e, y)
    np.testing.assert_array_equal(r, x.astype(ml_dtypes.float8_e5m2).astype(np.float32))
    np.testing.assert_array_equal(c, 2 * y)
    np.testing.assert_array_equal(m, np.maximum(x, y))


def test_cholesky():
    text = """func.func @main(%a: tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2x3x3xf32>) {
  %l = stablehlo.cholesky %a, lower = true : tensor<2x3x3xf32>
  %u = "stablehlo.cholesky"(%a) : (tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  return %l, %u : tensor<2x3x3xf32>, tensor<2x3x3xf32>
}"""
    r = np.random.default_rng(5).standard_normal((2, 3, 3)).astype(np.float32)
    a = r @ r.transpose(0, 2, 1) + 3 * np.eye(3, dtype=np.float32)
    low, up = run(text, a)
    want = np.linalg.cholesky(a.astype(np.float64))
    np.testing.assert_allclose(np.tril(low), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.triu(up), want.transpose(0, 2, 1), rtol=1e-5, atol=1e-5)


def test_donation_becomes_input_output_alias():
    text = """func.func public @main(%w: tensor<3xf32> {tf.aliasing_output = 1 : i32}, %x: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
  %u = stablehlo.subtract %w, %x : tensor<3xf32>
  return %s, %u : tensor<f32>, tensor<3xf32>
}"""  # noqa: E501 (MLIR text: one operation a line)
    m = parse_stablehlo(text)
    (alias,) = module_aliases(m)
    assert (alias.output_index, alias.parameter_number) == ((1,), 0)
    assert "tf.aliasing_output = 1 : i32" in to_stablehlo(m)


def test_entry_is_the_single_public_function():
    text = """func.func private @twice(%a: tensor<f32>) -> tensor<f32> {
  %s = stablehlo.add %a, %a : tensor<f32>
  func.return %s : tensor<f32>
}
func.func @f(%a: tensor<f32>) -> tensor<f32> {
  %0 = func.call @twice(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @twice(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}"""
    (got,) = run(text, np.float32(1.5))
    assert got == 6.0
