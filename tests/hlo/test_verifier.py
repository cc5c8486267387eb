"""The verifier: valid modules pass (including every module of the tests/hlo corpus), and
each kind of violation is reported as a VerificationError that quotes the instruction with
its line:column and names its computation. Malformed modules never crash it."""

from __future__ import annotations

import random
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from xlapy.errors import ShapeError, VerificationError, XlapyError
from xlapy.hlo import F32, S32, Shape, parse, parse_file
from xlapy.hlo.attributes import Raw, SliceSpec, Window
from xlapy.hlo.ir import Computation, Instruction, Module
from xlapy.hlo.verifier import verify

CORPUS = sorted(Path(__file__).parent.glob("*.hlo"))

TEXT = """HloModule m

add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY main {
  a = f32[4,3]{1,0} parameter(0)
  b = f32[4,3]{1,0} parameter(1)
  zero = f32[] constant(0)
  sum = f32[4,3]{1,0} add(a, b)
  ROOT r = f32[4]{0} reduce(sum, zero), dimensions={1}, to_apply=add_f32
}
"""

LOOP = """HloModule loop

cond {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[2] get-tuple-element(p), index=1
  w = f32[2] add(v, v)
  ROOT t = (s32[], f32[2]) tuple(j, w)
}

ENTRY main {
  x = f32[2] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[2]) tuple(zero, x)
  ROOT loop = (s32[], f32[2]) while(init), condition=cond, body=body
}
"""


def mod(text=TEXT) -> Module:
    return parse(text)


def find(m: Module, name: str) -> Instruction:
    for c in m.computations:
        for i in c.instructions:
            if i.name == name:
                return i
    raise KeyError(name)


def fails(m: Module, pattern: str, cls=VerificationError) -> str:
    with pytest.raises(cls) as info:
        verify(m)
    message = str(info.value)
    assert re.search(pattern, message), f"{message!r} does not match {pattern!r}"
    return message


def test_valid_modules_verify():
    verify(mod())
    verify(mod(LOOP))


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_corpus_module_verifies(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = parse_file(path)
    verify(m)


def test_message_quotes_instruction_position_and_computation():
    text = TEXT.replace("ROOT r = f32[4]{0} reduce", "ROOT r = f32[3]{0} reduce")
    msg = fails(mod(text), r"declared shape f32\[3\] does not match the inferred shape f32\[4\]",
                ShapeError)
    assert msg.startswith("line 14:3: in computation main: ")
    assert "%r = f32[3]{0} reduce(%sum, %zero), dimensions={1}, to_apply=%add_f32" in msg


def test_missing_entry():
    m = mod()
    m.entry = None
    fails(m, "has no entry computation")
    m = mod()
    m.entry = Computation("elsewhere")
    fails(m, "entry computation elsewhere is not among")


def test_operand_count():
    fails(mod(TEXT.replace("add(a, b)", "add(a, b, a)")), r"add: expects 2 operand\(s\), got 3")


def test_missing_required_attributes():
    fails(mod(TEXT.replace(", dimensions={1}", "")), "missing required attribute dimensions=")
    fails(mod(TEXT.replace(", to_apply=add_f32", "")), "missing required attribute to_apply=")
    text = LOOP.replace("i = s32[] get-tuple-element(p), index=0\n  n", "i = s32[] "
                        "get-tuple-element(p)\n  n")
    fails(mod(text), "in computation cond: get-tuple-element: missing required attribute index=")


def test_badly_typed_attribute():
    m = mod()
    find(m, "r").attrs["dimensions"] = Raw("{1}")
    fails(m, "attribute dimensions must be a list of integers")


def test_shape_mismatch():
    m = mod()
    find(m, "sum").shape = Shape.array(S32, (4, 3))
    fails(m, r"in computation main: .*s32\[4,3\] does not match the inferred shape f32\[4,3\]",
          ShapeError)


def test_layout_must_be_a_permutation():
    m = mod()
    find(m, "sum").shape = Shape.array(F32, (4, 3), layout=(0, 0))
    fails(m, r"layout \{0,0\} of f32\[4,3\]\{0,0\} is not a permutation")
    m = mod()
    find(m, "a").shape = Shape.tuple([Shape.array(F32, (4,), layout=(1, 0))])
    fails(m, "is not a permutation of its 1 dimensions")
    m = mod()
    find(m, "a").shape = Shape(F32, (4, -3))
    fails(m, "negative or non-integer dimension size")


def test_called_computation_signature():
    reducer = TEXT.replace("x = f32[] parameter(0)", "x = f32[2] parameter(0)").replace(
        "ROOT s = f32[] add(x, y)", "ROOT s = f32[] add(y, y)")
    fails(mod(reducer), r"to_apply computation add_f32: parameter 0 is f32\[2\] but result 0")
    fails(mod(LOOP.replace("ROOT lt = pred[] compare(i, n), direction=LT", "ROOT lt = s32[] "
                           "add(i, n)")), r"condition computation cond must return pred\[\]")
    fails(mod(LOOP.replace("ROOT t = (s32[], f32[2]) tuple(j, w)", "ROOT t = (s32[], f32[2], "
                           "s32[]) tuple(j, w, j)")), "the body's result .* differs from the loop")


def test_parameter_numbering():
    m = mod()
    find(m, "b").parameter_number = 2
    fails(m, r"parameters\[1\] has parameter number 2; parameters must be numbered 0..n-1")
    m = mod()
    m.entry.parameters.append(None)
    fails(m, r"parameter\(2\) is missing")
    m = mod()
    m.entry.parameters.pop()
    fails(m, "not in the computation's parameter list")


def test_users_bookkeeping():
    m = mod()
    a, s = find(m, "a"), find(m, "sum")
    a.users.remove(s)
    fails(m, r"operand 0 \(a\) does not list this instruction among its users")
    m = mod()
    a, r = find(m, "a"), find(m, "r")
    a.users.append(r)
    fails(m, "lists r as a user, but it is not one of r's operands")
    m = mod()
    find(m, "a").users.append(find(m, "sum"))
    fails(m, "user sum is listed twice")


def test_operand_from_another_computation():
    m = mod()
    x = find(m, "x")
    find(m, "sum").set_operand(0, x)  # seen first from add_f32's side: x has a foreign user
    fails(m, r"in computation add_f32: user 'sum' is not an instruction of this computation")
    m = mod()
    stray = Instruction("constant", Shape.array(F32, (4, 3)), literal=np.zeros((4, 3), np.float32),
                        name="stray")
    find(m, "sum").set_operand(1, stray)
    fails(m, r"operand 1 \(stray\) is not an instruction of this computation")


def test_duplicate_names_and_listing():
    m = mod()
    find(m, "sum").name = "a"
    fails(m, "instruction name a is used twice in the computation")
    m = mod()
    m.entry.instructions.append(find(m, "sum"))
    fails(m, "the instruction is listed twice")
    m = mod()
    m.computations[0].name = "main"
    fails(m, "computation name main is used twice")


def test_cycle():
    m = mod()
    a, s = find(m, "a"), find(m, "sum")
    neg = Instruction("negate", a.shape, [s], name="neg")
    m.entry.add_instruction(neg)
    s.set_operand(0, neg)
    fails(m, r"depends on itself \(a cycle through")


def test_root_and_parent():
    m = mod()
    m.entry.root = find(m, "x")
    fails(m, "root is missing or is not one of the computation's instructions")
    m = mod()
    find(m, "sum").parent = m.computations[0]
    fails(m, "the instruction's parent is add_f32, not this computation")


def test_computation_order_and_membership():
    m = mod()
    m.computations.reverse()
    fails(m, "calls computation add_f32, which must be listed before its caller")
    m = mod()
    m.computations.remove(m.computations[0])
    fails(m, "calls computation 'add_f32', which is not in the module")
    m = mod()
    m.computations[0].module = None
    fails(m, "computation add_f32 does not belong to it")


def test_instruction_level_checks():
    m = mod()
    find(m, "sum").opcode = "frobnicate"
    fails(m, "unknown opcode 'frobnicate'")
    m = mod()
    find(m, "zero").literal = np.zeros(3, np.float32)
    fails(m, r"constant: the literal is a float32\[3\] array but the shape is f32\[\]", ShapeError)
    m = mod()
    find(m, "sum").shape = "f32[4,3]"
    fails(m, "is not a Shape")


def test_verify_rejects_non_module():
    with pytest.raises(VerificationError, match="takes a Module"):
        verify("HloModule m")


# ---- robustness: random damage never produces a non-xlapy exception -----------------------

_JUNK = [None, 0, -1, 7, "x", Raw("{...}"), (), (0, 5), (-3,), [None], True, 1.5,
         SliceSpec((0,), (9,), (1,)), Window.make((9,)), Computation("ghost")]


def _damage(m: Module, rng: random.Random) -> None:
    instrs = [i for c in m.computations for i in c.instructions]
    target = rng.choice(instrs)
    kind = rng.randrange(8)
    if kind == 0 and target.attrs:
        target.attrs[rng.choice(list(target.attrs))] = rng.choice(_JUNK)
    elif kind == 1:
        target.attrs[rng.choice(["dimensions", "index", "to_apply", "window", "slice",
                                 "direction", "calls", "kind"])] = rng.choice(_JUNK)
    elif kind == 2 and target.operands:
        target.operands.pop(rng.randrange(len(target.operands)))
    elif kind == 3:
        target.operands.append(rng.choice(instrs))
    elif kind == 4:
        dims = tuple(rng.randrange(4) for _ in range(rng.randrange(3)))
        target.shape = rng.choice([Shape.array(rng.choice([F32, S32]), dims),
                                   Shape.tuple([Shape.array(F32, dims)]), None])
    elif kind == 5:
        target.attrs.clear()
    elif kind == 6:
        target.literal = rng.choice([None, (1, 2), np.zeros(2), "nan"])
    else:
        target.parameter_number = rng.choice([None, -1, 5, "0"])


@pytest.mark.parametrize("seed", range(3))
def test_random_damage_only_raises_xlapy_errors(seed):
    rng = random.Random(seed)
    paths = CORPUS or []
    texts = [TEXT, LOOP] + [p.read_text() for p in rng.sample(paths, min(6, len(paths)))]
    raised = 0
    for text in texts:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            base = parse(text)
        clean = base.to_string()
        for _ in range(25):
            m = parse(clean)
            for _ in range(rng.randrange(1, 3)):
                _damage(m, rng)
            try:
                verify(m)
            except XlapyError:
                raised += 1
    assert raised > 0
