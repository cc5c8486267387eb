"""Modules shaped like the TF-exported models of XLA's CPU benchmarks (a MobileNet-SSD with
bf16 convolutions, a GraphSAGE network with embedding gathers), their elided weights filled
by benchmarks/exported_models.py, run by xlapy and compared against XLA (jaxlib) on the
same text."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from xlapy.backends.base import get_platform
from xlapy.hlo import parse

_PATH = Path(__file__).resolve().parents[3] / "benchmarks" / "exported_models.py"
_spec = importlib.util.spec_from_file_location("exported_models_for_tests", _PATH)
E = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(E)

_META = 'metadata={op_type="Conv2D" op_name="FeatureExtractor/Conv2d_0/Conv2D"}'


def _block(lines, x, name, hw, cin, cout, k, stride, pad, groups=1, relu6=True):
    """A TF conv + BiasAdd (+ Relu6 as clamp) block in bf16, weights elided."""
    out = (hw + sum(pad) - k) // stride + 1
    shape = f"bf16[1,{out},{out},{cout}]{{3,2,1,0}}"
    win = f"size={k}x{k}" + (f" stride={stride}x{stride}" if stride > 1 else "") \
        + (f" pad={pad[0]}_{pad[1]}x{pad[0]}_{pad[1]}" if k > 1 else "")
    lines += [f"  %{name}.w = bf16[{k},{k},{cin // groups},{cout}]{{3,2,1,0}} constant({{...}}), "
              f"{_META}",
              f"  %{name} = {shape} convolution({x}, %{name}.w), window={{{win}}}, "
              "dim_labels=b01f_01io->b01f"
              + (f", feature_group_count={groups}" if groups > 1 else "") + f", {_META}",
              f"  %{name}.b = bf16[{cout}]{{0}} constant({{...}})",
              f"  %{name}.bb = {shape} broadcast(%{name}.b), dimensions={{3}}",
              f"  %{name}.add = {shape} add(%{name}, %{name}.bb)"]
    if not relu6:
        return f"%{name}.add", out
    lines += [f"  %{name}.z = bf16[] constant(0)",
              f"  %{name}.zb = {shape} broadcast(%{name}.z), dimensions={{}}",
              f"  %{name}.s = bf16[] constant(6)",
              f"  %{name}.sb = {shape} broadcast(%{name}.s), dimensions={{}}",
              f"  %{name}.relu6 = {shape} clamp(%{name}.zb, %{name}.add, %{name}.sb)"]
    return f"%{name}.relu6", out


def _ssd_like() -> str:
    """MobileNet-SSD's pattern at 65x65: f32 input scaled in bf16, a strided 3x3 conv,
    depthwise and pointwise blocks (results of 64K+ elements: the gemm epilogue's size), a
    box head reshaped and decoded with exp, a class head through a logistic."""
    lines = ["  %arg0.1 = f32[1,65,65,3]{3,2,1,0} parameter(0), parameter_replication={false}, "
             'metadata={op_name="XLA_Args"}',
             "  %cast.1 = bf16[1,65,65,3]{3,2,1,0} convert(%arg0.1)",
             "  %mul.3 = bf16[] constant(0.007874)",
             "  %mul.4 = bf16[1,65,65,3]{3,2,1,0} broadcast(%mul.3), dimensions={}",
             "  %mul.5 = bf16[1,65,65,3]{3,2,1,0} multiply(%cast.1, %mul.4)"]
    x, hw = _block(lines, "%mul.5", "Conv2d_0", 65, 3, 32, 3, 1, (1, 1))
    x, hw = _block(lines, x, "dw1", hw, 32, 32, 3, 1, (1, 1), groups=32)
    x, hw = _block(lines, x, "pw1", hw, 32, 64, 1, 1, (0, 0))
    x, hw = _block(lines, x, "dw2", hw, 64, 64, 3, 2, (0, 1), groups=64)
    x, hw = _block(lines, x, "pw2", hw, 64, 128, 1, 1, (0, 0))
    box, _ = _block(lines, x, "box", hw, 128, 12, 1, 1, (0, 0), relu6=False)
    cls, _ = _block(lines, x, "cls", hw, 128, 273, 1, 1, (0, 0), relu6=False)
    n = hw * hw * 3
    lines += [f"  %box.r = bf16[{n},4]{{1,0}} reshape({box})",
              f"  %box.f = f32[{n},4]{{1,0}} convert(%box.r)",
              f"  %box.e = f32[{n},4]{{1,0}} exponential(%box.f)",
              f"  %anchors = f32[{n},4]{{1,0}} constant({{...}})",
              f"  %box.d = f32[{n},4]{{1,0}} multiply(%box.e, %anchors)",
              f"  %cls.r = bf16[1,{n},91]{{2,1,0}} reshape({cls})",
              f"  %cls.f = f32[1,{n},91]{{2,1,0}} convert(%cls.r)",
              f"  %cls.s = f32[1,{n},91]{{2,1,0}} logistic(%cls.f)",
              f"  %cls.sl = f32[1,{n},90]{{2,1,0}} slice(%cls.s), slice={{[0:1], [0:{n}], [1:91]}}",
              f"  ROOT %XLA_Retvals.5 = (f32[{n},4]{{1,0}}, f32[1,{n},90]{{2,1,0}}) "
              "tuple(%box.d, %cls.sl)"]
    return ("HloModule cluster_0__XlaCompiledKernel_true, alias_passthrough_params=true\n\n"
            "ENTRY %cluster_0 {\n" + "\n".join(lines) + "\n}\n")


_GRAPHSAGE = """HloModule graphsage_like, entry_computation_layout={(s32[10]{0}, s32[16,10]{1,0})->f32[1,21]{1,0}}

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(%x, %y)
}

ENTRY %main (arg0.1: s32[10], arg1.1: s32[16,10]) -> f32[1,21] {
  %table = bf16[5000,50]{1,0} constant({...}), metadata={op_type="GatherV2" op_name="embedding_lookup"}
  %arg0.1 = s32[10]{0} parameter(0), parameter_replication={false}
  %emb = bf16[10,50]{1,0} gather(%table, %arg0.1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,50}
  %table2 = f32[5000,50]{1,0} constant({...})
  %arg1.1 = s32[16,10]{1,0} parameter(1), parameter_replication={false}
  %tr = s32[10,16]{0,1} transpose(%arg1.1), dimensions={1,0}
  %sl = s32[10,8]{1,0} slice(%tr), slice={[0:10], [0:8]}
  %idx = s32[80]{0} reshape(%sl)
  %nb = f32[80,50]{1,0} gather(%table2, %idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,50}
  %nb3 = f32[10,8,50]{2,1,0} reshape(%nb)
  %zero = f32[] constant(0)
  %mean_s = f32[10,50]{1,0} reduce(%nb3, %zero), dimensions={1}, to_apply=%sum
  %eight = f32[] constant(8)
  %eight_b = f32[10,50]{1,0} broadcast(%eight), dimensions={}
  %mean = f32[10,50]{1,0} divide(%mean_s, %eight_b)
  %mean_b = bf16[10,50]{1,0} convert(%mean)
  %w1 = bf16[50,128]{1,0} constant({...})
  %d1 = bf16[10,128]{1,0} dot(%emb, %w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, frontend_attributes={grad_x="false",grad_y="false"}
  %w2 = bf16[50,128]{1,0} constant({...})
  %d2 = bf16[10,128]{1,0} dot(%mean_b, %w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %cat = bf16[10,256]{1,0} concatenate(%d1, %d2), dimensions={1}
  %z = bf16[] constant(0)
  %zb = bf16[10,256]{1,0} broadcast(%z), dimensions={}
  %relu = bf16[10,256]{1,0} maximum(%cat, %zb)
  %rf = f32[10,256]{1,0} convert(%relu)
  %agg = f32[256]{0} reduce(%rf, %zero), dimensions={0}, to_apply=%sum
  %sq = f32[256]{0} multiply(%agg, %agg)
  %ss = f32[] reduce(%sq, %zero), dimensions={0}, to_apply=%sum
  %eps = f32[] constant(1e-12)
  %mx = f32[] maximum(%ss, %eps)
  %rs = f32[] rsqrt(%mx)
  %rsb = f32[256]{0} broadcast(%rs), dimensions={}
  %nrm = f32[256]{0} multiply(%agg, %rsb)
  %nrm1 = f32[1,256]{1,0} reshape(%nrm)
  %nrm2 = bf16[1,256]{1,0} convert(%nrm1)
  %w3 = bf16[256,21]{1,0} constant({...})
  %d3 = bf16[1,21]{1,0} dot(%nrm2, %w3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %b3 = bf16[21]{0} constant({...})
  %b3b = bf16[1,21]{1,0} broadcast(%b3), dimensions={1}
  %logits = bf16[1,21]{1,0} add(%d3, %b3b)
  %lf = f32[1,21]{1,0} convert(%logits)
  %sig = f32[1,21]{1,0} logistic(%lf), metadata={op_type="Sigmoid" op_name="Sigmoid"}
  %ret = (f32[1,21]{1,0}) tuple(%sig)
  ROOT %out = f32[1,21]{1,0} get-tuple-element(%ret), index=0
}
"""  # noqa: E501 (XLA's text: one instruction a line)


def _run_and_compare(text: str, monkeypatch):
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    filled = E.fill_elided(text, seed=3)
    assert "{...}" not in filled
    module = parse(filled)
    args = E.inputs_for(module, seed=4)
    got = E._leaves(get_platform("cpu").compiler.compile(module).run(*args))
    want = E.xla_hlo.run(E.xla_hlo.compile(E.xla_hlo.parse(filled)), E.xla_hlo.put(args))
    assert E.compare(got, want, bf16=True) == "ok"
    return got


def test_ssd_mobilenet_shaped_module_matches_xla(monkeypatch):
    got = _run_and_compare(_ssd_like(), monkeypatch)
    assert all(np.isfinite(g).all() for g in got)


def test_graphsage_shaped_module_matches_xla(monkeypatch):
    (got,) = _run_and_compare(_GRAPHSAGE, monkeypatch)
    assert got.shape == (1, 21) and 0 < got.min() <= got.max() < 1


def test_fill_elided_is_seeded_and_exact_in_the_type():
    text = ("HloModule m\n\nENTRY e {\n  %c = bf16[3,300]{1,0} constant({...})\n"
            "  %i = s32[5]{0} constant({...})\n"
            "  ROOT %t = (bf16[3,300], s32[5]) tuple(%c, %i)\n}\n")
    a, b = E.fill_elided(text, 1), E.fill_elided(text, 1)
    assert a == b != E.fill_elided(text, 2)
    lit = parse(a).entry.root.operands[0].literal
    # every value was drawn from bf16 values: the text reads back to them (in f32 as well)
    words = a[a.index("constant({") + 9:a.index(")", a.index("constant({"))]
    vals = np.array([float(w) for w in words.replace("{", " ").replace("}", " ")
                     .replace(",", " ").split()])
    assert np.array_equal(vals.astype(np.float32).astype(lit.dtype), lit.reshape(-1))
    assert np.array_equal(vals.astype(np.float32), lit.astype(np.float32).reshape(-1))
    assert set(parse(a).entry.root.operands[1].literal.tolist()) <= {0, 1, 2, 3}


@pytest.mark.parametrize("path_kind", ["empty dir", "missing"])
def test_script_skips_without_modules(tmp_path, capsys, path_kind, monkeypatch):
    # main() turns the disk cache off for its process: restored for the later tests
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    where = tmp_path if path_kind == "empty dir" else tmp_path / "nowhere"
    assert E.main([str(where)]) == 0
    assert "no exported modules found" in capsys.readouterr().out
