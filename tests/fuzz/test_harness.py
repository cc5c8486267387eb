"""The harness's own judgement: a difference counts unless something honest explains it."""

import numpy as np
import pytest

from fuzzlib import harness, xla

TEXT = """HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  ROOT n = f32[3] negate(x)
}"""
X = [np.array([1.0, 2.0, 3.0], np.float32)]


def _fake_xla(monkeypatch, values):
    """XLA returning `values` one after another (each a list of outputs)."""
    calls = iter(values)
    monkeypatch.setattr(xla, "run_text", lambda text, inputs, fast=False: next(calls))


def test_a_wrong_value_is_a_finding(monkeypatch):
    wrong = [np.float32([-1.0, -2.0, 5.0])]
    _fake_xla(monkeypatch, [wrong] * 5)
    result = harness.check(TEXT, X, backends=("cpu",))
    harness.clear_caches()
    assert [f.kind for f in result.findings] == ["mismatch"], result


def test_xla_changing_from_run_to_run_is_no_reference(monkeypatch):
    """XLA's value that moves between runs of the same executable is not a reference: the
    compiled backend is judged against the interpreter there."""
    right = [np.float32([-1.0, -2.0, -3.0])]
    _fake_xla(monkeypatch, [[np.float32([-1.0, -2.0, 5.0])]] * 2 + [right, right, right])
    result = harness.check(TEXT, X, backends=("cpu",))
    harness.clear_caches()
    assert not result.findings and result.explained == {"xla-nondeterministic": 1}, result


def test_nudged_steps_16_bit_results_by_their_own_ulps():
    """f16/bf16 results move by ulps of their own type: sign-magnitude stepping of the bit
    pattern, stopping at zero (keeping its sign), overflowing to inf past the largest
    finite value, leaving zeros, infinities and NaNs alone."""
    from fuzzlib import compare as C
    for dtype in (np.dtype(np.float16), C.BF16):
        info = ml_finfo(dtype)
        x = np.array([1.0, -1.0, info.smallest_subnormal, -info.smallest_subnormal,
                      info.max, 0.0, -0.0, np.inf, np.nan], dtype)
        out, down = harness._nudged(x, 2), harness._nudged(x, -2)
        assert out.dtype == dtype and down.dtype == dtype
        one = np.array(1.0, dtype)
        assert out[0] == one + 2 * info.eps
        assert out[1] == -out[0] and down[1] == -down[0]
        assert down[0] == one - 2 * info.epsneg
        assert out[2] == 3 * info.smallest_subnormal and down[2] == 0
        assert np.signbit(down[3]) and down[3] == 0
        assert np.isposinf(out[4]) and down[4] < info.max
        assert [str(v) for v in out[5:]] == [str(v) for v in x[5:]]
        assert np.signbit(out[6]) and np.signbit(down[6])
    assert harness._nudged(np.float16(0.001351), 1) == np.nextafter(
        np.float16(0.001351), np.float16(1))


def ml_finfo(dtype):
    import ml_dtypes
    return ml_dtypes.finfo(dtype)


F16_EXPM1_EQ = """HloModule m
ENTRY e {
  x = f16[] parameter(0)
  e = f16[] exponential-minus-one(x)
  ROOT c = pred[] compare(x, e), direction=NE
}"""


def test_f16_function_one_ulp_off_decides_nothing():
    """XLA's f16 expm1(0.001351) is x itself (the rounded value is x + 1 ulp, XLA's f16
    expm1 is up to 2 f16 ulps off): the compare is not determined by the program (hlo
    12000272)."""
    result = harness.check(F16_EXPM1_EQ, [np.array(0.001351, np.float16)])
    harness.clear_caches()
    assert not result.findings and result.explained == {"ill-conditioned": 3}, result


MIN_OF_SUBNORMAL = """HloModule m
ENTRY e {
  x = f64[3] parameter(0)
  c = f64[] constant(-4.94065645841247e-324)
  b = f64[3] broadcast(c), dimensions={}
  ROOT m = f64[3] minimum(x, b)
}"""


def test_sign_of_a_flushed_subnormal_in_minimum_as_either_xla_configuration():
    """minimum(+0, -4.9e-324): XLA's default configuration gives +0 (so does xlapy's cpu),
    its fast one -0, as the flushing interpreter; the IEEE interpreter's -4.9e-324 is
    explained by flushing against either (hlo 13000443)."""
    inputs = [np.zeros(3)]
    assert not np.signbit(xla.run_text(MIN_OF_SUBNORMAL, inputs)[0]).any()
    assert np.signbit(harness.evaluate(harness.parse(MIN_OF_SUBNORMAL), inputs, True)[0]).all()
    result = harness.check(MIN_OF_SUBNORMAL, inputs)
    harness.clear_caches()
    assert not result.findings, result
    assert result.explained.get("interpreter-ieee-subnormals") == 1, result


ATAN2_OF_KEPT_SUBNORMALS = """HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  e = f32[4] exponential-minus-one(x)
  b = s32[4] bitcast-convert(e)
  f = f32[4] bitcast-convert(b)
  ROOT a = f32[4] atan2(e, f)
}"""


def test_kept_subnormal_then_a_known_departure_is_explained_by_both(monkeypatch):
    """XLA's expm1 keeps a subnormal and its atan2 of two subnormals is then NaN (jax
    13007872): neither explanation alone gives XLA's value, the departure applied to the
    program computed with IEEE subnormals does; a wrong value beside it is still a finding.
    (Since hlo 18006367 the departure of expm1 itself is known, tiny-argument-returned,
    and explains it with the flushed program; without it, the IEEE program still does.)"""
    inputs = [np.float32([4.2038954e-45, -1.4012985e-45, 0.5, -2.0])]
    got = xla.run_text(ATAN2_OF_KEPT_SUBNORMALS, inputs)[0]
    assert np.isnan(got[:2]).all(), got  # (XLA's departure: the case is only honest then)
    result = harness.check(ATAN2_OF_KEPT_SUBNORMALS, inputs)
    harness.clear_caches()
    assert not result.findings, result
    assert result.explained.get("tiny-argument-returned+atan2-of-two-subnormals") == 3, result
    from fuzzlib import deviations
    monkeypatch.setattr(deviations, "DEVIATIONS", [
        d for d in deviations.DEVIATIONS if d.name != "tiny-argument-returned"])
    result = harness.check(ATAN2_OF_KEPT_SUBNORMALS, inputs)
    harness.clear_caches()
    assert not result.findings, result
    assert result.explained.get("xla-keeps-subnormals+atan2-of-two-subnormals") == 3, result


def test_kept_subnormal_explains_nothing_when_xlapy_is_off_its_own_value(monkeypatch):
    inputs = [np.float32([4.2038954e-45, -1.4012985e-45, 0.5, -2.0])]
    right = xla.run_text(ATAN2_OF_KEPT_SUBNORMALS, inputs)
    wrong = [np.where(np.isnan(right[0]), right[0], right[0] + 1).astype(np.float32)]
    _fake_xla(monkeypatch, [wrong] * 6)
    result = harness.check(ATAN2_OF_KEPT_SUBNORMALS, inputs, backends=("cpu",))
    harness.clear_caches()
    assert [f.kind for f in result.findings] == ["mismatch"], result


SIGN_OF_SUBNORMALS = """HloModule sign_of_subnormals
ENTRY e {
  x = f32[4] parameter(0)
  ROOT s = f32[4] sign(x)
}"""


def test_xla_flushing_a_kept_subnormal_needs_xlapys_own_value(monkeypatch):
    """'xla-flushes-a-kept-subnormal' (XLA's select-as-maximum, hlo 15002396) explains a
    subnormal only where xlapy's value is the program's with denormals flushed: the old bug
    of issue 16, sign(1e-40) giving 1e-40 itself where XLA and the flushed program give 0,
    stays a finding."""
    inputs = [np.float32([1e-40, -1e-40, 1.0, 0.0])]
    assert not xla.run_text(SIGN_OF_SUBNORMALS, inputs)[0][:2].any()   # XLA: +-0
    real = harness.run_backend

    def buggy(backend, module, xs):
        return [np.array(xs[0], copy=True)] if backend == "cpu" else real(backend, module, xs)

    monkeypatch.setattr(harness, "run_backend", buggy)
    result = harness.check(SIGN_OF_SUBNORMALS, inputs, backends=("cpu",))
    harness.clear_caches()
    assert [f.kind for f in result.findings] == ["mismatch"], result
    assert "xla-flushes-a-kept-subnormal" not in result.explained, result


CRASHING_DEFAULT = """HloModule m
ENTRY e {
  a = s32[7] parameter(0)
  b = s16[7] parameter(1)
  x = s64[4] parameter(2)
  y = s64[4] parameter(3)
  c = s16[7] convert(a)
  o = s16[7] or(b, c)
  p = s64[4] power(x, y)
  ROOT t = (s16[7], s64[4]) tuple(o, p)
}"""


def test_default_configuration_never_sees_its_crash():
    """XLA's default configuration dies of SIGSEGV on an and/or of a narrowing signed
    convert (hlo seed 15003384). Its fast configuration gives (-1)^-8 = 0 for an s64 power
    where HLO (and the default configuration) give 1: explaining that needs the default
    configuration, which then runs the module without the crashing output."""
    from xlapy.hlo.parser import parse
    module = parse(CRASHING_DEFAULT)
    assert xla.crashes_default_xla(module)
    text, kept = xla.default_safe(module)
    assert kept == [1] and " or(" not in text
    inputs = [np.arange(7, dtype=np.int32) * 40000, np.arange(7, dtype=np.int16),
              np.int64([-1, -1, 2, -1]), np.int64([-8, -9, 3, 0])]
    assert np.array_equal(xla.run_text(CRASHING_DEFAULT, inputs, fast=True)[1], [0, 0, 8, 1])
    result = harness.check(CRASHING_DEFAULT, inputs, backends=("interpreter", "cpu"))
    harness.clear_caches()
    assert not result.findings and result.explained == {"xla-fast-mode": 2}, result


def test_gpu_backends_are_judged_against_the_ieee_interpreter(monkeypatch):
    """reference="interpreter-ieee" (the gpu keeps subnormals, as XLA:GPU): XLA is never
    run; the emulated gpu matches, and a wrong value is a finding."""
    monkeypatch.setattr(xla, "run_text", lambda *a, **k: pytest.fail("XLA was run"))
    sub = [np.float32([1e-40, -2.0, 3.0])]
    result = harness.check(TEXT, sub, backends=("gpu-emulator",), reference="interpreter-ieee")
    assert not result.findings and result.reference == "interpreter-ieee", result
    real = harness.run_backend
    monkeypatch.setattr(harness, "run_backend", lambda b, m, x: [
        np.float32([-1e-40, 2.0, -3.5])] if b == "gpu-emulator" else real(b, m, x))
    result = harness.check(TEXT, sub, backends=("gpu-emulator",), reference="interpreter-ieee")
    harness.clear_caches()
    assert [(f.kind, f.backend) for f in result.findings] == [("mismatch", "gpu-emulator")]


ORDER_DECIDES = """HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
keep {
  ROOT p = s32[4,8] parameter(0)
}
flip {
  p = s32[4,8] parameter(0)
  ROOT r = s32[4,8] reverse(p), dimensions={0}
}
ENTRY e {
  x = s32[4,8] parameter(0)
  f = f32[4,8] convert(x)
  z = f32[] constant(0)
  s = f32[] reduce(f, z), dimensions={0,1}, to_apply=add
  gt = pred[] compare(s, z), direction=GT
  i = s32[] convert(gt)
  ROOT c = s32[4,8] conditional(i, x, x), branch_computations={keep, flip}
}"""


def test_a_sum_whose_order_decides_a_branch_is_ill_conditioned():
    """2^31 - 1, -2^31 and small integers summed in f32: the sign depends on the order
    (index order 53, rows first 57, columns first -12, exact 28), so the branch is not
    determined by the program. The emulated gpu reduces the columns first; the "outer-first"
    order variant covers it (gpu fuzz jax 17000005)."""
    x = np.array([[2147483647, -1, -9, -1, -8, -6, 1, -12],
                  [3, 3, -4, -2, -1, 12, -2147483648, -4],
                  [-8, 6, 9, 2, -1, 1, 1, 7], [9, 9, 6, -1, 12, 11, -3, -3]], np.int32)
    module = harness.parse(ORDER_DECIDES)
    outer = harness.evaluate_reordered(module, [x], "outer-first")[0]
    assert not np.array_equal(outer, harness.evaluate_reordered(module, [x], "sequential")[0])
    result = harness.check(ORDER_DECIDES, [x], backends=("gpu-emulator",),
                           reference="interpreter-ieee")
    harness.clear_caches()
    assert not result.findings and result.explained == {"ill-conditioned": 1}, result


TWO = """HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  n = f32[3] negate(x)
  d = f32[3] add(x, x)
  ROOT t = (f32[3], f32[3]) tuple(n, d)
}"""


def test_an_element_matching_either_xla_configuration_is_xlas(monkeypatch):
    """Output 0 matches only XLA's default configuration and output 1 only its fast one:
    each is a value XLA computes, so nothing is left (hlo 16002668: a product of x * c
    was inf in the fast configuration and finite in the default one)."""
    fast = [np.float32([-1.0, -2.0, -5.0]), np.float32([2.0, 4.0, 6.0])]
    default = [np.float32([-1.0, -2.0, -3.0]), np.float32([2.0, 4.0, 7.0])]
    _fake_xla(monkeypatch, [fast] + [default] * 4)
    result = harness.check(TWO, X, backends=("cpu",))
    harness.clear_caches()
    assert not result.findings and result.explained == {"xla-fast-mode": 1}, result


def test_a_jax_program_whose_lowering_divides_constants_by_zero_runs():
    """jaxlib's StableHLO -> HLO conversion folds remainder(~s, s), s the sum of a 1x0
    slice of a parameter, and dies of SIGFPE (jax seed 18005373 killed a campaign worker):
    the generator reads such a program with xlapy's own StableHLO reader instead, and XLA
    is no reference for it. In a child process, so a regression fails instead of killing
    the test run."""
    import os
    import pathlib
    import subprocess
    import sys
    here = pathlib.Path(__file__).resolve().parent
    code = ("from fuzzlib.gen_jax import generate\n"
            "from fuzzlib import xla\n"
            "p = generate(18005373)\n"
            "print(xla.divides_constants(p.module), xla.unreliable(p.module))\n")
    env = dict(os.environ, PYTHONPATH=str(here), XLAPY_DISABLE_CACHE="1")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["True", "True"]


def test_an_empty_array_is_a_constant_to_xlas_folding():
    from xlapy.hlo.parser import parse
    text = """HloModule m
add {
  a = u64[] parameter(0)
  b = u64[] parameter(1)
  ROOT s = u64[] add(a, b)
}
ENTRY e {
  x = u32[8,3] parameter(0)
  i = s32[] parameter(1)
  d = u32[1,0] dynamic-slice(x, i, i), dynamic_slice_sizes={1,0}
  c = u64[1,0] convert(d)
  z = u64[] constant(0)
  s = u64[1] reduce(c, z), dimensions={1}, to_apply=add
  n = u64[1] not(s)
  ROOT r = u64[1] remainder(n, s)
}"""
    module = parse(text)
    assert xla.divides_constants(module) and xla.crashes_xla(module)
    text2 = text.replace("remainder(n, s)", "remainder(n, n)").replace(
        "n = u64[1] not(s)", "n = u64[1] convert(x2)").replace(
        "i = s32[] parameter(1)", "i = s32[] parameter(1)\n  x2 = u32[1] parameter(2)")
    assert not xla.divides_constants(parse(text2))


@pytest.mark.parametrize("operands,start,crashes", [
    ("a, a0", 5, True), ("a, a0, a0", 5, True), ("a, a0, b", 5, True), ("a, b, a0", 8, True),
    ("a0, a", 5, False), ("a, b, a0", 6, False), ("a0, a, b", 0, False)])
def test_empty_slice_at_an_empty_concatenated_operand_crashes_xla(operands, start, crashes):
    """XLA:CPU aborts on an empty slice of a concatenate starting where an empty operand
    after others begins (hlo 19005856; the table measured in child processes)."""
    from xlapy.hlo.parser import parse
    sizes = {"a": 5, "a0": 0, "b": 3}
    n = sum(sizes[o.strip()] for o in operands.split(","))
    text = f"""HloModule m
ENTRY e {{
  a = f64[5] parameter(0)
  a0 = f64[0] parameter(1)
  b = f64[3] parameter(2)
  c = f64[{n}] concatenate({operands}), dimensions={{0}}
  ROOT s = f64[0] slice(c), slice={{[{start}:{start}]}}
}}"""
    assert xla.crashes_xla(parse(text)) is crashes


def test_the_sign_of_a_nan_from_two_nan_operands_is_the_implementations():
    """hlo 20001183: x = -x * NaN twice (the second product has two NaN operands), then a
    TOTALORDER compare: XLA's NaN is positive, the interpreter's negative; both are HLO's."""
    text = """HloModule m
ENTRY e {
  x = f64[] parameter(0)
  n = f64[] constant(nan)
  a = f64[] multiply(x, n)
  b = f64[] negate(a)
  c = f64[] multiply(b, n)
  z = f64[] constant(0)
  ROOT k = pred[] compare(c, z), direction=GE, type=TOTALORDER
}"""
    inputs = [np.float64(-0.0)]
    result = harness.check(text, inputs)
    harness.clear_caches()
    assert not result.findings, result


@pytest.mark.parametrize("lhs_dilate,pad,in0,crashes", [
    ((1, 2), (2, 2), 1, True), ((1, 1), (2, 2), 1, False), ((1, 2), (0, 0), 5, False),
    ((1, 2), (2, 2), 5, False)])
def test_a_convolution_xlas_simplifier_swaps_into_an_abort(lhs_dilate, pad, in0, crashes):
    """hlo 20002393: input [in0, 3] (spatial), kernel 3x2 with rhs_dilate=2x1; the table
    measured in child processes (tests/fuzz/fuzzlib/xla.py, _swapped_conv_aborts; the
    predicate is wider than the measured crashes: lhs dilation of the kernel-sized
    dimension itself compiles, and is flagged too)."""
    from xlapy.hlo.parser import parse
    sizes = []
    for n, k, s, (lo, hi), ld, rd in ((in0, 3, 2, pad, lhs_dilate[0], 2),
                                      (3, 2, 1, (0, 0), lhs_dilate[1], 1)):
        sizes.append(((n - 1) * ld + 1 + lo + hi - ((k - 1) * rd + 1)) // s + 1)
    text = f"""HloModule m
ENTRY e {{
  p5 = f32[{in0},3,3,1] parameter(0)
  p6 = f32[2,3,2,3] parameter(1)
  ROOT c = f32[1,2,{sizes[0]},{sizes[1]}] convolution(p5, p6), window={{WINDOW}},
    dim_labels=0f1b_oi10->bf01
}}"""
    window = (f"size=3x2 stride=2x1 pad={pad[0]}_{pad[1]}x0_0 "
              f"lhs_dilate={lhs_dilate[0]}x{lhs_dilate[1]} rhs_dilate=2x1")
    text = text.replace("WINDOW", window)
    assert xla._swapped_conv_aborts(parse(text).entry.root) is crashes


def test_reversed_reduce_window_sums_each_window_backwards():
    """The sensitivity's "reversed" variant sums a stride-1 reduce-window's windows in
    reverse order (flipped operand, swapped padding): exact on integers, so the same
    values as the interpreter's; on a cancelling cumsum a different rounding (jax
    24000716: a cumsum of a cumsum, then a remainder that shows the difference)."""
    from xlapy.hlo.parser import parse
    text = """HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[7] parameter(0)
  z = f32[] constant(0)
  ROOT c = f32[7] reduce-window(x, z), window={size=7 pad=6_0}, to_apply=add
}"""
    module = parse(text)
    ints = [np.arange(1, 8, dtype=np.float32) * [1, -2, 3, 5, -7, 11, 2]]
    base = harness.evaluate(module, ints, True)[0]
    rev = harness.evaluate_reordered(module, ints, "reversed")[0]
    np.testing.assert_array_equal(base, np.cumsum(ints[0]))
    np.testing.assert_array_equal(rev, base)
    cancel = [np.array([1e8, 1, -1e8, 1, 1, 1, 1], np.float32)]
    base = harness.evaluate(module, cancel, True)[0]
    rev = harness.evaluate_reordered(module, cancel, "reversed")[0]
    # ((1e8 + 1) - 1e8) + 1 = 1 in index order; reversed, 1 and 1 each vanish beside -1e8
    assert base[3] == 1 and rev[3] == 0, (base, rev)


NAN_ORDER = """HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  q = f32[3] divide(b, a)
  ROOT c = pred[3] compare(b, q), direction=LT, type=TOTALORDER
}"""


def test_a_gpus_canonical_nan_in_a_total_order_is_the_implementations(monkeypatch):
    """NVIDIA GPUs return a positive NaN (0x7fff... payload) for 0/0 where x86 returns a
    negative one, so b < 0/0 in total order is True on an H100 and False on the IEEE
    interpreter (hlo 25000611): judged as a gpu, the element is the implementation's; a
    wrong value elsewhere is still a finding; judged against XLA (a cpu), the NaN's sign
    stays x86's."""
    inputs = [np.float32([0.0, 2.0, 4.0]), np.float32([0.0, 1.0, 1.0])]
    real = harness.run_backend
    gpu = [np.array([True, False, False])]   # 0 < +NaN; 1 < 0.5 no; 1 < 0.25 no
    monkeypatch.setattr(harness, "run_backend",
                        lambda b, m, x: gpu if b == "gpu-emulator" else real(b, m, x))
    result = harness.check(NAN_ORDER, inputs, backends=("gpu-emulator",),
                           reference="interpreter-ieee")
    assert not result.findings and result.explained == {"ill-conditioned": 1}, result
    gpu[0] = np.array([True, True, False])  # element 1 wrong
    result = harness.check(NAN_ORDER, inputs, backends=("gpu-emulator",),
                           reference="interpreter-ieee")
    assert [(f.kind, f.backend) for f in result.findings] == [("mismatch", "gpu-emulator")]
    gpu[0] = np.array([True, False, False])
    monkeypatch.setattr(harness, "run_backend",
                        lambda b, m, x: gpu if b == "cpu" else real(b, m, x))
    result = harness.check(NAN_ORDER, inputs, backends=("cpu",))
    harness.clear_caches()
    assert [(f.kind, f.backend) for f in result.findings] == [("mismatch", "cpu")], result


REMAINDER_OF_PRODUCT = """HloModule m
ENTRY e {
  q = f32[2] parameter(0)
  a = f32[2] constant({3203.4567, 3203.4567})
  b = f32[2] constant({10, 0.02})
  d = f32[2] constant({30, 30})
  s = f32[2] multiply(a, b)
  r = f32[2] remainder(s, d)
  ROOT t = (f32[2], f32[2]) tuple(r, q)
}"""


def test_a_remainder_shows_a_large_computed_dividends_rounding_whole(monkeypatch):
    """remainder(x, 30) of a computed x ~3.2e4 (from constants: nothing for the input
    perturbation to move): a few ulps of x (0.002 each) move the small remainder by as
    much, beyond a relative tolerance of the remainder (jax 24000716, where the dividend
    was a cumsum); a remainder off by more, or a dividend under 64 divisors (64 here) off
    by as many of its ulps, is a finding."""
    q = np.float32([1, 2])
    text = REMAINDER_OF_PRODUCT
    want = [np.asarray(w) for w in harness.evaluate(parse_text(text), [q], True)]
    ulp = np.spacing(np.float32([32034.567, 64.07]))
    for off, finding in (([2 * ulp[0], 0], False), ([0.5, 0], True), ([0, 8 * ulp[1]], True)):
        fake = [(want[0] + np.float32(off)).astype(np.float32), q]
        monkeypatch.setattr(harness, "run_backend", lambda b, m, x, fake=fake: fake)
        result = harness.check(text, [q], backends=("cpu",))
        assert bool(result.findings) == finding, (off, result)


def parse_text(text):
    from xlapy.hlo.parser import parse
    return parse(text)
