"""xlapy.numpy.vectorize (on vmap) against jax.numpy.vectorize: broadcasting of loop
dimensions, gufunc signatures, excluded arguments, several outputs, errors."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.errors import XlapyError

RNG = np.random.default_rng(0)


def arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


CASES = [
    ("scalar core, broadcast", lambda N: lambda a, b: N.sin(a) * b, {}, (arr(3), arr(2, 1))),
    ("matvec", lambda N: lambda m, v: m @ v, {"signature": "(m,n),(n)->(m)"},
     (arr(5, 3, 4), arr(4))),
    ("matvec broadcast loops", lambda N: lambda m, v: m @ v, {"signature": "(m,n),(n)->(m)"},
     (arr(5, 3, 4), arr(2, 1, 4))),
    ("reduction core", lambda N: lambda v: v.sum() - v.max(), {"signature": "(n)->()"},
     (arr(2, 3, 4),)),
    ("new output dim", lambda N: lambda v: N.concatenate([v, v * 2]),
     {"signature": "(n)->(m)"}, (arr(3, 2),)),
    ("two outputs", lambda N: lambda v: (v.mean(), v - v.mean()),
     {"signature": "(n)->(),(n)"}, (arr(4, 5),)),
    ("excluded", lambda N: lambda a, p: a ** p, {"excluded": {1}}, (arr(3, 2), 2)),
    ("size-1 loop dims", lambda N: lambda a, b: a + b, {}, (arr(1, 3), arr(4, 1))),
]


@pytest.mark.parametrize("name, fn, kw, args", CASES, ids=[c[0] for c in CASES])
def test_vectorize_against_jax(name, fn, kw, args):
    got = xnp.vectorize(fn(xnp), **kw)(*args)
    want = jnp.vectorize(fn(jnp), **kw)(*args)
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_vectorize_under_jit_and_grad():
    f = xnp.vectorize(lambda m, v: xnp.tanh(m @ v).sum(), signature="(m,n),(n)->()")
    m, v = arr(5, 3, 4), arr(4)
    np.testing.assert_allclose(xp.jit(f)(m, v), np.tanh(m @ v).sum(-1), rtol=1e-5)
    g = xp.grad(lambda v: f(m, v).sum())(v)
    jf = jnp.vectorize(lambda m, v: jnp.tanh(m @ v).sum(), signature="(m,n),(n)->()")
    import jax
    np.testing.assert_allclose(g, jax.grad(lambda v: jf(m, v).sum())(v), rtol=1e-5)


@pytest.mark.parametrize("call, error, match", [
    (lambda: xnp.vectorize(lambda a, b: a @ b, signature="(m,n),(n)->(m)")(arr(5, 3, 4),
                                                                           arr(3)),
     ValueError, "inconsistent size for core dimension 'n': 4 vs 3"),
    (lambda: xnp.vectorize(lambda a: a.sum(), signature="(n)->(n)")(arr(3)),
     ValueError, r"output shape \(\) does not match core dimensions \('n',\)"),
    (lambda: xnp.vectorize(lambda a: a, signature="(n),(n)->(n)")(arr(3)),
     TypeError, "expected 2, got 1"),
    (lambda: xnp.vectorize(lambda a: a, signature="bad")(arr(3)),
     ValueError, "not a valid gufunc signature"),
    (lambda: xnp.vectorize(lambda a: a, signature="(n)->()")(np.float32(1)),
     ValueError, "does not have enough dimensions"),
    (lambda: xnp.vectorize(lambda a, b: a + b)(arr(3), arr(4)), ValueError, "broadcast"),
])
def test_vectorize_errors(call, error, match):
    with pytest.raises(error, match=match) as info:
        call()
    if error is ValueError:
        assert isinstance(info.value, XlapyError)
