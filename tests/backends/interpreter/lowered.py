"""Shared by the interpreter tests: lower a JAX function to HLO text, run the text in
xlapy's interpreter and compare with what JAX/XLA computes."""

import numpy as np
import pytest

from xlapy.backends.interpreter import evaluate
from xlapy.hlo import parse

jax = pytest.importorskip("jax")


def run_both(f, *args, opcode=None):
    """(xlapy result leaves, jax result leaves) for f lowered to HLO text; with `opcode`,
    the text must hold that instruction."""
    module = parse(jax.jit(f).lower(*args).as_text(dialect="hlo"))
    if opcode is not None:
        assert any(i.opcode == opcode for i in module.instructions()), \
            f"the HLO of this test has no {opcode}"
    got = evaluate(module, *[np.asarray(a) for a in args])
    got = list(got) if isinstance(got, tuple) else [got]
    want = [np.asarray(w) for w in jax.tree.leaves(jax.jit(f)(*args))]
    return got, want


def check(f, *args, opcode=None, rtol=1e-6, atol=1e-6, exact=False):
    """run_both, then the same dtypes and shapes and the values equal (exact) or close
    (NaN where JAX has NaN)."""
    got, want = run_both(f, *args, opcode=opcode)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        if exact:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol,
                                       atol=atol, equal_nan=True)
