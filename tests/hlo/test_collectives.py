"""The collective opcodes: text round trip (both replica-group forms), shape rules and
verifier errors, and the multi-replica reference interpreter against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from xlapy.errors import EvaluationError, ParseError, ShapeError, VerificationError
from xlapy.hlo import parse
from xlapy.hlo.attributes import ReplicaGroups
from xlapy.hlo.evaluator import evaluate, run_replicated
from xlapy.hlo.verifier import verify

ADD = """
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
"""


def _module(body: str, param: str = "f32[4]", result: str = "f32[4]", header="") -> str:
    return (f"HloModule m{header}\n{ADD}\nENTRY %e (x: {param}) -> {result} {{\n"
            f"  %x = {param} parameter(0)\n{body}\n}}\n")


def _run(text: str, per_device: list, replicas: int, partitions: int = 1):
    mod = parse(text)
    verify(mod)
    return run_replicated(mod, [[np.asarray(a)] for a in per_device], replicas, partitions,
                          timeout=20)


# ---- text ---------------------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "ROOT %r = f32[4] all-reduce(%x), replica_groups={{0,1},{2,3}}, to_apply=%add",
    "ROOT %r = f32[4] all-reduce(%x), channel_id=1, replica_groups=[2,4]<=[8], "
    "use_global_device_ids=true, to_apply=%add",
    "ROOT %r = f32[4] all-reduce(%x), replica_groups=[2,4]<=[4,2]T(1,0), to_apply=%add",
    "ROOT %r = f32[4] all-reduce(%x), replica_groups={}, to_apply=%add",
    "ROOT %r = f32[8] all-gather(%x), replica_groups={{0,1}}, dimensions={0}",
    "ROOT %r = f32[2] reduce-scatter(%x), replica_groups={{0,1}}, dimensions={0}, "
    "to_apply=%add",
    "ROOT %r = f32[4] all-to-all(%x), replica_groups={{0,1}}, dimensions={0}",
    "ROOT %r = f32[4] collective-permute(%x), source_target_pairs={{0,1},{1,0}}",
])
def test_round_trip(line):
    text = _module("  " + line, result=line.split()[3])
    mod = parse(text)
    verify(mod)
    printed = mod.to_string() if hasattr(mod, "to_string") else str(mod)
    again = parse(printed)
    assert str(again) == printed
    assert line.split(", ", 1)[1].split(", ")[0] in printed


def test_verifier_checks_ids_against_the_module():
    line = "  ROOT %r = f32[4] all-reduce(%x), replica_groups={{0,1},{2,3}}, to_apply=%add"
    verify(parse(_module(line, header=", replica_count=4")))
    with pytest.raises(VerificationError, match=r"replica_groups names id\(s\) \[2, 3\], but "
                       "the module has 2 replicas"):
        verify(parse(_module(line, header=", replica_count=2")))
    perm = "  ROOT %r = f32[4] collective-permute(%x), channel_id=2, source_target_pairs={{0,3}}"
    with pytest.raises(VerificationError, match="the module has 2 partitions"):
        verify(parse(_module(perm, header=", replica_count=4, num_partitions=2")))


def test_iota_groups():
    assert ReplicaGroups.from_iota((2, 4), (8,)).groups == ((0, 1, 2, 3), (4, 5, 6, 7))
    rg = ReplicaGroups.from_iota((2, 4), (4, 2), (1, 0))
    assert rg.groups == ((0, 2, 4, 6), (1, 3, 5, 7))
    assert str(rg) == "[2,4]<=[4,2]T(1,0)"
    with pytest.raises(ParseError, match="3x4 groups but 8 ids"):
        parse(_module("  ROOT %r = f32[4] all-reduce(%x), replica_groups=[3,4]<=[8], "
                      "to_apply=%add"))


@pytest.mark.parametrize("line,message", [
    ("ROOT %r = f32[4] all-reduce(%x), replica_groups={{0,1},{1,2}}, to_apply=%add",
     "id 1 is in more than one group"),
    ("ROOT %r = f32[4] all-reduce(%x), use_global_device_ids=true, to_apply=%add",
     "needs a channel_id"),
    ("ROOT %r = f32[6] all-gather(%x), replica_groups={{0,1}}, dimensions={0}",
     "which is 2 times its size"),
    ("ROOT %r = f32[8] all-gather(%x), replica_groups={{0,1},{2}}, dimensions={0}",
     "the same size"),
    ("ROOT %r = f32[4] all-to-all(%x), replica_groups={{0,1,2}}, dimensions={0}",
     "not divisible by the group size 3"),
    ("ROOT %r = f32[4] collective-permute(%x), source_target_pairs={{0,1},{2,1}}",
     "target 1 appears twice"),
    ("ROOT %r = f32[3] reduce-scatter(%x), replica_groups={{0,1}}, dimensions={0}, "
     "to_apply=%add", "which is 2 times its size"),
])
def test_shape_errors(line, message):
    with pytest.raises(ShapeError, match=message):
        verify(parse(_module("  " + line, result=line.split()[3])))


# ---- the interpreter -------------------------------------------------------------------------

X = [np.arange(4, dtype=np.float32) + 10 * r for r in range(4)]


def test_all_reduce_groups():
    out = _run(_module("  ROOT %r = f32[4] all-reduce(%x), replica_groups={{0,2},{1,3}}, "
                       "to_apply=%add"), X, 4)
    np.testing.assert_array_equal(out[0], X[0] + X[2])
    np.testing.assert_array_equal(out[3], X[1] + X[3])
    out = _run(_module("  ROOT %r = f32[4] all-reduce(%x), replica_groups={}, "
                       "to_apply=%add"), X, 4)
    for o in out:
        np.testing.assert_array_equal(o, sum(X))


def test_all_gather_reduce_scatter_all_to_all():
    out = _run(_module("  ROOT %r = f32[8] all-gather(%x), replica_groups={{1,0},{2,3}}, "
                       "dimensions={0}", result="f32[8]"), X, 4)
    np.testing.assert_array_equal(out[0], np.concatenate([X[1], X[0]]))
    np.testing.assert_array_equal(out[2], np.concatenate([X[2], X[3]]))
    out = _run(_module("  ROOT %r = f32[1] reduce-scatter(%x), replica_groups={}, "
                       "dimensions={0}, to_apply=%add", result="f32[1]"), X, 4)
    for r in range(4):
        np.testing.assert_array_equal(out[r], sum(X)[r:r + 1])
    out = _run(_module("  ROOT %r = f32[4] all-to-all(%x), replica_groups={{0,1,2,3}}, "
                       "dimensions={0}"), X, 4)
    for r in range(4):  # replica r gets element r of every replica's operand
        np.testing.assert_array_equal(out[r], [X[s][r] for s in range(4)])


def test_permute_and_ids():
    body = ("  %p = f32[4] collective-permute(%x), source_target_pairs={{0,1},{1,2},{2,0}}\n"
            "  %i = u32[] replica-id()\n  %f = f32[] convert(%i)\n"
            "  %b = f32[4] broadcast(%f), dimensions={}\n  ROOT %r = f32[4] add(%p, %b)")
    out = _run(_module(body), X, 4)
    np.testing.assert_array_equal(out[1], X[0] + 1)
    np.testing.assert_array_equal(out[0], X[2] + 0)
    np.testing.assert_array_equal(out[3], np.zeros(4) + 3)  # no source: zeros


def test_partitions_and_global_ids():
    # 2 replicas x 2 partitions: device d = replica * 2 + partition
    text = _module("  ROOT %r = f32[4] all-reduce(%x), channel_id=1, replica_groups={{0,3},"
                   "{1,2}}, use_global_device_ids=true, to_apply=%add")
    out = _run(text, X, 2, 2)
    np.testing.assert_array_equal(out[0], X[0] + X[3])
    np.testing.assert_array_equal(out[2], X[1] + X[2])
    # cross-replica (no channel): each partition meets on its own
    out = _run(_module("  ROOT %r = f32[4] all-reduce(%x), replica_groups={}, "
                       "to_apply=%add"), X, 2, 2)
    np.testing.assert_array_equal(out[1], X[1] + X[3])
    mod = parse("HloModule m\nENTRY %e () -> u32[] {\n  ROOT %i = u32[] partition-id()\n}\n")
    assert [int(v) for v in run_replicated(mod, [[]] * 4, 2, 2)] == [0, 1, 0, 1]


def test_single_device_is_identity():
    mod = parse(_module("  ROOT %r = f32[4] all-reduce(%x), replica_groups={}, "
                        "to_apply=%add"))
    np.testing.assert_array_equal(evaluate(mod, X[1]), X[1])


def test_faults_are_named():
    text = _module("  ROOT %r = f32[4] all-reduce(%x), replica_groups={}, to_apply=%add")
    with pytest.raises(EvaluationError, match=r"3 argument lists for 4 replica"):
        _run(text, X[:3], 4)
    # one device whose argument has another shape: the mismatch is named
    with pytest.raises(EvaluationError, match=r"device 2 is at all-reduce r \(\(5,\)\)"):
        _run(text, X[:2] + [np.zeros(5, np.float32)] + X[3:], 4)
    with pytest.raises(EvaluationError, match=r"replica id\(s\) \[4, 5\]"):
        _run(_module("  ROOT %r = f32[4] all-reduce(%x), replica_groups={{0,1,2,3},{4,5}}, "
                     "to_apply=%add"), X, 4)
