"""cpu backend vs the interpreter, elementwise ops: every row of the op table (optable.py)
on every element type it is defined for.

One module per element type holds every op of the table: each (op, attribute variant) on
a 1-D "pairs" operand (every special value against every special value, 1681 elements for
floats: not a multiple of any vector width) and on the zero-size shapes, and each op on one
of the scalar / odd-size / non-default-layout / 3-D shapes (see ROTATING). The outputs are
compared one by one (bit for bit, or within a few ulps for transcendentals). When the
module does not compile, each op is compiled alone to name the ones that fail.

Also here: the verifier rejects the types a row does not list; select and clamp;
convert between all 13x13 type pairs; bitcast-convert; fused chains on big (threaded)
kernels.
"""

from __future__ import annotations


import numpy as np
import pytest

from xlapy.backends.base import get_platform
from xlapy.errors import XlapyError
from xlapy.hlo import parse


import xlapy_tests_cpu_optable as O

# exact comparisons on denormal inputs: IEEE gradual underflow (conftest.ieee_denormals)
pytestmark = pytest.mark.usefixtures("ieee_denormals")


# Every (op, attribute variant) runs on the "pairs" operand and the zero-size shapes (cheap
# to compile); each op runs on ONE of the costlier shapes (scalar, odd size, non-default
# layouts), rotating with the op and the element type so that across the table every op
# meets several of them. Compile time grows with the number of kernels, not of elements.
ROTATING = ("scalar", "odd", "layout", "3d")


def _shape_cases(t: str):
    """[(ShapeCase, [two operand arrays])]: the table's shapes and the pairs operand."""
    rng = np.random.default_rng(O.TYPES.index(t) + 100)
    cases = []
    for sc in O.SHAPES:
        cases.append((sc, [O.values(t, sc.dims, rng, offset=k * 5) for k in range(2)]))
    x, y = O.pair_values(t)
    cases.append((O.ShapeCase("pairs", (len(x),)), [x, y]))
    return cases


def _instances(t: str, ops, cases):
    """(op, attrs, shape case) triples to emit."""
    out = []
    shift = O.TYPES.index(t)
    for k, op in enumerate(ops):
        variants = op.variants(t)
        for sc, _ in cases:
            if sc.name in ROTATING:
                if ROTATING[(k + shift) % len(ROTATING)] == sc.name:
                    out.append((op, variants[(k + shift) % len(variants)], sc))
            else:
                out.extend((op, v, sc) for v in variants)
    return out


def _ops_module(t: str, ops, cases):
    """One module holding every instance. Returns (ModuleText, args, checks)."""
    m = O.ModuleText(name=f"elementwise_{t}")
    args, checks, params = [], [], {}
    arrays = {sc.name: a for sc, a in cases}
    for n, (op, attrs, sc) in enumerate(_instances(t, ops, cases)):
        if sc.name not in params:
            params[sc.name] = [m.param(sc.text(t)) for _ in range(2)]
            args.extend(arrays[sc.name])
        # alternate the result layout: kernels that transpose on the way out
        layout = tuple(range(len(sc.dims))) if sc.layout is not None and n % 2 else None
        shape = sc.text(op.result_type(t), layout)
        m.op(shape, f"{op.opcode}({', '.join(params[sc.name][:op.arity])}){attrs}",
             label=f"{op.opcode}{attrs} {sc.text(t)} -> {shape}", base=op.opcode)
        checks.append(op.check(t))
    return m, args, checks


def _ops_for(t):
    return [op for op in O.ELEMENTWISE.values() if t in op.types]


def _culprits(t, ops, cases):
    """The ops whose single-op module does not compile (for a readable failure)."""
    bad = []
    for op in ops:
        m, _, _ = _ops_module(t, [op], cases)
        try:
            get_platform("cpu").compiler.compile(parse(m.text()))
        except Exception as e:
            bad.append(f"{op.opcode}: {type(e).__name__}: {str(e)[:300]}")
    return bad


@pytest.mark.parametrize("t", O.TYPES)
def test_elementwise_ops(cpu_check, t):
    ops = _ops_for(t)
    cases = _shape_cases(t)
    m, args, checks = _ops_module(t, ops, cases)
    try:
        got, want = cpu_check.run(m.text(), *args)
    except XlapyError as e:
        bad = _culprits(t, ops, cases)
        raise AssertionError(f"{t}: the module does not compile; ops failing alone:\n  "
                             + "\n  ".join(bad)) from e
    O.compare_outputs(got, want, m.labels, checks)


@pytest.mark.parametrize("op", sorted(O.ELEMENTWISE))
def test_other_types_are_rejected(op):
    """Types outside a row's list are an error before any code is generated (the table and
    the verifier agree)."""
    row = O.ELEMENTWISE[op]
    for t in O.TYPES:
        if t in row.types:
            continue
        args = ", ".join(["p"] * row.arity)
        attrs = row.variants("f32")[0] if op != "compare" else ", direction=EQ"
        text = (f"HloModule m\nENTRY e {{\n  p = {t}[3] parameter(0)\n"
                f"  ROOT r = {row.result_type(t)}[3] {op}({args}){attrs}\n}}\n")
        with pytest.raises(XlapyError):
            get_platform("cpu").compiler.compile(parse(text))


# ---- select and clamp ---------------------------------------------------------------------------

def test_select_and_clamp(cpu_check):
    """select with an array and a scalar predicate on every type; clamp with scalar and
    array bounds (NaN, inverted and equal bounds included) on every numeric type."""
    rng = np.random.default_rng(7)
    m = O.ModuleText(name="select_clamp")
    args = []

    def param(shape_text, value):
        args.append(value)
        return m.param(shape_text)

    for k, t in enumerate(O.TYPES):
        for sc in (O.ShapeCase("pairs", (len(O.pair_values(t)[0]),)),
                   [s for s in O.SHAPES if s.name in ROTATING][k % len(ROTATING)],
                   O.SHAPES[1]):
            x, y = (O.pair_values(t) if sc.name == "pairs" else
                    (O.values(t, sc.dims, rng), O.values(t, sc.dims, rng, offset=7)))
            st = sc.text(t)
            px, py = param(st, x), param(st, y)
            pp = param(sc.text("pred"), rng.integers(0, 2, sc.dims).astype(bool))
            m.op(st, f"select({pp}, {px}, {py})", f"select {st}")
            if sc.dims and sc.name != "zero":
                ps = param("pred[]", np.array(k % 2 == 0))
                m.op(st, f"select({ps}, {px}, {py})", f"select scalar pred {st}")
            if t == "pred":
                continue
            lo_hi = [(-2.5, 3.0), (7, -7), (0, 0)] if t in O.SINTS + O.FLOATS else \
                [(3, 200), (9, 2)]
            if t in O.FLOATS:
                lo_hi += [(np.nan, 1.0), (-np.inf, np.nan), (-0.0, 0.0)]
            for lo, hi in (lo_hi if sc.name == "pairs" else lo_hi[:1]):
                plo = param(f"{t}[]", np.array(lo).astype(O.DTYPE[t]))
                phi = param(f"{t}[]", np.array(hi).astype(O.DTYPE[t]))
                m.op(st, f"clamp({plo}, {px}, {phi})", f"clamp({lo}, {st}, {hi})")
            pz = param(st, np.roll(x, 5) if x.ndim == 1 else O.values(t, sc.dims, rng, 3))
            m.op(st, f"clamp({py}, {px}, {pz})", f"clamp array bounds {st}")
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, O.EXACT)


# ---- convert ----------------------------------------------------------------------------------

@pytest.mark.parametrize("src", O.TYPES)
def test_convert_all_pairs(cpu_check, src):
    """src to each of the 13 types on the special values, rounding ties, integer range
    edges and random bit patterns; plus one costlier shape per destination."""
    rng = np.random.default_rng(O.TYPES.index(src))
    x = O.convert_values(src, rng)
    m = O.ModuleText(name=f"convert_{src}")
    args = [x]
    px = m.param(f"{src}[{len(x)}]")
    shapes = [s for s in O.SHAPES if s.name in ROTATING] + [O.SHAPES[1]]
    for k, dst in enumerate(O.TYPES):
        m.op(f"{dst}[{len(x)}]", f"convert({px})", f"convert {src}[{len(x)}] -> {dst}")
        sc = shapes[(k + O.TYPES.index(src)) % len(shapes)]
        args.append(O.values(src, sc.dims, rng, offset=k))
        p = m.param(sc.text(src))
        out_layout = tuple(range(len(sc.dims))) if sc.layout is not None and k % 2 else None
        m.op(sc.text(dst, out_layout), f"convert({p})",
             f"convert {sc.text(src)} -> {sc.text(dst, out_layout)}")
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, O.EXACT)


# ---- bitcast-convert -----------------------------------------------------------------------------

_SAME_WIDTH = {8: ("s8", "u8"), 16: ("s16", "u16", "f16", "bf16"), 32: ("s32", "u32", "f32"),
               64: ("s64", "u64", "f64")}


def _random_bits(t, dims, rng):
    w = O.WIDTH[t]
    n = int(np.prod(dims, dtype=np.int64))
    raw = rng.integers(0, 256, n * w // 8, dtype=np.uint8)
    x = raw.view(O.DTYPE[t]) if t != "pred" else raw.astype(bool)
    x = x.reshape(dims).copy()
    if t in O.FLOATS and x.size:  # make sure some NaN payloads and signed zeros are there
        flat = x.reshape(-1)
        flat[:min(8, flat.size)] = O.specials(t)[[0, 1, 14, 15, 16, 17, 20, 21]][:min(8, flat.size)]
    return x


def test_bitcast_convert(cpu_check):
    """Same width (every pair, NaN payloads kept bit for bit), to narrower types (a new minor
    dimension, little-endian) and to wider (the minor dimension consumed)."""
    rng = np.random.default_rng(11)
    m = O.ModuleText(name="bitcast_convert")
    args = []
    n = 0
    shapes = [s for s in O.SHAPES if s.name in ROTATING] + [O.SHAPES[1]]
    for group in _SAME_WIDTH.values():
        for src in group:
            x = _random_bits(src, (67,), rng)
            px = m.param(f"{src}[67]")
            args.append(x)
            for dst in group:
                if dst == src:
                    continue
                sc = shapes[n % len(shapes)]
                n += 1
                m.op(f"{dst}[67]", f"bitcast-convert({px})", f"{src}[67] -> {dst}")
                args.append(_random_bits(src, sc.dims, rng))
                p = m.param(sc.text(src))
                m.op(sc.text(dst), f"bitcast-convert({p})", f"{sc.text(src)} -> {dst}")
    # different widths: (wide, narrow) pairs, both directions, with a 2-D batch shape
    for wide, narrow in (("f32", "u8"), ("f32", "bf16"), ("f64", "f32"), ("s64", "s8"),
                         ("u64", "f16"), ("s32", "s16"), ("f64", "u16"), ("u16", "s8")):
        k = O.WIDTH[wide] // O.WIDTH[narrow]
        for dims, layout in (((3, 5), None), ((0, 4), None), ((), None), ((4, 3), (0, 1))):
            sc = O.ShapeCase("w", dims, layout)
            wide_text = sc.text(wide)
            nlayout = None if layout is None else (len(dims),) + layout  # new dim minor
            narrow_sc = O.ShapeCase("n", dims + (k,), nlayout)
            pw = m.param(wide_text)
            args.append(_random_bits(wide, dims, rng))
            m.op(narrow_sc.text(narrow), f"bitcast-convert({pw})",
                 f"{wide_text} -> {narrow_sc.text(narrow)}")
            pn = m.param(narrow_sc.text(narrow))
            args.append(_random_bits(narrow, dims + (k,), rng))
            m.op(wide_text, f"bitcast-convert({pn})", f"{narrow_sc.text(narrow)} -> {wide_text}")
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, O.BITS)


# ---- fused chains, big arrays (threaded kernels) -----------------------------------------------

_CHAINS = """HloModule chains

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b)
}

ENTRY main {
  x = f32[301,401]{0,1} parameter(0)
  y = f32[301,401] parameter(1)
  i = s32[401] parameter(2)
  h = bf16[301,401]{0,1} parameter(3)
  e = f32[301,401]{0,1} exponential(x)
  ic = f32[401] convert(i)
  ib = f32[301,401] broadcast(ic), dimensions={1}
  m = f32[301,401] multiply(e, ib)
  t = f32[301,401] tanh(m)
  xy = f32[301,401] multiply(x, y)
  zero = f32[] constant(0)
  lo = f32[] constant(-inf)
  rows = f32[301] reduce(xy, zero), dimensions={1}, to_apply=add
  cols = f32[401] reduce(x, zero), dimensions={0}, to_apply=add
  xmax = f32[401] reduce(x, lo), dimensions={0}, to_apply=max
  c = pred[301,401] compare(x, y), direction=LT
  ny = f32[301,401] negate(y)
  s = f32[301,401] select(c, x, ny)
  sb = bf16[301,401]{0,1} convert(s)
  hs = bf16[301,401]{0,1} add(sb, h)
  xt = f32[401,301] transpose(x), dimensions={1,0}
  yt = f32[401,301]{0,1} transpose(y), dimensions={1,0}
  d = f32[401,301] subtract(xt, yt)
  sh = s32[401] shift-right-arithmetic(i, i)
  ROOT out = (f32[301,401], f32[301], f32[401], f32[401], bf16[301,401]{0,1}, f32[401,301],
      s32[401]) tuple(t, rows, cols, xmax, hs, d, sh)
}
"""


def test_fused_chains_on_threaded_kernels(cpu_check):
    """Chains of ops the pipeline fuses (broadcast, convert, transcendentals, compare and
    select, layout changes, reductions of fused producers), on arrays big enough that the
    kernels are split across threads."""
    rng = np.random.default_rng(17)
    x = rng.standard_normal((301, 401)).astype(np.float32)
    y = rng.standard_normal((301, 401)).astype(np.float32)
    x[5, 7] = np.nan
    i = rng.integers(-40, 40, 401).astype(np.int32)
    h = rng.standard_normal((301, 401)).astype(O.BF16)
    got, want = cpu_check.run(_CHAINS, x, y, i, h)
    labels = ["tanh(exp(x) * i)", "row sums", "column sums", "column max", "bf16 select+add",
              "transposes", "shift"]
    checks = [O.ULP, (O.CLOSE, 2e-5, 1e-5), (O.CLOSE, 2e-5, 1e-5), O.EXACT, O.EXACT, O.EXACT,
              O.EXACT]
    O.compare_outputs(got, want, labels, checks)
