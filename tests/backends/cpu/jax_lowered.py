"""Run a function JAX lowers to HLO text on the interpreter and the cpu backend, against
jax.jit of it (the LAPACK custom-call tests: test_lapack_calls.py and its complex sequel)."""

from __future__ import annotations

import numpy as np

from xlapy.backends.base import flatten, get_platform
from xlapy.hlo import parse
from xlapy.hlo.evaluator import evaluate


def run_lowered(jax, f, *args, bitwise=True):
    """(HLO text, interpreter outputs, XLA outputs) of f lowered by jax; the cpu's outputs
    equal the interpreter's and XLA's bitwise (one plan, one routine), or within float
    tolerance where the HLO around the calls (dots, reductions) is not XLA's bitwise."""
    x64 = any(np.asarray(a).dtype in (np.float64, np.complex128) for a in args)
    with jax.enable_x64(x64):
        text = jax.jit(f).lower(*args).as_text(dialect="hlo")
        want = [np.asarray(w) for w in jax.tree.leaves(jax.jit(f)(*args))]
    ref = [np.asarray(r) for r in flatten(evaluate(parse(text), *args))]
    got = [np.asarray(g) for g in
           flatten(get_platform("cpu").compiler.compile(parse(text)).run(*args))]
    assert len(ref) == len(got) == len(want)
    for r, g, w in zip(ref, got, want):
        assert r.dtype == g.dtype == w.dtype and r.shape == g.shape == w.shape
        if bitwise:
            np.testing.assert_array_equal(g, r)
            np.testing.assert_array_equal(r, w)
        else:
            tol = 1e-5 if r.dtype in (np.float32, np.complex64) else 1e-12
            np.testing.assert_allclose(g, r, rtol=tol, atol=tol)
            np.testing.assert_allclose(r, w, rtol=tol, atol=tol)
    return text, ref, want
