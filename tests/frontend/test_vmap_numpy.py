"""vmap over the xlapy.numpy op table (optable.py): every row's function, on every case of
one dtype (float32 where the row sweeps it), vmapped over a batch of three members against
the members computed one by one and stacked. Eagerly for every case, and under jit (cpu)
for all of a row's cases in one program."""

from __future__ import annotations

import os
import sys
import zlib

import numpy as np
import pytest

import xlapy as xp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import optable as T

N = 3


def _dtype(op):
    return np.float32 if np.float32 in op.dtypes else op.dtypes[0]


def _cases(op):
    """[(case, stacked args, kwargs, per-member reference)] of the cases NumPy accepts."""
    dt = _dtype(op)
    out = []
    for ci, case in enumerate(op.cases):
        if not case.shapes:
            continue
        _, kwargs = T.make_inputs(op, dt, ci, case)
        n = len(case.shapes)
        arg_dts = op.arg_dtypes(dt) if op.arg_dtypes else (dt,) * n
        doms = tuple(op.domain) + (op.domain[-1],) * max(0, n - len(op.domain))
        members = []
        for m in range(N):
            rng = np.random.default_rng(zlib.crc32(f"{op.name}/{ci}/{m}".encode()))
            members.append([T.gen(rng, s, d, dom, op.special)
                            for s, d, dom in zip(case.shapes, arg_dts, doms)])
        _, err = T.numpy_ref(op, members[0], kwargs)
        if err is not None:
            continue
        try:
            refs = [op.xfn(*m, **kwargs) for m in members]
        except T.accepted_errors():
            continue
        want = [np.stack([np.asarray(T._leaves(r)[k]) for r in refs])
                for k in range(len(T._leaves(refs[0])))]
        args = [np.stack([m[i] for m in members]) for i in range(n)]
        out.append((case, args, kwargs, want))
    return out


def _check(op, got, want, where):
    T.assert_same(op, T._leaves(got), want, where)


@pytest.mark.parametrize("op", T.OPS, ids=str)
def test_vmap_of_numpy_function(op):
    cases = _cases(op)
    if not cases:
        pytest.skip("no case with array arguments NumPy accepts")
    fns = [lambda *a, kw=kw: op.xfn(*a, **kw) for _, _, kw, _ in cases]
    for (case, args, _, want), fn in zip(cases, fns):
        _check(op, xp.vmap(fn)(*args), want, f"{op.name} case {case} [vmap eager]")
    got = xp.jit(lambda arglists: [xp.vmap(fn)(*a) for fn, a in zip(fns, arglists)])(
        [c[1] for c in cases])
    for (case, _, _, want), g in zip(cases, got):
        _check(op, g, want, f"{op.name} case {case} [jit(vmap)]")
