"""The StableHLO writer (xlapy.hlo.to_stablehlo) against the reader and against XLA.

  - JAX's StableHLO (tests/hlo/NAME.mlir) read, printed and read again gives an equal
    module, and printing that gives the same text (a fixed point);
  - every HLO module of the corpus (NAME.hlo and the optimized NAME.opt.hlo, with fusions,
    layouts and bitcasts) printed and read back computes bit-identical results on the
    interpreter, and is then a fixed point (HLO's tuples become StableHLO's multiple
    values once: a while over a tuple parameter reads back as a while over a tuple op);
  - XLA (jaxlib) compiles the printed text and reproduces the corpus outputs, for a set of
    modules that together use every opcode and element type of the corpus;
  - what StableHLO cannot say is an XlapyError naming the instruction.
"""

from __future__ import annotations

import numpy as np
import pytest

import xlapy_tests_interpreter_corpus as ic
import xlapy_tests_stablehlo as util
from xlapy.backends.base import flatten
from xlapy.backends.interpreter import evaluate
from xlapy.errors import EvaluationError, XlapyError
from xlapy.hlo import module_diff, parse, parse_file, parse_stablehlo, to_stablehlo
from xlapy.hlo.stablehlo import parse_stablehlo_file

ENTRIES = util.entries()
HLO_CASES = [pytest.param(e, k, id=e["files"][k]) for e in ENTRIES for k in ("hlo", "opt_hlo")]
# Together these use every opcode and element type in the corpus (checked below).
XLA_SUBSET = ["random_normal.hlo", "elementwise_unary_f32.opt.hlo", "cnn_train_step.opt.hlo",
              "int8_ops.hlo", "conversions.hlo", "sorting.hlo", "f64_math.hlo",
              "scatter_ops.opt.hlo", "elementwise_binary_f32.hlo", "hlo_map.hlo",
              "cond_switch.hlo", "hlo_logistic.hlo", "mnist_sgd_step.hlo", "cnn_train_step.hlo",
              "bitcast_convert.hlo", "dynamic_slicing.hlo", "custom_call_top_k.hlo",
              "custom_call_cholesky.hlo"]


def _entry(filename: str):
    return next(e for e in ENTRIES if filename in e["files"].values())


def _kind(entry, filename: str) -> str:
    return next(k for k, v in entry["files"].items() if v == filename)


@pytest.mark.parametrize("entry", [pytest.param(e, id=e["files"]["mlir"]) for e in ENTRIES])
def test_jax_stablehlo_reads_back_equal(entry):
    first = parse_stablehlo_file(util.CORPUS / entry["files"]["mlir"])
    text = to_stablehlo(first)
    second = parse_stablehlo(text, "printed")
    assert module_diff(first, second) is None, module_diff(first, second)
    assert to_stablehlo(second) == text


@pytest.mark.parametrize("entry,kind", HLO_CASES)
def test_printed_hlo_computes_the_same(entry, kind):
    module = parse_file(util.CORPUS / entry["files"][kind])
    again = parse_stablehlo(to_stablehlo(module), "printed")
    text = to_stablehlo(again)
    assert module_diff(parse_stablehlo(text, "printed twice"), again) is None
    assert to_stablehlo(parse_stablehlo(text)) == text
    inputs = ic._load(util.CORPUS / entry["files"]["inputs"], entry["inputs"])
    if util.expects_unsupported(entry, kind):
        for m in (module, again):
            with pytest.raises(EvaluationError, match="custom-call target"):
                evaluate(m, *inputs)
        return
    want, got = flatten(evaluate(module, *inputs)), flatten(evaluate(again, *inputs))
    assert len(want) == len(got)
    for i, (w, g) in enumerate(zip(want, got)):
        assert util.same_bits(w, g), f"output {i}: {g} != {w}"


def test_xla_subset_covers_the_corpus():
    def features(path):
        m = parse_file(path)
        return ({i.opcode for i in m.instructions()}
                | {leaf.element_type.name for i in m.instructions() for leaf in i.shape.leaves()})
    everything, covered = set(), set()
    for e in ENTRIES:
        for k in ("hlo", "opt_hlo"):
            f = features(util.CORPUS / e["files"][k])
            everything |= f
            if e["files"][k] in XLA_SUBSET:
                covered |= f
    assert everything - covered == set()


@pytest.mark.parametrize("filename", XLA_SUBSET)
def test_xla_runs_the_printed_text(filename):
    entry = _entry(filename)
    text = to_stablehlo(parse_file(util.CORPUS / filename))
    inputs = ic._load(util.CORPUS / entry["files"]["inputs"], entry["inputs"])
    got = util.run_with_xla(text, inputs)
    want = ic._load(util.CORPUS / entry["files"]["outputs"], entry["outputs"])
    assert len(got) == len(want)
    hlo_text = (util.CORPUS / entry["files"]["hlo"]).read_text()
    for i, w in enumerate(want):
        ic.assert_matches([got[i]], w, f"{filename} output {i}", hlo_text)


def test_printed_text_keeps_locations():
    m = parse("""HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  ROOT n = f32[3] negate(x), metadata={op_name="jit(f)/neg" source_file="f.py" source_line=7}
}""")
    text = to_stablehlo(m)
    assert 'loc("jit(f)/neg"("f.py":7:0))' in text
    back = parse_stablehlo(text)
    assert back.entry.root.metadata == {"op_name": "jit(f)/neg", "source_file": "f.py",
                                        "source_line": 7}
    assert "loc(" not in to_stablehlo(m, print_locations=False)


def test_while_over_a_tuple_prints_its_elements():
    m = parse("""HloModule w
cond {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[2] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[2] add(x, x)
  ROOT t = (s32[], f32[2]) tuple(j, y)
}
ENTRY e {
  x = f32[2] parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[2]) tuple(zero, x)
  w = (s32[], f32[2]) while(t), condition=cond, body=body
  ROOT r = f32[2] get-tuple-element(w), index=1
}""")
    text = to_stablehlo(m)
    assert "stablehlo.tuple" not in text and "get_tuple_element" not in text
    assert '%3:2 = "stablehlo.while"' in text or ':2 = "stablehlo.while"' in text
    x = np.array([1.5, -2.0], np.float32)
    assert util.same_bits(evaluate(parse_stablehlo(text), x), evaluate(m, x))


def test_tuple_values():
    """Tuple-typed parameters, nested tuples, tuple constants and tuple results."""
    m = parse("""HloModule t
ENTRY e {
  p = (f32[2], (s32[], f32[2])) parameter(0)
  a = f32[2] get-tuple-element(p), index=0
  q = (s32[], f32[2]) get-tuple-element(p), index=1
  b = f32[2] get-tuple-element(q), index=1
  c = (f32[], s32[2]) constant((1.5, {3, 4}))
  s = f32[2] add(a, b)
  ROOT r = (f32[2], (s32[], f32[2]), (f32[], s32[2])) tuple(s, q, c)
}""")
    text = to_stablehlo(m)
    assert "stablehlo.get_tuple_element %arg0[1]" in text
    x = (np.array([1, 2], np.float32), (np.int32(3), np.array([5, 6], np.float32)))
    want, got = flatten(evaluate(m, x)), flatten(evaluate(parse_stablehlo(text), x))
    assert len(want) == len(got) == 5
    assert all(util.same_bits(w, g) for w, g in zip(want, got))


def test_layout_changing_bitcast_becomes_transposes():
    m = parse("""HloModule b
ENTRY e {
  x = f32[2,3]{1,0} parameter(0)
  ROOT y = f32[3,2]{0,1} bitcast(x)
}""")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    back = parse_stablehlo(to_stablehlo(m))
    np.testing.assert_array_equal(evaluate(back, x), x.T)  # same bytes, logically transposed


@pytest.mark.parametrize("hlo,message", [
    ("c = f32[3] constant({...})\n  ROOT r = f32[3] negate(c)", "elided constant"),
    ("x = f32[5] parameter(0)\n  ROOT t = (f32[2], s32[2]) topk(x), k=2, largest=false",
     "largest=false"),
    ("x = f32[4] parameter(0)\n  ROOT b = f16[8] bitcast(x)", "bitcast"),
])
def test_what_stablehlo_cannot_say_is_an_error(hlo, message):
    m = parse(f"HloModule m\nENTRY e {{\n  {hlo}\n}}")
    with pytest.raises(XlapyError, match=message):
        to_stablehlo(m)


def test_to_stablehlo_takes_a_module():
    with pytest.raises(TypeError, match="Module"):
        to_stablehlo("HloModule m")
