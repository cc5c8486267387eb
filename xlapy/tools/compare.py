"""Comparing outputs: per-dtype default tolerances and a per-leaf error report.

Used by `python -m xlapy run-hlo --compare`, by the corpus tests and by backend tests, so
that "matches" means the same thing everywhere:
  floats   |a - e| <= atol + rtol * |e|, NaN where and only where expected, infinities equal
  ints/pred exact
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from xlapy.errors import ResourceExhaustedError

# (rtol, atol) per element type name.
TOLERANCES = {
    "f64": (1e-10, 1e-12),
    "f32": (2e-4, 1e-5),
    "f16": (1e-2, 1e-3),
    "bf16": (2e-2, 1e-2),
}


@dataclass
class LeafReport:
    index: int
    shape: tuple
    dtype: str
    max_abs_err: float
    max_rel_err: float
    ok: bool
    reason: str = ""

    def line(self) -> str:
        status = "ok" if self.ok else "MISMATCH"
        text = (f"output {self.index}: {self.dtype}{list(self.shape)} max_abs_err="
                f"{self.max_abs_err:.3g} max_rel_err={self.max_rel_err:.3g} {status}")
        return text + (f" ({self.reason})" if self.reason else "")


def _type_name(dtype: np.dtype) -> str:
    from xlapy.hlo.shapes import primitive_type
    try:
        return primitive_type(dtype).name
    except Exception:
        return str(dtype)


def compare_leaf(index: int, expected, actual, rtol=None, atol=None) -> LeafReport:
    with np.errstate(all="ignore"):
        return _compare_leaf(index, expected, actual, rtol, atol)


def _compare_leaf(index: int, expected, actual, rtol, atol) -> LeafReport:
    e, a = np.asarray(expected), np.asarray(actual)
    name = _type_name(e.dtype)
    if e.shape != a.shape or e.dtype != a.dtype:
        return LeafReport(index, e.shape, name, float("inf"), float("inf"), False,
                          f"expected {e.dtype}{list(e.shape)}, got {a.dtype}{list(a.shape)}")
    if e.size == 0:
        return LeafReport(index, e.shape, name, 0.0, 0.0, True)
    if e.dtype.kind not in "fc" and name not in TOLERANCES:
        diff = e != a
        n = int(np.count_nonzero(diff))
        err = 0.0 if n == 0 else float(np.max(np.abs(e.astype(np.float64) - a.astype(np.float64))))
        return LeafReport(index, e.shape, name, err, 0.0 if n == 0 else float("inf"), n == 0,
                          f"{n} elements differ" if n else "")
    r0, a0 = TOLERANCES.get(name, (2e-4, 1e-5))
    rtol = r0 if rtol is None else rtol
    atol = a0 if atol is None else atol
    e64, a64 = e.astype(np.float64), a.astype(np.float64)
    nan_e, nan_a = np.isnan(e64), np.isnan(a64)
    if np.any(nan_e != nan_a):
        n = int(np.count_nonzero(nan_e != nan_a))
        return LeafReport(index, e.shape, name, float("nan"), float("nan"), False,
                          f"NaN in {n} places where the other has a number")
    inf_e, inf_a = np.isinf(e64), np.isinf(a64)
    if np.any((inf_e | inf_a) & (e64 != a64)):
        n = int(np.count_nonzero((inf_e | inf_a) & (e64 != a64)))
        return LeafReport(index, e.shape, name, float("inf"), float("inf"), False,
                          f"infinities differ in {n} places")
    finite = ~(nan_e | inf_e)
    diff = np.where(finite, np.abs(e64 - a64), 0.0)
    rel = diff / np.maximum(np.abs(np.where(finite, e64, 1.0)), np.finfo(np.float64).tiny)
    bad = diff > atol + rtol * np.abs(np.where(finite, e64, 0.0))
    n = int(np.count_nonzero(bad))
    return LeafReport(index, e.shape, name, float(diff.max()), float(rel.max()), n == 0,
                      f"{n} elements beyond rtol={rtol:g} atol={atol:g}" if n else "")


def compare_outputs(expected: list, actual: list, rtol=None, atol=None) -> list[LeafReport]:
    if len(expected) != len(actual):
        return [LeafReport(0, (), "?", float("inf"), float("inf"), False,
                           f"expected {len(expected)} outputs, got {len(actual)}")]
    return [compare_leaf(i, e, a, rtol, atol) for i, (e, a) in enumerate(zip(expected, actual))]


def random_inputs(shapes, seed: int = 0) -> list[np.ndarray]:
    """Deterministic random arrays for parameter shapes (floats ~N(0,1), ints in [-8, 8)).
    Inputs that would take more than half this machine's memory raise ResourceExhaustedError
    (making them would only swap)."""
    need = sum(s.byte_size for s in shapes)
    have = _physical_memory()
    if have and need > have // 2:
        raise ResourceExhaustedError(
            f"random inputs for parameters {', '.join(str(s) for s in shapes)} would take "
            f"{need} bytes, more than half this machine's memory ({have} bytes)")
    try:
        return _random_inputs(shapes, seed)
    except MemoryError:
        raise ResourceExhaustedError(f"not enough memory for random inputs of {need} bytes "
                                     f"({', '.join(str(s) for s in shapes)})") from None


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return 0


def _random_inputs(shapes, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        if s.is_tuple:
            out.append(tuple(_random_inputs(s.tuple_shapes, int(rng.integers(1 << 30)))))
            continue
        t = s.element_type
        if t.is_pred:
            out.append(rng.random(s.dims) < 0.5)
        elif t.is_float:
            out.append(rng.standard_normal(s.dims).astype(t.np_dtype))
        elif t.is_signed:
            out.append(rng.integers(-8, 8, s.dims).astype(t.np_dtype))
        else:
            out.append(rng.integers(0, 16, s.dims).astype(t.np_dtype))
    return out
