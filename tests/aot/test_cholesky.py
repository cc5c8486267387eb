"""Cholesky in ahead-of-time objects, which have no LAPACK: the `cholesky` opcode and jax's
LAPACK potrf custom-calls run on the object's own IR potrf (backends/cpu/emitters/
potrf_ir.py), built for x86-64 and AArch64 and checked against NumPy and the interpreter:
both triangles, a batch, f32 and f64, both layouts of the custom-call, and matrices that
are not positive definite (NaN from the opcode, LAPACK's info from the custom-call; the
interpreter runs the opcode only)."""

import numpy as np

import xlapy.aot as aot
from xlapy.backends.base import flatten
from xlapy.backends.interpreter import evaluate
from xlapy.hlo import parse
from xlapy.tools.compare import compare_outputs
from xlapy_tests_aot_harness import TRIPLES, run_in_c

RNG = np.random.default_rng(11)

CHOLESKY = """HloModule chol
ENTRY e {
  a = f32[2,5,5] parameter(0)
  b = f64[6,6] parameter(1)
  c = f32[3,3] parameter(2)
  l = f32[2,5,5] cholesky(a), lower=true
  u = f64[6,6] cholesky(b), lower=false
  bad = f32[3,3] cholesky(c), lower=true
  ROOT t = (f32[2,5,5], f64[6,6], f32[3,3]) tuple(l, u, bad)
}
"""

POTRF = """HloModule potrf
ENTRY e {
  a = f32[2,4,4] parameter(0)
  b = f64[5,5]{0,1} parameter(1)
  l = (f32[2,4,4], s32[2]) custom-call(a), custom_call_target="lapack_spotrf_ffi",
      backend_config={uplo = 76 : ui8}
  u = (f64[5,5]{0,1}, s32[]) custom-call(b), custom_call_target="lapack_dpotrf_ffi",
      backend_config={uplo = 85 : ui8}
  l0 = f32[2,4,4] get-tuple-element(l), index=0
  l1 = s32[2] get-tuple-element(l), index=1
  u0 = f64[5,5]{0,1} get-tuple-element(u), index=0
  u1 = s32[] get-tuple-element(u), index=1
  ROOT t = (f32[2,4,4], s32[2], f64[5,5]{0,1}, s32[]) tuple(l0, l1, u0, u1)
}
"""


def spd(n: int, dtype) -> np.ndarray:
    m = RNG.standard_normal((n, n))
    return (m @ m.T + n * np.eye(n)).astype(dtype)


def test_cholesky_runs_without_lapack(machine, tc, tmp_path):
    a = np.stack([spd(5, np.float32), spd(5, np.float32)])
    b = spd(6, np.float64)
    c = np.diag([1.0, -1.0, 2.0]).astype(np.float32)     # not positive definite
    p = np.stack([spd(4, np.float32), np.diag([1.0, 2.0, -3.0, 1.0]).astype(np.float32)])
    q = spd(5, np.float64)
    chol = aot.compile(CHOLESKY, target_triple=TRIPLES[machine], entry_point="chol")
    potrf = aot.compile(POTRF, target_triple=TRIPLES[machine], entry_point="potrf")
    assert not [s for s in chol.code.info.undefined() + potrf.code.info.undefined()
                if "potrf" in s], "the object must not need LAPACK"
    got_chol, got_potrf = run_in_c(tc, [(chol, [a, b, c]), (potrf, [p, q])], tmp_path)

    np.testing.assert_allclose(got_chol[0], np.linalg.cholesky(a.astype(np.float64)),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_chol[1], np.linalg.cholesky(b).T, rtol=1e-12, atol=1e-12)
    assert np.isnan(got_chol[2]).all()

    factor, info, upper, uinfo = got_potrf
    assert info.tolist() == [0, 3] and int(uinfo) == 0
    np.testing.assert_allclose(np.tril(factor[0]), np.linalg.cholesky(p[0].astype(np.float64)),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(np.triu(factor[0], 1), np.triu(p[0], 1))  # kept as given
    np.testing.assert_allclose(np.triu(upper), np.linalg.cholesky(q).T, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(np.tril(upper, -1), np.tril(q, -1))

    want = [np.asarray(x) for x in flatten(evaluate(parse(CHOLESKY), a, b, c))]
    reports = compare_outputs(want, got_chol)   # and as the interpreter computes them
    assert all(r.ok for r in reports), [r.line() for r in reports if not r.ok]
