"""Every opcode of the opcode table has each of its places, or a listed reason why not.

The places of an opcode (DESIGN.md: adding an opcode touches its row, a shape rule, a
reference rule, an elemental rule or emitter, and the frontend primitive):

  shape rule        xlapy.hlo.shape_inference.SHAPE_RULES
  evaluator rule    the reference evaluator's EVAL_RULES (xlapy.hlo.evaluator)
  cpu emitter       the LLVM elemental rules (ELEMENTAL_RULES) or the cpu backend's custom
                    emitters (CUSTOM_EMITTERS)
  builder method    Builder.op for an opcode whose result shape follows from its operands
                    and attributes (its row does not say declared_shape); else a method of
                    xlapy.hlo.Builder that makes it (read from the methods' source: the
                    opcode a method passes to `self._add`/`self._ew`, or the methods it
                    calls)
  frontend          a primitive (xlapy.frontend.core.PRIMITIVES, every primitive of
                    xlapy.frontend and xlapy.lax) whose lowering emits it, or the lowering
                    machinery itself (xlapy/frontend/lowering.py: parameters, tuples)

The registries are read as they are at run time, never copied here; only the exceptions are
listed (NOT_HERE, with the reason). `coverage_gaps()` is the check; the last tests remove one
place of an opcode at a time (monkeypatch) and assert that exactly that gap is reported.

How the frontend is read: a lowering's bytecode is scanned for builder calls
(`b.<method>`, `sb.<method>`, `sub.<method>`, `<ctx>.b.<method>`), for strings naming an
opcode or a builder method (`getattr(ctx.b, "exponential")`, reducers such as
`scalar_computation("add", ...)`), and the functions of xlapy.frontend.primitives,
xlapy.frontend.lowering and xlapy.lax it calls (global names, module attributes, closures)
are followed. A lowering that names its builder otherwise is missed (the test then reports a
gap): add the name to RECEIVERS.
"""

from __future__ import annotations

import ast
import dis
import inspect
import textwrap
import types

import pytest

from xlapy.hlo.builder import Builder
from xlapy.hlo.opcodes import OPCODES
from xlapy.hlo.shape_inference import SHAPE_RULES

PLACES = ("shape rule", "interpreter rule", "cpu emitter", "builder method", "frontend")

_NO_PMAP = ("pmap's devices are replicas (axis_index lowers to replica-id); partitions "
            "come only from imported HLO or StableHLO")

# opcode -> why it has no entry in that place's registry (per target for the backends)
NOT_HERE: dict[str, dict[str, str]] = {
    "interpreter rule": {
        "parameter": "Evaluator.call binds parameters to the call's arguments itself",
    },
    "cpu emitter": {
        "parameter": "program.py passes the argument buffers; no code is emitted",
        "tuple": "program.py passes the element pointers along (aliases its operands)",
        "after-all": "a token: program.py emits nothing for it",
        "while": "program.py emits the loop itself (ProgramEmitter._while)",
        "conditional": "program.py emits the branches itself (ProgramEmitter._conditional)",
    },
    "frontend": {
        "after-all": "tokens order side effects; no frontend primitive has side effects",
        "partition-id": _NO_PMAP,
        "bitcast": "a layout-level reinterpretation inserted by passes; frontend arrays "
                   "have no layouts",
        "call": "nested jit functions are inlined into the caller's graph",
        "copy": "frontend values are immutable: copies come from layout changes in passes",
        "fusion": "made by the fusion pass, never by a frontend",
        "map": "traced functions are lowered elementwise directly; map comes from imported "
               "HLO only",
        "reduce-precision": "not exposed yet: xlapy.lax has no reduce_precision",
        "topk": "not exposed yet: xlapy.lax has no top_k (xnp sorts fully)",
    },
}


# ---- the registries, read as they are ------------------------------------------------------

def _interpreter_rules() -> set[str]:
    from xlapy.hlo.evaluator import EVAL_RULES
    return set(EVAL_RULES)


def _cpu_emitters() -> set[str]:
    from xlapy.backends.cpu.emitters.registry import load_all
    load_all()  # (imports every emitter)
    from xlapy.backends.cpu.emitters.registry import CUSTOM_EMITTERS
    from xlapy.backends.llvm.elemental import ELEMENTAL_RULES
    return set(ELEMENTAL_RULES) | set(CUSTOM_EMITTERS)


def builder_methods() -> dict[str, set[str]]:
    """Builder method -> the opcodes it makes (its own `_add`/`_ew` calls and the builder
    methods it calls)."""
    direct, calls = {}, {}
    for name, fn in vars(Builder).items():
        if not inspect.isfunction(fn) or name.startswith("__"):
            continue
        ops, called = set(), set()
        for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(fn)))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                f = node.func
                if (f.attr in ("_add", "_ew") and node.args
                        and isinstance(node.args[0], ast.Constant)):
                    ops.add(node.args[0].value)
                elif isinstance(f.value, ast.Name) and f.value.id == "self":
                    called.add(f.attr)
        direct[name], calls[name] = ops, called

    def closure(method, seen):
        if method in seen or method not in direct:
            return set()
        seen.add(method)
        return direct[method].union(*(closure(c, seen) for c in calls[method]))

    out = {m: closure(m, set()) for m in direct if not m.startswith("_")}
    return {m: ops for m, ops in out.items() if ops}


RECEIVERS = {"b", "sb", "sub"}  # the names lowerings give their Builder (also <ctx>.b)
# the modules whose functions a lowering may call to build HLO (not the tracing machinery)
_FOLLOWED = ("xlapy.frontend.primitives", "xlapy.frontend.lowering", "xlapy.lax")
_LOADS = ("LOAD_FAST", "LOAD_DEREF", "LOAD_GLOBAL", "LOAD_CLOSURE")


def _code_objects(code):
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _code_objects(c)


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in list(value) + list(value.values()):
            yield from _strings(v)
    elif isinstance(value, (tuple, list, set, frozenset)):
        for v in value:
            yield from _strings(v)


def _cells(fn) -> list:
    out = []
    for cell in fn.__closure__ or ():
        try:
            out.append(cell.cell_contents)
        except ValueError:  # an empty cell
            pass
    return out


def emitted_opcodes(fn, methods: dict[str, set[str]], seen: set[int]) -> set[str]:
    """The opcodes a lowering function (and the frontend functions it calls) can emit."""
    if id(fn) in seen or not hasattr(fn, "__code__"):
        return set()
    seen.add(id(fn))
    out, words, globals_, attrs = set(), set(), set(), set()
    for code in _code_objects(fn.__code__):
        prev = None
        for ins in dis.get_instructions(code):
            if ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and ins.argval in methods and prev:
                if ((prev.opname in _LOADS and prev.argval in RECEIVERS)
                        or (prev.opname == "LOAD_ATTR" and prev.argval == "b")):
                    out |= methods[ins.argval]
            if ins.opname == "LOAD_GLOBAL":
                globals_.add(ins.argval)
            elif ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):
                attrs.add(ins.argval)
            prev = ins
        words |= {c for c in code.co_consts if isinstance(c, str)}
    values = list(fn.__defaults__ or ()) + list((fn.__kwdefaults__ or {}).values())
    values += _cells(fn) + [fn.__globals__[n] for n in globals_ if n in fn.__globals__]
    for value in values:
        words.update(_strings(value))
    for w in words:
        if w in OPCODES:
            out.add(w)
        out |= methods.get(w, set())
    callees = values + [getattr(v, n, None) for v in values if isinstance(v, types.ModuleType)
                        for n in attrs]
    for f in callees:
        if inspect.isfunction(f) and f.__module__.startswith(_FOLLOWED):
            out |= emitted_opcodes(f, methods, seen)
    return out


def frontend_opcodes() -> dict[str, set[str]]:
    """Primitive name (and "<lowering>" for the lowering machinery) -> opcodes it emits."""
    import xlapy.frontend.primitives  # registers the primitives
    import xlapy.lax  # noqa: F401
    from xlapy.frontend import lowering
    from xlapy.frontend.core import PRIMITIVES
    methods = builder_methods()
    out = {name: emitted_opcodes(p.lowering, methods, set())
           for name, p in PRIMITIVES.items() if p.lowering is not None}
    roots = [f for f in vars(lowering).values()
             if inspect.isfunction(f) and f.__module__ == lowering.__name__]
    roots += [f for f in vars(lowering.LoweringContext).values() if inspect.isfunction(f)]
    seen: set[int] = set()
    out["<lowering>"] = set().union(*(emitted_opcodes(f, methods, seen) for f in roots))
    return out


def covered() -> dict[str, set[str]]:
    return {"shape rule": set(SHAPE_RULES),
            "interpreter rule": _interpreter_rules(),
            "cpu emitter": _cpu_emitters(),
            "builder method": set().union(*builder_methods().values(),
                                          {n for n, r in OPCODES.items() if not r.declared_shape
                                           and callable(getattr(Builder, "op", None))}),
            "frontend": set().union(*frontend_opcodes().values())}


def coverage_gaps() -> list[tuple[str, str]]:
    """(opcode, place) for every place an opcode lacks without a listed reason."""
    have = covered()
    return [(op, place) for op in OPCODES for place in PLACES
            if op not in have[place] and op not in NOT_HERE.get(place, {})]


# ---- the tests ----------------------------------------------------------------------------

def test_every_opcode_has_every_place():
    gaps = coverage_gaps()
    assert not gaps, ("opcodes lacking a place (add it, or list it in NOT_HERE with the "
                      f"reason): {gaps}")


def test_listed_exceptions_are_real():
    """A reason listed for an opcode that has the place after all is stale: remove it."""
    have = covered()
    for place, reasons in NOT_HERE.items():
        assert place in PLACES
        for op, reason in reasons.items():
            assert op in OPCODES, f"{place}: {op} is not an opcode"
            assert op not in have[place], f"{place}: {op} is listed but has one: remove it"
            assert len(reason) > 20, f"{place}: {op}: say why"


def test_registries_name_only_opcodes():
    have = covered()
    for place in ("shape rule", "interpreter rule", "cpu emitter", "builder method"):
        assert have[place] <= OPCODES.keys(), (place, sorted(have[place] - OPCODES.keys()))


def test_the_frontend_reading_sees_known_lowerings():
    """Spot checks of the bytecode reading against lowerings whose opcodes are known."""
    per = frontend_opcodes()
    assert per["exp"] == {"exponential"}          # getattr(ctx.b, "exponential")(x)
    assert per["round"] == {"round-nearest-even"}
    assert per["dot_general"] == {"dot"}          # ctx.b.dot_general
    assert {"reduce", "add"} <= per["reduce_sum"]  # a reducer built by scalar_computation
    assert {"while", "parameter", "tuple"} <= per["while"]  # sub-computations
    assert per["stop_gradient"] == set()          # lowers to its operand
    assert {"parameter", "tuple", "get-tuple-element"} <= per["<lowering>"]


def _remove_registry_entry(registry: str, opcode: str):
    def remove(monkeypatch):
        if registry == "shape rule":
            monkeypatch.delitem(SHAPE_RULES, opcode)
        elif registry == "interpreter rule":
            from xlapy.hlo.evaluator import EVAL_RULES
            monkeypatch.delitem(EVAL_RULES, opcode)
        elif registry == "elemental rule":
            from xlapy.backends.llvm.elemental import ELEMENTAL_RULES
            monkeypatch.delitem(ELEMENTAL_RULES, opcode)
        elif registry == "custom emitter":
            _cpu_emitters()
            from xlapy.backends.cpu.emitters.registry import CUSTOM_EMITTERS
            monkeypatch.delitem(CUSTOM_EMITTERS, opcode)
        elif registry == "builder method":
            monkeypatch.delattr(Builder, opcode)  # the method is named like the opcode
        elif registry == "frontend":
            frontend_opcodes()  # registers every primitive first
            from xlapy.frontend.core import PRIMITIVES
            monkeypatch.delitem(PRIMITIVES, opcode)
    return remove


@pytest.mark.parametrize("registry,opcode,places", [
    ("shape rule", "popcnt", ["shape rule"]),
    ("shape rule", "cbrt", ["shape rule"]),
    ("interpreter rule", "popcnt", ["interpreter rule"]),
    ("interpreter rule", "cbrt", ["interpreter rule"]),
    ("elemental rule", "popcnt", ["cpu emitter"]),
    ("elemental rule", "cbrt", ["cpu emitter"]),
    ("custom emitter", "sort", ["cpu emitter"]),
    # an opcode whose shape is declared needs a Builder method of its own; the frontend's
    # lowerings make it with that method, so they lose it too
    ("builder method", "convert", ["builder method", "frontend"]),
    ("builder method", "iota", ["builder method", "frontend"]),
    ("frontend", "cbrt", ["frontend"]),      # the cbrt primitive is the only one emitting it
])
def test_removing_one_place_is_reported(monkeypatch, registry, opcode, places):
    assert coverage_gaps() == []
    _remove_registry_entry(registry, opcode)(monkeypatch)
    assert coverage_gaps() == [(opcode, place) for place in places]
