"""`make bench`'s report writer (benchmarks/report.py) replaces only the part of
benchmarks.md between its bench:begin / bench:end markers: the hand-written sections of
docs/benchmarks.md survive a run byte for byte, a new directory (`run.py --out DIR`) gets a
file with the markers, and a file without them is refused before anything is written."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import shutil
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
DOC = ROOT / "docs" / "benchmarks.md"
HAND_SECTIONS = ("## Beside a busy neighbour", "## Big programs: constants (issue 17)",
                 "## Winograd convolutions", "## Convolution neighbours", "## Recurrent cells")


def _load(name, monkeypatch):
    # the scripts import their neighbours (harness.py, ...) and run.py adds benchmarks/ to
    # sys.path itself: the test's sys.path is restored afterwards
    monkeypatch.setattr(sys, "path", [str(BENCH)] + sys.path)
    spec = importlib.util.spec_from_file_location(f"bench_{name}_for_tests", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def report(monkeypatch):
    return _load("report", monkeypatch)


LIMITS = {"copy_bandwidth_GBps": 20.0, "gemm_GFLOPs": 300.0, "cpu": "Fake CPU (x86_64)",
          "cores": 2, "xlapy_start_up_ms": 400.0, "jax_start_up_ms": 300.0, "busy": False,
          "load_average": (1.0, 2.0)}
RESULTS = [
    {"name": "fake add 7M", "issue": "3", "times": {"numpy": 3e-3, "xlapy": 1e-3, "jax": 2e-3,
                                                    "torch": 2.5e-3},
     "cpu": {"numpy": 3e-3, "xlapy": 1e-3, "jax": 2e-3},
     "first_call": {"xlapy": 0.02, "jax": 0.05},
     "first_call_samples": {"xlapy": [0.03, 0.02], "jax": [0.06, 0.05]},
     "bandwidth_bound": 0.9e-3},
    {"name": "fake CNN step", "suite": "models", "times": {"xlapy": 0.01, "jax": 0.012},
     "first_call": {"xlapy": 0.5, "jax": 0.7}, "flops": 1e9, "check": "ok"},
    {"name": "fake 1M constants", "suite": "big_constants", "text_MB": 12.0,
     "times": {"xlapy": {"parse": 0.1, "compile": 0.1, "first run": 1e-3},
               "xla": {"parse": 0.6, "compile": 0.3, "first run": 7e-3}},
     "scan_values_per_s": 8e6, "scan_values_per_cpu_s": 9e6},
]


def _outside(report, text):
    """(text up to and including the begin line, text from the end line on)."""
    lines, b, e = report._markers(text, "test")
    return "".join(lines[:b + 1]), "".join(lines[e:])


def test_hand_written_sections_survive(report, tmp_path):
    original = DOC.read_bytes().decode("utf-8")
    head, tail = _outside(report, original)
    for section in HAND_SECTIONS:
        assert section in tail, f"docs/benchmarks.md lost {section!r} outside the markers"
    shutil.copy(DOC, tmp_path / "benchmarks.md")
    for _ in range(2):   # a second run finds the markers the first one kept
        report.write_reports(tmp_path, LIMITS, RESULTS, quick=True)
        text = (tmp_path / "benchmarks.md").read_bytes().decode("utf-8")
        assert _outside(report, text) == (head, tail)
        assert text.startswith(head) and text.endswith(tail)
        inside = text[len(head):len(text) - len(tail)]
        assert "| fake add 7M | 3 | 1.00 ms |" in inside
        assert "fake CNN step" in inside and "fake 1M constants" in inside
        assert "Fake CPU (x86_64)" in inside and "2026-11-22 18:00" not in inside
        # the run's own big-constants heading is not the hand-written section's
        assert "## Big programs: constants (issue 17)" not in inside
        assert inside.endswith("\n\n")    # a blank line before the end marker
        assert text.count("](benchmarks.svg)") == 1   # the chart once, inside the markers
    data = json.loads((tmp_path / "benchmarks.json").read_text())
    assert [r["name"] for r in data["results"]] == [r["name"] for r in RESULTS]
    svg = (tmp_path / "benchmarks.svg").read_text()
    assert svg.startswith("<svg") and "fake add 7M" in svg and "fake CNN" not in svg
    assert not list(tmp_path.glob("*.tmp"))


def test_crlf_and_odd_text_kept_byte_for_byte(report, tmp_path):
    before = "# Mine\r\n\r\nintro \u00e9\u2028same line\r\n" + report.BEGIN + "\r\nold\r\n"
    after = "<!-- bench:end -->  \r\n\r\n## Notes\r\nno final newline"
    (tmp_path / "benchmarks.md").write_bytes((before + after).encode("utf-8"))
    report.write_reports(tmp_path, LIMITS, RESULTS[:1], quick=False)
    data = (tmp_path / "benchmarks.md").read_bytes()
    assert data.startswith(before[:-len("old\r\n")].encode("utf-8"))
    assert data.endswith(after.encode("utf-8"))
    assert b"old\r\n" not in data and b"fake add 7M" in data


def test_new_directory_gets_markers(report, tmp_path):
    out = tmp_path / "fresh"
    out.mkdir()
    report.write_reports(out, LIMITS, RESULTS, quick=True)
    text = (out / "benchmarks.md").read_text()
    assert text.startswith("# Benchmarks\n\n" + report.BEGIN + "\n")
    assert text.endswith(report.END + "\n") and "fake add 7M" in text
    # a section added by hand below the markers survives the next run
    (out / "benchmarks.md").write_text(text + "\n## By hand\n\nkept\n")
    report.write_reports(out, LIMITS, RESULTS[:1], quick=True)
    again = (out / "benchmarks.md").read_text()
    assert again.endswith(report.END + "\n\n## By hand\n\nkept\n")
    assert "fake CNN step" not in again


@pytest.mark.parametrize("text, found", [
    ("# Benchmarks\n\nall by hand\n", "found neither"),
    ("<!-- bench:begin -->\nx\n<!-- bench:begin -->\n<!-- bench:end -->\n",
     "bench:begin on line 1, bench:begin on line 3, bench:end on line 4"),
    ("<!-- bench:end -->\nx\n<!-- bench:begin -->\n", "bench:begin on line 3, bench:end on line 1"),
    ("<!-- bench:begin -->\nno end\n", "bench:begin on line 1."),
])
def test_file_without_one_pair_of_markers_is_refused(report, tmp_path, text, found):
    md = tmp_path / "benchmarks.md"
    md.write_text(text)
    with pytest.raises(report.MarkerError, match="nothing was written") as e:
        report.write_reports(tmp_path, LIMITS, RESULTS, quick=True)
    assert str(md) in str(e.value) and found in str(e.value)
    assert md.read_text() == text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["benchmarks.md"]


def test_run_refuses_before_measuring(monkeypatch, tmp_path, capsys):
    """run.py checks --out's benchmarks.md before the benchmarks run (minutes), not after."""
    run = _load("run", monkeypatch)
    (tmp_path / "benchmarks.md").write_text("# Benchmarks\n\nby hand, no markers\n")
    monkeypatch.setattr(run, "_main", lambda args: pytest.fail("benchmarks ran"))
    with pytest.raises(SystemExit) as e:
        run.main(["--quick", "--out", str(tmp_path)])
    assert e.value.code == 2
    assert "bench:begin" in capsys.readouterr().err
    assert (tmp_path / "benchmarks.md").read_text() == "# Benchmarks\n\nby hand, no markers\n"
