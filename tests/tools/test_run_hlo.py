"""`python -m xlapy run-hlo`: runs modules, compares backends, rejects bad input cleanly."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

from xlapy.tools.main import main

CORPUS = pathlib.Path(__file__).parents[1] / "hlo"


def test_runs_corpus_module_and_writes_outputs(tmp_path, capsys):
    out = tmp_path / "out.npz"
    rc = main(["run-hlo", str(CORPUS / "softmax.hlo"), "--input", str(CORPUS / "softmax.npz"),
               "--output", str(out), "--backend", "interpreter"])
    assert rc == 0
    got = np.load(out)
    want = np.load(CORPUS / "softmax.out.npz")
    assert sorted(got.files) == sorted(want.files)
    for k in want.files:
        np.testing.assert_allclose(got[k], want[k], rtol=2e-4, atol=1e-6)
    assert "output 0:" in capsys.readouterr().out


def test_compare_reports_per_output_error(capsys):
    rc = main(["run-hlo", str(CORPUS / "int32_ops.hlo"), "--random-inputs",
               "--backend", "cpu", "--compare", "interpreter", "--quiet"])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "compare cpu against interpreter:" in text
    assert "max_abs_err=0 " in text and "MISMATCH" not in text


def test_compare_mismatch_exits_nonzero(capsys):
    # A tolerance of -1 makes every float comparison fail: the exit status must say so.
    rc = main(["run-hlo", str(CORPUS / "softmax.hlo"), "--random-inputs", "--backend", "cpu",
               "--compare", "interpreter", "--rtol", "0", "--atol", "-1", "--quiet"])
    assert rc == 1
    assert "MISMATCH" in capsys.readouterr().out


def _err(argv, capsys):
    rc = main(argv)
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1, err
    return err


def test_malformed_file_one_line_with_position(tmp_path, capsys):
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\nENTRY e {\n  ROOT p = f32[2] add(\n}\n")
    err = _err(["run-hlo", str(bad), "--random-inputs"], capsys)
    assert f"{bad}:4:1: error: expected an operand name" in err


def test_wrong_input_count(capsys):
    err = _err(["run-hlo", str(CORPUS / "attention.hlo"), "--input", str(CORPUS / "softmax.npz")],
               capsys)
    assert "has 1 arrays" in err and "take 4" in err


def test_wrong_input_shape_and_dtype(tmp_path, capsys):
    path = tmp_path / "in.npz"
    np.savez(path, np.zeros((4, 8), np.float32))
    err = _err(["run-hlo", str(CORPUS / "softmax.hlo"), "--input", str(path)], capsys)
    assert "expected shape [4, 7], got [4, 8]" in err
    np.savez(path, np.zeros((4, 7), np.float64))
    err = _err(["run-hlo", str(CORPUS / "softmax.hlo"), "--input", str(path)], capsys)
    assert "expected dtype f32" in err


def test_unknown_backend_and_unsupported_custom_call(capsys):
    err = _err(["run-hlo", str(CORPUS / "softmax.hlo"), "--random-inputs", "--backend", "tpu"],
               capsys)
    assert "unknown backend 'tpu'" in err
    err = _err(["run-hlo", str(CORPUS / "custom_call_top_k.opt.hlo"), "--random-inputs",
                "--backend", "interpreter"], capsys)
    assert "unsupported custom-call target 'TopK'" in err


def test_missing_file_and_missing_inputs(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["run-hlo", str(tmp_path / "nope.hlo"), "--random-inputs"])
    assert "cannot read" in str(info.value)
    with pytest.raises(SystemExit) as info:
        main(["run-hlo", str(CORPUS / "softmax.hlo")])
    assert "--random-inputs" in str(info.value)


def test_module_entry_point_prints_no_traceback(tmp_path):
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\nENTRY e {\n  ROOT p = f32[2] frob()\n}\n")
    proc = subprocess.run([sys.executable, "-m", "xlapy", "run-hlo", str(bad), "--random-inputs"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "unknown opcode 'frob'" in proc.stderr
