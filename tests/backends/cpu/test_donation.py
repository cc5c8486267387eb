"""Input/output aliasing (donation) and in-place outputs on the cpu backend, and
`jit(donate_argnums=...)`."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.backends.base import get_platform
from xlapy.errors import VerificationError, XlapyError, XlapyWarning
from xlapy.hlo import parse
from xlapy.hlo.aliasing import Alias, format_aliases, module_aliases, parse_aliases
from xlapy.hlo.verifier import verify

f32 = np.float32

STEP = """HloModule step, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, may-alias) }
ENTRY e {
  w = f32[64,64] parameter(0)
  b = f32[64] parameter(1)
  x = f32[64,64] parameter(2)
  c = f32[] constant(2)
  bc = f32[64,64] broadcast(c), dimensions={}
  m = f32[64,64] multiply(x, bc)
  s = f32[64,64] subtract(w, m)
  one = f32[] constant(1)
  b1 = f32[64] broadcast(one), dimensions={}
  bb = f32[64] add(b, b1)
  ROOT t = (f32[64,64], f32[64]) tuple(s, bb)
}"""


def _inputs():
    rng = np.random.default_rng(0)
    return (rng.random((64, 64), dtype=f32), rng.random(64, dtype=f32),
            rng.random((64, 64), dtype=f32))


def _cpu(text):
    return get_platform("cpu").compiler.compile(parse(text))


def test_aliases_parse_print_and_roundtrip():
    module = parse(STEP)
    assert module_aliases(module) == [Alias((0,), 0, ()), Alias((1,), 1, ())]
    reparsed = parse(module.to_string())
    assert reparsed.attrs["input_output_alias"] == module.attrs["input_output_alias"]
    text = "{ {0}: (0, {}, may-alias), {1,2}: (3, {1}, must-alias), {}: (1, {}) }"
    parsed = parse_aliases(text)
    assert parsed[1] == Alias((1, 2), 3, (1,), "must-alias")
    assert parsed[2].kind == "may-alias"
    assert parse_aliases(format_aliases(parsed)) == parsed


@pytest.mark.parametrize("alias, message", [
    ("{ {0}: (5, {}, may-alias) }", "parameter 5 does not exist"),
    ("{ {0}: (1, {}, may-alias) }", "the shapes differ"),
    ("{ {0}: (0, {}, may-alias), {0}: (0, {}, may-alias) }", "appears twice"),
    ("{ {7}: (0, {}, may-alias) }", "is not in shape"),
    ("{ {0}: (0, {}, sometimes) }", "unknown alias kind"),
    ("{ {0} -> 0 }", "cannot read"),
])
def test_verifier_rejects_bad_aliases(alias, message):
    text = STEP.replace(STEP.splitlines()[0],
                        f"HloModule step, input_output_alias={alias}")
    with pytest.raises(VerificationError, match=message):
        verify(parse(text))


def test_cpu_writes_results_into_donated_arrays():
    exe = _cpu(STEP)
    assert exe.spec.aliases == {0: 0, 1: 1}
    w, b, x = _inputs()
    w0, b0 = w.copy(), b.copy()
    s, bb = exe.run(w, b, x)
    assert s is w and bb is b
    np.testing.assert_array_equal(s, w0 - f32(2) * x)
    np.testing.assert_array_equal(bb, b0 + f32(1))
    # the interpreter ignores the aliases (they are permissions) and agrees
    want = get_platform("interpreter").compiler.compile(parse(STEP)).run(w0, b0, x)
    np.testing.assert_array_equal(want[0], s)


def test_read_only_or_overlapping_donations_are_copied_first():
    exe = _cpu(STEP)
    w, b, x = _inputs()
    frozen = w.copy()
    frozen.flags.writeable = False
    s, _ = exe.run(frozen, b.copy(), x)
    assert s is not frozen
    np.testing.assert_array_equal(frozen, w)              # left alone
    np.testing.assert_array_equal(s, w - f32(2) * x)
    xx = x.copy()                                          # the donated array is also x
    s, _ = exe.run(xx, b.copy(), xx)
    np.testing.assert_array_equal(s, x - f32(2) * x)


def test_a_donation_that_is_unsafe_is_dropped_with_a_warning():
    # w is read again after the output that would overwrite it is written (by r)
    text = """HloModule m, input_output_alias={ {0}: (0, {}, may-alias) }
ENTRY e {
  w = f32[32,32] parameter(0)
  x = f32[32,32] parameter(1)
  d = f32[32,32] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[32,32] dot(d, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[32,32], f32[32,32]) tuple(d, r)
}"""
    with pytest.warns(XlapyWarning, match="could not be reused"):
        exe = get_platform("cpu").compiler.compile(parse(text), parallel_threshold=10**9 + 7)
    assert exe.spec.aliases == {}
    rng = np.random.default_rng(1)
    w, x = rng.random((32, 32), dtype=f32), rng.random((32, 32), dtype=f32)
    w0 = w.copy()
    d, r = exe.run(w, x)
    np.testing.assert_array_equal(w, w0)
    np.testing.assert_allclose(r, (x @ x) @ w0, rtol=1e-5)


def _mnist_step(w, b, x, y):
    def loss(w, b):
        logits = x @ w + b
        return -xnp.mean(xnp.sum(y * xp.nn.log_softmax(logits), -1))
    gw, gb = xp.grad(loss, argnums=(0, 1))(w, b)
    return w - 0.5 * gw, b - 0.5 * gb


def _mnist_inputs():
    rng = np.random.default_rng(2)
    w = (rng.standard_normal((784, 10)) * 0.01).astype(f32)
    y = np.eye(10, dtype=f32)[rng.integers(0, 10, 100)]
    return w, np.zeros(10, f32), rng.random((100, 784), dtype=f32), y


def _same_buffer(result, array) -> bool:
    """jit's result is an ArrayImpl view: written into the donated array's own buffer."""
    return result.ctypes.data == array.ctypes.data and np.shares_memory(result, array)


def test_jit_donate_argnums_updates_weights_in_place():
    plain = xp.jit(_mnist_step)
    donated = xp.jit(_mnist_step, donate_argnums=(0, 1))
    w, b, x, y = _mnist_inputs()
    assert "input_output_alias={ {0}: (0, {}, may-alias)" in donated.lower(w, b, x, y).as_text()
    want = plain(w, b, x, y)
    w2, b2 = w.copy(), b.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error", XlapyWarning)       # both donations are honoured
        got = donated(w2, b2, x, y)
        assert _same_buffer(got[0], w2) and _same_buffer(got[1], b2)
        for _ in range(3):                                 # the fast path keeps donating
            want = plain(*want, x, y)
            got = donated(*got, x, y)
    assert _same_buffer(got[0], w2)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-7)


def test_donating_a_static_argument_is_an_error():
    f = xp.jit(lambda x, n: x * n, static_argnums=1, donate_argnums=1)
    with pytest.raises(XlapyError, match="both static and donated"):
        f(np.ones(3, f32), 2)


def test_gemm_epilogue_runs_in_place_in_the_output(monkeypatch):
    # the BLAS path: gemm into the result, then the bias+relu kernel in place (with xlapy's
    # own gemm the epilogue runs inside the gemm instead: test_gemm_epilogue.py)
    monkeypatch.setenv("XLAPY_GEMM", "blas")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((256, 128)).astype(f32)
    w = rng.standard_normal((128, 64)).astype(f32)
    b = rng.standard_normal(64).astype(f32)
    f = xp.jit(lambda x, w, b: xnp.maximum(x @ w + b, 0.0))
    compiled = f.lower(x, w, b).compile()
    # the gemm writes into the result and the bias+relu kernel updates it there
    assert compiled.memory_analysis()["temp_size_in_bytes"] == 0
    np.testing.assert_allclose(compiled(x, w, b), np.maximum(x @ w + b, 0), rtol=1e-5,
                               atol=1e-5)


def test_in_place_kernel_in_the_arena_matches_the_interpreter(monkeypatch):
    monkeypatch.setenv("XLAPY_GEMM", "blas")   # arena sizes without the own gemm's scratch
    text = """HloModule m
ENTRY e {
  a = f32[96,80] parameter(0)
  b = f32[80,96] parameter(1)
  d = f32[96,96] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[96,96] tanh(d)
  e = f32[96,96] exponential(t)
  ROOT r = f32[96,96] dot(e, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}"""
    text_dead = text.replace("dot(e, d)", "dot(e, e)")
    rng = np.random.default_rng(4)
    a = rng.standard_normal((96, 80)).astype(f32) * f32(0.1)
    b = rng.standard_normal((80, 96)).astype(f32) * f32(0.1)
    for t, slots in ((text, 2), (text_dead, 1)):
        exe = _cpu(t)
        # d lives on (read by r) so exp(tanh(d)) needs its own slot; when d dies at the
        # fused tanh+exp kernel, that kernel overwrites it
        assert exe.memory_analysis()["temp_size_in_bytes"] == slots * 96 * 96 * 4
        want = get_platform("interpreter").compiler.compile(parse(t)).run(a, b)
        np.testing.assert_allclose(exe.run(a, b), want, rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("hidden", [512, 32], ids=["bias updates in merged kernels",
                                                   "bias updates in column kernels"])
def test_training_step_with_every_parameter_donated(hidden):
    # the bias updates are column reductions that also read the old bias (b - lr * sum(g)),
    # at 512 units merged with the gradient (column fusion): they write the new bias over
    # the donated one, with no warning, and give the same numbers as without donation
    def step(w1, b1, w2, b2, x, y):
        def loss(w1, b1, w2, b2):
            h = xnp.maximum(x @ w1 + b1, 0)
            return xnp.sum((h @ w2 + b2 - y) ** 2)
        grads = xp.grad(loss, argnums=(0, 1, 2, 3))(w1, b1, w2, b2)
        return tuple(p - f32(0.01) * g for p, g in zip((w1, b1, w2, b2), grads))

    rng = np.random.default_rng(7)
    params = [rng.standard_normal((64, hidden)).astype(f32) * f32(0.1),
              rng.standard_normal(hidden).astype(f32),
              rng.standard_normal((hidden, hidden)).astype(f32) * f32(0.05),
              rng.standard_normal(hidden).astype(f32)]
    x = rng.standard_normal((32, 64)).astype(f32)
    y = rng.standard_normal((32, hidden)).astype(f32)
    want = xp.jit(step)(*[p.copy() for p in params], x, y)
    donated = xp.jit(step, donate_argnums=(0, 1, 2, 3))
    args = [p.copy() for p in params]
    with warnings.catch_warnings():
        warnings.simplefilter("error", XlapyWarning)   # every donation is honoured
        got = donated(*args, x, y)
    for g, a, w in zip(got, args, want):
        assert _same_buffer(g, a)                      # written where the parameter was
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
