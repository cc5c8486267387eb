"""Buffer assignment: liveness, reuse and in-place slices, checked on hand-made schedules
and on every computation of the HLO corpus after the cpu pipeline."""

from __future__ import annotations

import pathlib

import pytest

from xlapy.analysis.buffer_assignment import ALIGN, assign_buffers, live_ranges
from xlapy.backends.cpu.passes.inplace import inplace_operands
from xlapy.backends.cpu.passes.pipeline import run_cpu_pipeline
from xlapy.backends.cpu.emitters.program import ALIAS_OPS, tree_size
from xlapy.hlo import parse

CORPUS = pathlib.Path(__file__).resolve().parents[1] / "hlo"

CHAIN = """HloModule chain
ENTRY e {
  p = f32[1000] parameter(0)
  a = f32[1000] exponential(p)
  b = f32[1000] negate(a)
  c = f32[1000] sqrt(b)
  d = f32[1000] add(c, p)
  ROOT r = f32[1000] multiply(d, a)
}"""


def _assign(comp, may_share=None):
    schedule = comp.post_order()
    defines = lambda i: i.opcode not in ALIAS_OPS
    return schedule, assign_buffers(comp, schedule, defines, lambda i: tree_size(i.shape),
                                    may_share=may_share)


def check_invariant(schedule, ba):
    """Overlapping live ranges never share arena bytes, except an in-place result and the
    operand it took over, whose ranges meet exactly at that instruction."""
    allocs = list(ba.allocations.values())
    for a in allocs:
        assert a.offset % ALIGN == 0 and a.offset + a.size <= ba.size
    for i, a in enumerate(allocs):
        for b in allocs[i + 1:]:
            live_overlap = a.start <= b.end and b.start <= a.end
            mem_overlap = a.offset < b.offset + b.size and b.offset < a.offset + a.size
            if live_overlap and mem_overlap:
                first, second = (a, b) if a.start < b.start else (b, a)
                k = ba.shared.get(id(second.instr))
                assert k is not None, f"{a.instr.name} and {b.instr.name} overlap"
                assert second.instr.operands[k] is first.instr
                assert first.end == second.start


def test_liveness_and_reuse_without_in_place():
    comp = parse(CHAIN).entry
    schedule, ba = _assign(comp)
    assert [i.name for i in schedule] == ["p", "a", "b", "c", "d", "r"]
    ranges = live_ranges(comp, schedule, lambda i: i.opcode != "parameter")
    by_name = {i.name: ranges[id(i)] for i in schedule if id(i) in ranges}
    assert by_name["a"] == (1, 5)      # read last by r
    assert by_name["b"] == (2, 3)
    assert by_name["r"] == (5, 6)      # the root lives to the end of the program
    check_invariant(schedule, ba)
    assert not ba.shared
    # five 4000-byte buffers (4032 aligned), at most three live at once: d reuses b's
    # slice and r reuses c's
    assert ba.size == 3 * 4032
    slots = {i.name: ba.offset(i) for i in schedule if ba.has(i)}
    assert slots["d"] == slots["b"] and slots["r"] == slots["c"]


def test_in_place_takes_over_dying_operands():
    comp = parse(CHAIN).entry
    schedule, plain = _assign(comp)
    _, shared = _assign(comp, may_share=inplace_operands)
    check_invariant(schedule, shared)
    by_name = {i.name: i for i in schedule}
    # c = sqrt(b) overwrites b (b dies there), d = add(c, p) overwrites c; a lives on
    assert shared.shared[id(by_name["c"])] == 0
    assert shared.shared[id(by_name["d"])] == 0
    assert shared.offset(by_name["c"]) == shared.offset(by_name["b"])
    assert id(by_name["b"]) not in shared.shared          # a is still needed by r
    assert shared.size < plain.size


def test_no_in_place_across_shapes_or_element_sizes():
    text = """HloModule m
ENTRY e {
  p = f32[64] parameter(0)
  a = f32[64] exponential(p)
  c = f64[64] convert(a)
  ROOT r = f64[64] negate(c)
}"""
    comp = parse(text).entry
    schedule, ba = _assign(comp, may_share=inplace_operands)
    check_invariant(schedule, ba)
    by_name = {i.name: i for i in schedule}
    assert id(by_name["c"]) not in ba.shared    # 8-byte elements cannot overwrite 4-byte ones
    assert ba.shared.get(id(by_name["r"])) == 0


def test_fusion_reading_an_operand_through_a_broadcast_is_not_in_place():
    text = """HloModule m
f {
  x = f32[8,8] parameter(0)
  r = f32[8] parameter(1)
  t = f32[8,8] transpose(x), dimensions={1,0}
  b = f32[8,8] broadcast(r), dimensions={0}
  ROOT s = f32[8,8] add(t, b)
}
ENTRY e {
  p = f32[8,8] parameter(0)
  q = f32[8] parameter(1)
  ROOT y = f32[8,8] fusion(p, q), kind=kLoop, calls=f
}"""
    fusion = parse(text).entry.root
    assert inplace_operands(fusion) == []      # x is read transposed: not element i for i


CORPUS_FILES = sorted(CORPUS.glob("*.hlo"))


@pytest.mark.parametrize("path", CORPUS_FILES, ids=[p.stem for p in CORPUS_FILES])
def test_invariant_on_the_corpus_after_the_cpu_pipeline(path):
    module = run_cpu_pipeline(parse(path.read_text()))
    for comp in module.computations:
        schedule, ba = _assign(comp, may_share=inplace_operands)
        check_invariant(schedule, ba)
