"""The opcode table: the single source of truth for every HLO operation xlapy knows.

Each row gives the opcode's text name (as XLA spells it), its arity (None = variadic), its
category and every other per-opcode fact the compiler uses; the passes, analyses and
backends read these facts from here (the sets at the bottom are derived from the rows) and
never keep their own lists of opcode names. The parser accepts exactly these names; shape
inference, the reference interpreter, the builder, the backends and the frontend each keep
a registry keyed by these names, and tests/hlo/test_opcode_coverage.py fails when one of
them lacks a row of this table (or does not list it, with the reason).

Categories:
  unary, binary      elementwise arithmetic/logic on arrays of one shape
  elementwise        other per-element ops (compare, select, clamp, convert, ...)
  data               data movement (broadcast, reshape, slice, ...)
  reduction          reduce, reduce-window, select-and-scatter
  linalg             dot, convolution, cholesky
  indexing           gather, scatter, dynamic-slice, dynamic-update-slice
  control            while, conditional, call, map, fusion, custom-call, sort
  structure          parameter, constant, iota, tuple, get-tuple-element, ...
  collective         communication among replicas/partitions (all-reduce, all-gather, ...)

Columns (OpInfo fields; the defaults are what most rows have):
  elementwise       every output element depends only on the same-index elements of the
                    operands
  types             the element types the operands may have, as kind letters: f (floating
                    point), c (complex), s (signed integer), u (unsigned integer), p
                    (pred); None: no
                    restriction beyond the opcode's own shape rule. XLA's shape inference
                    decides (abs and sign take s and f only: XLA rejects them on unsigned
                    types, and so do xlapy's verifier, interpreter and frontend primitives)
  transcendental    counted as a transcendental by the cost model (exp, log, sin, power,
                    sqrt, ...); a transcendental is always `expensive`
  expensive         costly per element: fusion does not duplicate it into several consumers
  flops             how the cost model counts it: "none" (data movement), "output" (one per
                    output element), "input" (one reducer application per input element),
                    "dot", "convolution" (their own formulas), "called" (the sum over the
                    computations it runs)
  commutative       a binary op whose operands may be swapped (CSE, reducers)
  side_effecting    has effects beyond its result: never removed, merged or folded
  aliases_operand   pointer-only: its result is (part of) an operand's buffer (tuple,
                    get-tuple-element, bitcast, opt-barrier); it launches no kernel
  no_kernel         defines no buffer that a kernel writes (the aliasing ops, parameters,
                    constants, tokens): buffer assignment, kernel counts and the bytes the
                    cost model counts skip it
  control_flow      runs its computations as sub-programs (XLA's kControlFlow call
                    context); other ops calling computations embed them per element
                    (reducers, comparators, map functions) or as fused kernels
  fusion            "loop": the fusion pass may fuse it into a loop kernel; "input": a
                    reduction, the root of an input fusion; None: not fused
  declared_shape    the result shape (or part of it) comes from the declared shape only
  not_folded        why constant folding leaves it alone even when its operands are
                    constants (None: it is folded)
  never_merged      why CSE never merges two equal instructions of this opcode
  value_preserving  one operand whose elements it moves or repeats unchanged (a uniform
                    operand gives a uniform result; the simplifier looks through it)

Facts that belong to one pass or backend (which reducers the vector emitter handles, which
ops a flat kernel admits) stay there as `opcode_set(...)`: checked against this table at
import, so a misspelt or removed opcode fails loudly instead of silently matching nothing.
The rule registries (@shape_rule, @eval_rule, @elemental_rule, @custom_emitter) check their
names the same way.

Adding an opcode touches five production files (cholesky is the worked example): its row
here, with every column that applies (an attribute only it takes is declared in its
`attrs`); a shape rule (hlo/shape_rules_*.py); an evaluator rule (hlo/evaluator/); an
elemental rule or a cpu emitter; a frontend primitive that lowers to it (or, in
tests/hlo/test_opcode_coverage.py, the reason it has none). The Builder makes any opcode
whose result shape follows from its operands and attributes with Builder.op; only the
others need a method of their own. tests/hlo/test_opcode_coverage.py lists what is
missing.
"""

from __future__ import annotations

from dataclasses import dataclass

# element kinds (the `types` column): f floating point, c complex, s signed integer,
# u unsigned, p pred
FLOAT = "f"
SIGNED = "fs"
NUMERIC = "fsu"
INTEGER = "su"
LOGICAL = "psu"
ANY = "fpsu"
# ... and the same with complex operands allowed (XLA's shape inference accepts complex for
# these; maximum, minimum, remainder, atan2, the roundings and erf take no complex operands)
FLOAT_C = "fc"
SIGNED_C = "fsc"
NUMERIC_C = "fsuc"
ANY_C = "fpsuc"
COMPLEX = "c"

_TYPE_TEXT = {FLOAT: "a floating-point", SIGNED: "a signed integer or floating-point",
              NUMERIC: "an integer or floating-point", INTEGER: "an integer",
              LOGICAL: "pred or integer", ANY: "any non-complex",
              FLOAT_C: "a floating-point or complex",
              SIGNED_C: "a signed integer, floating-point or complex",
              NUMERIC_C: "an integer, floating-point or complex", ANY_C: "any",
              COMPLEX: "a complex"}
_FLOPS = ("none", "output", "input", "dot", "convolution", "called")
_FUSION = (None, "loop", "input")


def kind_letter(kind: str) -> str:
    """The `types` letter of a PrimitiveType.kind ('f', 's', 'u', 'pred')."""
    return "p" if kind == "pred" else kind


@dataclass(frozen=True)
class OpInfo:
    name: str
    arity: int | None  # None: variadic
    category: str
    elementwise: bool = False
    types: str | None = None
    transcendental: bool = False
    expensive: bool = False
    flops: str = "output"
    commutative: bool = False
    side_effecting: bool = False
    aliases_operand: bool = False
    no_kernel: bool = False
    control_flow: bool = False
    fusion: str | None = None
    declared_shape: bool = False
    not_folded: str | None = None
    never_merged: str | None = None
    value_preserving: bool = False
    # attributes only this opcode takes, as (name, kind) pairs (kinds as in
    # hlo/attributes.py); attributes shared by several opcodes are listed there
    attrs: tuple = ()

    def __post_init__(self):
        if self.types is not None and self.types not in _TYPE_TEXT:
            raise ValueError(f"{self.name}: types={self.types!r} is not one of {list(_TYPE_TEXT)}")
        if self.flops not in _FLOPS or self.fusion not in _FUSION:
            raise ValueError(f"{self.name}: flops={self.flops!r} / fusion={self.fusion!r}")
        if self.transcendental:  # never silently cheap
            object.__setattr__(self, "expensive", True)
        if self.aliases_operand:
            object.__setattr__(self, "no_kernel", True)
        if self.no_kernel and self.flops != "none":
            raise ValueError(f"{self.name}: an op without a kernel does no arithmetic")
        if self.commutative and self.arity != 2:
            raise ValueError(f"{self.name}: only binary ops are commutative")

    @property
    def float_only(self) -> bool:
        """Float-only math (transcendentals, rounding): integer operands are rejected."""
        return self.types == FLOAT

    def accepts(self, kind: str) -> bool:
        """Whether operands of element kind `kind` (a PrimitiveType.kind or a letter) are
        allowed; always True when the row sets no `types`."""
        return self.types is None or kind_letter(kind) in self.types

    @property
    def types_text(self) -> str:
        """The accepted element types in words, for error messages."""
        return _TYPE_TEXT[self.types] if self.types is not None else "any"


_LOOP = {"elementwise": True, "fusion": "loop"}


def _unary(name: str, types: str, **facts) -> OpInfo:
    return OpInfo(name, 1, "unary", types=types, **_LOOP, **facts)


def _binary(name: str, types: str, **facts) -> OpInfo:
    return OpInfo(name, 2, "binary", types=types, **_LOOP, **facts)


_FOLDING_MATERIALIZES = "its folded literal would be large where the instruction is small"

_OTHER_REPLICAS = "its value depends on the other replicas' operands"
_RENDEZVOUS = "each collective is one rendezvous of the replicas, matched by program order"

_ROWS = [
    # structure
    OpInfo("parameter", 0, "structure", flops="none", no_kernel=True, declared_shape=True,
           not_folded="its value is known only at run time",
           never_merged="each parameter is a distinct input"),
    OpInfo("constant", 0, "structure", flops="none", no_kernel=True, fusion="loop",
           declared_shape=True, not_folded="already a constant"),
    OpInfo("iota", 0, "structure", flops="none", fusion="loop", declared_shape=True,
           not_folded=_FOLDING_MATERIALIZES),
    OpInfo("tuple", None, "structure", flops="none", aliases_operand=True,
           not_folded="tuple-shaped: its elements are folded instead"),
    OpInfo("get-tuple-element", 1, "structure", flops="none", aliases_operand=True),
    OpInfo("copy", 1, "structure", flops="none", value_preserving=True, **_LOOP),
    OpInfo("bitcast", 1, "structure", flops="none", aliases_operand=True, fusion="loop",
           declared_shape=True),
    OpInfo("opt-barrier", 1, "structure", flops="none", aliases_operand=True,
           not_folded="it exists to stop optimizations across it"),
    OpInfo("after-all", None, "structure", flops="none", no_kernel=True,
           not_folded="a token orders effects; it has no value",
           never_merged="each token orders its own effects"),
    # unary elementwise
    _unary("abs", SIGNED_C),
    _unary("negate", NUMERIC_C),
    _unary("sign", SIGNED_C),
    _unary("floor", FLOAT),
    _unary("ceil", FLOAT),
    _unary("round-nearest-afz", FLOAT),
    _unary("round-nearest-even", FLOAT),
    _unary("exponential", FLOAT_C, transcendental=True),
    _unary("exponential-minus-one", FLOAT_C, transcendental=True),
    _unary("log", FLOAT_C, transcendental=True),
    _unary("log-plus-one", FLOAT_C, transcendental=True),
    _unary("logistic", FLOAT_C, transcendental=True),
    _unary("sqrt", FLOAT_C, transcendental=True),
    _unary("rsqrt", FLOAT_C, transcendental=True),
    _unary("cbrt", FLOAT, transcendental=True),
    _unary("sine", FLOAT_C, transcendental=True),
    _unary("cosine", FLOAT_C, transcendental=True),
    _unary("tan", FLOAT_C, transcendental=True),
    _unary("tanh", FLOAT_C, transcendental=True),
    _unary("erf", FLOAT, transcendental=True),
    _unary("not", LOGICAL),
    _unary("is-finite", FLOAT),
    _unary("popcnt", INTEGER),
    _unary("count-leading-zeros", INTEGER),
    # binary elementwise
    _binary("add", ANY_C, commutative=True),
    _binary("subtract", NUMERIC_C),
    _binary("multiply", ANY_C, commutative=True),
    _binary("divide", NUMERIC_C, expensive=True),
    _binary("remainder", NUMERIC, expensive=True),
    _binary("maximum", ANY, commutative=True),
    _binary("minimum", ANY, commutative=True),
    _binary("power", NUMERIC_C, transcendental=True),
    _binary("atan2", FLOAT, transcendental=True),
    _binary("and", LOGICAL, commutative=True),
    _binary("or", LOGICAL, commutative=True),
    _binary("xor", LOGICAL, commutative=True),
    _binary("shift-left", INTEGER),
    _binary("shift-right-arithmetic", INTEGER),
    _binary("shift-right-logical", INTEGER),
    # other elementwise
    # complex: EQ and NE only; order=TOTAL|PARTIAL (newer XLA's text, JAX 0.11) is read as
    # type=TOTALORDER on floats (parser_build._compare_order)
    OpInfo("compare", 2, "elementwise", types=ANY_C, attrs=(("order", "ident"),), **_LOOP),
    OpInfo("select", 3, "elementwise", **_LOOP),
    OpInfo("clamp", 3, "elementwise", **_LOOP),
    OpInfo("convert", 1, "elementwise", flops="none", declared_shape=True, **_LOOP),
    OpInfo("bitcast-convert", 1, "elementwise", flops="none", declared_shape=True,
           fusion="loop"),
    OpInfo("reduce-precision", 1, "elementwise", types=FLOAT, **_LOOP),
    # complex numbers: complex(re, im) -> c64/c128; real and imag of complex (or float) -> float
    OpInfo("complex", 2, "elementwise", types=FLOAT, **_LOOP),
    OpInfo("real", 1, "elementwise", types=FLOAT_C, flops="none", **_LOOP),
    OpInfo("imag", 1, "elementwise", types=FLOAT_C, flops="none", **_LOOP),
    # data movement
    OpInfo("broadcast", 1, "data", flops="none", fusion="loop", declared_shape=True,
           value_preserving=True, not_folded=_FOLDING_MATERIALIZES),
    OpInfo("reshape", 1, "data", flops="none", fusion="loop", declared_shape=True,
           value_preserving=True),
    OpInfo("transpose", 1, "data", flops="none", fusion="loop", value_preserving=True),
    OpInfo("slice", 1, "data", flops="none", fusion="loop", value_preserving=True),
    OpInfo("concatenate", None, "data", flops="none", fusion="loop"),
    OpInfo("pad", 2, "data", flops="none", fusion="loop"),
    OpInfo("reverse", 1, "data", flops="none", fusion="loop", value_preserving=True),
    # indexing
    OpInfo("dynamic-slice", None, "indexing", flops="none", fusion="loop"),
    OpInfo("dynamic-update-slice", None, "indexing", flops="none"),
    OpInfo("gather", 2, "indexing", flops="none", expensive=True, fusion="loop"),
    OpInfo("scatter", None, "indexing", flops="input"),
    # reductions
    OpInfo("reduce", None, "reduction", expensive=True, flops="input", fusion="input"),
    OpInfo("reduce-window", None, "reduction", expensive=True, flops="input", fusion="input"),
    OpInfo("select-and-scatter", 3, "reduction", flops="input"),
    # linear algebra
    OpInfo("dot", 2, "linalg", expensive=True, flops="dot"),
    OpInfo("convolution", 2, "linalg", expensive=True, flops="convolution"),
    OpInfo("cholesky", 1, "linalg", types=FLOAT_C, expensive=True, attrs=(("lower", "bool"),)),
    # fft_type FFT|IFFT (complex -> complex), RFFT (float -> complex), IRFFT (complex ->
    # float) over the last len(fft_length) (1 to 3) dimensions
    OpInfo("fft", 1, "linalg", types=FLOAT_C, expensive=True,
           attrs=(("fft_type", "ident"), ("fft_length", "ints"))),
    # control and calls
    OpInfo("sort", None, "control", flops="input"),
    OpInfo("topk", 1, "control"),
    OpInfo("while", 1, "control", flops="called", control_flow=True,
           not_folded="its trip count is unbounded: folding could run forever"),
    OpInfo("conditional", None, "control", flops="called", control_flow=True),
    OpInfo("call", None, "control", flops="called", control_flow=True),
    OpInfo("map", None, "control"),
    OpInfo("fusion", None, "control", flops="called"),
    OpInfo("custom-call", None, "control", declared_shape=True,
           not_folded="its target is opaque to the evaluator"),
    # collectives: values from other replicas/partitions (hlo/evaluator/collectives.py runs
    # N replicas in one process); replica_groups, channel_id and use_global_device_ids are
    # shared attributes (hlo/attributes.py)
    OpInfo("all-reduce", None, "collective", flops="input", not_folded=_OTHER_REPLICAS,
           never_merged=_RENDEZVOUS),
    OpInfo("reduce-scatter", None, "collective", flops="input", declared_shape=True,
           not_folded=_OTHER_REPLICAS, never_merged=_RENDEZVOUS),
    OpInfo("all-gather", None, "collective", flops="none", declared_shape=True,
           not_folded=_OTHER_REPLICAS, never_merged=_RENDEZVOUS),
    OpInfo("all-to-all", None, "collective", flops="none", not_folded=_OTHER_REPLICAS,
           never_merged=_RENDEZVOUS),
    OpInfo("collective-permute", 1, "collective", flops="none", not_folded=_OTHER_REPLICAS,
           never_merged=_RENDEZVOUS),
    OpInfo("replica-id", 0, "collective", flops="none",
           not_folded="its value differs per replica"),
    OpInfo("partition-id", 0, "collective", flops="none",
           not_folded="its value differs per partition"),
]

OPCODES: dict[str, OpInfo] = {row.name: row for row in _ROWS}


def opcodes_where(predicate) -> frozenset[str]:
    """The opcodes whose row satisfies `predicate(row)`."""
    return frozenset(r.name for r in _ROWS if predicate(r))


def opcode_set(names, where: str) -> frozenset[str]:
    """A set of opcodes kept by one pass or backend (a fact of its own, not of the opcode),
    checked against the table: raises at import when a name is not an opcode."""
    names = frozenset(names)
    unknown = sorted(names - OPCODES.keys())
    if unknown:
        raise RuntimeError(f"{where} names opcodes the opcode table lacks: {unknown}")
    return names


UNARY = opcodes_where(lambda r: r.category == "unary")
BINARY = opcodes_where(lambda r: r.category == "binary")
ELEMENTWISE = opcodes_where(lambda r: r.elementwise)
TRANSCENDENTAL = opcodes_where(lambda r: r.transcendental)
EXPENSIVE = opcodes_where(lambda r: r.expensive)
COMMUTATIVE = opcodes_where(lambda r: r.commutative)
SIDE_EFFECTING = opcodes_where(lambda r: r.side_effecting)
ALIASING = opcodes_where(lambda r: r.aliases_operand)
NO_KERNEL = opcodes_where(lambda r: r.no_kernel)
CONTROL_FLOW = opcodes_where(lambda r: r.control_flow)
LOOP_FUSIBLE = opcodes_where(lambda r: r.fusion == "loop")
REDUCTIONS = opcodes_where(lambda r: r.fusion == "input")
NO_FLOPS = opcodes_where(lambda r: r.flops == "none")
NEEDS_DECLARED = opcodes_where(lambda r: r.declared_shape)
NOT_FOLDED = opcodes_where(lambda r: r.not_folded is not None)
NEVER_MERGED = opcodes_where(lambda r: r.never_merged is not None)
VALUE_PRESERVING = opcodes_where(lambda r: r.value_preserving)
COLLECTIVES = opcodes_where(lambda r: r.category == "collective")

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
