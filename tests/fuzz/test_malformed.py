"""The malformed-input fuzzer's fixed slice (fuzzlib/malformed.py): mutated HLO and
StableHLO texts and hostile npz files end in xlapy's own error with a position, or are
accepted; and the findings it made, fixed."""

import pathlib

import numpy as np
import pytest

from fuzzlib import malformed, malformed_run

SOURCES = malformed_run.sources()
MLIR = malformed_run.stablehlo_sources()
# Mutants of the fixed slice whose finding is not fixed yet: seed -> the finding.
OPEN = {}


def test_fixed_slice_of_mutants(tmp_path):
    findings = {}
    counts = {"text": 0, "stablehlo": 0, "npz": 0}
    for seed in range(1000):
        kind, finding = malformed_run.check(seed, SOURCES, tmp_path, hang_seconds=30,
                                            mlir=MLIR)
        counts[kind] += 1
        if finding and seed not in OPEN:
            findings[seed] = finding
    assert counts["text"] > 400 and counts["stablehlo"] > 200 and counts["npz"] > 150, counts
    assert not findings, findings


def test_huge_parameter_number_is_an_error_not_a_hang():
    text = ("HloModule m\nENTRY e {\n  p = f32[2] parameter(9223372036854775808)\n"
            "  ROOT n = f32[2] negate(p)\n}\n")
    assert malformed.check_text(text) is None
    with pytest.raises(Exception, match=r"<hlo>:\d+:\d+: error: computation e lacks "
                                        r"parameter\(0\)"):
        from xlapy.hlo.parser import parse
        parse(text)


@pytest.mark.parametrize("data", [b"", b"PK\x03\x04garbage", b"not a zip"],
                         ids=["empty", "corrupt-zip", "not-zip"])
def test_unreadable_npz_is_run_hlos_error(tmp_path, data):
    text = "HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n"
    assert malformed.check_npz(text, data, tmp_path / "in.npz") is None
    from xlapy.tools import run_hlo
    (tmp_path / "x.npz").write_bytes(data)
    with pytest.raises(SystemExit, match="error: cannot read inputs"):
        run_hlo._load_inputs(str(tmp_path / "x.npz"))


def test_mutations_change_the_text():
    rng = np.random.default_rng(0)
    text = SOURCES[0]
    assert sum(malformed.mutate(text, rng) != text for _ in range(20)) >= 15
    assert pathlib.Path(malformed_run.CORPUS).is_dir()
