"""Large dots run as independent gemms over slices of the output on xlapy's thread pool
(gemm.py), with BLAS single-threaded for the duration of the run (blas_threads.py)."""

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.backends.cpu import blas_threads

pytestmark = pytest.mark.skipif(not blas_threads.available(),
                                reason="the BLAS in use has no thread-count control")


@pytest.fixture(autouse=True)
def _four_threads(monkeypatch):
    # more slices than this machine may have cores, and uneven slice sizes
    monkeypatch.setenv("XLAPY_NUM_THREADS", "4")


def _compiled(fn, *args):
    c = xp.jit(fn).lower(*args).compile()
    return c, c.executable.spec


def _rand(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


# (m, k, n, lhs transposed, rhs transposed): both split directions, uneven slices
CASES = [(257, 300, 1001, False, False),   # C wider than tall: slices of C's rows
         (1001, 300, 37, False, False),    # tall and narrow: slices of C's columns
         (333, 129, 515, True, False),
         (515, 129, 333, False, True),
         (200, 400, 300, True, True)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n,ta,tb", CASES)
def test_split_dot_matches_numpy(m, k, n, ta, tb, dtype):
    rng = np.random.default_rng(m + n)
    a = _rand(rng, (k, m) if ta else (m, k), dtype)
    b = _rand(rng, (n, k) if tb else (k, n), dtype)

    def f(a, b):
        return (a.T if ta else a) @ (b.T if tb else b)

    c, spec = _compiled(f, a, b)
    assert spec.serial_blas, "this dot should have been split over the pool"
    want = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(c(a, b), want, rtol=tol, atol=tol * np.sqrt(k))


@pytest.mark.parametrize("ta", [False, True])
def test_split_gemm_update_copies_w_slice_by_slice(ta):
    """W - 0.5 * (A.B) is one gemm update; W is copied into the result per slice and the
    caller's W is left alone."""
    rng = np.random.default_rng(3)
    m, k, n = 700, 256, 300
    w = _rand(rng, (m, n), np.float32)
    a = _rand(rng, (k, m) if ta else (m, k), np.float32)
    b = _rand(rng, (k, n), np.float32)
    w0 = w.copy()

    def f(w, a, b):
        return w - 0.5 * ((a.T if ta else a) @ b)

    c, spec = _compiled(f, w, a, b)
    assert "__xlapy$gemm_update" in c.as_text() and spec.serial_blas
    got = c(w, a, b)
    want = w0.astype(np.float64) - 0.5 * ((a.T if ta else a).astype(np.float64) @ b)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(w, w0)


def test_small_dots_are_not_split():
    rng = np.random.default_rng(4)
    a, b = _rand(rng, (64, 64), np.float32), _rand(rng, (64, 64), np.float32)
    _, spec = _compiled(lambda a, b: a @ b, a, b)
    assert not spec.serial_blas


def test_one_thread_means_no_split(monkeypatch):
    monkeypatch.setenv("XLAPY_NUM_THREADS", "1")
    rng = np.random.default_rng(5)
    a, b = _rand(rng, (512, 512), np.float32), _rand(rng, (512, 512), np.float32)
    c, spec = _compiled(lambda a, b: a @ b, a, b)
    assert not spec.serial_blas
    np.testing.assert_allclose(c(a, b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)


def test_blas_thread_count_is_restored_after_a_run():
    get, _ = blas_threads._fns
    before = get()
    rng = np.random.default_rng(6)
    a, b = _rand(rng, (512, 512), np.float32), _rand(rng, (512, 512), np.float32)
    c, spec = _compiled(lambda a, b: xnp.tanh(a @ b), a, b)
    assert spec.serial_blas
    c(a, b)
    assert get() == before


def test_serial_blas_nests():
    get, set_ = blas_threads._fns
    before = get()
    set_(2)
    try:
        with blas_threads.serial_blas():
            assert get() == 1
            with blas_threads.serial_blas():
                assert get() == 1
            assert get() == 1
        assert get() == 2
    finally:
        set_(before)


def test_concurrent_runs_from_threads():
    """Runs of split-gemm executables from several Python threads (the GIL is released
    during native code) give right answers and leave the BLAS thread count as it was."""
    import threading
    get, _ = blas_threads._fns
    before = get()
    rng = np.random.default_rng(7)
    a, b = _rand(rng, (384, 384), np.float32), _rand(rng, (384, 384), np.float32)
    c, _ = _compiled(lambda a, b: a @ b, a, b)
    want = a.astype(np.float64) @ b
    errors = []

    def work():
        for _ in range(20):
            got = c(a, b)
            if not np.allclose(got, want, rtol=1e-4, atol=1e-3):
                errors.append("mismatch")

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert get() == before
