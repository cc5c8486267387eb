"""`python -m xlapy compile`: PTX and LLVM IR for the gpu, assembly, object code and LLVM IR
for the cpu, without running the module (and without a GPU); clear errors for bad
requests."""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

from xlapy.tools.main import main

CORPUS = pathlib.Path(__file__).parents[1] / "hlo"
SOFTMAX = str(CORPUS / "softmax.hlo")
PTXAS = "/usr/local/bin/ptxas"


def test_gpu_ptx(tmp_path):
    out = tmp_path / "softmax.ptx"
    assert main(["compile", SOFTMAX, "--backend", "gpu", "--gpu_arch", "sm_90", "--emit", "ptx",
                 "-o", str(out)]) == 0
    ptx = out.read_text()
    assert ".target sm_90" in ptx and ".visible .entry" in ptx
    if os.path.exists(PTXAS):
        r = subprocess.run([PTXAS, "-arch=sm_90", str(out), "-o", str(tmp_path / "s.cubin")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


def test_gpu_llvm_and_plan(capsys):
    assert main(["compile", SOFTMAX, "--backend", "gpu", "--emit", "llvm"]) == 0
    text = capsys.readouterr().out
    assert 'target triple = "nvptx64-nvidia-cuda"' in text and "ptx_kernel" in text
    assert main(["compile", SOFTMAX, "--backend", "gpu", "--emit", "plan"]) == 0
    plan = capsys.readouterr().out
    assert "loop kernel of" in plan and "grid (1, 1, 1)" in plan


@pytest.mark.parametrize("emit", ["asm", "llvm", "obj"])
def test_cpu(emit, tmp_path, capsys):
    out = tmp_path / f"softmax.{emit}"
    assert main(["compile", SOFTMAX, "--backend", "cpu", "--emit", emit, "-o", str(out)]) == 0
    data = out.read_bytes()
    if emit == "obj":
        assert data[:4] == b"\x7fELF"
    elif emit == "llvm":
        assert b"define" in data and b"xlapy_entry" in data
    else:
        assert b".globl\txlapy_entry" in data


@pytest.mark.parametrize("argv,message", [
    (["--backend", "gpu", "--emit", "asm"], "--emit asm is not available for the gpu"),
    (["--backend", "gpu", "--gpu_arch", "sm_70"], "sm_70 is not supported"),
    (["--backend", "cpu", "--gpu_arch", "sm_90"], "--gpu_arch applies to --backend gpu"),
    (["--backend", "cpu", "--emit", "obj"], "give -o FILE"),
])
def test_bad_requests(argv, message, capsys):
    assert main(["compile", SOFTMAX, *argv]) == 2
    assert message in capsys.readouterr().err


def test_unsupported_op_is_a_clear_error(capsys):
    assert main(["compile", str(CORPUS / "custom_call_cholesky.hlo"), "--backend", "gpu"]) == 2
    assert "unsupported custom-call target 'lapack_spotrf_ffi'" in capsys.readouterr().err


def test_stablehlo_input(capsys):
    assert main(["compile", str(CORPUS / "softmax.mlir"), "--backend", "gpu", "--emit",
                 "plan"]) == 0
    assert "loop kernel of" in capsys.readouterr().out
