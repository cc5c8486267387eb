"""XLA's dump flags (XLAPY_FLAGS) and `python -m xlapy opt`."""

import pathlib
import shutil
import subprocess
import xml.dom.minidom

import numpy as np
import pytest

from xlapy.backends.base import get_platform
from xlapy.hlo import parse_file
from xlapy.tools.main import main

CORPUS = pathlib.Path(__file__).parents[1] / "hlo"


def _compile(monkeypatch, tmp_path, flags, name="softmax.hlo"):
    monkeypatch.setenv("XLAPY_FLAGS", flags)
    module = parse_file(CORPUS / name)
    exe = get_platform("cpu").compiler.compile(module)
    exe.run(*[np.ones(p.shape.dims, p.shape.dtype) for p in module.entry.parameters])
    return sorted(p.name for p in tmp_path.iterdir())


def test_dump_to_writes_text_before_and_after_and_llvm(monkeypatch, tmp_path):
    files = _compile(monkeypatch, tmp_path, f"--xla_dump_to={tmp_path}")
    assert any(f.endswith(".before_optimizations.txt") for f in files)
    after = [f for f in files if f.endswith(".cpu_after_optimizations.txt")]
    assert after and "fusion(" in (tmp_path / after[0]).read_text()
    for suffix in (".ir-no-opt.ll", ".ir-with-opt.ll", ".s"):
        assert any(f.endswith(suffix) for f in files), suffix


def test_dot_and_html_dumps(monkeypatch, tmp_path):
    files = _compile(monkeypatch, tmp_path, f"--xla_dump_to={tmp_path} --xla_dump_hlo_as_dot "
                                            "--xla_dump_hlo_as_html")
    dots = [f for f in files if f.endswith("after_optimizations.dot")]
    htmls = [f for f in files if f.endswith("after_optimizations.html")]
    assert dots and htmls
    dot = (tmp_path / dots[0]).read_text()
    assert dot.startswith("digraph") and "subgraph cluster_" in dot  # fusions are boxes
    page = (tmp_path / htmls[0]).read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "fusion" in page
    svg = page[page.index("<svg"):page.index("</svg>") + 6]
    xml.dom.minidom.parseString(svg)  # well-formed, so browsers render it
    if shutil.which("dot"):
        png = tmp_path / "g.png"
        subprocess.run(["dot", "-Tpng", str(tmp_path / dots[0]), "-o", str(png)], check=True)
        assert png.stat().st_size > 1000


def test_pass_re_dumps_module_before_and_after_matching_passes(monkeypatch, tmp_path):
    files = _compile(monkeypatch, tmp_path,
                     f"--xla_dump_to={tmp_path} --xla_dump_hlo_pass_re=^fusion$")
    per_pass = [f for f in files if ".cpu.after_" in f or ".cpu.before_" in f]
    assert any(f.endswith(".after_fusion.txt") for f in per_pass)
    assert any(".before_" in f for f in per_pass)
    assert not any(f.endswith(".after_cse.txt") for f in per_pass)


def test_generate_hlo_graph_writes_one_graph_per_pass(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    _compile(monkeypatch, tmp_path, "--xla_generate_hlo_graph=softmax")
    dots = sorted((tmp_path / "dumps").glob("*.dot"))
    assert len(dots) >= 5 and any("after_fusion" in p.name for p in dots)


def test_disable_hlo_passes(monkeypatch, tmp_path):
    files = _compile(monkeypatch, tmp_path,
                     f"--xla_dump_to={tmp_path} --xla_disable_hlo_passes=fusion")
    after = [f for f in files if f.endswith(".cpu_after_optimizations.txt")][0]
    assert " fusion(" not in (tmp_path / after).read_text()


def test_unknown_flag_is_an_error(monkeypatch):
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_dump_too=/tmp")
    from xlapy.errors import XlapyError
    with pytest.raises(XlapyError, match="unknown flag --xla_dump_too"):
        get_platform("cpu").compiler.compile(parse_file(CORPUS / "softmax.hlo"))


def test_opt_runs_named_passes_and_keeps_op_names(capsys):
    assert main(["opt", str(CORPUS / "layernorm_gelu_tanh.opt.hlo"), "--passes",
                 "fusion-inliner,simplification,fusion", "--verify"]) == 0
    text = capsys.readouterr().out
    assert text.count(" fusion(") == 2  # layernorm + gelu: two kernels
    assert 'op_name="jit(layernorm_gelu_tanh)/' in text  # metadata survives fusion


def test_opt_default_pipeline_and_dump_dir(tmp_path, capsys):
    assert main(["opt", str(CORPUS / "softmax.hlo"), "--dump-dir", str(tmp_path)]) == 0
    assert "fusion(" in capsys.readouterr().out
    names = [p.name for p in tmp_path.iterdir()]
    assert any("after_fusion" in n for n in names) and any("after_cse" in n for n in names)


def test_opt_errors(capsys):
    assert main(["opt", str(CORPUS / "softmax.hlo"), "--passes", "nope"]) == 2
    assert "unknown pass nope" in capsys.readouterr().err
    assert main(["opt", "--list-passes"]) == 0
    assert "fusion" in capsys.readouterr().out
