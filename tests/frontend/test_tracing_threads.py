"""Tracing on several threads at once: each thread has its own trace stack (frontend/core.py
_TraceState), so functions traced concurrently (first calls of jitted functions on a
server's threads, compat.v1's queue runners) record into their own graphs. With one
process-wide stack a long trace (linalg.solve's row swaps) picked up the other threads'
operations: 'a tracer was captured by a top-level jit graph' on every thread."""

from __future__ import annotations

import threading

import numpy as np

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.frontend.scopes import ensure_compile_time_eval


def _on_threads(n, work):
    barrier, results, errors = threading.Barrier(n), {}, []

    def run(k):
        barrier.wait()
        try:
            results[k] = work(k)
        except Exception as e:  # reported below with the thread's number
            errors.append((k, repr(e)))
    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors
    return results


def test_long_traces_on_six_threads_at_once():
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((32, 32)) + 32 * np.eye(32)).astype(np.float32)

    def work(k):
        scale = float(k + 1)
        f = xp.jit(lambda m: xnp.linalg.solve(m * scale, m[:, :2]))
        return np.asarray(f(a))
    got = _on_threads(6, work)
    for k, x in got.items():
        np.testing.assert_allclose(x, np.linalg.solve(a * (k + 1), a[:, :2]), rtol=1e-4,
                                   atol=1e-5)


def test_gradients_traced_on_threads_at_once():
    x = np.linspace(-1, 1, 7).astype(np.float32)

    def work(k):
        def loss(w):
            y = w
            for _ in range(150 + k):   # a trace long enough to overlap the others
                y = xnp.tanh(y) * 0.9 + 0.1 * w
            return (y ** 2).sum()
        return np.asarray(xp.jit(xp.grad(loss))(x)), loss
    got = _on_threads(4, work)
    for g, loss in got.values():
        np.testing.assert_allclose(g, np.asarray(xp.grad(loss)(x)), rtol=1e-5, atol=1e-6)


def test_compile_time_eval_blocks_are_per_thread():
    """Another thread opening ensure_compile_time_eval while this thread is tracing does not
    make this thread's operations on constants run eagerly (the block's level was one
    process-wide number, taken from the process-wide trace stack)."""
    tracing, opened, release = threading.Event(), threading.Event(), threading.Event()

    def other():
        tracing.wait(30)
        with ensure_compile_time_eval():
            opened.set()
            release.wait(30)

    def f(v):
        tracing.set()
        opened.wait(30)     # the other thread's block is open from here on
        return v + xnp.arange(3).sum()

    t = threading.Thread(target=other)
    t.start()
    try:
        text = xp.jit(f).lower(np.zeros(3, np.float32)).as_text()
    finally:
        release.set()
        t.join(30)
    assert opened.is_set()
    assert "iota" in text, text   # staged: arange is an HLO iota, not a captured constant
