"""The opcode table (xlapy/hlo/opcodes.py) as the one source of per-opcode facts.

- The rows are consistent: a transcendental is expensive (a new one cannot be silently
  cheap), pointer-only ops launch no kernel, sets kept by one pass are checked at import.
- The sets the passes use are the table's (not copies that can drift from it).
- Element types: the verifier, the interpreter and the frontend primitives accept exactly
  the table's `types` for every elementwise opcode; abs and sign reject unsigned operands
  as XLA does (the frontend's sign lowers unsigned to a comparison, as JAX's does).
"""

from __future__ import annotations

import numpy as np
import pytest

import xlapy as xp
from xlapy.backends.interpreter import evaluate
from xlapy.errors import EvaluationError, ShapeError
from xlapy.hlo import parse, verify
from xlapy.hlo import opcodes as O
from xlapy.hlo.opcodes import OPCODES, OpInfo, opcode_set

KIND_TYPES = {"f": "f32", "s": "s32", "u": "u32", "p": "pred"}


def test_a_transcendental_row_is_expensive_and_counted():
    row = OpInfo("new-transcendental", 1, "unary", elementwise=True, types="f",
                 transcendental=True)
    assert row.expensive  # fusion will not duplicate it even if its author forgot
    assert O.TRANSCENDENTAL <= O.EXPENSIVE
    assert OpInfo("tuple-like", None, "structure", flops="none", aliases_operand=True).no_kernel


@pytest.mark.parametrize("bad", [
    dict(types="x"), dict(flops="some"), dict(fusion="kLoop"), dict(no_kernel=True),
    dict(commutative=True)])
def test_inconsistent_rows_are_refused(bad):
    with pytest.raises(ValueError, match="op"):
        OpInfo("op", 1, "unary", **bad)


def test_opcode_sets_kept_elsewhere_are_checked():
    assert opcode_set({"copy", "iota"}, "here") == {"copy", "iota"}
    # the misspelling constant folding once had: it matched nothing, silently
    with pytest.raises(RuntimeError, match=r"here names .*\['optimization-barrier'\]"):
        opcode_set({"tuple", "optimization-barrier"}, "here")


def test_passes_use_the_tables_sets():
    from xlapy.analysis import buffer_assignment, cost_model
    from xlapy.backends.cpu.emitters import program
    from xlapy.hlo import shape_inference
    from xlapy.passes import constant_folding, cse, fusion, rewrite
    assert fusion.EXPENSIVE is O.EXPENSIVE and fusion.LOOP_FUSIBLE is O.LOOP_FUSIBLE
    assert fusion.REDUCTIONS is O.REDUCTIONS
    assert cost_model.TRANSCENDENTAL is O.TRANSCENDENTAL
    assert cse.COMMUTATIVE is O.COMMUTATIVE and cse.NEVER_MERGED is O.NEVER_MERGED
    assert constant_folding.NOT_FOLDED is O.NOT_FOLDED and "opt-barrier" in O.NOT_FOLDED
    assert rewrite.SIDE_EFFECTING_OPCODES is O.SIDE_EFFECTING
    assert buffer_assignment.ALIASING_OPCODES is O.ALIASING
    assert program.ALIAS_OPS is O.NO_KERNEL
    assert shape_inference.NEEDS_DECLARED is O.NEEDS_DECLARED
    for name, row in OPCODES.items():
        assert row.not_folded is None or len(row.not_folded) > 15, name
        assert row.never_merged is None or len(row.never_merged) > 15, name


# ---- element types: verifier, interpreter and frontend agree with the table ------------------

TYPED = sorted(n for n, r in OPCODES.items() if r.types is not None and r.elementwise
               and r.arity in (1, 2) and n not in ("compare", "reduce-precision"))


def _module(opcode: str, t: str) -> str:
    n = OPCODES[opcode].arity
    out = "pred" if opcode == "is-finite" else t
    params = "\n".join(f"  p{i} = {t}[3] parameter({i})" for i in range(n))
    args = ", ".join(f"p{i}" for i in range(n))
    return f"HloModule m\nENTRY e {{\n{params}\n  ROOT r = {out}[3] {opcode}({args})\n}}\n"


@pytest.mark.parametrize("opcode", TYPED)
def test_verifier_and_interpreter_accept_the_tables_types(opcode):
    row = OPCODES[opcode]
    for kind, t in KIND_TYPES.items():
        module = parse(_module(opcode, t))
        x = np.array([0, 1, 2]).astype(module.entry.parameters[0].shape.dtype)
        args = [x] * row.arity
        if kind in row.types:
            verify(module)
            evaluate(module, *args)
        else:
            with pytest.raises(ShapeError, match=f"{opcode}: expects {row.types_text}"):
                verify(module)
            with pytest.raises(EvaluationError, match=f"{opcode} is not defined for {t}"):
                evaluate(module, *args)


def _frontend_primitives():
    from xlapy.frontend.primitives import basic
    return sorted([(name, p, 1) for name, p in basic.UNARY.items()] +
                  [(name, p, 2) for name, p in basic.BINARY.items()], key=lambda c: c[0])


@pytest.mark.parametrize("name,prim,n", _frontend_primitives())
def test_frontend_primitives_take_their_opcodes_types_eagerly_and_under_jit(name, prim, n):
    """Eager and jit accept the same element types, and what the primitive accepts is
    what the opcode it lowers to accepts (plus unsigned for sign: see the next test)."""
    accepted = {}
    for kind, t in KIND_TYPES.items():
        x = np.array([0, 1, 2]).astype(xp.hlo.primitive_type(t).np_dtype)
        outcome = []
        for f in (prim.bind, xp.jit(prim.bind)):
            try:
                f(*[x] * n)
                outcome.append(True)
            except ShapeError as e:
                assert name in str(e) and "element type" in str(e), e
                outcome.append(False)
        assert outcome[0] == outcome[1], f"{name} on {t}: eager {outcome[0]}, jit {outcome[1]}"
        accepted[kind] = outcome[0]
        if outcome[0] and not (name == "sign" and kind == "u"):
            text = xp.jit(prim.bind).lower(*[x] * n).as_text()
            opcodes = {i.opcode for i in parse(text).entry.instructions} - {"parameter"}
            (opcode,) = opcodes
    kinds = {k for k, ok in accepted.items() if ok}
    assert kinds == set(OPCODES[opcode].types) | ({"u"} if name == "sign" else set()), name


def test_abs_and_sign_on_unsigned_follow_xla_and_jax():
    jax = pytest.importorskip("jax")
    x = np.array([0, 3, 200], np.uint8)
    for f in (xp.lax.abs, xp.jit(xp.lax.abs)):
        with pytest.raises(ShapeError, match=r"abs: expects a signed integer or floating-point"):
            f(x)
    with pytest.raises(TypeError, match="abs does not accept dtype uint8"):
        jax.lax.abs(x)  # jax.lax refuses it too
    want = np.asarray(jax.lax.sign(x))
    for f in (xp.lax.sign, xp.jit(xp.lax.sign)):
        np.testing.assert_array_equal(f(x), want)
    text = xp.jit(xp.lax.sign).lower(x).as_text()
    assert "sign(" not in text and "compare(" in text  # HLO sign is not defined on u8
    import xlapy.numpy as xnp
    np.testing.assert_array_equal(xp.jit(xnp.abs)(x), x)  # NumPy's abs: identity on unsigned
