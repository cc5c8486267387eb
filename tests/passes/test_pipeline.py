"""Pipeline and FixedPoint: order, fixed points, disabled passes, observers, verification
and the no-change check, logging."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from xlapy.hlo.ir import Instruction
from xlapy.hlo.shapes import Shape
from xlapy.passes.pipeline import FixedPoint, PassError, Pipeline
from xlapy.passes.rewrite import has_side_effect
from xlapy.passes.simplify import simplification_pipeline

TEXT = """
HloModule m

ENTRY e {
  x = f32[4] parameter(0)
  c = f32[] constant(0)
  b = f32[4] broadcast(c), dimensions={}
  a = f32[4] add(x, b)
  ROOT n = f32[4] negate(a)
}"""


class Record:
    """A pass that records that it ran and reports `changes` (a list popped per run)."""

    def __init__(self, name, log, changes=()):
        self.name, self.log, self.changes = name, log, list(changes)

    def run(self, module):
        self.log.append(self.name)
        return self.changes.pop(0) if self.changes else False


class AddsConstant:
    """Really changes the module: appends an unused constant each run, `times` times."""

    def __init__(self, times=1, name="adds-constant", report=True):
        self.name, self.times, self.report = name, times, report

    def run(self, module):
        if self.times == 0:
            return False
        self.times -= 1
        module.entry.add_instruction(Instruction("constant", Shape.array("f32", ()),
                                                 literal=np.float32(1)))
        return self.report


def test_passes_run_in_order(hlo):
    log = []
    p = Pipeline("p", [Record("a", log), Record("b", log, [True]), Record("c", log)],
                 disabled=[])
    assert p.run(hlo.module(TEXT))
    assert log == ["a", "b", "c"]


def test_pipeline_reports_no_change(hlo):
    log = []
    assert not Pipeline("p", [Record("a", log)], disabled=[]).run(hlo.module(TEXT))


def test_fixed_point_repeats_until_no_change(hlo):
    log = []
    fp = FixedPoint([Record("a", log, [True, False, False]), Record("b", log, [True, True])],
                    disabled=[])
    assert fp.run(hlo.module(TEXT))
    assert log == ["a", "b", "a", "b", "a", "b"]
    assert fp.iterations == 3


def test_fixed_point_gives_up(hlo, caplog):
    log = []
    fp = FixedPoint([Record("a", log, [True] * 10)], max_iterations=3, disabled=[])
    with caplog.at_level(logging.WARNING, logger="xlapy.passes"):
        assert fp.run(hlo.module(TEXT))
    assert log == ["a"] * 3
    assert "did not converge" in caplog.text


def test_disabled_by_name(hlo):
    log = []
    p = Pipeline("p", [Record("a", log), Record("b", log)], disabled=["b"])
    p.run(hlo.module(TEXT))
    assert log == ["a"]


def test_disabled_from_flags(hlo, monkeypatch):
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_disable_hlo_passes=b,inner")
    log = []
    inner = Pipeline("inner", [Record("c", log)])
    p = Pipeline("p", [Record("a", log), Record("b", log), inner])
    p.run(hlo.module(TEXT))
    assert log == ["a"]


def test_nested_pipeline_inherits_options(hlo):
    log, seen = [], []
    inner = FixedPoint([Record("c", log), Record("d", log)], name="inner")
    p = Pipeline("outer", [Record("a", log), inner], disabled=["d"],
                 observers=[lambda name, before, after, changed: seen.append(name)])
    p.run(hlo.module(TEXT))
    assert log == ["a", "c"]
    assert seen == ["a", "c"]


def test_observers_see_texts(hlo):
    calls = []
    p = Pipeline("p", [AddsConstant(), Record("noop", [])], disabled=[],
                 observers=[lambda *args: calls.append(args)])
    mod = hlo.module(TEXT)
    p.run(mod)
    (n1, b1, a1, c1), (n2, b2, a2, c2) = calls
    assert (n1, c1, n2, c2) == ("adds-constant", True, "noop", False)
    assert a1 != b1 and a1.count("constant(") == b1.count("constant(") + 1
    assert b2 == a2 == a1 == mod.to_string()


def test_verify_catches_a_pass_that_lies(hlo):
    p = Pipeline("p", [AddsConstant(report=False, name="liar")], verify=True, disabled=[])
    with pytest.raises(PassError, match="pass liar returned False"):
        p.run(hlo.module(TEXT))


def test_no_check_without_verify(hlo, no_pass_flags):
    p = Pipeline("p", [AddsConstant(report=False, name="liar")], disabled=[])
    assert not p.run(hlo.module(TEXT))


def test_verify_from_environment(hlo, monkeypatch):
    monkeypatch.setenv("XLAPY_VERIFY_PASSES", "1")
    p = Pipeline("p", [AddsConstant(report=False, name="liar")], disabled=[])
    with pytest.raises(PassError, match="liar"):
        p.run(hlo.module(TEXT))


class BreaksModule:
    name = "breaker"

    def run(self, module):
        root = module.entry.root
        root.shape = Shape.array("s32", (4,))
        return True


def test_verify_catches_a_broken_module(hlo):
    p = Pipeline("p", [BreaksModule()], verify=True, disabled=[])
    with pytest.raises(PassError, match="after pass breaker"):
        p.run(hlo.module(TEXT))


def test_logging(hlo, caplog):
    p = Pipeline("p", [AddsConstant(), Record("noop", [])], disabled=[])
    with caplog.at_level(logging.DEBUG, logger="xlapy.passes"):
        p.run(hlo.module(TEXT))
    assert "pass adds-constant: changed" in caplog.text
    assert "pass noop: no change" in caplog.text
    assert "pass adds-constant changed module m" in caplog.text


def test_simplification_pipeline(hlo):
    mod = hlo.module(TEXT)
    p = simplification_pipeline(verify=True, disabled=[])
    assert p.run(mod)
    assert [i.opcode for i in mod.entry.instructions] == ["parameter", "negate"]
    assert not p.run(mod)


def test_has_side_effect(hlo):
    mod = hlo.module("""
HloModule m

effect {
  p = f32[] parameter(0)
  ROOT c = f32[] custom-call(p), custom_call_target="print", custom_call_has_side_effect=true
}

pure {
  p = f32[] parameter(0)
  ROOT c = f32[] custom-call(p), custom_call_target="f"
}

ENTRY e {
  x = f32[] parameter(0)
  a = f32[] call(x), to_apply=effect
  b = f32[] call(x), to_apply=pure
  ROOT t = (f32[], f32[]) tuple(a, b)
}""")
    e = mod.entry
    assert has_side_effect(e.instruction("a"))
    assert not has_side_effect(e.instruction("b"))
    assert not has_side_effect(e.instruction("t"))
