"""lax.Precision and precision= (printed into the HLO's operand_precision as JAX's HLO has
it), lax.RoundingMethod, reduce_precision, nextafter, collapse and split, against jax."""

from __future__ import annotations

import re
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax as jlax

import xlapy as xp
import xlapy.lax as xl
import xlapy.numpy as xnp
from xlapy.errors import XlapyError

PRECISIONS = [None, "highest", "high", "default", "float32", "tensorfloat32", "bfloat16",
              ("highest", "default"), ("default", "high")]


def _enum(lib, p):
    """The same precision spelled with lib's Precision enum where it is a name."""
    if isinstance(p, str) and p.upper() in ("HIGH", "HIGHEST", "DEFAULT"):
        return lib.Precision[p.upper()]
    return p


def _operand_precision(text: str, opcode: str):
    lines = [ln for ln in text.splitlines() if f" {opcode}(" in ln]
    assert len(lines) == 1, text
    m = re.search(r"operand_precision=\{([a-z,]*)\}", lines[0])
    return m.group(1) if m else None


CASES = {
    "jnp.dot": (lambda N, L, p: lambda a, b: N.dot(a, b, precision=p), "dot"),
    "jnp.matmul": (lambda N, L, p: lambda a, b: N.matmul(a, b, precision=p), "dot"),
    "jnp.einsum": (lambda N, L, p: lambda a, b: N.einsum("ij,jk->ik", a, b, precision=p),
                   "dot"),
    "jnp.tensordot": (lambda N, L, p: lambda a, b: N.tensordot(a, b, 1, precision=p), "dot"),
    "lax.dot": (lambda N, L, p: lambda a, b: L.dot(a, b, precision=_enum(L, p)), "dot"),
    "lax.dot_general": (lambda N, L, p: lambda a, b: L.dot_general(
        a, b, (((1,), (0,)), ((), ())), precision=_enum(L, p)), "dot"),
    "lax.conv_general_dilated": (lambda N, L, p: lambda a, b: L.conv_general_dilated(
        a.reshape(1, 1, 3, 3), b.reshape(1, 1, 3, 3), (1, 1), "SAME",
        precision=_enum(L, p)), "convolution"),
}


@pytest.mark.parametrize("p", PRECISIONS, ids=str)
@pytest.mark.parametrize("case", sorted(CASES))
def test_precision_in_hlo_as_jax(case, p):
    make, opcode = CASES[case]
    a = np.arange(9, dtype=np.float32).reshape(3, 3) / 7
    ours = xp.jit(make(xnp, xl, p)).lower(a, a).as_text()
    theirs = jax.jit(make(jnp, jlax, p)).lower(a, a).compile().as_text()
    assert _operand_precision(ours, opcode) == _operand_precision(theirs, opcode)
    np.testing.assert_allclose(np.asarray(xp.jit(make(xnp, xl, p))(a, a)),
                               np.asarray(jax.jit(make(jnp, jlax, p))(a, a)), rtol=1e-5)


def test_precision_survives_grad_and_vmap():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4) / 5

    def f(N, L):
        return lambda x, y: N.sum(N.tanh(L.dot(x, y, precision=L.Precision.HIGHEST)))

    text = xp.jit(xp.grad(f(xnp, xl), argnums=(0, 1))).lower(a, b).as_text()
    dots = [ln for ln in text.splitlines() if " dot(" in ln]
    assert len(dots) == 3 and all("operand_precision={highest,highest}" in d for d in dots)
    got = xp.grad(f(xnp, xl), argnums=(0, 1))(a, b)
    want = jax.grad(f(jnp, jlax), argnums=(0, 1))(a, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
    # vmap over the rhs vector only: the batch rule swaps the operands and their precisions
    vs = np.arange(8, dtype=np.float32).reshape(2, 4)
    mat = np.ones((3, 4), np.float32)
    g = xp.jit(xp.vmap(lambda v: xl.dot(mat, v, precision=("highest", "default"))))
    text = g.lower(vs).as_text()
    assert "operand_precision={default,highest}" in text
    np.testing.assert_allclose(np.asarray(g(vs)), vs @ mat.T)


def test_precision_enum_and_bad_values():
    assert xl.Precision("highest") is xl.Precision.HIGHEST
    assert xl.Precision("bfloat16_3x") is xl.Precision.HIGH
    assert [m.name for m in xl.Precision] == [m.name for m in jlax.Precision]
    assert [m.value for m in xl.Precision] == [m.value for m in jlax.Precision]
    assert str(xl.Precision.HIGH) == str(jlax.Precision.HIGH)
    a = np.ones((2, 2), np.float32)
    for bad in ("foo", 3, "HIGHEST", ("highest",), ("highest", "nope"), (None, None)):
        with pytest.raises(XlapyError, match="precision"):
            xnp.dot(a, a, precision=bad)
    with pytest.raises(XlapyError, match="precision"):
        xl.conv_general_dilated(a.reshape(1, 1, 2, 2), a.reshape(1, 1, 2, 2), (1, 1),
                                "SAME", precision="fast")


def test_round_with_rounding_method():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997], np.float32)
    for m in (jlax.RoundingMethod.AWAY_FROM_ZERO, jlax.RoundingMethod.TO_NEAREST_EVEN):
        ours = getattr(xl.RoundingMethod, m.name)
        assert int(ours) == int(m)
        np.testing.assert_array_equal(np.asarray(xl.round(x, ours)),
                                      np.asarray(jlax.round(x, m)))
        np.testing.assert_array_equal(np.asarray(xp.jit(lambda v, o=ours: xl.round(v, o))(x)),
                                      np.asarray(jlax.round(x, m)))
    with pytest.raises(XlapyError, match="rounding_method"):
        xl.round(x, 7)


_SPECIALS = [0., -0., 1e-45, 1.0000001, 3.14159, -2.5e38, 3.4e38, np.inf, -np.inf, np.nan,
             1e-40, 65519., 65520., 1e-8, -1e-8, 0.33333334, 1.5, 2.5, 3.5, 0.75, -6.1e-5]


@pytest.mark.parametrize("bits", [(5, 10), (8, 7), (2, 0), (3, 4), (8, 23), (1, 3), (11, 2)])
def test_reduce_precision_matches_jax(bits):
    rng = np.random.default_rng(sum(bits))
    x = np.concatenate([np.array(_SPECIALS, np.float32),
                        rng.standard_normal(50).astype(np.float32) * 10.0 ** rng.integers(
                            -8, 8, 50)]).astype(np.float32)
    want = np.asarray(jlax.reduce_precision(x, *bits))
    np.testing.assert_array_equal(np.asarray(xl.reduce_precision(x, *bits)), want)
    got = xp.jit(lambda v: xl.reduce_precision(v, *bits))(x)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_reduce_precision_other_types_and_derivatives():
    x16 = np.array([1.0009766, 3.3, -65504, 6e-5, np.nan], np.float16)
    np.testing.assert_array_equal(np.asarray(xl.reduce_precision(x16, 4, 3)),
                                  np.asarray(jlax.reduce_precision(x16, 4, 3)))
    xb = np.array([1.5, 3.3, -1e30], jnp.bfloat16)
    np.testing.assert_array_equal(np.asarray(xl.reduce_precision(xb, 5, 2)).astype(np.float32),
                                  np.asarray(jlax.reduce_precision(xb, 5, 2)).astype(
                                      np.float32))
    f = lambda L: lambda v: L.reduce_precision(v * 3.0, 5, 2)
    assert float(xp.grad(f(xl))(1.0)) == float(jax.grad(f(jlax))(1.0))
    _, t = xp.jvp(f(xl), (np.float32(1.0),), (np.float32(1.1),))
    _, jt = jax.jvp(f(jlax), (np.float32(1.0),), (np.float32(1.1),))
    assert float(t) == float(jt)  # the tangent is rounded too
    v = xp.vmap(lambda r: xl.reduce_precision(r, 5, 2))(np.float32([[1.3, 2.6], [5.1, 9.9]]))
    np.testing.assert_array_equal(np.asarray(v),
                                  np.asarray(jlax.reduce_precision(
                                      np.float32([[1.3, 2.6], [5.1, 9.9]]), 5, 2)))
    with pytest.raises(XlapyError, match="floating-point"):
        xl.reduce_precision(np.arange(3), 5, 2)
    with pytest.raises(XlapyError, match="mantissa_bits"):
        xl.reduce_precision(np.ones(2, np.float32), 5, -1)


def test_nextafter_matches_jax():
    a = np.float32([0, 0, 1, 1, -1, np.inf, np.nan, 2, -0., -np.inf, 3.4028235e+38, 1e-45,
                    -1e-45])
    b = np.float32([1, -1, 2, 0, 0, 0, 1, 2, 1, 0, np.inf, 0, 0])
    want = np.asarray(jlax.nextafter(a, b))
    np.testing.assert_array_equal(np.asarray(xl.nextafter(a, b)), want)
    np.testing.assert_array_equal(np.asarray(xp.jit(xl.nextafter)(a, b)), want)
    with pytest.raises(XlapyError, match="one dtype"):
        xl.nextafter(a, b.astype(np.float16))


def test_collapse_and_split():
    x = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    for args in ((1, 3), (1,), (0, -1), (-2, None), (2, 2)):
        np.testing.assert_array_equal(np.asarray(xl.collapse(x, *args)),
                                      np.asarray(jlax.collapse(x, *args)))
    y = np.arange(15, dtype=np.float32).reshape(5, 3)
    for sizes, axis in (([2, 3], 0), ([1, 0, 2], 1), ([3], -1)):
        got = xp.jit(lambda v, s=sizes, a=axis: xl.split(v, s, a))(y)
        want = jlax.split(y, sizes, axis)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    with pytest.raises(XlapyError, match="add up"):
        xl.split(y, [2, 2])
    with pytest.raises(XlapyError, match="after"):
        xl.collapse(x, 3, 1)


def test_no_stray_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        xl.reduce_precision(np.ones(3, np.float32), 5, 10)
