"""The opcode table: the single source of truth for every HLO operation xlapy knows.

Each row gives the opcode's text name (as XLA spells it), its arity (None = variadic) and its
category. The parser accepts exactly these names; shape inference, the reference
interpreter and the backends each keep a registry keyed by these names, and
tests/hlo/test_opcode_coverage.py fails when a registry lacks a row of this table (or a
backend does not list it as unsupported, with the reason).

Categories:
  unary, binary      elementwise arithmetic/logic on arrays of one shape
  elementwise        other per-element ops (compare, select, clamp, convert, ...)
  data               data movement (broadcast, reshape, slice, ...)
  reduction          reduce, reduce-window, select-and-scatter
  linalg             dot, convolution
  indexing           gather, scatter, dynamic-slice, dynamic-update-slice
  control            while, conditional, call, map, fusion, custom-call, sort
  structure          parameter, constant, iota, tuple, get-tuple-element, ...
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OpInfo:
    name: str
    arity: int | None  # None: variadic
    category: str
    # Every output element depends only on the same-index elements of the operands.
    elementwise: bool = False
    # Float-only math (transcendentals): interpreter/backends reject integer operands.
    float_only: bool = False


_ROWS = [
    # structure
    OpInfo("parameter", 0, "structure"),
    OpInfo("constant", 0, "structure"),
    OpInfo("iota", 0, "structure"),
    OpInfo("tuple", None, "structure"),
    OpInfo("get-tuple-element", 1, "structure"),
    OpInfo("copy", 1, "structure", elementwise=True),
    OpInfo("bitcast", 1, "structure"),
    OpInfo("opt-barrier", 1, "structure"),
    OpInfo("after-all", None, "structure"),
    # unary elementwise
    OpInfo("abs", 1, "unary", True),
    OpInfo("negate", 1, "unary", True),
    OpInfo("sign", 1, "unary", True),
    OpInfo("floor", 1, "unary", True, True),
    OpInfo("ceil", 1, "unary", True, True),
    OpInfo("round-nearest-afz", 1, "unary", True, True),
    OpInfo("round-nearest-even", 1, "unary", True, True),
    OpInfo("exponential", 1, "unary", True, True),
    OpInfo("exponential-minus-one", 1, "unary", True, True),
    OpInfo("log", 1, "unary", True, True),
    OpInfo("log-plus-one", 1, "unary", True, True),
    OpInfo("logistic", 1, "unary", True, True),
    OpInfo("sqrt", 1, "unary", True, True),
    OpInfo("rsqrt", 1, "unary", True, True),
    OpInfo("cbrt", 1, "unary", True, True),
    OpInfo("sine", 1, "unary", True, True),
    OpInfo("cosine", 1, "unary", True, True),
    OpInfo("tan", 1, "unary", True, True),
    OpInfo("tanh", 1, "unary", True, True),
    OpInfo("erf", 1, "unary", True, True),
    OpInfo("not", 1, "unary", True),
    OpInfo("is-finite", 1, "unary", True, True),
    OpInfo("popcnt", 1, "unary", True),
    OpInfo("count-leading-zeros", 1, "unary", True),
    # binary elementwise
    OpInfo("add", 2, "binary", True),
    OpInfo("subtract", 2, "binary", True),
    OpInfo("multiply", 2, "binary", True),
    OpInfo("divide", 2, "binary", True),
    OpInfo("remainder", 2, "binary", True),
    OpInfo("maximum", 2, "binary", True),
    OpInfo("minimum", 2, "binary", True),
    OpInfo("power", 2, "binary", True),
    OpInfo("atan2", 2, "binary", True, True),
    OpInfo("and", 2, "binary", True),
    OpInfo("or", 2, "binary", True),
    OpInfo("xor", 2, "binary", True),
    OpInfo("shift-left", 2, "binary", True),
    OpInfo("shift-right-arithmetic", 2, "binary", True),
    OpInfo("shift-right-logical", 2, "binary", True),
    # other elementwise
    OpInfo("compare", 2, "elementwise", True),
    OpInfo("select", 3, "elementwise", True),
    OpInfo("clamp", 3, "elementwise", True),
    OpInfo("convert", 1, "elementwise", True),
    OpInfo("bitcast-convert", 1, "elementwise"),
    OpInfo("reduce-precision", 1, "elementwise", True, True),
    # data movement
    OpInfo("broadcast", 1, "data"),
    OpInfo("reshape", 1, "data"),
    OpInfo("transpose", 1, "data"),
    OpInfo("slice", 1, "data"),
    OpInfo("concatenate", None, "data"),
    OpInfo("pad", 2, "data"),
    OpInfo("reverse", 1, "data"),
    # indexing
    OpInfo("dynamic-slice", None, "indexing"),
    OpInfo("dynamic-update-slice", None, "indexing"),
    OpInfo("gather", 2, "indexing"),
    OpInfo("scatter", None, "indexing"),
    # reductions
    OpInfo("reduce", None, "reduction"),
    OpInfo("reduce-window", None, "reduction"),
    OpInfo("select-and-scatter", 3, "reduction"),
    # linear algebra
    OpInfo("dot", 2, "linalg"),
    OpInfo("convolution", 2, "linalg"),
    # control and calls
    OpInfo("sort", None, "control"),
    OpInfo("topk", 1, "control"),
    OpInfo("while", 1, "control"),
    OpInfo("conditional", None, "control"),
    OpInfo("call", None, "control"),
    OpInfo("map", None, "control"),
    OpInfo("fusion", None, "control"),
    OpInfo("custom-call", None, "control"),
]

OPCODES: dict[str, OpInfo] = {row.name: row for row in _ROWS}

UNARY = frozenset(r.name for r in _ROWS if r.category == "unary")
BINARY = frozenset(r.name for r in _ROWS if r.category == "binary")
ELEMENTWISE = frozenset(r.name for r in _ROWS if r.elementwise)

# Attribute names whose values name computations; the printer, parser and module-walking
# code use this one list.
COMPUTATION_ATTRS = ("to_apply", "calls", "condition", "body", "select", "scatter",
                     "true_computation", "false_computation", "branch_computations",
                     "called_computations")


def opinfo(name: str) -> OpInfo:
    return OPCODES[name]


def registrar(table: dict, what: str, opcode_keys: bool = True):
    """A decorator factory that registers a function in `table` under each of its keys:

        eval_rule = registrar(EVAL_RULES, "interpreter rule")
        @eval_rule("add", "subtract")
        def rule(...): ...

    Registries keyed by opcode (every per-opcode rule table) only take names of the opcode
    table; a key registered twice is an error (two rules for one opcode)."""
    def factory(*keys: str):
        def register(fn):
            for key in keys:
                if opcode_keys and key not in OPCODES:
                    raise RuntimeError(f"{what} for unknown opcode {key}")
                if key in table:
                    raise RuntimeError(f"two {what}s for {key}")
                table[key] = fn
            return fn
        return register
    return factory
