"""xlapy's own gemm (gemm_kernel.py): the kernel against NumPy in float64 on shapes with
edges, every transposition, alpha/beta with a separate Cin, one or several chunks (split by
rows where M > N, else by columns) and a transposed C; and whole programs compiled with
XLAPY_GEMM=xlapy against the interpreter."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.backends.cpu.emitters import gemm_kernel as gk
from xlapy.errors import XlapyError


# the host's vector width, and 256 bits as built for AVX2 (and NEON) hosts, which an AVX-512
# host runs too: its VL = 8 takes other paths (two lane groups per 12-row panel, 8 x 8
# register transposes)
WIDTHS = sorted({gk.vector_bits(), 256})


@pytest.fixture(scope="module", params=WIDTHS, ids=[f"{w}-bit" for w in WIDTHS])
def kernels(request):
    return {t: (*gk.load(t, request.param), request.param) for t in ("f32", "f64")}


def _run(kernels, a, b, c, alpha, beta, cin, chunks):
    t = "f32" if a.dtype == np.float32 else "f64"
    _, fn, bits = kernels[t]
    gk.numpy_call(fn, a, b, c, alpha, beta, cin, chunks, bits=bits)()


# (M > N with several chunks splits by rows: 100x300x50, 520x513x100 with uneven depth
# blocks, 1100x300x1030 with two NC column blocks and several MC row blocks per chunk)
# (M = 1 is the matrix-vector path: 1x120x240 whole blocks of columns and a partial one of
# whole vectors, 1x33x20 one or two whole vectors and a partial one, 1x257x1030 several
# blocks and a partial vector at the end)
# (a few rows, many columns: the direct phase, gemm_params.direct_small_rows, with rows
# contiguous: 8x256x1024 a recurrent cell's x . W, 5x33x130 a partial row group, block and
# vector, 3x17x200 on the 256-bit kernel too; 8 rows there take the packed path; at most
# DIRECT_DEPTH deep with B's and C's rows contiguous, A transposed too: 60x8x240 a
# weight gradient's update over a batch of 8, 37x16x300)
# (C at most GV vectors wide and at most KC deep runs the direct phase with A transposed
# too: 1568x256x64 the NHWC filter gradient's blocks, 37x255x63 partial vectors and row
# groups; 300x257x64 one deeper, packed)
SHAPES = [(1, 1, 1), (3, 5, 7), (12, 256, 32), (13, 257, 33), (100, 300, 50), (200, 600, 1030),
          (1030, 70, 9), (520, 513, 100), (1100, 300, 1030), (1, 120, 240), (1, 33, 20),
          (1, 257, 1030), (8, 256, 1024), (5, 33, 130), (3, 17, 200), (60, 8, 240),
          (37, 16, 300), (1568, 256, 64), (37, 255, 63), (300, 257, 64)]


@pytest.mark.parametrize("m,k,n,tb", [(1, 120, 240, False), (13, 120, 240, False),
                                     (13, 257, 33, True),
                                     (30, 70, 1030, False), (5, 300, 1100, True)])
def test_one_chunk_stays_inside_its_workspace(kernels, m, k, n, tb):
    """workspace_bytes gives a serial call only as many columns of B packing space as B has
    (ahead-of-time objects' temp size), a one-row call none; the bytes after it are never
    written."""
    _, fn, bits = kernels["f32"]
    rng = np.random.default_rng(n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((n, k)).astype(np.float32).T if tb else \
        rng.standard_normal((k, n)).astype(np.float32)
    c = np.empty((m, n), np.float32)
    size = gk.workspace_bytes("f32", bits, m, k, 1, n)
    ws = np.full(size + 4096, 0xAB, np.uint8)
    gk.numpy_call(fn, a, b, c, chunks=1, bits=bits, ws=ws[:size])()
    assert (ws[size:] == 0xAB).all()
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4 * np.sqrt(k))


@pytest.mark.parametrize("m,k,n", [(1568, 256, 64), (37, 255, 63), (5, 100, 3)])
def test_thin_product_of_transposed_a_needs_no_workspace(kernels, m, k, n):
    """C at most GV vectors wide, at most KC deep, A read down its columns: the direct
    phase (direct_call says so at compile time, and the dot then gives no workspace), so
    not one byte of the workspace is written."""
    _, fn, bits = kernels["f32"]
    if n > gk.GV * gk.lanes("f32", bits):
        pytest.skip("wider than the direct phase's block on this vector width")
    assert gk.direct_call("f32", m, n, bits, False, k, True)
    rng = np.random.default_rng(k)
    a = rng.standard_normal((k, m)).astype(np.float32).T
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    ws = np.full(4096, 0xAB, np.uint8)
    for chunks in (1, 2):
        gk.numpy_call(fn, a, b, c, chunks=chunks, bits=bits, ws=ws[:0])()
        assert (ws == 0xAB).all()
        np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4,
                                   atol=1e-4 * np.sqrt(k))


def test_thin_product_of_transposed_lhs_in_a_program(monkeypatch):
    """A dot whose lhs is read down its columns (x^T . w, a weight gradient's form), few
    columns, at most KC deep, compiled with the own gemm: unswapped, direct, no workspace
    (gemm.swapped_for and the dot's scratch follow direct_call), against NumPy."""
    monkeypatch.setenv("XLAPY_GEMM", "xlapy")
    rng = np.random.default_rng(5)
    for k, m, n in ((200, 901, 48), (256, 64, 64), (31, 1000, 3)):
        x = rng.standard_normal((k, m)).astype(np.float32)
        w = rng.standard_normal((k, n)).astype(np.float32)
        got = np.asarray(xp.jit(lambda x, w: x.T @ w)(x, w))
        np.testing.assert_allclose(got, x.T.astype(np.float64) @ w, rtol=1e-4,
                                   atol=1e-4 * np.sqrt(k))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", SHAPES, ids=[f"{m}x{k}x{n}" for m, k, n in SHAPES])
def test_kernel_matches_numpy(kernels, dtype, m, k, n):
    rng = np.random.default_rng(m * 1000 + k + n)
    for ta, tb, chunks, c_transposed, (alpha, beta) in [
            (False, False, 1, False, (1.0, 0.0)), (True, False, 2, False, (-0.5, 1.0)),
            (False, True, 3, True, (2.0, 0.25)), (True, True, 2, True, (1.0, 0.0)),
            (False, False, 2, False, (0.5, -1.0))]:
        a = rng.standard_normal((k, m) if ta else (m, k)).astype(dtype)
        b = rng.standard_normal((n, k) if tb else (k, n)).astype(dtype)
        a, b = (a.T if ta else a), (b.T if tb else b)
        cin = rng.standard_normal((m, n)).astype(dtype)
        c = np.empty((n, m), dtype).T if c_transposed else np.empty((m, n), dtype)
        if beta == 0.0:
            c[...] = np.nan   # beta 0: C's old contents (and Cin) must not be read
            cin = c
        _run(kernels, a, b, c, alpha, beta, cin, chunks)
        want = alpha * (a.astype(np.float64) @ b.astype(np.float64))
        if beta:
            want = want + beta * cin
        tol = (3e-5 if dtype == np.float32 else 1e-12) * np.sqrt(k)
        np.testing.assert_allclose(c, want, rtol=tol, atol=tol,
                                   err_msg=f"ta={ta} tb={tb} chunks={chunks} alpha={alpha} "
                                           f"beta={beta} C transposed={c_transposed}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_operands_with_no_unit_stride(kernels, dtype):
    # neither stride of B is 1 (the element-by-element packing), and B transposed with
    # contiguous columns at depths around the vector length (register transposes plus the
    # element-by-element rest)
    rng = np.random.default_rng(7)
    big = rng.standard_normal((300, 200)).astype(dtype)
    for a, b in [(rng.standard_normal((37, 100)).astype(dtype), big[::3, ::2][:100, :45]),
                 *[(rng.standard_normal((29, k)).astype(dtype),
                    rng.standard_normal((70, k)).astype(dtype).T) for k in (15, 16, 17, 33)]]:
        c = np.full((a.shape[0], b.shape[1]), np.nan, dtype)
        _run(kernels, a, b, c, 1.0, 0.0, c, 2)
        tol = (3e-5 if dtype == np.float32 else 1e-12) * np.sqrt(a.shape[1])
        np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64),
                                   rtol=tol, atol=tol, err_msg=f"B strides {b.strides}")


def test_the_operand_packed_once_is_the_larger_one(kernels):
    """On one thread or several, the front of the workspace holds the operand packed once
    (and shared): B (sliver by sliver, [k][NR]) when M > N (split by rows), else A
    ([k][MR])."""
    _, fn, bits = kernels["f32"]
    nr = gk.NV * gk.lanes("f32", bits)
    rng = np.random.default_rng(11)
    for (m, k, n), chunks in itertools.product(((200, 300, 100), (100, 300, 200)), (1, 2)):
        # (C wider than the direct path's)
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        c = np.empty((m, n), np.float32)
        run = gk.numpy_call(fn, a, b, c, chunks=chunks, bits=bits)
        run()
        np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)
        ws = run.keep[1]
        front = ws[(-ws.ctypes.data) % 64:].view(np.float32)
        kc = -(-k // -(-k // gk.KC))   # the equal depth blocks
        assert gk.splits_rows(m, n, chunks) == (m > n)
        if m > n:
            np.testing.assert_array_equal(front[:kc * nr].reshape(kc, nr), b[:kc, :nr])
        else:
            np.testing.assert_array_equal(front[:kc * gk.MR].reshape(kc, gk.MR),
                                          a[:gk.MR, :kc].T)
    # the workspace fits either layout
    for m, k, n in ((1024, 784, 512), (256, 1024, 1024), (1100, 300, 1030)):
        ws = gk.workspace_bytes("f32", bits, m, k, 2, n)
        assert ws >= 64 + 4 * m * k and ws >= 64 + 4 * n * k
    # one thread: all of A and B slivers, or (M > N) all of B and one block of A
    for m, k, n in ((20, 10, 19), (200, 300, 100), (13, 120, 240), (1100, 300, 1030)):
        ws = gk.workspace_bytes("f32", bits, m, k, 1, n)
        kpad = -(-k // gk.KC) * gk.KC
        if m > n:
            assert ws >= 64 + 4 * -(-n // nr) * nr * kpad + 4 * min(m, gk.MC) * gk.KC
        else:
            assert ws >= 64 + 4 * -(-m // gk.MR) * gk.MR * kpad


def test_result_may_overwrite_cin(kernels):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((70, 300)), rng.standard_normal((300, 90))
    w = rng.standard_normal((70, 90))
    want = w - 0.1 * (a @ b)
    _run(kernels, a, b, w, -0.1, 1.0, w, 2)   # in place: W' = W - 0.1 A.B into W
    np.testing.assert_allclose(w, want, rtol=1e-12, atol=1e-12)


def _programs():
    f32 = np.float32
    rng = np.random.default_rng(1)

    def mlp_step(w1, b1, w2, b2, x, y):
        def loss(w1, b1, w2, b2):
            h = xnp.maximum(x @ w1 + b1, 0)
            return xnp.sum((h @ w2 + b2 - y) ** 2)
        g = xp.grad(loss, argnums=(0, 1, 2, 3))(w1, b1, w2, b2)
        return tuple(p - 0.01 * d for p, d in zip((w1, b1, w2, b2), g))
    mlp_args = (rng.standard_normal((100, 200)).astype(f32) * f32(0.1), np.zeros(200, f32),
                rng.standard_normal((200, 10)).astype(f32) * f32(0.1), np.zeros(10, f32),
                rng.standard_normal((64, 100)).astype(f32),
                rng.standard_normal((64, 10)).astype(f32))
    batched = (lambda a, b: xnp.einsum("bij,bkj->bik", a, b),
               (rng.standard_normal((3, 40, 70)), rng.standard_normal((3, 50, 70))))
    transposed = (lambda a, b: xnp.transpose(a) @ b,
                  (rng.standard_normal((300, 80)).astype(f32),
                   rng.standard_normal((300, 90)).astype(f32)))
    # a recurrent cell's products: 8 rows, many columns (the direct phase, no workspace),
    # x . W + h . U + b through the gemm update and its gradient
    cell = (lambda x, h, w, u, b: xnp.tanh(x @ w + h @ u + b),
            tuple(rng.standard_normal(s).astype(f32) for s in
                  ((8, 256), (8, 256), (256, 1024), (256, 1024), (1024,))))
    # its weight gradient's update W + x^T . dz (depth 8: the direct phase, A transposed)
    update = (lambda w, x, dz: w - 0.1 * (xnp.transpose(x) @ dz),
              tuple(rng.standard_normal(s).astype(f32) for s in ((60, 240), (8, 60), (8, 240))))
    return {"mlp step": (mlp_step, mlp_args), "batched f64": batched, "transposed": transposed,
            "small-row cell": cell, "shallow update": update}


@pytest.mark.parametrize("name", list(_programs()))
def test_programs_with_xlapy_gemm_match_the_interpreter(name, monkeypatch):
    fn, args = _programs()[name]
    want = xp.jit(fn, backend="interpreter")(*args)
    monkeypatch.setenv("XLAPY_GEMM", "xlapy")
    compiled = xp.jit(fn).lower(*args).compile()
    # the program calls the kernel
    assert any(b"xlapy_gemm_f" in o for o in compiled.executable.spec.objects)
    got = compiled(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def test_bad_xlapy_gemm_setting_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("XLAPY_GEMM", "mkl")
    with pytest.raises(XlapyError, match="XLAPY_GEMM must be 'auto', 'xlapy' or 'blas'"):
        xp.jit(lambda a, b: a @ b)(np.ones((4, 4), np.float32), np.ones((4, 4), np.float32))
