"""cpu backend vs the interpreter, reductions: reduce over one, several and all dimensions
(minor and non-minor, non-default layouts, zero-size, scalar), with add / maximum /
minimum / multiply reducers on every element type, variadic argmax with NaN and ties, and
reduce-window with strides, padding and dilations.

Integer, pred, maximum and minimum results match exactly. Float sums may be computed in
another order than the interpreter's: their inputs are positive (no cancellation) and they
compare within a relative tolerance of about n * eps; NaN and inf positions must match.
"""

from __future__ import annotations


import numpy as np
import pytest


import xlapy_tests_cpu_optable as O

# exact comparisons on denormal inputs: IEEE gradual underflow (conftest.ieee_denormals)
pytestmark = pytest.mark.usefixtures("ieee_denormals")

# f16/bf16 sums accumulate in f32 and round once (test_low_precision_sums_accumulate_in_f32);
# the remaining difference is one rounding and another summation order.
_SUM_RTOL = {"f16": 2e-2, "bf16": 1.2e-1, "f32": 2e-5, "f64": 1e-13}


def _extremes(t):
    """(lowest, highest) of t as literals: the identities of maximum and minimum."""
    if t == "pred":
        return "false", "true"
    if t in O.FLOATS:
        return "-inf", "inf"
    info = np.iinfo(O.DTYPE[t])
    return str(info.min), str(info.max)


def _reducers(t):
    """{name: (computation text, init literal, check)}"""
    lo, hi = _extremes(t)
    add_init = "false" if t == "pred" else "0"
    out = {
        "add": ("add", add_init, (O.CLOSE, _SUM_RTOL[t], 0.0) if t in O.FLOATS else O.EXACT),
        "max": ("maximum", lo, O.EXACT),
        "min": ("minimum", hi, O.EXACT),
    }
    if t in O.INTS:
        out["mul"] = ("multiply", "1", O.EXACT)
    if t in ("pred",) + O.INTS:
        out["xor"] = ("xor", "false" if t == "pred" else "0", O.EXACT)
    return out


def _computations(t):
    comps = []
    for name, (opcode, _, _) in _reducers(t).items():
        comps.append(f"{name}_{t} {{\n  a = {t}[] parameter(0)\n  b = {t}[] parameter(1)\n"
                     f"  ROOT r = {t}[] {opcode}(a, b)\n}}")
    return comps


def _argmax_computation(t):
    """(value, index) reducer: the larger value, NaN beats numbers, ties and NaN pairs go to
    the smaller index: a result independent of the order of reduction."""
    return f"""argmax_{t} {{
  a = {t}[] parameter(0)
  ai = s32[] parameter(1)
  b = {t}[] parameter(2)
  bi = s32[] parameter(3)
  a_nan = pred[] compare(a, a), direction=NE
  b_nan = pred[] compare(b, b), direction=NE
  b_num = pred[] not(b_nan)
  a_num = pred[] not(a_nan)
  nan_a = pred[] and(a_nan, b_num)
  gt = pred[] compare(a, b), direction=GT
  both_num = pred[] and(a_num, b_num)
  bigger = pred[] and(gt, both_num)
  eq = pred[] compare(a, b), direction=EQ
  both_nan = pred[] and(a_nan, b_nan)
  same = pred[] or(eq, both_nan)
  first = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(same, first)
  pick1 = pred[] or(nan_a, bigger)
  pick = pred[] or(pick1, tie)
  v = {t}[] select(pick, a, b)
  i = s32[] select(pick, ai, bi)
  ROOT r = ({t}[], s32[]) tuple(v, i)
}}"""


# (input dims, input layout, reduced dimensions)
_REDUCE_CASES = (
    ((3, 17), (0, 1), (0,)),
    ((3, 17), (0, 1), (1,)),
    ((2, 3, 37), None, (1,)),          # a non-minor dim
    ((2, 3, 37), None, (0, 2)),        # several
    ((2, 3, 37), (1, 2, 0), (0, 1, 2)),  # all, of a layout
    ((0, 5), None, (0,)),              # zero-size reduced dim: the init value
    ((5, 0), None, (0,)),              # zero-size kept dim: empty result
    ((), None, ()),                    # a scalar, nothing reduced
    ((300,), None, (0,)),
)


def _input(t, dims, rng, positive):
    """Positive floats for sums (with NaN and infs), else the special values; -0.0 is
    replaced by +0.0 (test_signed_zero_max_min shows why)."""
    if t in O.FLOATS and not positive:
        x = O.values(t, dims, rng)
        return np.where(x == 0, np.zeros_like(x), x)
    if t in O.FLOATS and positive:
        x = rng.uniform(0.5, 1.0, dims).astype(O.DTYPE[t])
        flat = x.reshape(-1)
        if flat.size > 40:  # a NaN, an inf, and an inf/-inf pair in distinct places
            flat[[3, 7, 11]] = [np.nan, np.inf, np.inf]
            flat[-2] = -np.inf
        return x
    return O.values(t, dims, rng)


@pytest.mark.parametrize("t", O.TYPES)
def test_reduce(cpu_check, t):
    rng = np.random.default_rng(200 + O.TYPES.index(t))
    m = O.ModuleText(name=f"reduce_{t}")
    m.extra += _computations(t)
    args, checks = [], []
    reducers = _reducers(t)
    for k, (dims, layout, rdims) in enumerate(_REDUCE_CASES):
        sc = O.ShapeCase("", dims, layout)
        out_dims = tuple(d for i, d in enumerate(dims) if i not in rdims)
        # sums get positive inputs, the others the special values
        p_sum = m.param(sc.text(t))
        args.append(_input(t, dims, rng, positive=True))
        p_any = m.param(sc.text(t))
        args.append(_input(t, dims, rng, positive=False))
        # each case with one reducer (rotating with the case and the type), plus add
        names = list(reducers)
        rotating = names[(k + O.TYPES.index(t)) % len(names)]
        for name in dict.fromkeys([rotating] + (["add"] if k in (0, 2, 4, 8) else [])):
            _, init, check = reducers[name]
            c = m.op(f"{t}[]", f"constant({init})")
            x = p_sum if name == "add" else p_any
            # a non-default result layout where the result has two dims
            out = O.ShapeCase("", out_dims, (0, 1) if len(out_dims) == 2 else None).text(t)
            m.op(out, f"reduce({x}, {c}), dimensions={{{','.join(map(str, rdims))}}}, "
                      f"to_apply={name}_{t}", f"reduce {name} {sc.text(t)} dims {rdims}")
            checks.append(check)
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, checks)


@pytest.mark.parametrize("t", O.TYPES)
def test_variadic_argmax(cpu_check, t):
    """argmax over each dim of a [7,37] array (and a 3-D one over its middle dim), with
    NaN, ties and -0/+0 in the data; also a zero-size reduced dim."""
    rng = np.random.default_rng(300 + O.TYPES.index(t))
    pool = O.specials(t)
    x = rng.choice(pool[:12] if t != "pred" else pool, (7, 37))  # few values: many ties
    if t in O.FLOATS:
        x[2, 5] = x[2, 30] = np.nan
        x[4, :] = 0
        x[4, 3] = -0.0
    x3 = rng.choice(pool, (3, 10, 4))
    m = O.ModuleText(name=f"argmax_{t}")
    m.extra.append(_argmax_computation(t))
    lo, _ = _extremes(t)
    px = m.param(f"{t}[7,37]")
    p3 = m.param(f"{t}[3,10,4]{{0,2,1}}")
    pe = m.param(f"{t}[0,3]")
    init = m.op(f"{t}[]", f"constant({lo})")
    zero = m.op("s32[]", "constant(0)")
    for src, dims, layout, d in ((px, (7, 37), None, 0), (px, (7, 37), None, 1),
                                 (p3, (3, 10, 4), (0, 2, 1), 1), (pe, (0, 3), None, 0)):
        shape = O.ShapeCase("", dims, layout)
        idx = m.op(shape.text("s32"), f"iota(), iota_dimension={d}")
        out = tuple(n for i, n in enumerate(dims) if i != d)
        ot = O.ShapeCase("", out)
        r = m.op(f"({ot.text(t)}, {ot.text('s32')})",
                 f"reduce({src}, {idx}, {init}, {zero}), dimensions={{{d}}}, "
                 f"to_apply=argmax_{t}")
        for k, tt in enumerate((t, "s32")):
            m.op(ot.text(tt), f"get-tuple-element({r}), index={k}",
                 f"argmax {'value' if k == 0 else 'index'} of {shape.text(t)} dim {d}")
    got, want = cpu_check.run(m.text(), x, x3, np.zeros((0, 3), O.DTYPE[t]))
    O.compare_outputs(got, want, m.labels, O.EXACT)


# (input dims, window attribute, output dims)
_WINDOWS = (
    ((5, 7), "size=2x3 stride=1x2", (4, 3)),
    ((5, 7), "size=3x3 stride=2x2 pad=1_1x1_1", (3, 4)),
    ((5, 7), "size=2x2 stride=1x1 pad=0_1x2_0 lhs_dilate=2x1", (9, 8)),
    ((5, 7), "size=2x3 stride=1x3 rhs_dilate=2x2", (3, 1)),
    ((4, 6, 3), "size=1x3x2 stride=1x2x1 pad=0_0x1_1x0_1", (4, 3, 3)),
    ((37,), "size=4 stride=3 pad=2_2", (13,)),
    ((0, 4), "size=1x2", (0, 3)),
)


@pytest.mark.parametrize("t", ["f32", "s32", "u8", "bf16", "pred"])
def test_reduce_window(cpu_check, t):
    rng = np.random.default_rng(400 + O.TYPES.index(t))
    m = O.ModuleText(name=f"reduce_window_{t}")
    m.extra += _computations(t)
    reducers = _reducers(t)
    args, checks = [], []
    for k, (dims, window, out_dims) in enumerate(_WINDOWS):
        layout = tuple(range(len(dims))) if k % 3 == 1 else None  # some non-default layouts
        sc = O.ShapeCase("", dims, layout)
        for name in ("max", "add") if k != 6 else ("add",):
            _, init, check = reducers[name]
            p = m.param(sc.text(t))
            args.append(_input(t, dims, rng, positive=name == "add"))
            c = m.op(f"{t}[]", f"constant({init})")
            out_layout = (0, 1) if len(out_dims) == 2 and k % 2 == 0 else None
            m.op(O.ShapeCase("", out_dims, out_layout).text(t),
                 f"reduce-window({p}, {c}), window={{{window}}}, to_apply={name}_{t}",
                 f"reduce-window {name} {sc.text(t)} {window}")
            checks.append(check)
    got, want = cpu_check.run(m.text(), *args)
    O.compare_outputs(got, want, m.labels, checks)


def test_variadic_reduce_window(cpu_check):
    """A two-input reduce-window (running argmax over windows) with padding."""
    m = O.ModuleText(name="variadic_reduce_window")
    m.extra.append(_argmax_computation("f32"))
    rng = np.random.default_rng(5)
    x = rng.choice(np.array([1.0, 2.0, np.nan, -0.0, 0.0, 3.0], np.float32), (6, 9))
    px = m.param("f32[6,9]")
    idx = m.op("s32[6,9]", "iota(), iota_dimension=1")
    init = m.op("f32[]", "constant(-inf)")
    zero = m.op("s32[]", "constant(-1)")
    r = m.op("(f32[6,5], s32[6,5])",
             f"reduce-window({px}, {idx}, {init}, {zero}), window={{size=1x3 stride=1x2 "
             "pad=0_0x1_1}, to_apply=argmax_f32")
    m.op("f32[6,5]", f"get-tuple-element({r}), index=0", "values")
    m.op("s32[6,5]", f"get-tuple-element({r}), index=1", "indices")
    got, want = cpu_check.run(m.text(), x)
    O.compare_outputs(got, want, m.labels, O.EXACT)


def test_signed_zero_max_min(cpu_check):
    """max over {+0.0, -0.0} is +0.0 and min is -0.0 whatever the order (XLA semantics)."""
    text = """HloModule signed_zeros

mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b)
}

mn {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] minimum(a, b)
}

ENTRY main {
  p = f32[2,2] parameter(0)
  lo = f32[] constant(-inf)
  hi = f32[] constant(inf)
  rmax = f32[2] reduce(p, lo), dimensions={1}, to_apply=mx
  rmin = f32[2] reduce(p, hi), dimensions={1}, to_apply=mn
  wmax = f32[2,1] reduce-window(p, lo), window={size=1x2}, to_apply=mx
  wmin = f32[2,1] reduce-window(p, hi), window={size=1x2}, to_apply=mn
  ROOT out = (f32[2], f32[2], f32[2,1], f32[2,1]) tuple(rmax, rmin, wmax, wmin)
}
"""
    x = np.array([[0.0, -0.0], [-0.0, 0.0]], np.float32)
    got, want = cpu_check.run(text, x)
    expected = [np.array([0.0, 0.0], np.float32), np.array([-0.0, -0.0], np.float32),
                np.array([[0.0], [0.0]], np.float32), np.array([[-0.0], [-0.0]], np.float32)]
    labels = ["reduce max", "reduce min", "reduce-window max", "reduce-window min"]
    O.compare_outputs(got, expected, labels, O.EXACT)     # the cpu backend is right
    O.compare_outputs(want, expected, labels, O.EXACT)    # the interpreter is not (yet)


@pytest.mark.parametrize("t,value,want", [("bf16", 0.75, 225.0), ("f16", 7.75, 2325.0)])
def test_low_precision_sums_accumulate_in_f32(cpu_check, t, value, want):
    """300 equal addends: per-step rounding drifts far from the f32-accumulated sum."""
    text = f"""HloModule low_precision_sums

add {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  ROOT r = {t}[] add(a, b)
}}

ENTRY main {{
  p = {t}[4,300] parameter(0)
  z = {t}[] constant(0)
  r = {t}[4] reduce(p, z), dimensions={{1}}, to_apply=add
  w = {t}[4,1] reduce-window(p, z), window={{size=1x300}}, to_apply=add
  ROOT out = ({t}[4], {t}[4,1]) tuple(r, w)
}}
"""
    x = np.full((4, 300), value, O.DTYPE[t])
    got, ref = cpu_check.run(text, x)
    expected = [np.full((4,), want, O.DTYPE[t]), np.full((4, 1), want, O.DTYPE[t])]
    O.compare_outputs(ref, expected, ["reduce", "reduce-window"], O.EXACT)  # the reference
    O.compare_outputs(got, ref, ["reduce", "reduce-window"], O.EXACT)
