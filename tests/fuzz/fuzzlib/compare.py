"""Comparing a backend's outputs with XLA's: per-dtype tolerances, and the elements whose
value the program does not determine to that tolerance.

Tolerances (XLA's own test tolerances): integers and pred exact; f32 1e-5 (relative, and
absolute near zero) for elementwise results, 1e-3 for results computed through a reduction
(reduce, reduce-window, dot, convolution, scatter, loops: their order of additions is the
implementation's choice); f64 1e-9 / 1e-6; f16 1e-3 / 1e-2; bf16 1e-2 / 2e-2. NaN must be
NaN where XLA has NaN, infinities equal, and for elementwise float results the sign of a
zero must agree and a subnormal must not stand where the other has a zero (denormal
flushing differences, invisible to any tolerance).

Ill-conditioned elements: a random program computes things like (a + b) - a or
sin(1e4 * x), whose last bits are amplified into the leading ones. `sensitivity` runs the
reference interpreter on inputs perturbed by a few ulps; an element whose value moves by
more than the tolerance under such a perturbation (or flips between NaN, infinity and a
number, or is an integer or pred that changes) is not determined by the program to that
tolerance, and gets the observed spread added to its tolerance (integers: it is skipped).
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)
# dtype -> (elementwise tolerance, through-reduction tolerance)
TOLERANCE = {np.dtype(np.float32): (1e-5, 1e-3), np.dtype(np.float64): (1e-9, 1e-6),
             np.dtype(np.float16): (1e-3, 1e-2), BF16: (1e-2, 2e-2)}


def is_float(dt) -> bool:
    dt = np.dtype(dt)
    return dt in TOLERANCE


@dataclass
class Mismatch:
    output: int
    count: int
    detail: str
    mask: np.ndarray | None = None   # the elements that differ

    def __str__(self) -> str:
        return f"output {self.output}: {self.detail}"


def _tiny(dt) -> float:
    """The smallest normal number of a float dtype (bf16: f32's, f16: its own)."""
    dt = np.dtype(dt)
    return float(ml_dtypes.finfo(dt).smallest_normal if dt == BF16 else np.finfo(dt).tiny)


def _f64(a):
    return np.asarray(a).astype(np.float64)


def compare_leaf(i: int, expected, actual, accumulated: bool, spread=None,
                 unstable=None) -> Mismatch | None:
    e, a = np.asarray(expected), np.asarray(actual)
    if e.shape != a.shape or e.dtype != a.dtype:
        return Mismatch(i, -1, f"expected {e.dtype}{list(e.shape)}, got "
                               f"{a.dtype}{list(a.shape)}")
    if e.size == 0:
        return None
    if not is_float(e.dtype):
        bad = e != a
        if unstable is not None:
            bad &= ~unstable
        n = int(bad.sum())
        if not n:
            return None
        j = np.argwhere(bad)[0]
        return Mismatch(i, n, f"{n} of {e.size} {e.dtype} elements differ (first at "
                              f"{tuple(int(x) for x in j)}: expected {e[tuple(j)]}, got "
                              f"{a[tuple(j)]})", bad)
    tol = TOLERANCE[e.dtype][1 if accumulated else 0]
    with np.errstate(all="ignore"):
        e64, a64 = _f64(e), _f64(a)
        nan_e, nan_a = np.isnan(e64), np.isnan(a64)
        bad = nan_e != nan_a
        both = ~(nan_e | nan_a)
        inf = both & (np.isinf(e64) | np.isinf(a64))
        bad |= inf & (e64 != a64)
        fin = both & ~inf
        allowed = tol + tol * np.abs(e64)
        if spread is not None:
            allowed = allowed + 4 * np.nan_to_num(spread, nan=np.inf, posinf=np.inf)
        bad |= fin & ~(np.abs(e64 - a64) <= allowed)
        if not accumulated:
            zero = fin & (e64 == 0) & (a64 == 0)
            bad |= zero & (np.signbit(e64) != np.signbit(a64))
            # a subnormal where the other has a zero: within any tolerance, but a flushing
            # difference (sign(1e-40) is +0 with denormals flushed, not 1e-40)
            tiny = _tiny(e.dtype)
            sub_e = (e64 != 0) & (np.abs(e64) < tiny)
            sub_a = (a64 != 0) & (np.abs(a64) < tiny)
            bad |= fin & ((sub_e & (a64 == 0)) | (sub_a & (e64 == 0)))
    if unstable is not None:
        bad &= ~unstable
    n = int(bad.sum())
    if not n:
        return None
    j = tuple(int(x) for x in np.argwhere(bad)[0])
    return Mismatch(i, n, f"{n} of {e.size} {e.dtype} elements beyond tol {tol:g} (first at "
                          f"{j}: expected {e[j]!r}, got {a[j]!r})", bad)


def compare(expected: list, actual: list, accumulated: list, spreads=None,
            unstables=None) -> list[Mismatch]:
    if len(expected) != len(actual):
        return [Mismatch(-1, -1, f"expected {len(expected)} outputs, got {len(actual)}")]
    out = []
    for i, (e, a) in enumerate(zip(expected, actual)):
        m = compare_leaf(i, e, a, accumulated[i], None if spreads is None else spreads[i],
                         None if unstables is None else unstables[i])
        if m is not None:
            out.append(m)
    return out


# ---- sensitivity ----------------------------------------------------------------------------

ACCUMULATING = {"reduce", "reduce-window", "dot", "convolution", "scatter",
                "select-and-scatter", "cholesky", "while", "map", "call", "conditional"}


def accumulated_outputs(module) -> list[bool]:
    """For each leaf of the entry's result: whether it is computed through a reduction."""
    memo: dict[int, bool] = {}

    def acc(instr) -> bool:
        key = id(instr)
        if key not in memo:
            memo[key] = instr.opcode in ACCUMULATING or any(acc(o) for o in instr.operands)
        return memo[key]

    root = module.entry.root
    leaves = []

    def walk(instr, inherited):
        if instr.shape.is_tuple and instr.opcode == "tuple":
            for o in instr.operands:
                walk(o, inherited)
        elif instr.shape.is_tuple:
            for _ in instr.shape.leaves():
                leaves.append(inherited or acc(instr))
        else:
            leaves.append(inherited or acc(instr))
    walk(root, False)
    return leaves


def perturb(rng: np.random.Generator, x, ulps: float = 4.0):
    a = np.asarray(x)
    if not is_float(a.dtype) or a.size == 0:
        return x
    eps = float(ml_dtypes.finfo(a.dtype).eps) if a.dtype == BF16 else float(
        np.finfo(a.dtype).eps)
    with np.errstate(all="ignore"):
        factor = 1 + rng.uniform(-ulps, ulps, a.shape) * eps
        return np.asarray((a.astype(np.float64) * factor).astype(a.dtype))


def _widen(spreads, unstable, baseline, outs) -> None:
    for k, (b, o) in enumerate(zip(baseline, outs)):
        b, o = np.asarray(b), np.asarray(o)
        if not is_float(b.dtype):
            unstable[k] |= b != o
            continue
        with np.errstate(all="ignore"):
            b64, o64 = _f64(b), _f64(o)
            # (a NaN's sign is no part of the class: compare_leaf does not compare it, so a
            # variant that only flips it must not make the element unstable)
            cls_b = np.isnan(b64) * 1 + np.isinf(b64) * 2 + (np.signbit(b64) & ~np.isnan(b64)) * 4
            cls_o = np.isnan(o64) * 1 + np.isinf(o64) * 2 + (np.signbit(o64) & ~np.isnan(o64)) * 4
            unstable[k] |= cls_b != cls_o
            d = np.where(np.isfinite(b64) & np.isfinite(o64), np.abs(b64 - o64), 0)
            spreads[k] = np.maximum(spreads[k], d)


def sensitivity(evaluate, inputs, baseline: list, runs: int = 3, seed: int = 0,
                variants=()):
    """(spreads, unstables) per output: how far each element moves when the inputs move by
    a few ulps (evaluate(inputs) -> flat outputs; baseline: its unperturbed result), and
    when each of `variants` (evaluate functions computing the same program another valid
    way, e.g. reductions in another order) computes it."""
    rng = np.random.default_rng(seed)
    spreads = [np.zeros(np.shape(b)) for b in baseline]
    unstable = [np.zeros(np.shape(b), bool) for b in baseline]
    for _ in range(runs):
        _widen(spreads, unstable, baseline, evaluate([perturb(rng, x) for x in inputs]))
    for variant in variants:
        try:
            out = variant(list(inputs))
        except Exception:  # (the interpreter cannot compute this variant: it widens nothing)
            continue
        if [np.shape(o) for o in out] != [np.shape(b) for b in baseline]:
            raise AssertionError("a sensitivity variant changed an output's shape")
        _widen(spreads, unstable, baseline, out)
    return spreads, unstable
