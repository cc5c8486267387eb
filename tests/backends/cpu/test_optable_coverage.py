"""The cpu op table covers the opcode table: every opcode of xlapy.hlo.opcodes.OPCODES is
tested by a row of optable.ELEMENTWISE, by the test file optable.OTHER_OPS names, by a
dedicated test (optable.ELSEWHERE) or is listed, with the reason, as unsupported on cpu
(optable.UNSUPPORTED). Adding an opcode without a cpu test makes this fail.
"""

from __future__ import annotations

import pathlib
import re

from xlapy.hlo.opcodes import OPCODES

HERE = pathlib.Path(__file__).resolve().parent


import xlapy_tests_cpu_optable as O  # noqa: E402  (registered by conftest.py)
_GROUPS = {"ELEMENTWISE": O.ELEMENTWISE, "OTHER_OPS": O.OTHER_OPS, "ELSEWHERE": O.ELSEWHERE,
           "UNSUPPORTED": O.UNSUPPORTED}


def test_every_opcode_is_covered_once():
    missing, twice = [], []
    for op in OPCODES:
        where = [name for name, group in _GROUPS.items() if op in group]
        if not where:
            missing.append(op)
        elif len(where) > 1:
            twice.append(f"{op} ({', '.join(where)})")
    assert not missing, ("opcodes with no cpu test: add a row to tests/backends/cpu/optable.py "
                         f"(ELEMENTWISE or OTHER_OPS), or list them in ELSEWHERE/UNSUPPORTED "
                         f"with the reason: {missing}")
    assert not twice, f"opcodes listed in more than one group of optable.py: {twice}"


def test_no_unknown_opcodes_or_types():
    for name, group in _GROUPS.items():
        unknown = sorted(set(group) - set(OPCODES))
        assert not unknown, f"optable.{name} names opcodes the opcode table lacks: {unknown}"
    for row in O.ELEMENTWISE.values():
        assert row.types and set(row.types) <= set(O.TYPES), row
        assert row.arity == OPCODES[row.opcode].arity, row
        assert not OPCODES[row.opcode].float_only or set(row.types) <= set(O.FLOATS), row


def test_other_ops_are_used_by_their_test_file():
    """The file named for an opcode exists and writes that opcode in its HLO."""
    texts = {}
    for op, (file, what) in O.OTHER_OPS.items():
        assert what, op
        path = HERE / file
        assert path.exists(), f"{op}: {file} does not exist"
        text = texts.setdefault(file, path.read_text())
        assert re.search(rf"(?<![\w-]){re.escape(op)}\(", text), \
            f"{op}: {file} has no '{op}(' in its HLO"


def test_elsewhere_files_exist_and_reasons_are_given():
    for op, reason in O.ELSEWHERE.items():
        file = reason.split()[0]
        assert (HERE / file).exists(), f"{op}: {file} does not exist"
    for op, reason in O.UNSUPPORTED.items():
        assert len(reason) > 20, f"{op}: give the reason it is not supported"


def test_every_elemental_rule_and_custom_emitter_is_in_the_table():
    """The other direction: whatever the cpu backend lowers has a test here or elsewhere."""
    from xlapy.backends.cpu.emitters.registry import load_all
    load_all()  # (imports every emitter)
    from xlapy.backends.cpu.emitters.registry import CUSTOM_EMITTERS
    from xlapy.backends.llvm.elemental import ELEMENTAL_RULES
    covered = set().union(*_GROUPS.values())
    assert not set(ELEMENTAL_RULES) - covered, sorted(set(ELEMENTAL_RULES) - covered)
    assert not set(CUSTOM_EMITTERS) - covered, sorted(set(CUSTOM_EMITTERS) - covered)
