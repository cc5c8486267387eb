"""vmap of every primitive, from the op table in vmap_table.py: xlapy's vmap (eager and
under jit on the cpu backend) against a Python loop over the members and against jax.vmap
on the same inputs."""

from __future__ import annotations

import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import vmap_table as T

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.frontend import pytree

XL = T.xlapy_namespace()


def _axes_per_arg(case):
    n = len(case.args)
    return case.in_axes if isinstance(case.in_axes, tuple) else (case.in_axes,) * n


def make_inputs(case):
    """(batched args, per-member args): member i of a batched arg is its slice i along the
    arg's in_axes; unbatched args are the same for every member."""
    rng = np.random.default_rng(zlib.crc32(case.name.encode()))
    batched, members = [], [[] for _ in range(T.N_BATCH)]
    for spec, ax in zip(case.args, _axes_per_arg(case)):
        if isinstance(spec, np.ndarray):
            vals = [spec] * T.N_BATCH
            value = spec
        else:
            shape, kind = spec
            vals = [T.make_value(rng, shape, kind) for _ in range(T.N_BATCH)]
            value = vals[0] if ax is None else np.stack(vals, axis=ax % (len(shape) + 1))
        if ax is None:
            vals = [value] * T.N_BATCH
        batched.append(value)
        for m, v in zip(members, vals):
            m.append(v)
    return batched, members


def loop_reference(case, members):
    """f on each member, results stacked along out_axes (leaf by leaf)."""
    outs = [case.fn(XL, xnp, *m) for m in members]
    leaves = [pytree.flatten(o)[0] for o in outs]
    tree = pytree.flatten(outs[0])[1]
    specs = pytree.flatten(case.out_axes)[0] if not isinstance(case.out_axes, int) else None
    stacked = []
    for k in range(len(leaves[0])):
        ax = case.out_axes if specs is None else specs[k]
        stacked.append(np.stack([np.asarray(ls[k]) for ls in leaves], axis=ax))
    return pytree.unflatten(tree, stacked)


def _compare(got, want, rtol, what, dtypes=True):
    g_leaves, g_tree = pytree.flatten(got)
    w_leaves, w_tree = pytree.flatten(want)
    assert g_tree == w_tree, f"{what}: structure {g_tree} != {w_tree}"
    for g, w in zip(g_leaves, w_leaves):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"{what}: shape {g.shape} != {w.shape}"
        if dtypes:
            assert g.dtype == w.dtype, f"{what}: dtype {g.dtype} != {w.dtype}"
        if g.dtype.kind in "biu" and w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w.astype(g.dtype), err_msg=what)
        else:
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol,
                                       atol=rtol, err_msg=what)


@pytest.mark.parametrize("case", T.ROWS, ids=str)
def test_vmap_against_loop_and_jax(case):
    args, members = make_inputs(case)
    want = loop_reference(case, members)
    fn = lambda *a: case.fn(XL, xnp, *a)
    batched = xp.vmap(fn, in_axes=case.in_axes, out_axes=case.out_axes)
    _compare(batched(*args), want, case.rtol, "eager vmap vs loop")
    _compare(xp.jit(batched)(*args), want, case.rtol, "jit(vmap) vs loop")
    if case.jax:
        import jax
        import jax.numpy as jnp
        jfn = lambda *a: case.fn(JX, jnp, *a)
        ref = jax.vmap(jfn, in_axes=case.in_axes, out_axes=case.out_axes)(*args)
        ref = pytree.tree_map(np.asarray, _tuples(ref))
        _compare(_tuples(batched(*args)), ref, case.rtol, "vmap vs jax.vmap", dtypes=False)


def _tuples(tree):
    """Lists as tuples (JAX returns lists where xlapy's sort returns lists too, but keep
    the comparison structural)."""
    if isinstance(tree, (list, tuple)):
        return tuple(_tuples(t) for t in tree)
    return tree


JX = T.jax_namespace()
