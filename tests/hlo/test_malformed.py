"""Malformed HLO never crashes: each input gives a ParseError or a VerificationError that
carries a position (line:column).

The cases are generated from real corpus modules by four kinds of damage, plus hand-written
ones: truncation inside an instruction, deletion of one structural token, a wrong declared
shape, a reference to an unknown operand.
"""

import pathlib
import random
import re

import pytest

from xlapy.errors import ParseError, VerificationError
from xlapy.hlo import parse
from xlapy.hlo.verifier import verify

HERE = pathlib.Path(__file__).parent
BASES = ["softmax.hlo", "mlp_train_step.opt.hlo", "conv2d.hlo", "fori_loop.hlo",
         "gather_scatter.hlo", "argmax_argmin.opt.hlo"]


def _base_texts():
    out = []
    for name in BASES:
        p = HERE / name
        if p.exists():
            out.append((name, p.read_text()))
    return out


def _instruction_lines(text):
    """(start, end) offsets of lines that define an instruction."""
    spans, pos = [], 0
    for line in text.splitlines(keepends=True):
        if re.match(r"\s+(ROOT )?%?[\w.\-]+ = ", line):
            spans.append((pos, pos + len(line.rstrip("\n"))))
        pos += len(line)
    return spans


def truncations(name, text, rng, n=8):
    spans = _instruction_lines(text)
    for start, end in rng.sample(spans, min(n, len(spans))):
        cut = rng.randrange(start + 3, end)
        yield f"truncate:{name}@{cut}", text[:cut]


def _code_end(line):
    """Offset where the instruction's code ends (strings and metadata are not mutated)."""
    cut = len(line)
    for marker in ('"', "metadata=", "backend_config=", "frontend_attributes="):
        k = line.find(marker)
        if k >= 0:
            cut = min(cut, k)
    return cut


def token_deletions(name, text, rng, n=8):
    spans = _instruction_lines(text)
    kinds = [r" = ", r"\(", r"\)", r"(?<= )[a-z][a-z\-]*(?=\()", r"\[", r"\]"]
    for start, end in rng.sample(spans, min(n, len(spans))):
        line = text[start:end]
        kind = rng.choice(kinds)
        matches = [m for m in re.finditer(kind, line) if m.end() <= _code_end(line)]
        if not matches:
            continue
        m = rng.choice(matches)
        yield (f"delete:{name}:{kind}@{start + m.start()}",
               text[:start + m.start()] + " " + text[start + m.end():])


def wrong_shapes(name, text, rng, n=6):
    # Change the first dimension of a declared non-parameter array shape.
    cands = [m for m in re.finditer(r"^(\s+(?:ROOT )?%?[\w.\-]+ = [a-z0-9]+\[)(\d+)", text, re.M)
             if "parameter(" not in text[m.end():text.find("\n", m.end())]]
    for m in rng.sample(cands, min(n, len(cands))):
        bad = str(int(m.group(2)) + 3)
        yield (f"shape:{name}@{m.start(2)}", text[:m.start(2)] + bad + text[m.end(2):])


def unknown_operands(name, text, rng, n=4):
    # Replace one operand name inside an instruction's operand list.
    cands = []
    for start, _ in _instruction_lines(text):
        m = re.compile(r" = \S+(?: \S+)*? [a-z][a-z\-]*\(([^)]*)\)").search(text, start)
        if not m or not m.group(1).strip() or re.fullmatch(r"[\d\s{},.\-a-z]*", m.group(1)) \
                and "constant(" in m.group(0):
            continue
        for op in re.finditer(r"%?[A-Za-z_][\w.\-]*", m.group(1)):
            cands.append((m.start(1) + op.start(), m.start(1) + op.end()))
    for s, e in rng.sample(cands, min(n, len(cands))):
        yield (f"operand:{name}@{s}", text[:s] + "%no_such_value" + text[e:])


HAND_WRITTEN = {
    "empty": "",
    "no_header": "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n",
    "no_computations": "HloModule m\n",
    "bad_type": "HloModule m\nENTRY e {\n  ROOT p = f31[2] parameter(0)\n}\n",
    "bad_layout": "HloModule m\nENTRY e {\n  ROOT p = f32[2,3]{0,0} parameter(0)\n}\n",
    "layout_rank": "HloModule m\nENTRY e {\n  ROOT p = f32[2,3]{0} parameter(0)\n}\n",
    "negative_dim": "HloModule m\nENTRY e {\n  ROOT p = f32[-2] parameter(0)\n}\n",
    "dynamic_dim": "HloModule m\nENTRY e {\n  ROOT p = f32[<=4] parameter(0)\n}\n",
    "unknown_opcode": "HloModule m\nENTRY e {\n  ROOT p = f32[] magic()\n}\n",
    "literal_count": "HloModule m\nENTRY e {\n  ROOT c = f32[2,2] constant({ {1,2}, {3} })\n}\n",
    "literal_type": "HloModule m\nENTRY e {\n  ROOT c = s32[] constant(1.5)\n}\n",
    "literal_range": "HloModule m\nENTRY e {\n  ROOT c = u8[] constant(-1)\n}\n",
    "pred_literal": "HloModule m\nENTRY e {\n  ROOT c = pred[] constant(maybe)\n}\n",
    "dup_name": "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  a = f32[] negate(a)\n}\n",
    "dup_param": "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(0)\n}\n",
    "param_gap": "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(2)\n}\n",
    "two_roots": "HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0)\n  ROOT b = f32[] negate(a)\n}\n",
    "two_entries": "HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0)\n}\nENTRY f {\n  ROOT a = f32[] parameter(0)\n}\n",
    "cycle": "HloModule m\nENTRY e {\n  a = f32[] negate(b)\n  ROOT b = f32[] negate(a)\n}\n",
    "unknown_comp": "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=nowhere\n}\n",
    "recursion": "HloModule m\nc {\n  a = f32[] parameter(0)\n  ROOT r = f32[] call(a), to_apply=c\n}\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=c\n}\n",
    "dup_comp": "HloModule m\nc {\n  ROOT a = f32[] parameter(0)\n}\nc {\n  ROOT a = f32[] parameter(0)\n}\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n",
    "bad_dim_labels": "HloModule m\nENTRY e {\n  a = f32[1,4,4,1] parameter(0)\n  k = f32[3,3,1,1] parameter(1)\n  ROOT c = f32[1,2,2,1] convolution(a, k), window={size=3x3}, dim_labels=b01x_01io->b01f\n}\n",
    "bad_window": "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[2] reduce-window(a, z), window={size=2x2 stride=2}, to_apply=x\n}\n",
    "bad_padding": "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[6] pad(a, z), padding=1-1\n}\n",
    "bad_slice": "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT r = f32[2] slice(a), slice={[0:2}\n}\n",
    "unterminated_string": "HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0), metadata={op_name=\"abc}\n}\n",
    "unbalanced_config": "HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0), backend_config={\"a\":[}\n}\n",
    "dup_attribute": "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] reverse(a), dimensions={0}, dimensions={0}\n}\n",
    "sig_mismatch": "HloModule m\nENTRY %e (a: f32[3]) -> f32[2] {\n  %a = f32[2] parameter(0)\n  ROOT %n = f32[2] negate(%a)\n}\n",
    "entry_layout_mismatch": "HloModule m, entry_computation_layout={(f32[2]{0})->f32[3]{0}}\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT n = f32[2] negate(a)\n}\n",
    "missing_brace": "HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0)\n",
    "garbage_after": "HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0)\n}\n}}}\n",
    # Verification (structure is fine, semantics are not):
    "add_shape": "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[3] parameter(1)\n  ROOT c = f32[2] add(a, b)\n}\n",
    "add_dtype": "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = s32[2] parameter(1)\n  ROOT c = f32[2] add(a, b)\n}\n",
    "arity": "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT c = f32[2] add(a)\n}\n",
    "exp_int": "HloModule m\nENTRY e {\n  a = s32[2] parameter(0)\n  ROOT c = s32[2] exponential(a)\n}\n",
    "bad_transpose": "HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n  ROOT c = f32[3,2] transpose(a), dimensions={0,0}\n}\n",
    "bad_reshape": "HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n  ROOT c = f32[5] reshape(a)\n}\n",
    "bad_broadcast": "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT c = f32[3,4] broadcast(a), dimensions={0}\n}\n",
    "gte_index": "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  t = (f32[2]) tuple(a)\n  ROOT c = f32[2] get-tuple-element(t), index=3\n}\n",
    "missing_dims": "HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n  ROOT c = f32[3,2] transpose(a)\n}\n",
    "reduce_sig": "HloModule m\nr {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\nENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=r\n}\n",
    "dot_contract": "HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[4,5] parameter(1)\n  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
    "while_cond": "HloModule m\nc {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT w = f32[] while(p), condition=c, body=c\n}\n",
    "slice_bounds": "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT s = f32[3] slice(a), slice={[2:5]}\n}\n",
    "concat_dim": "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT s = f32[8] concatenate(a, a), dimensions={1}\n}\n",
    "select_pred": "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT s = f32[4] select(a, a, a)\n}\n",
}


def _cases():
    rng = random.Random(1234)
    cases = []
    for name, text in _base_texts():
        for gen in (truncations, token_deletions, wrong_shapes, unknown_operands):
            cases.extend(gen(name, text, rng))
    cases.extend((f"hand:{k}", v) for k, v in HAND_WRITTEN.items())
    return cases


CASES = _cases()


def test_there_are_at_least_100_cases():
    assert len(CASES) >= 100, len(CASES)


@pytest.mark.parametrize("case_id,text", CASES, ids=[c[0] for c in CASES])
def test_malformed_input_gives_positioned_error(case_id, text):
    with pytest.raises((ParseError, VerificationError)) as info:
        verify(parse(text, "case.hlo"))
    err = info.value
    if isinstance(err, ParseError):
        assert err.line >= 1 and err.column >= 1, str(err)
        assert f"case.hlo:{err.line}:{err.column}: error:" in str(err)
    else:
        assert re.search(r"line \d+:\d+", str(err)), f"no position in: {err}"
