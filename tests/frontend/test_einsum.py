"""einsum and tensordot against NumPy (eagerly and under jit on both backends) and jax
(gradients)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.errors import XlapyError

# NumPy's semantics, 64-bit dtypes included, are what these rows check: run with
# jax_enable_x64 on (test_x64.py checks the 32-bit default mode)
pytestmark = pytest.mark.usefixtures("x64")

BACKENDS = ["cpu", "interpreter"]
R = np.random.default_rng(3)


def r(*shape):
    return R.standard_normal(shape)


CASES = [
    ("ij,jk->ik", (r(3, 4), r(4, 5))),
    ("bij,bjk->bik", (r(2, 3, 4), r(2, 4, 5))),
    ("ii->i", (r(4, 4),)),
    ("ii->", (r(4, 4),)),
    ("ii", (r(3, 3),)),
    ("iji->j", (r(3, 2, 3),)),
    ("...ij,...jk", (r(2, 3, 4), r(4, 5))),
    ("...ij,...jk->...ik", (r(2, 1, 3, 4), r(3, 4, 2))),
    ("i,i->", (r(5), r(5))),
    ("i,i", (r(5), r(5))),
    ("ij->ji", (r(3, 4),)),
    ("ba", (r(3, 4),)),
    ("ij->", (r(3, 4),)),
    ("bhqd,bhkd->bhqk", (r(2, 3, 4, 5), r(2, 3, 6, 5))),
    ("i,j->ij", (r(3), r(4))),
    ("ij,jk,kl->il", (r(2, 3), r(3, 4), r(4, 5))),
    ("ijk,ik->j", (r(2, 3, 4), r(2, 4))),
    ("ab,cd->", (r(2, 3), r(4, 5))),
    ("i j , j k -> k i", (r(3, 4), r(4, 2))),
    ("...,...->...", (r(2, 3), r(3))),
    ("bi,bi->b", (r(4, 3), r(4, 3))),
    (",ij->ij", (np.float64(2.5), r(2, 3))),
    ("...i,i...->...", (r(2, 3), r(3, 2))),
    ("...i->i", (r(3),)),
    ("ij,jk broadcast j", (r(2, 1), r(3, 4))),
    ("ij,ij->ij broadcast", (r(2, 1), r(2, 4))),
]


@pytest.mark.parametrize("subscripts,ops", CASES, ids=[c[0] for c in CASES])
def test_einsum_matches_numpy(subscripts, ops):
    subscripts = subscripts.split(" broadcast")[0]
    want = np.einsum(subscripts, *ops)
    got = xnp.einsum(subscripts, *ops)
    assert np.shape(got) == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    for be in BACKENDS:
        out = xp.jit(lambda *o: xnp.einsum(subscripts, *o), backend=be)(*ops)
        np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12, err_msg=be)


def test_einsum_dtypes_follow_numpy():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.arange(3, dtype=np.float32)
    for ops in ((a, a.T), (a, b)):
        sub = "ij,jk->ik" if ops[1].ndim == 2 else "ij,j->i"
        want = np.einsum(sub, *ops)
        got = xp.jit(lambda x, y: xnp.einsum(sub, x, y))(*ops)  # noqa: B023 (called at once)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)


GRAD_CASES = ["bij,bjk->bik", "ii->i", "...ij,...jk", "bhqd,bhkd->bhqk", "ij,jk,kl->il"]


@pytest.mark.parametrize("subscripts", GRAD_CASES)
def test_einsum_grads_match_jax(subscripts):
    ops = dict((s, o) for s, o in CASES)[subscripts]

    def loss(m, *o):
        return m.sum(m.sin(m.einsum(subscripts, *o)))

    argnums = tuple(range(len(ops)))
    with jax.enable_x64(True):
        want = jax.grad(lambda *o: loss(jnp, *o), argnums)(*[jnp.asarray(o) for o in ops])
    got = xp.jit(xp.grad(lambda *o: loss(xnp, *o), argnums))(*ops)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-11, atol=1e-12)


def test_einsum_errors():
    with pytest.raises(XlapyError, match="2 operand"):
        xnp.einsum("ij,jk->ik", r(2, 3))
    with pytest.raises(XlapyError, match="label 'j'"):
        xnp.einsum("ij,jk->ik", r(2, 3), r(4, 5))
    with pytest.raises(XlapyError, match="3 labels"):
        xnp.einsum("ijk->i", r(2, 3))
    with pytest.raises(XlapyError, match="does not appear"):
        xnp.einsum("ij->iz", r(2, 3))
    with pytest.raises(XlapyError, match="needs '...'"):
        xnp.einsum("...i->i", r(2, 3))
    with pytest.raises(XlapyError, match="string form"):
        xnp.einsum(r(2), [0], r(2), [0])


TD_CASES = [(2, (r(2, 3, 4), r(3, 4, 5))), (0, (r(2), r(3))), (1, (r(3, 4), r(4))),
            (([1, 0], [0, 2]), (r(3, 4, 5), r(4, 2, 3))), ((2, -1), (r(2, 3, 4), r(5, 4))),
            (([-1], [0]), (r(2, 3), r(3, 2)))]


@pytest.mark.parametrize("axes,ops", TD_CASES, ids=[str(c[0]) for c in TD_CASES])
def test_tensordot_matches_numpy(axes, ops):
    want = np.tensordot(*ops, axes=axes)
    np.testing.assert_allclose(xnp.tensordot(*ops, axes=axes), want, rtol=1e-12)
    got = xp.jit(lambda a, b: xnp.tensordot(a, b, axes))(*ops)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_tensordot_grad_and_errors():
    a, b = r(3, 4, 5), r(4, 2, 3)
    with jax.enable_x64(True):
        want = jax.grad(lambda a, b: jnp.sum(jnp.tanh(jnp.tensordot(a, b, ([1, 0], [0, 2])))),
                        (0, 1))(jnp.asarray(a), jnp.asarray(b))
    got = xp.grad(lambda a, b: xnp.sum(xnp.tanh(xnp.tensordot(a, b, ([1, 0], [0, 2])))),
                  (0, 1))(a, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-11)
    with pytest.raises(XlapyError, match="shape mismatch"):
        xnp.tensordot(r(2, 3), r(2, 3), axes=1)
    with pytest.raises(XlapyError, match="out of range"):
        xnp.tensordot(r(2), r(2), axes=2)
