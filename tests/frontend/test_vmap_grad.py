"""vmap of grad (per-example gradients) over the gradient suite (test_gradients.py): for
every case, the gradient of sum(f(args) * c) with respect to every argument, vmapped over
a batch of three members, against xp.grad of each member (which test_gradients.py checks
against JAX), eagerly and under jit. So every VJP rule's output is batched too."""

from __future__ import annotations

import os
import sys
import zlib

import numpy as np
import pytest

import xlapy as xp
import xlapy.lax as xlax
import xlapy.numpy as xnp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_gradients as G

N = 3


def _members(case):
    rng = np.random.default_rng(zlib.crc32(("vmap/" + case.name).encode()))
    members = []
    for m in range(N):
        # fixed inputs (ties, zeros, signs) are scaled, which keeps what they test
        members.append([(s * (1 + 0.5 * m) if isinstance(s, np.ndarray)
                         else G._make(s, rng)).astype(np.float32) for s in case.inputs])
    out = np.asarray(case.fn(xlax, xnp, *members[0]))
    c = rng.standard_normal(out.shape).astype(np.float32)
    return members, c


@pytest.mark.parametrize("case", G.CASES, ids=str)
def test_vmap_of_grad(case):
    members, c = _members(case)
    argnums = tuple(range(len(case.inputs)))
    grad = xp.grad(G._loss(case, xlax, xnp, c), argnums)
    want = [np.stack(gs) for gs in zip(*[grad(*m) for m in members])]
    stacked = [np.stack(a) for a in zip(*members)]
    for how, fn in (("vmap(grad)", xp.vmap(grad)), ("jit(vmap(grad))", xp.jit(xp.vmap(grad)))):
        got = fn(*stacked)
        for i, (g, w) in enumerate(zip(got, want)):
            assert np.asarray(g).dtype == np.float32, f"{how}: {np.asarray(g).dtype}"
            G._close(g, w, 2e-5, f"{case.name}: {how}, d/d arg {i} vs per-member grad")
