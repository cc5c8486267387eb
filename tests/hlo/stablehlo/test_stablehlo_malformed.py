"""Malformed StableHLO never crashes or hangs: each input either parses into a valid module
or raises a ParseError that says file:line:column, shows the line and a caret, and names
what was expected.

Cases come from corpus texts damaged at random with a fixed seed (truncation, a deleted
or swapped token, a duplicated line, a changed dimension, a stray character), and from
hand-written inputs, one per error the reader reports.
"""

from __future__ import annotations

import random
import re
import signal

import pytest

import xlapy_tests_stablehlo as util
from xlapy.errors import ParseError, XlapyError
from xlapy.hlo import parse_stablehlo

BASES = ["hlo_map.mlir", "cond_switch.mlir", "sorting.mlir", "scatter_ops.mlir",
         "fori_loop.mlir", "conv2d_nchw_grouped.mlir", "custom_call_cholesky.mlir",
         "argmax_argmin.mlir", "cumulative.mlir", "log_softmax_cross_entropy.mlir"]
_TOKEN = re.compile(r'%[\w#:]+|@[\w.]+|"[^"\n]*"|[\w.]+|->|[(){}<>\[\],:=]')


def _truncate(text, rng):
    return text[:rng.randrange(len(text))]


def _delete_token(text, rng):
    m = rng.choice(list(_TOKEN.finditer(text)))
    return text[:m.start()] + text[m.end():]


def _swap_token(text, rng):
    tokens = list(_TOKEN.finditer(text))
    m, other = rng.choice(tokens), rng.choice(tokens)
    return text[:m.start()] + other.group(0) + text[m.end():]


def _duplicate_line(text, rng):
    lines = text.split("\n")
    k = rng.randrange(len(lines))
    return "\n".join(lines[:k + 1] + [lines[k]] + lines[k + 1:])


def _change_dimension(text, rng):
    dims = list(re.finditer(r"(?<=[<x])\d+(?=x)", text))
    if not dims:
        return text + "}"
    m = rng.choice(dims)
    return text[:m.start()] + str(int(m.group(0)) + rng.randrange(1, 4)) + text[m.end():]


def _stray_character(text, rng):
    k = rng.randrange(len(text))
    return text[:k] + rng.choice("%@#^{}()<>[]:=,\"x?!*") + text[k:]


DAMAGE = [_truncate, _delete_token, _swap_token, _duplicate_line, _change_dimension,
          _stray_character]
PER_KIND = 6


class _Hang(Exception):
    pass


def _parse_within(text: str, name: str, seconds: int = 20):
    def alarm(signum, frame):
        raise _Hang(f"{name}: parsing took more than {seconds} s")
    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        return parse_stablehlo(text, name)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("base", BASES)
def test_damaged_corpus_text(base):
    text = (util.CORPUS / base).read_text()
    rng = random.Random(f"stablehlo-{base}")
    outcomes = {"parsed": 0, "error": 0}
    for damage in DAMAGE:
        for k in range(PER_KIND):
            bad = damage(text, rng)
            name = f"{base}:{damage.__name__}#{k}"
            try:
                _parse_within(bad, name)
                outcomes["parsed"] += 1
            except XlapyError as e:
                util.assert_positioned(e)
                assert e.filename == name
                outcomes["error"] += 1
    assert outcomes["error"] > len(DAMAGE) * PER_KIND // 3, outcomes


T = "tensor<4xf32>"
MAIN = "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {{\n{}\n}}\n"


def _body(*lines: str) -> str:
    return MAIN.format("\n".join("  " + line for line in lines))


ERRORS = [
    ("dynamic", _body("%0 = stablehlo.add %a, %b : tensor<?xf32>", f"return %0 : {T}"),
     "dynamic dimensions", (2, 38)),
    ("complex", "func.func @main(%a: tensor<2xcomplex<f32>>) -> tensor<2xf32> {\n}\n",
     "complex", (1, 30)),
    ("fp8", "func.func @main(%a: tensor<2xf8E4M3FN>) -> tensor<2xf32> {\n}\n",
     "element type f8E4M3FN is not supported", (1, 30)),
    ("unknown op", _body(f"%0 = stablehlo.frobnicate %a : {T}", f"return %0 : {T}"),
     "unknown operation 'stablehlo.frobnicate'", (2, 8)),
    ("unsupported op", _body(f"%0 = stablehlo.fft %a : {T}", f"return %0 : {T}"),
     "stablehlo.fft is not supported: xlapy has no complex", (2, 8)),
    ("unsupported chlo", _body(f"%0 = chlo.bessel_i1e %a : {T} -> {T}", f"return %0 : {T}"),
     "chlo.bessel_i1e is not supported", (2, 8)),
    ("undefined value", _body(f"%0 = stablehlo.add %a, %zz : {T}", f"return %0 : {T}"),
     "use of undefined value %zz", (2, 26)),
    ("missing attribute", _body(f'%0 = "stablehlo.transpose"(%a) : ({T}) -> {T}',
                                f"return %0 : {T}"), "missing attribute 'permutation'", (2, 8)),
    ("operand type", _body("%0 = stablehlo.add %a, %b : (tensor<5xf32>, tensor<5xf32>) -> "
                           "tensor<5xf32>", f"return %0 : {T}"), "%a is tensor<4xf32>", (2, 22)),
    ("result type", _body("%0 = stablehlo.negate %a : (tensor<4xf32>) -> tensor<4xi32>",
                          f"return %0 : {T}"), "result #0 is tensor<4xi32>", (2, 8)),
    ("shape rule", _body("%0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
                         f"({T}, {T}) -> tensor<f32>", "return %a : tensor<4xf32>"),
     "dot", (2, 8)),
    ("return type", _body("return %a : tensor<3xf32>"), "%a is tensor<4xf32>", (2, 10)),
    ("no return", _body(f"%0 = stablehlo.add %a, %b : {T}"), "must end with a return", (2, 8)),
    ("several results", _body(f"%0:2 = stablehlo.optimization_barrier %a, %b : {T}, {T}",
                              f"return %0 : {T}"), "%0 has several results", (3, 10)),
    ("no such result", _body(f"%0:2 = stablehlo.optimization_barrier %a, %b : {T}, {T}",
                             f"return %0#5 : {T}"), "%0 has no result #5", (3, 10)),
    ("result count", _body(f"%0:2 = stablehlo.add %a, %b : {T}", f"return %0#0 : {T}"),
     "defines 2 result(s) but its type has 1", (2, 10)),
    ("dense range", _body("%0 = stablehlo.constant dense<300> : tensor<i8>",
                          "return %a : tensor<4xf32>"), "300 is out of range for i8", (2, 33)),
    ("dense shape", _body("%0 = stablehlo.constant dense<[1, 2, 3]> : tensor<2xi32>",
                          "return %a : tensor<4xf32>"), "the values have shape [3]", (2, 33)),
    ("generic operand count", _body(f'%0 = "stablehlo.add"(%a, %b) : ({T}) -> {T}',
                                    f"return %0 : {T}"), "2 operand(s) but its type lists 1",
     (2, 34)),
    ("short form sort", _body(f"%0 = stablehlo.sort %a : {T}", f"return %0 : {T}"),
     'no short form here: write it in the generic form "stablehlo.sort"', (2, 8)),
    ("unbalanced", _body("%0 = stablehlo.custom_call @f(%a) {x = #foo<bar(>} : "
                         f"({T}) -> {T}", f"return %0 : {T}"), "unbalanced '>'", (2, 51)),
    ("unterminated string", _body('%0 = stablehlo.custom_call @f(%a) {backend_config = "abc',
                                  f"return %0 : {T}"), "unterminated string", (2, 55)),
    ("undefined loc alias", _body(f"%0 = stablehlo.add %a, %b : {T} loc(#loc9)",
                                  f"return %0 : {T}"), "undefined location alias #loc9",
     (2, 8)),
    ("two blocks", _body(f"%0 = stablehlo.add %a, %b : {T}", "^bb1:", f"return %0 : {T}"),
     "several blocks", (3, 3)),
    ("recursion", "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
                  "  %0 = call @main(%a) : (tensor<f32>) -> tensor<f32>\n"
                  "  return %0 : tensor<f32>\n}\n", "calls itself", (2, 8)),
    ("undefined function", "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
                           "  %0 = call @nope(%a) : (tensor<f32>) -> tensor<f32>\n"
                           "  return %0 : tensor<f32>\n}\n", "undefined function @nope",
     (2, 8)),
    ("no entry", "func.func @f(%a: tensor<f32>) -> tensor<f32> {\n  return %a : tensor<f32>\n"
                 "}\nfunc.func @g(%a: tensor<f32>) -> tensor<f32> {\n  return %a : tensor<f32>"
                 "\n}\n", "name it @main", (1, 1)),
    ("captured in a reducer",
     "func.func @main(%a: tensor<4xf32>, %c: tensor<f32>) -> tensor<f32> {\n"
     '  %0 = "stablehlo.reduce"(%a, %c) <{dimensions = array<i64: 0>}> ({\n'
     "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
     "    %s = stablehlo.add %x, %c : tensor<f32>\n"
     "    stablehlo.return %s : tensor<f32>\n"
     "  }) : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
     "  return %0 : tensor<f32>\n}\n", "uses %c defined outside it", (4, 28)),
    ("bad dot algorithm",
     _body("%0 = stablehlo.dot_general %a, %b, contracting_dims = [0] x [0], algorithm = "
           "<lhs_precision_type = f32, rhs_precision_type = f32, accumulation_type = f32, "
           "lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 7, "
           f"allow_imprecise_accumulation = false> : ({T}, {T}) -> tensor<f32>",
           "return %a : tensor<4xf32>"), "not one xlapy knows", (2, 8)),
    ("empty", "", "the module defines no function", (1, 1)),
    ("deep nesting", _body("%0 = stablehlo.constant dense<" + "[" * 5000 + "1" + "]" * 5000
                           + "> : tensor<f32>", "return %a : tensor<4xf32>"),
     "nested too deeply", None),
    ("huge splat", _body("%0 = stablehlo.constant dense<1.0> : tensor<100000x100000xf64>",
                         "return %a : tensor<4xf32>"), "too large", (2, 33)),
]


@pytest.mark.parametrize("text,message,where", [e[1:] for e in ERRORS],
                         ids=[e[0] for e in ERRORS])
def test_error(text, message, where):
    with pytest.raises(XlapyError) as info:
        _parse_within(text, "case.mlir")
    err = info.value
    assert message in str(err), str(err)
    assert isinstance(err, ParseError), f"{type(err).__name__}: {err}"
    assert err.filename == "case.mlir"
    if where is not None:
        assert (err.line, err.column) == where, str(err)
        assert "^" in str(err) or not err.source_line


def test_not_text():
    with pytest.raises(TypeError, match="MLIR text"):
        parse_stablehlo(b"module {}")
