"""The CHLO decompositions (xlapy/hlo/stablehlo/chlo.py) against SciPy/NumPy over wide
ranges, in f32 and f64 (f16 goes through f32), measured in units of the type's epsilon.
Special values (poles, infinities, |x| = 1) are checked against JAX in
test_stablehlo_jax.py, since there XLA's conventions are the reference."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

from xlapy.backends.interpreter import evaluate
from xlapy.hlo import parse_stablehlo

_T = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.float16): "f16"}


def chlo(op: str, *xs: np.ndarray) -> np.ndarray:
    t = f"tensor<{xs[0].size}x{_T[xs[0].dtype]}>"
    args = ", ".join(f"%a{i}: {t}" for i in range(len(xs)))
    uses = ", ".join(f"%a{i}" for i in range(len(xs)))
    text = (f"func.func @main({args}) -> {t} {{\n"
            f"  %0 = chlo.{op} {uses} : {', '.join([t] * len(xs))} -> {t}\n"
            f"  return %0 : {t}\n}}\n")
    return np.asarray(evaluate(parse_stablehlo(text), *xs))


def _error_in_eps(got, want, dtype, floor=None) -> float:
    """max |got - want| / max(|want|, floor), in units of dtype's epsilon (floor: the
    smallest normal number of dtype unless given)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    scale = np.maximum(np.abs(want), np.finfo(dtype).tiny if floor is None else floor)
    return float(np.max(np.abs(got - want) / scale) / np.finfo(dtype).eps)


RNG = np.random.default_rng(20)
# op, reference, sample(rng, dtype), max error in eps (f32, f64), floor for the relative error
CASES = [
    ("erf_inv", sp.erfinv, lambda r: np.concatenate(
        [r.uniform(-1, 1, 3000), 1 - 10.0 ** -r.uniform(1, 7, 300), [0.0, 0.5, -0.5]]),
     (120, 40), None),
    ("erfc", sp.erfc, lambda r: np.concatenate([r.uniform(-6, 9, 3000), r.uniform(-1, 1, 500)]),
     (40, 20), None),
    ("lgamma", sp.gammaln, lambda r: np.concatenate(
        [r.uniform(-20, 20, 3000), r.uniform(0, 3, 1000), 10 ** r.uniform(-5, 30, 500)]),
     (40, 40), 1.0),
    ("digamma", sp.digamma, lambda r: np.concatenate(
        [r.uniform(-20, 20, 3000), r.uniform(0, 3, 1000), 10 ** r.uniform(-5, 30, 500)]),
     (20, 2000), 1.0),
    ("asin", np.arcsin, lambda r: r.uniform(-1, 1, 2000), (4, 4), None),
    ("acos", np.arccos, lambda r: r.uniform(-1, 1, 2000), (4, 4), None),
    ("atan", np.arctan, lambda r: r.uniform(-50, 50, 2000), (4, 4), None),
    ("sinh", np.sinh, lambda r: np.concatenate([r.uniform(-85, 85, 2000), r.uniform(-1, 1, 500)]),
     (4, 4), None),
    ("cosh", np.cosh, lambda r: r.uniform(-85, 85, 2000), (4, 4), None),
    ("asinh", np.arcsinh, lambda r: np.concatenate([r.uniform(-1e5, 1e5, 2000),
                                                    r.uniform(-1, 1, 500)]), (4, 4), None),
    ("acosh", np.arccosh, lambda r: 1 + 10 ** r.uniform(-6, 5, 2000), (4, 4), None),
    ("atanh", np.arctanh, lambda r: r.uniform(-1, 1, 2000), (4, 4), None),
    ("square", np.square, lambda r: r.uniform(-1e3, 1e3, 500), (1, 1), None),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("op,ref,sample,limits,floor", CASES, ids=[c[0] for c in CASES])
def test_decomposition_accuracy(op, ref, sample, limits, floor, dtype):
    x = sample(RNG).astype(dtype)
    x = x[np.isfinite(ref(x.astype(np.float64)))]  # poles: checked against JAX
    want = ref(x.astype(np.float64))
    if op in ("erfc", "sinh", "cosh"):  # relative error is meaningless for subnormals
        keep = np.abs(want) > np.finfo(dtype).tiny
        x, want = x[keep], want[keep]
    got = chlo(op, x)
    assert got.dtype == dtype
    limit = limits[0] if dtype == np.float32 else limits[1]
    err = _error_in_eps(got, want, dtype, floor)
    assert err <= limit, f"{op}: {err:.1f} eps (limit {limit})"


def test_f16_is_computed_in_f32():
    x = np.linspace(-0.99, 0.99, 41).astype(np.float16)
    got = chlo("erf_inv", x)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, sp.erfinv(x.astype(np.float64)).astype(np.float16))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_next_after_is_bit_exact(dtype):
    x = RNG.standard_normal(400).astype(dtype)
    y = RNG.standard_normal(400).astype(dtype)
    x[:8] = [0, 0, 1, -1, np.inf, -0.0, 2, np.finfo(dtype).max]
    y[:8] = [1, -1, 1, 0, 0, 0, np.inf, np.inf]
    got = chlo("next_after", x, y)
    with np.errstate(over="ignore"):
        want = np.where(x == y, y, np.nextafter(x, y))  # C returns y; NumPy's f16 gives x
    assert got.tobytes() == want.tobytes()
    nan = chlo("next_after", np.array([np.nan, 1], dtype), np.array([1, np.nan], dtype))
    assert np.isnan(nan).all()
