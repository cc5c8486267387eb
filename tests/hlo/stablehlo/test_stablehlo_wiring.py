"""StableHLO where users meet it: xlapy.hlo.parse_module / parse_module_file (HLO or MLIR
by extension or content), `python -m xlapy run-hlo FILE.mlir` and `opt`, and
`xp.jit(f).lower(...).as_text(dialect="stablehlo")`, whose text XLA runs."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
import xlapy_tests_stablehlo as util
from xlapy.backends.base import flatten
from xlapy.backends.interpreter import evaluate
from xlapy.errors import XlapyError
from xlapy.hlo import (is_stablehlo_text, parse_module, parse_module_file, parse_stablehlo,
                       to_stablehlo)
from xlapy.tools.main import main

SOFTMAX = util.CORPUS / "softmax.mlir"


def test_parse_module_tells_hlo_from_mlir():
    hlo = (util.CORPUS / "softmax.hlo").read_text()
    mlir = SOFTMAX.read_text()
    assert not is_stablehlo_text(hlo) and is_stablehlo_text(mlir)
    assert is_stablehlo_text("// a comment\n#loc = loc(unknown)\nmodule {}")
    assert is_stablehlo_text('"builtin.module"() ({}) : () -> ()')
    assert parse_module(hlo).entry.root.shape.compatible(parse_module(mlir).entry.root.shape)


def test_parse_module_file_by_extension_or_content(tmp_path):
    as_txt = tmp_path / "softmax.txt"
    shutil.copy(SOFTMAX, as_txt)
    a, b = parse_module_file(SOFTMAX), parse_module_file(as_txt)
    assert to_stablehlo(a) == to_stablehlo(b)
    assert parse_module_file(util.CORPUS / "softmax.hlo").name == "jit_softmax"


def test_run_hlo_reads_mlir(tmp_path, capsys):
    out = tmp_path / "out.npz"
    rc = main(["run-hlo", str(SOFTMAX), "--input", str(util.CORPUS / "softmax.npz"),
               "--output", str(out), "--backend", "interpreter"])
    assert rc == 0
    got, want = np.load(out), np.load(util.CORPUS / "softmax.out.npz")
    for k in want.files:
        np.testing.assert_allclose(got[k], want[k], rtol=2e-4, atol=1e-6)
    assert "output 0:" in capsys.readouterr().out


def test_run_hlo_reports_mlir_errors_in_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                   "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")
    rc = main(["run-hlo", str(bad), "--random-inputs"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert f"{bad}:2:26: error: use of undefined value %b" in err, err


def test_opt_reads_mlir(capsys):
    rc = main(["opt", str(util.CORPUS / "cond_switch.mlir"), "--passes", "dce,cse"])
    assert rc == 0
    assert capsys.readouterr().out.startswith("HloModule jit_cond_switch")


def test_opt_converts_hlo_to_stablehlo(capsys):
    hlo = util.CORPUS / "cond_switch.hlo"
    rc = main(["opt", str(hlo), "--passes", "", "--format", "stablehlo"])
    assert rc == 0
    text = capsys.readouterr().out
    assert text.startswith("module @jit_cond_switch")
    assert to_stablehlo(parse_stablehlo(text)) == to_stablehlo(parse_stablehlo(
        to_stablehlo(parse_module_file(hlo))))


def _program(x, w):
    h = xnp.tanh(x @ w)
    return xnp.sum(h * h, axis=1), xnp.argmax(h, axis=1), xnp.where(h > 0, h, 0.0)


def test_lowered_as_text_dialects():
    x = np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)
    w = np.random.default_rng(4).standard_normal((5, 3)).astype(np.float32)
    lowered = xp.jit(_program).lower(x, w)
    assert lowered.as_text().startswith("HloModule")  # xlapy's default stays HLO
    text = lowered.as_text(dialect="stablehlo")
    assert text.startswith("module @") and "loc(" not in text
    assert "loc(" in lowered.as_text(dialect="stablehlo", debug_info=True)
    want = [np.asarray(v) for v in xp.jit(_program)(x, w)]
    got = flatten(evaluate(parse_stablehlo(text), x, w))
    for g, v in zip(got, want):
        np.testing.assert_allclose(g, v, rtol=1e-6, atol=1e-6)
    xla = util.run_with_xla(text, [x, w])  # JAX's XLA runs xlapy's StableHLO
    for g, v in zip(xla, want):
        np.testing.assert_allclose(g, v, rtol=1e-5, atol=1e-6)
    with pytest.raises(XlapyError, match="unknown dialect"):
        lowered.as_text(dialect="mhlo")
