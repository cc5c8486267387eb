"""Attention's scores, softmax and weighted sum as one fused kernel per batch element
(passes/attention_fusion.py, emitters/attention.py), and a batched dot writing its result
in the order its transposing user reads (passes/dot_layout.py): which programs take them,
and their results against the reference interpreter and JAX, on odd sizes (sequence
lengths that are no multiple of the gemm's tiles, one head, batch 1) and 1 to 3 threads."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.backends.base import flatten
from xlapy.backends.cpu.compiler import CpuCompiler
from xlapy.backends.cpu.passes.attention_fusion import KIND, block_rows
from xlapy.backends.interpreter import evaluate
from xlapy.hlo import parse

f32 = np.float32


def _heads(np_, bsz, seq, heads, dh, kv=None):
    def split(t, n):
        return np_.transpose(np_.reshape(t, (bsz, n, heads, dh)), (0, 2, 1, 3))

    def core(q, k, v):
        kv_len = k.shape[1]
        q, k, v = split(q, seq), split(k, kv_len), split(v, kv_len)
        s = np_.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(dh).astype(f32)
        s = s - np_.max(s, -1, keepdims=True)
        e = np_.exp(s)
        a = e / np_.sum(e, -1, keepdims=True)
        o = np_.einsum("bhqk,bhkd->bhqd", a, v)
        return np_.reshape(np_.transpose(o, (0, 2, 1, 3)), (bsz, seq, heads * dh))
    return core


def _args(rng, bsz, seq, heads, dh, kv=None):
    kv = seq if kv is None else kv
    return (rng.standard_normal((bsz, seq, heads * dh)).astype(f32),
            rng.standard_normal((bsz, kv, heads * dh)).astype(f32),
            rng.standard_normal((bsz, kv, heads * dh)).astype(f32))


def _compile(fn, args, threads):
    text = xp.jit(fn).lower(*args).as_text()
    module = parse(text)
    return module, CpuCompiler().compile(module, num_threads=threads)


def _optimized(exe) -> str:
    return exe.optimized_module.to_string()


def _check(module, exe, args):
    got = [np.asarray(g) for g in flatten(exe.run(*args))]
    want = [np.asarray(w) for w in flatten(evaluate(module, *args))]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


# (batch, sequence, heads, head width, key/value length). Long keys take blocks of rows
# (attention_fusion.block_rows: 1500 keys, 43 rows, a last block of 27; 2000 keys, 32
# rows, a last one of 4); one batch element of one head in one block is left unfused
# (split across threads by the gemms instead)
SHAPES = [(2, 37, 3, 24, 53), (1, 64, 2, 64, None), (1, 48, 1, 32, None), (3, 50, 5, 16, None),
          (2, 130, 2, 40, 97), (2, 70, 3, 8, 1500), (1, 100, 1, 16, 2000)]


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(str(v) for v in s))
def test_fused_attention_matches_the_interpreter(shape, threads):
    bsz, seq, heads, dh, kv = shape
    rng = np.random.default_rng(sum(shape[:4]) + threads)
    args = _args(rng, bsz, seq, heads, dh, kv)
    module, exe = _compile(_heads(xnp, bsz, seq, heads, dh), args, threads)
    text = _optimized(exe)
    blocks = -(-seq // block_rows(seq, kv or seq, 4))
    assert (f"kind={KIND}" in text) == (bsz * heads * blocks > 1)
    # the head-merging transpose became a bitcast of the (fused) result (dot_layout.py)
    assert " transpose(" not in text.split("ENTRY")[1]
    _check(module, exe, args)


def test_attention_block_matches_jax():
    import jax
    import jax.numpy as jnp
    bsz, seq, heads, dh = 2, 96, 4, 32
    rng = np.random.default_rng(5)
    args = _args(rng, bsz, seq, heads, dh)
    got = xp.jit(_heads(xnp, bsz, seq, heads, dh))(*args)
    want = jax.jit(_heads(jnp, bsz, seq, heads, dh))(*args)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5, atol=2e-5)


def test_probabilities_used_elsewhere_stay_unfused():
    """The softmax's result also returned (as a training step keeps it for the backward
    pass): no fusion, the same results."""
    bsz, seq, heads, dh = 2, 40, 2, 16
    args = _args(np.random.default_rng(8), bsz, seq, heads, dh)

    def shared(q, k, v):
        qs = xnp.transpose(xnp.reshape(q, (bsz, seq, heads, dh)), (0, 2, 1, 3))
        ks = xnp.transpose(xnp.reshape(k, (bsz, seq, heads, dh)), (0, 2, 1, 3))
        vs = xnp.transpose(xnp.reshape(v, (bsz, seq, heads, dh)), (0, 2, 1, 3))
        s = xnp.einsum("bhqd,bhkd->bhqk", qs, ks)
        a = xnp.exp(s - xnp.max(s, -1, keepdims=True))
        a = a / xnp.sum(a, -1, keepdims=True)
        return xnp.einsum("bhqk,bhkd->bhqd", a, vs), a

    module, exe = _compile(shared, args, 2)
    assert f"kind={KIND}" not in _optimized(exe)
    _check(module, exe, args)


def _masked(bsz, seq, heads, dh, kv, per_batch=False):
    def masked(q, k, v, m):
        qs = xnp.transpose(xnp.reshape(q, (bsz, seq, heads, dh)), (0, 2, 1, 3))
        ks = xnp.transpose(xnp.reshape(k, (bsz, kv, heads, dh)), (0, 2, 1, 3))
        vs = xnp.transpose(xnp.reshape(v, (bsz, kv, heads, dh)), (0, 2, 1, 3))
        s = xnp.einsum("bhqd,bhkd->bhqk", qs, ks) * 0.3
        s = xnp.where(m[:, None] if per_batch else m, s, -1e9)
        a = xnp.exp(s - xnp.max(s, -1, keepdims=True))
        a = a / xnp.sum(a, -1, keepdims=True)
        return xnp.einsum("bhqk,bhkd->bhqd", a, vs)
    return masked


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(2, 33, 2, 8, 33), (2, 70, 3, 8, 1500)],
                         ids=lambda s: "x".join(str(v) for v in s))
def test_shared_masks_fuse(shape, threads):
    """A causal mask shared by every batch element (an operand broadcast across the batch
    dims): fused, each block of rows reading the mask from its own first row; a mask
    that differs by batch element stays outside (three kernels). Results as the
    interpreter's."""
    bsz, seq, heads, dh, kv = shape
    rng = np.random.default_rng(9)
    q = rng.standard_normal((bsz, seq, heads * dh)).astype(f32)
    k, v = (rng.standard_normal((bsz, kv, heads * dh)).astype(f32) for _ in range(2))
    causal = np.tril(np.ones((seq, kv), bool), kv - seq)
    args = (q, k, v, causal)
    module, exe = _compile(_masked(bsz, seq, heads, dh, kv), args, threads)
    assert f"kind={KIND}" in _optimized(exe)
    _check(module, exe, args)
    per_batch = np.stack([causal, causal[::-1]])
    args = (q, k, v, per_batch)
    module, exe = _compile(_masked(bsz, seq, heads, dh, kv, per_batch=True), args, threads)
    assert f"kind={KIND}" not in _optimized(exe)
    _check(module, exe, args)


def test_column_statistics_stay_unfused_and_correct():
    """Weights normalized over the queries (a reduction along S, not along the rows): a
    block of rows cannot compute them, so no fusion; results unchanged."""
    bsz, seq, heads, dh = 2, 30, 2, 8

    def by_columns(q, k, v):
        qs = xnp.transpose(xnp.reshape(q, (bsz, seq, heads, dh)), (0, 2, 1, 3))
        ks = xnp.transpose(xnp.reshape(k, (bsz, seq, heads, dh)), (0, 2, 1, 3))
        vs = xnp.transpose(xnp.reshape(v, (bsz, seq, heads, dh)), (0, 2, 1, 3))
        e = xnp.exp(xnp.einsum("bhqd,bhkd->bhqk", qs, ks) * 0.1)
        a = e / xnp.sum(e, -2, keepdims=True)
        return xnp.einsum("bhqk,bhkd->bhqd", a, vs)

    args = _args(np.random.default_rng(12), bsz, seq, heads, dh)
    module, exe = _compile(by_columns, args, 2)
    assert f"kind={KIND}" not in _optimized(exe)
    _check(module, exe, args)


_ROWS = """
HloModule rows
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  p = f32[2,3,30,40] parameter(0)
  e = f32[2,3,30,40] exponential(p)
  z = f32[] constant(0)
  r = f32[2,3,DIMS] reduce(e, z), dimensions={AXIS}, to_apply=add
  b = f32[2,3,30,40] broadcast(r), dimensions={0,1,BDIM}
  ROOT d = f32[2,3,30,40] divide(e, b)
}
"""


def test_row_computations_restate_per_element_only_along_rows():
    from xlapy.backends.cpu.passes.attention_fusion import per_element_rows
    rows = parse(_ROWS.replace("DIMS", "30").replace("AXIS", "3").replace("BDIM", "2"))
    per, sources = per_element_rows(rows.entry, 2)
    assert per.root.shape.dims == (30, 40) and sources == [(rows.entry.parameters[0], 40)]
    assert [i.attrs["dimensions"] for i in per.instructions if i.opcode == "reduce"] == [(1,)]
    cols = parse(_ROWS.replace("DIMS", "40").replace("AXIS", "2").replace("BDIM", "3"))
    assert per_element_rows(cols.entry, 2) is None


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_fused_attention_in_a_loop_body(t):
    """The fusion inside a while body (layers applied by fori_loop), in f32 and f64 (the
    same program's text with f64 types), on two threads."""
    def core(q, k, v):
        s = xnp.einsum("bhqd,bhkd->bhqk", q, k) * 0.2
        e = xnp.exp(s - xnp.max(s, -1, keepdims=True))
        return xnp.einsum("bhqk,bhkd->bhqd", e / xnp.sum(e, -1, keepdims=True), v)

    def looped(q, k, v):
        return xp.lax.fori_loop(0, 3, lambda i, x: core(x, k, v) + x, q)

    rng = np.random.default_rng(13)
    args = tuple(rng.standard_normal((2, 3, 40, 16)).astype(f32) for _ in range(3))
    text = xp.jit(looped).lower(*args).as_text()
    if t == "f64":
        text = text.replace("f32", "f64")
        args = tuple(a.astype(np.float64) for a in args)
    module = parse(text)
    exe = CpuCompiler().compile(module, num_threads=2)
    assert f"kind={KIND}" in _optimized(exe)
    _check(module, exe, args)
