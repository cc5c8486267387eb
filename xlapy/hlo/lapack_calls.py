"""The LAPACK custom-calls JAX emits for linear algebra on the cpu, as call plans.

jax.numpy.linalg and jax.scipy.linalg lower to typed-FFI custom-calls named
`lapack_<t><routine>_ffi` (t = s for f32, d for f64; c for c64, z for c128 where the
table says so), each applying one LAPACK (or BLAS, for trsm) routine to every matrix of the
leading batch dimensions, column-major, in place in its first result.
`plan(instr-like)` reads one such instruction (operand and result shapes, the
backend_config attributes) and returns a CallPlan: which column-major buffers one matrix of
the batch needs (copied in from which operand, written back to which result), the routine's
argument list and its workspace. The evaluator (hlo/evaluator/lapack.py, through ctypes) and
the cpu backend (backends/cpu/emitters/lapack_calls.py, generated code) both run a plan the
same way, so they call the same routine of scipy's LAPACK, which jaxlib calls too, with the
same arguments and workspace sizes: results are bitwise XLA's.

  target (t = s|d)   operands            results                                 attributes
  potrf    a[B,n,n]             (a, info[B])                                     uplo
  getrf    a[B,m,n]             (lu, ipiv s32[B,min(m,n)] (1-based), info)
  trsm     a[B,k,k], b[B,m,n]   x[B,m,n] (k = m for side L, n for R)  side uplo trans_x diag
  geqrf    a[B,m,n]             (a, tau[B,min(m,n)])
  orgqr    a[B,m,n], tau[B,k]   q[B,m,n]                                (m >= n >= k)
  ungqr    the same as orgqr, for c and z
  syevd    a[B,n,n]             (vectors, values[B,n], info)            mode (V|N), uplo
  heevd    a[B,n,n] (c|z)       (vectors, values real[B,n], info)       mode (V|N), uplo
  gesdd    a[B,m,n]             (a, s[B,k], u[B,m,uc], vt[B,vr,n], info)  mode (A|S|N)
                                (c|z: s real)
  gesvd    the same as gesdd, LAPACK's QR-iteration SVD
  gees     a[B,n,n]             (t, vs, wr[B,n], wi[B,n], sdim[B], info)  mode (V|N), sort (N)
  gehrd    a[B,n,n]             (a, tau[B,n-1], info)                   low, high (1-based)
  sytrd    a[B,n,n]             (a, d[B,n], e[B,n-1], tau[B,n-1], info) uplo
  gtsv     dl,d,du[B,n], b[B,n,r]  (dl, d, du, x, info)                 (dl[0] unused)
  geev     a[B,n,n] (s|d)       (wr[B,n], wi[B,n], vl c[B,n,n], vr c[B,n,n], info)
           a[B,n,n] (c|z)       (w c[B,n], vl, vr, info)          compute_left, compute_right
                                                                  (V|N each)

Info results are s32 with the batch dims (LAPACK's info: 0, or > 0 for a singular / not
positive definite / unconverged matrix; jax masks those results with NaN itself). Outputs a
routine does not write (u and vt for mode N) are zeros. Matrices with a zero dimension skip
the routine (its outputs are the inputs copied, or zeros; info 0). Complex routines are
supported for getrf, trsm, potrf and geqrf (cgetrf, zgetrf, ctrsm, ztrsm, cpotrf, zpotrf,
cgeqrf, zgeqrf: the same plans on complex buffers; trsm's alpha is 1+0j, and trans_x C is
the conjugate transpose; potrf reads the Hermitian matrix's uplo triangle), for geev, gesdd
and gesvd (cgeev, zgeev, cgesdd, zgesdd, cgesvd, zgesvd: complex buffers, and a real
workspace rwork; the singular values are real, U and V^H complex), and under their complex names for
orgqr (cungqr, zungqr) and syevd (cheevd, zheevd: real eigenvalues, a real workspace
rwork); the others are real only.
The real geev returns its eigenvectors as complex matrices, as jaxlib's kernel does:
LAPACK's packed real form (a conjugate pair j, j+1 stored as the real part in column j and
the imaginary part in column j+1) is unpacked when the buffer is written back
(Buf.unpack). A vector not computed (mode N) is zeros. A matrix with an infinite or NaN
element is not passed to geev (LAPACK rejects NaN in its balancing step): info is -4 and
the outputs are zeros, which jax's module masks with NaN (what jax.jit returns for it).

Attributes are the backend_config dictionary JAX prints: `{uplo = 76 : ui8, mode = 86 :
ui8}` (characters as their codes) and `{low = 1 : i32, high = 4 : i32}`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

_TARGET = re.compile(r"lapack_([sdcz])([a-z0-9]+)_ffi")
_DTYPES = {"s": np.dtype(np.float32), "d": np.dtype(np.float64),
           "c": np.dtype(np.complex64), "z": np.dtype(np.complex128)}
COMPLEX_ROUTINES = frozenset({"geev", "getrf", "trsm", "potrf", "geqrf", "gesdd",
                              "gesvd"})   # with c and z
COMPLEX_ONLY = frozenset({"heevd", "ungqr"})   # the complex names of syevd and orgqr: c, z only
_ATTR = re.compile(r"([A-Za-z_][\w.]*)\s*=\s*(-?\d+)\s*(?::\s*\w+)?")


NONFINITE_INFO = -4


class LapackCallError(Exception):
    """An instruction that does not fit its target's contract (callers re-raise it as their
    own error type, with the instruction's position)."""


@dataclass(frozen=True)
class Buf:
    """One column-major buffer of one batch element: `dims` (rows, cols) or (n,)."""
    name: str
    dims: tuple[int, ...]
    int32: bool = False       # s32 (pivots) rather than the routine's float type
    real: bool = False        # the real type of a complex routine (rwork, w of real geev)
    unpack: str | None = None  # LAPACK's packed real eigenvectors, written back to a complex
                               # leaf by the imaginary parts in this (real, (n,)) buffer
    src: int | None = None    # operand copied in, else zeros
    out: int | None = None    # result leaf written back


@dataclass
class CallPlan:
    """How to run one custom-call: for each index of `batch`, fill `bufs`, call `routine`
    with `args`, write back. Argument kinds:
      ("char", c) | ("int", v) | ("one",) 1.0 (1+0j) of the plan's dtype
      | ("buf", name, offset) | ("null",)
      ("work",) | ("lwork",) | ("iwork",) | ("liwork",) | ("out", leaf): an int the routine
      sets, stored to result leaf `leaf` at the batch index (None: dropped).
    `lwork` is a fixed workspace length, or None for LAPACK's query (the call with lwork=-1,
    `query_args` replacing some arguments); `liwork` the integer workspace length."""
    routine: str              # e.g. "dgetrf", a name of scipy.linalg.cython_lapack/_blas
    dtype: np.dtype
    batch: tuple[int, ...]
    bufs: list[Buf]
    args: list[tuple]
    lwork: int | None = 0
    liwork: int = 0
    empty: bool = False       # a zero-sized matrix: the routine is not called
    query_args: dict = field(default_factory=dict)
    finite_only: str | None = None  # a buffer whose matrix must be finite: if it is not,
                                    # the routine is skipped and every "out" int is
                                    # NONFINITE_INFO (jaxlib's geev: LAPACK can't take one)

    @property
    def blas(self) -> bool:
        return self.routine[1:] == "trsm"


def _types(name: str) -> str:
    """The type letters a routine's plan takes."""
    return "cz" if name in COMPLEX_ONLY else "sdcz" if name in COMPLEX_ROUTINES else "sd"


def is_lapack_target(target: str) -> bool:
    m = _TARGET.fullmatch(target or "")
    return bool(m) and m.group(2) in _PLANS and m.group(1) in _types(m.group(2))


def targets() -> tuple[str, ...]:
    """Every custom-call target name the plans cover."""
    return tuple(f"lapack_{t}{name}_ffi" for name in _PLANS for t in _types(name))


def real_dtype(dtype) -> np.dtype:
    """The real type of a plan's dtype (its parts for complex ones)."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32 if dtype in (np.float32, np.complex64) else np.float64)


def unpack_eigenvectors(packed: np.ndarray, wi: np.ndarray) -> np.ndarray:
    """LAPACK's packed real eigenvectors (n, n) as complex columns: for a conjugate pair
    (wi[j] > 0, wi[j+1] < 0) columns j and j+1 hold the real and imaginary parts."""
    n = packed.shape[-1]
    out = packed.astype(np.result_type(packed.dtype, np.complex64))
    for j in range(n):
        if wi[j] > 0 and j + 1 < n:
            out[:, j] = packed[:, j] + 1j * packed[:, j + 1]
        elif wi[j] < 0 and j > 0:
            out[:, j] = packed[:, j - 1] - 1j * packed[:, j]
    return out


def attributes(backend_config) -> dict[str, int]:
    """{name: integer} of a backend_config dictionary as JAX prints it."""
    return {k: int(v) for k, v in _ATTR.findall(str(backend_config or ""))}


def plan(target: str, operand_shapes, result_shapes, backend_config) -> CallPlan:
    """The call plan of one custom-call (shapes are xlapy Shapes; results the leaves)."""
    m = _TARGET.fullmatch(target or "")
    if not is_lapack_target(target):
        raise LapackCallError(f"unknown LAPACK target '{target}'")
    t, routine = m.groups()
    dtype = _DTYPES[t]
    ops = [_dims(s, dtype, f"{target}: operand {i}") for i, s in enumerate(operand_shapes)]
    res = list(result_shapes)
    return _PLANS[routine](_Ctx(target, t + routine, dtype, ops, res, attributes(backend_config)))


def _dims(shape, dtype, what):
    if shape.is_tuple or np.dtype(shape.dtype) != dtype:
        raise LapackCallError(f"{what} must be a {np.dtype(dtype).name} array, got {shape}")
    return tuple(shape.dims)


class _Ctx:
    def __init__(self, target, routine, dtype, ops, res, attrs):
        self.target, self.routine, self.dtype = target, routine, dtype
        self.ops, self.res, self.attrs = ops, res, attrs

    def fail(self, what: str):
        return LapackCallError(f"{self.target}: {what}")

    def operands(self, n: int, ranks=None):
        if len(self.ops) != n:
            raise self.fail(f"takes {n} operand(s), got {len(self.ops)}")
        ranks = ranks or [2] * n
        for i, (d, r) in enumerate(zip(self.ops, ranks)):
            if len(d) < r:
                raise self.fail(f"operand {i} needs rank >= {r}, got {list(d)}")
        batch = self.ops[0][:len(self.ops[0]) - ranks[0]]
        for i, (d, r) in enumerate(zip(self.ops, ranks)):
            if d[:len(d) - r] != batch:
                raise self.fail(f"operand {i} {list(d)} does not have the batch dims "
                                f"{list(batch)} of operand 0")
        return batch

    def matrix(self):
        """(batch, m, n) of the single operand, a batch of m x n matrices."""
        batch = self.operands(1)
        m, n = self.ops[0][-2:]
        return batch, m, n

    def square(self):
        """(batch, n) of the single operand, a batch of n x n matrices."""
        batch, m, n = self.matrix()
        if m != n:
            raise self.fail(f"needs square matrices, got {list(self.ops[0])}")
        return batch, n

    def results(self, batch, *expected):
        """Check the result leaves: expected entries are per-matrix dims (of the plan's
        type), ("i32", dims) for s32 ones, ("real", dims) / ("complex", dims) for the real
        or complex type of the plan's precision, or None for a leaf of the plan's type of
        any shape with the batch dims."""
        if len(self.res) != len(expected):
            raise self.fail(f"has {len(expected)} results, got {len(self.res)}")
        kinds = {"i32": np.dtype(np.int32), "real": real_dtype(self.dtype),
                 "complex": np.result_type(real_dtype(self.dtype), np.complex64)}
        for i, (s, e) in enumerate(zip(self.res, expected)):
            tagged = isinstance(e, tuple) and len(e) == 2 and isinstance(e[0], str)
            dt = kinds[e[0]] if tagged else self.dtype
            if s.is_tuple or np.dtype(s.dtype) != dt:
                raise self.fail(f"result {i} must be a {dt.name} array, got {s}")
            dims = tuple(s.dims)
            if e is None:
                if dims[:len(batch)] != batch or len(dims) != len(batch) + 2:
                    raise self.fail(f"result {i} {list(dims)} must be a batch of matrices")
                continue
            want = batch + tuple(e[1] if tagged else e)
            if dims != want:
                raise self.fail(f"result {i} must have dims {list(want)}, got {list(dims)}")

    def char(self, name: str, allowed: str, default: str | None = None) -> str:
        if name not in self.attrs:
            if default is None:
                raise self.fail(f"needs the attribute {name} in its backend_config")
            return default
        c = chr(self.attrs[name]) if 0 <= self.attrs[name] < 0x110000 else "?"
        if c not in allowed:
            raise self.fail(f"{name} must be one of {', '.join(allowed)}, got {c!r}")
        return c

    def make(self, batch, bufs, args, **kw) -> CallPlan:
        return CallPlan(self.routine, self.dtype, tuple(batch), bufs, args, **kw)


def _ld(n: int) -> tuple:
    return ("int", max(1, n))


_PLANS: dict = {}


def _plan(name):
    def register(fn):
        _PLANS[name] = fn
        return fn
    return register


@_plan("potrf")
def _potrf(c: _Ctx) -> CallPlan:
    batch, n = c.square()
    c.results(batch, (n, n), ("i32", ()))
    uplo = c.char("uplo", "LU", "L")
    return c.make(batch, [Buf("a", (n, n), src=0, out=0)],
                  [("char", uplo), ("int", n), ("buf", "a", 0), _ld(n), ("out", 1)],
                  empty=n == 0)


@_plan("getrf")
def _getrf(c: _Ctx) -> CallPlan:
    batch, m, n = c.matrix()
    c.results(batch, (m, n), ("i32", (min(m, n),)), ("i32", ()))
    return c.make(batch, [Buf("a", (m, n), src=0, out=0),
                          Buf("ipiv", (min(m, n),), int32=True, out=1)],
                  [("int", m), ("int", n), ("buf", "a", 0), _ld(m), ("buf", "ipiv", 0),
                   ("out", 2)], empty=m == 0 or n == 0)


@_plan("trsm")
def _trsm(c: _Ctx) -> CallPlan:
    batch = c.operands(2)
    m, n = c.ops[1][-2:]
    side = c.char("side", "LR", "L")
    k = m if side == "L" else n
    if c.ops[0][-2:] != (k, k):
        raise c.fail(f"the triangular matrix must be {k}x{k} for side {side} and a right "
                     f"side of {list(c.ops[1])}, got {list(c.ops[0])}")
    c.results(batch, (m, n))
    args = [("char", side), ("char", c.char("uplo", "LU", "L")),
            ("char", c.char("trans_x", "NTC", "N")), ("char", c.char("diag", "NU", "N")),
            ("int", m), ("int", n), ("one",), ("buf", "a", 0), _ld(k), ("buf", "b", 0), _ld(m)]
    return c.make(batch, [Buf("a", (k, k), src=0), Buf("b", (m, n), src=1, out=0)], args,
                  empty=m == 0 or n == 0)


@_plan("geqrf")
def _geqrf(c: _Ctx) -> CallPlan:
    batch, m, n = c.matrix()
    c.results(batch, (m, n), (min(m, n),))
    return c.make(batch, [Buf("a", (m, n), src=0, out=0), Buf("tau", (min(m, n),), out=1)],
                  [("int", m), ("int", n), ("buf", "a", 0), _ld(m), ("buf", "tau", 0),
                   ("work",), ("lwork",), ("out", None)], lwork=None, empty=m == 0 or n == 0)


@_plan("ungqr")   # complex: the same arguments
@_plan("orgqr")
def _orgqr(c: _Ctx) -> CallPlan:
    batch = c.operands(2, [2, 1])
    m, n = c.ops[0][-2:]
    k = c.ops[1][-1]
    if not m >= n >= k:
        raise c.fail(f"needs m >= n >= k for a[{m},{n}] and tau[{k}]")
    c.results(batch, (m, n))
    return c.make(batch, [Buf("a", (m, n), src=0, out=0), Buf("tau", (k,), src=1)],
                  [("int", m), ("int", n), ("int", k), ("buf", "a", 0), _ld(m),
                   ("buf", "tau", 0), ("work",), ("lwork",), ("out", None)],
                  lwork=None, empty=m == 0 or n == 0)


@_plan("syevd")
def _syevd(c: _Ctx) -> CallPlan:
    batch, n = c.square()
    c.results(batch, (n, n), (n,), ("i32", ()))
    mode = c.char("mode", "VN", "V")
    lwork, liwork = (1 + 6 * n + 2 * n * n, 3 + 5 * n) if mode == "V" else (2 * n + 1, 1)
    return c.make(batch, [Buf("a", (n, n), src=0, out=0), Buf("w", (n,), out=1)],
                  [("char", mode), ("char", c.char("uplo", "LU", "L")), ("int", n),
                   ("buf", "a", 0), _ld(n), ("buf", "w", 0), ("work",), ("lwork",),
                   ("iwork",), ("liwork",), ("out", 2)],
                  lwork=lwork, liwork=liwork, empty=n == 0)


@_plan("heevd")
def _heevd(c: _Ctx) -> CallPlan:
    """cheevd / zheevd: syevd's contract with real eigenvalues, and a real workspace rwork
    (jaxlib's sizes: LAPACK's minimum for the mode)."""
    batch, n = c.square()
    c.results(batch, (n, n), ("real", (n,)), ("i32", ()))
    mode = c.char("mode", "VN", "V")
    lwork, lrwork, liwork = ((n * (n + 2), 2 * n * n + 5 * n + 1, 3 + 5 * n) if mode == "V"
                             else (n + 1, n, 1))
    return c.make(batch, [Buf("a", (n, n), src=0, out=0), Buf("w", (n,), real=True, out=1),
                          Buf("rwork", (max(lrwork, 1),), real=True)],
                  [("char", mode), ("char", c.char("uplo", "LU", "L")), ("int", n),
                   ("buf", "a", 0), _ld(n), ("buf", "w", 0), ("work",), ("lwork",),
                   ("buf", "rwork", 0), ("int", max(lrwork, 1)), ("iwork",), ("liwork",),
                   ("out", 2)],
                  lwork=lwork, liwork=liwork, empty=n == 0)


def _svd(c: _Ctx, divide_and_conquer: bool) -> CallPlan:
    """gesdd / gesvd; the complex ones (c, z) take real singular values s and a real
    workspace rwork after lwork (jaxlib's sizes: LAPACK's minimum for the mode)."""
    batch, m, n = c.matrix()
    k = min(m, n)
    mode = c.char("mode", "ASN")
    cplx = c.dtype.kind == "c"
    u_dims = {"A": (m, m), "S": (m, k)}.get(mode)
    vt_dims = {"A": (n, n), "S": (k, n)}.get(mode)
    c.results(batch, (m, n), ("real", (k,)), u_dims, vt_dims, ("i32", ()))
    u_dims, vt_dims = tuple(c.res[2].dims[-2:]), tuple(c.res[3].dims[-2:])
    bufs = [Buf("a", (m, n), src=0, out=0), Buf("s", (k,), real=cplx, out=1),
            Buf("u", u_dims, out=2), Buf("vt", vt_dims, out=3)]
    body = [("int", m), ("int", n), ("buf", "a", 0), _ld(m), ("buf", "s", 0),
            ("buf", "u", 0), _ld(m), ("buf", "vt", 0), _ld(vt_dims[0]), ("work",), ("lwork",)]
    rwork = []
    if cplx:
        if not divide_and_conquer:
            lrwork = 5 * k
        elif mode == "N":
            lrwork = 7 * k
        else:
            lrwork = max(5 * k * k + 5 * k, 2 * max(m, n) * k + 2 * k * k + k)
        bufs.append(Buf("rwork", (max(lrwork, 1),), real=True))
        rwork = [("buf", "rwork", 0)]
    if divide_and_conquer:
        return c.make(batch, bufs, [("char", mode)] + body + rwork + [("iwork",), ("out", 4)],
                      lwork=None, liwork=8 * k, empty=k == 0)
    return c.make(batch, bufs, [("char", mode), ("char", mode)] + body + rwork + [("out", 4)],
                  lwork=None, empty=k == 0)


_plan("gesdd")(lambda c: _svd(c, True))
_plan("gesvd")(lambda c: _svd(c, False))


@_plan("gees")
def _gees(c: _Ctx) -> CallPlan:
    batch, n = c.square()
    c.results(batch, (n, n), (n, n), (n,), (n,), ("i32", ()), ("i32", ()))
    mode = c.char("mode", "VN", "V")
    if c.char("sort", "NS", "N") != "N":
        raise c.fail("sorting the eigenvalues (sort = S) is not supported (nor by jaxlib)")
    return c.make(batch, [Buf("a", (n, n), src=0, out=0), Buf("vs", (n, n), out=1),
                          Buf("wr", (n,), out=2), Buf("wi", (n,), out=3)],
                  [("char", mode), ("char", "N"), ("null",), ("int", n), ("buf", "a", 0),
                   _ld(n), ("out", 4), ("buf", "wr", 0), ("buf", "wi", 0), ("buf", "vs", 0),
                   _ld(n), ("work",), ("lwork",), ("null",), ("out", 5)],
                  lwork=None, empty=n == 0)


@_plan("gehrd")
def _gehrd(c: _Ctx) -> CallPlan:
    batch, n = c.square()
    c.results(batch, (n, n), (max(n - 1, 0),), ("i32", ()))
    low, high = c.attrs.get("low", 1), c.attrs.get("high", n)
    if n and not 1 <= low <= max(high, 1) <= n:
        raise c.fail(f"needs 1 <= low <= high <= n, got low={low}, high={high}, n={n}")
    return c.make(batch, [Buf("a", (n, n), src=0, out=0), Buf("tau", (max(n - 1, 0),), out=1)],
                  [("int", n), ("int", low), ("int", high), ("buf", "a", 0), _ld(n),
                   ("buf", "tau", 0), ("work",), ("lwork",), ("out", 2)],
                  lwork=None, empty=n == 0)


@_plan("sytrd")
def _sytrd(c: _Ctx) -> CallPlan:
    batch, n = c.square()
    e = max(n - 1, 0)
    c.results(batch, (n, n), (n,), (e,), (e,), ("i32", ()))
    return c.make(batch, [Buf("a", (n, n), src=0, out=0), Buf("d", (n,), out=1),
                          Buf("e", (e,), out=2), Buf("tau", (e,), out=3)],
                  [("char", c.char("uplo", "LU", "L")), ("int", n), ("buf", "a", 0), _ld(n),
                   ("buf", "d", 0), ("buf", "e", 0), ("buf", "tau", 0), ("work",),
                   ("lwork",), ("out", 4)],
                  lwork=None, empty=n == 0, query_args={0: ("char", "L")})  # as jaxlib


@_plan("gtsv")
def _gtsv(c: _Ctx) -> CallPlan:
    batch = c.operands(4, [1, 1, 1, 2])
    n, r = c.ops[3][-2:]
    for i in range(3):
        if c.ops[i][-1] != n:
            raise c.fail(f"operand {i} must have {n} elements (the rows of b), got "
                         f"{list(c.ops[i])}")
    c.results(batch, (n,), (n,), (n,), (n, r), ("i32", ()))
    return c.make(batch, [Buf("dl", (n,), src=0, out=0), Buf("d", (n,), src=1, out=1),
                          Buf("du", (n,), src=2, out=2), Buf("b", (n, r), src=3, out=3)],
                  [("int", n), ("int", r), ("buf", "dl", 1), ("buf", "d", 0),
                   ("buf", "du", 0), ("buf", "b", 0), _ld(n), ("out", 4)], empty=n == 0)


@_plan("geev")
def _geev(c: _Ctx) -> CallPlan:
    batch, n = c.square()
    left = c.char("compute_left", "VN", "N")
    right = c.char("compute_right", "VN", "V")
    real = c.dtype.kind == "f"
    vecs = [Buf("vl", (n, n), out=len(c.res) - 3), Buf("vr", (n, n), out=len(c.res) - 2)]
    if real:
        c.results(batch, ("real", (n,)), ("real", (n,)), ("complex", (n, n)),
                  ("complex", (n, n)), ("i32", ()))
        vecs = [Buf(v.name, v.dims, out=v.out, unpack="wi") for v in vecs]
        bufs = [Buf("a", (n, n), src=0), Buf("wr", (n,), out=0), Buf("wi", (n,), out=1)]
        values = [("buf", "wr", 0), ("buf", "wi", 0)]
        tail = [("out", 4)]
    else:
        c.results(batch, (n,), (n, n), (n, n), ("i32", ()))
        bufs = [Buf("a", (n, n), src=0), Buf("w", (n,), out=0),
                Buf("rwork", (max(2 * n, 1),), real=True)]
        values = [("buf", "w", 0)]
        tail = [("buf", "rwork", 0), ("out", 3)]
    args = ([("char", left), ("char", right), ("int", n), ("buf", "a", 0), _ld(n)] + values
            + [("buf", "vl", 0), _ld(n), ("buf", "vr", 0), _ld(n), ("work",), ("lwork",)]
            + tail)
    return c.make(batch, bufs + vecs, args, lwork=None, empty=n == 0, finite_only="a")
