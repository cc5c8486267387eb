"""The gpu backend's kernel plan, without a GPU: launch dimensions, which instructions
become which kernels (loop, row reduction, cuBLAS gemm) or thunks (while, conditional),
the row-reduction kernels' PTX (warp shuffles, shared memory, barriers) through ptxas, and
the CPU-side pieces of the runtime (cuBLAS's operand mapping, kernel argument packing)."""

from __future__ import annotations

import ctypes
import os
import subprocess

import numpy as np
import pytest

from xlapy.backends.base import flatten, get_platform
from xlapy.backends.gpu.compiler import compile_program, emit_program
from xlapy.backends.gpu.emitters.launch import loop_launch, row_launch, row_threads
from xlapy.backends.gpu.runtime.cublas import strided_gemm_args
from xlapy.backends.gpu.runtime.cuda import pack_kernel_args
from xlapy.backends.gpu.runtime.program import Conditional, Gemm, Launch, While
from xlapy.backends.gpu.target import parse_arch
from xlapy.errors import InputError, XlapyError
from xlapy.hlo import parse

PTXAS = next((p for p in (os.environ.get("XLAPY_PTXAS"), "/usr/local/bin/ptxas")
              if p and os.path.exists(p)), None)

ADD = """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""

ROW_SUM = "HloModule rows\n" + ADD + """
ENTRY e {
  x = f32[64,1000]{1,0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[64]{0} reduce(x, z), dimensions={1}, to_apply=add
}
"""

COLUMN_SUM = "HloModule cols\n" + ADD + """
ENTRY e {
  x = f32[1000,64]{1,0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[64]{0} reduce(x, z), dimensions={0}, to_apply=add
}
"""

ARGMAX = """HloModule argmax
argmax {
  av = f64[] parameter(0)
  ai = s32[] parameter(1)
  bv = f64[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  pick = pred[] or(gt, tie)
  v = f64[] select(pick, av, bv)
  i = s32[] select(pick, ai, bi)
  ROOT t = (f64[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f64[8,300]{1,0} parameter(0)
  io = s32[8,300]{1,0} iota(), iota_dimension=1
  ninf = f64[] constant(-inf)
  z = s32[] constant(0)
  ROOT r = (f64[8]{0}, s32[8]{0}) reduce(x, io, ninf, z), dimensions={1}, to_apply=argmax
}
"""

MATMUL = """HloModule mm
ENTRY e {
  a = f32[8,16]{1,0} parameter(0)
  b = f32[16,4]{1,0} parameter(1)
  ROOT d = f32[8,4]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""


def test_loop_launch_covers_every_element_in_whole_warps():
    for n in (0, 1, 31, 33, 256, 257, 1000, 10**6):
        d = loop_launch(n)
        assert d.block[0] % 32 == 0 and 32 <= d.block[0] <= 256
        assert d.threads >= max(n, 1)
        assert d.threads - n < d.block[0] or n == 0  # no block more than needed
    assert loop_launch(10**6) == ((3907, 1, 1), (256, 1, 1))
    assert loop_launch(5) == ((1, 1, 1), (32, 1, 1))


def test_row_launch_is_a_block_per_row():
    assert row_threads(40) == 64 and row_threads(10**5) == 256
    assert row_launch(64, 1000) == ((64, 1, 1), (256, 1, 1))


def test_arch_names():
    assert parse_arch("sm_90") == 90 and parse_arch(80) == 80 and parse_arch("sm_90a") == 90
    with pytest.raises(InputError, match="sm_75 is not supported"):
        parse_arch("sm_75")
    with pytest.raises(InputError, match="not of the form"):
        parse_arch("hopper")


def _ptxas_ok(ptx: str, arch: int, tmp_path):
    if PTXAS is None:
        pytest.skip("NVIDIA's ptxas is not installed")
    path = tmp_path / "k.ptx"
    path.write_text(ptx)
    r = subprocess.run([PTXAS, f"-arch=sm_{arch}", str(path), "-o", str(tmp_path / "k.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("text,outputs", [(ROW_SUM, 1), (ARGMAX, 2)], ids=["sum", "argmax"])
def test_row_reduction_kernel(text, outputs, tmp_path):
    program = compile_program(parse(text), "sm_90")
    [k] = program.kernels
    assert k.kind == "row-reduction"
    rows = 64 if outputs == 1 else 8
    assert k.grid == (rows, 1, 1) and k.block == (256, 1, 1)
    [launch] = program.launches()
    assert len(launch.args) == outputs + 1  # the outputs, then x (iota and constants fused)
    ptx = program.ptx
    assert "shfl.sync.down.b32" in ptx and "bar.sync" in ptx and ".shared" in ptx
    _ptxas_ok(ptx, 90, tmp_path)


def test_column_reduction_is_a_thread_per_output():
    program, _ = emit_program(parse(COLUMN_SUM))
    [k] = program.kernels
    assert (k.kind, k.grid, k.block) == ("loop", (1, 1, 1), (64, 1, 1))


def test_emulated_reductions_match_numpy():
    """Row reductions run their warp-shuffle kernels (threaded emulation), one block per
    row; the column reduction its loop kernel."""
    rng = np.random.default_rng(0)
    emu = get_platform("gpu-emulator")
    rows = parse(ROW_SUM.replace("64", "3"))
    exe = emu.compiler.compile(rows)
    assert [k.kind for k in exe.program.kernels] == ["row-reduction"]
    x = rng.standard_normal((3, 1000)).astype(np.float32)
    np.testing.assert_allclose(exe.run(x), x.sum(1), rtol=1e-4, atol=1e-4)
    short = rng.standard_normal((3, 40)).astype(np.float32)  # 64 threads, 40 elements
    exe = emu.compiler.compile(parse(ROW_SUM.replace("64", "3").replace("1000", "40")))
    np.testing.assert_allclose(exe.run(short), short.sum(1), rtol=1e-5, atol=1e-5)
    x = rng.standard_normal((64, 1000)).astype(np.float32)
    xt = np.ascontiguousarray(x.T)
    np.testing.assert_allclose(emu.compiler.compile(parse(COLUMN_SUM)).run(xt), xt.sum(0),
                               rtol=1e-4, atol=1e-4)
    x64 = rng.standard_normal((8, 300))  # variadic (f64, s32) shuffles: two words, one
    x64[3, 7] = x64[3, 200] = 50.0  # a tie: the first index wins
    v, i = emu.compiler.compile(parse(ARGMAX)).run(x64)
    np.testing.assert_array_equal(i, x64.argmax(1))
    np.testing.assert_array_equal(v, x64.max(1))


def test_dot_is_a_cublas_gemm():
    program, _ = emit_program(parse(MATMUL))
    [g] = [t for t in program.thunks if isinstance(t, Gemm)]
    assert (g.batch, g.m, g.n, g.k, g.dtype) == (1, 8, 4, 16, "f32")
    assert [k.kind for k in program.kernels] == ["gemm"]
    f64 = parse(MATMUL.replace("f32", "f64"))
    assert [k.kind for k in emit_program(f64)[0].kernels] == ["loop"]  # no cuBLAS f64 here


def test_cublas_operand_mapping_computes_the_row_major_product():
    """Reading the row-major buffers column-major as cuBLAS does, with the arguments the
    runtime passes, gives A @ B (per batch)."""
    rng = np.random.default_rng(1)
    batch, m, n, k = 3, 5, 7, 4
    a = rng.standard_normal((batch, m, k))
    b = rng.standard_normal((batch, k, n))
    g = Gemm(0, 1, 2, batch, m, n, k, "f32")
    p = strided_gemm_args(g)
    flat_a, flat_b = a.ravel(), b.ravel()
    out = np.zeros(batch * m * n)
    for i in range(batch):
        # column-major X (p.m x p.k, ld a_ld) is cuBLAS's first operand: here B
        x = flat_b[i * p["a_stride"]:].reshape(-1)[:p["a_ld"] * p["k"]]
        x = x.reshape(p["k"], p["a_ld"]).T[:p["m"], :]
        y = flat_a[i * p["b_stride"]:][:p["b_ld"] * p["n"]].reshape(p["n"], p["b_ld"]).T
        c = x @ y[:p["k"], :]                          # p.m x p.n column-major
        out[i * p["c_stride"]:i * p["c_stride"] + m * n] = c.T.ravel()
    np.testing.assert_allclose(out.reshape(batch, m, n), a @ b, rtol=1e-12)


def test_kernel_arguments_are_pointers_to_addresses():
    keep, params = pack_kernel_args([0x1000, 0xdeadbeef00, 7])
    ptrs = (ctypes.c_void_p * 3).from_address(params)
    got = [ctypes.c_uint64.from_address(p).value for p in ptrs]
    assert got == [0x1000, 0xdeadbeef00, 7]


def test_launches_refill_one_argument_array_per_kernel():
    """CudaDevice.launch with a stand-in driver: each launch passes the addresses of that
    call (the arrays are reused, refilled), whatever ran before."""
    import threading

    from xlapy.backends.gpu.runtime import cuda

    seen = []

    class Driver:
        class CUresult:
            CUDA_SUCCESS = 0

        def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
            n = {"a": 2, "b": 3}[f]
            ptrs = (ctypes.c_void_p * n).from_address(params)
            seen.append((f, [ctypes.c_uint64.from_address(p).value for p in ptrs]))
            return (0,)

    dev = object.__new__(cuda.CudaDevice)
    dev.context = type("Ctx", (), {"drv": Driver(), "stream": 0, "here": lambda self: None})()
    dev._functions = {"a": "a", "b": "b"}
    dev._packed, dev._launch_lock = {}, threading.Lock()
    old = cuda._DRIVER
    cuda._DRIVER = Driver
    try:
        for args in ([1, 2], [3, 4], None, [5, 6]):
            if args is None:
                dev.launch("b", (1, 1, 1), (32, 1, 1), 0, [7, 8, 9])
            else:
                dev.launch("a", (1, 1, 1), (32, 1, 1), 0, args)
    finally:
        cuda._DRIVER = old
    assert seen == [("a", [1, 2]), ("a", [3, 4]), ("b", [7, 8, 9]), ("a", [5, 6])]


def test_control_flow_becomes_thunks():
    import pathlib
    hlo = pathlib.Path(__file__).parents[2] / "hlo"
    loop, _ = emit_program(parse((hlo / "fori_loop.hlo").read_text()))
    assert any(isinstance(t, While) for t in loop.thunks)
    cond, _ = emit_program(parse((hlo / "cond_switch.hlo").read_text()))
    assert any(isinstance(t, Conditional) for t in cond.thunks)
    assert all(isinstance(t, Launch) for t in cond.launches())


def test_libdevice_is_linked_and_internalized(tmp_path):
    text = """HloModule m
ENTRY e {
  x = f32[100]{0} parameter(0)
  ROOT y = f32[100]{0} exponential(x)
}
"""
    program = compile_program(parse(text), 80)
    assert "__nv_expf" in program.llvm_ir
    assert ".extern .func" not in program.ptx  # linked in, not left to the driver
    assert program.ptx.count(".entry") == 1    # only the kernel is visible
    assert ".visible .entry" in program.ptx
    _ptxas_ok(program.ptx, 80, tmp_path)


def test_emulator_refuses_libdevice():
    from xlapy.backends.gpu.runtime.emulator import EmulatedDevice
    _, text = emit_program(parse(ROW_SUM.replace("add(a, b)", "power(a, b)")))
    with pytest.raises(XlapyError, match="no libdevice"):
        EmulatedDevice(text)


def test_while_and_conditional_run_on_the_emulator():
    import pathlib
    hlo = pathlib.Path(__file__).parents[2] / "hlo"
    text = (hlo / "while_data_dependent.hlo").read_text()
    module = parse(text)
    rng = np.random.default_rng(2)
    args = [rng.standard_normal(p.shape.dims).astype(p.shape.dtype)
            if p.shape.element_type.is_float else np.ones(p.shape.dims, p.shape.dtype)
            for p in module.entry.parameters]
    got = flatten(get_platform("gpu-emulator").compiler.compile(module).run(*args))
    want = flatten(get_platform("interpreter").compiler.compile(module).run(*args))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5)


TRANSPOSES = {
    "batched": ("""HloModule t
ENTRY e {
  x = f32[3,70,45]{2,1,0} parameter(0)
  ROOT t = f32[3,45,70]{2,1,0} transpose(x), dimensions={0,2,1}
}
""", (3, 70, 45), lambda x: np.ascontiguousarray(x.transpose(0, 2, 1)), (2, 3, 3)),
    "layout copy f16": ("""HloModule c
ENTRY e {
  x = f16[40,33]{1,0} parameter(0)
  ROOT c = f16[40,33]{0,1} copy(x)
}
""", (40, 33), lambda x: x, (2, 2, 1)),
}


@pytest.mark.parametrize("name", sorted(TRANSPOSES))
def test_transpose_through_shared_tiles(name, tmp_path):
    text, dims, want, grid = TRANSPOSES[name]
    module = parse(text)
    program = compile_program(module, 90)
    [k] = program.kernels
    assert (k.kind, k.grid, k.block) == ("transpose", grid, (32, 8, 1))
    assert "bar.sync" in program.ptx and ".shared" in program.ptx
    _ptxas_ok(program.ptx, 90, tmp_path)
    x = np.random.default_rng(3).standard_normal(dims).astype(module.entry.parameters[0]
                                                             .shape.dtype)
    got = get_platform("gpu-emulator").compiler.compile(module).run(x)
    np.testing.assert_array_equal(got, want(x))


MULTI_OUTPUT = "HloModule mo\n" + ADD + """
fused {
  p = f32[4,500]{1,0} parameter(0)
  z = f32[] constant(0)
  s = f32[4]{0} reduce(p, z), dimensions={1}, to_apply=add
  sq = f32[4,500]{1,0} multiply(p, p)
  ss = f32[4]{0} reduce(sq, z), dimensions={1}, to_apply=add
  ROOT t = (f32[4]{0}, f32[4]{0}) tuple(s, ss)
}
ENTRY e {
  x = f32[4,500]{1,0} parameter(0)
  ROOT f = (f32[4]{0}, f32[4]{0}) fusion(x), kind=kInput, calls=fused
}
"""


def test_multi_output_row_reduction():
    """Two reductions of one row (a sum and a sum of squares, as layernorm's) in one
    kernel: each thread keeps both partial results, both are shuffled. (The emitter on the
    module as written: xlapy's fusion pass does not make such sibling fusions today.)"""
    from xlapy.backends.gpu.emitters.program import ProgramEmitter
    from xlapy.backends.gpu.executable import GpuExecutable
    from xlapy.backends.gpu.runtime.emulator import EmulatedDevice
    module = parse(MULTI_OUTPUT)
    pe = ProgramEmitter(module, use_libdevice=False)
    program = pe.emit()
    assert [k.kind for k in program.kernels] == ["row-reduction"]
    exe = GpuExecutable(module, program, EmulatedDevice(str(pe.llmod)), "gpu-emulator")
    x = np.random.default_rng(4).standard_normal((4, 500)).astype(np.float32)
    s, ss = exe.run(x)
    np.testing.assert_allclose(s, x.sum(1), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ss, (x * x).sum(1), rtol=1e-4)


def _softmax(x):
    import xlapy.numpy as xnp
    m = xnp.max(x, axis=-1, keepdims=True)
    e = xnp.exp(x - m)
    return e / xnp.sum(e, axis=-1, keepdims=True)


def _layernorm(x, g, b):
    import xlapy.numpy as xnp
    mu = xnp.mean(x, -1, keepdims=True)
    var = xnp.mean((x - mu) ** 2, -1, keepdims=True)
    return (x - mu) / xnp.sqrt(var + 1e-5) * g + b


@pytest.mark.parametrize("fn", [_softmax, _layernorm], ids=["softmax", "layernorm"])
def test_dependent_row_reductions_run_in_phases(fn, tmp_path):
    """softmax's sum(exp(x - max)) and layernorm's variance use another reduction of the
    same row: one block per row reduces the inner one first and broadcasts it (two strided
    loops over the row, no loop nested in them recomputing the inner reduction per
    element), then the loop kernel; the result matches the cpu backend's."""
    import re

    import xlapy as xp
    rng = np.random.default_rng(7)
    x = rng.standard_normal((6, 1000)).astype(np.float32)
    args = (x,) if fn is _softmax else (x, rng.standard_normal(1000).astype(np.float32),
                                         rng.standard_normal(1000).astype(np.float32))
    module = xp.jit(fn).lower(*args).module
    program, text = emit_program(module, emulate=True)
    assert [(k.kind, k.grid, k.block) for k in program.kernels] == [
        ("row-reduction", (6, 1, 1), (256, 1, 1)), ("loop", (24, 1, 1), (256, 1, 1))]
    kernel = re.search(r"^define ptx_kernel void @\"?k0_.*?^}", text, re.M | re.S).group(0)
    headers = re.findall(r"^([\w.]*header[\w.]*):", kernel, re.M)
    assert len(headers) == 2 and all(h.startswith("k.") for h in headers), headers
    assert kernel.count("llvm.nvvm.barrier0") == 3  # warps' results twice, one broadcast
    got = xp.jit(fn, backend="gpu-emulator")(*args)
    np.testing.assert_allclose(np.asarray(got), xp.jit(fn, backend="cpu")(*args),
                               rtol=1e-5, atol=1e-5)
    _ptxas_ok(compile_program(module, 90).ptx, 90, tmp_path)


INNER_REVERSED = """HloModule inner
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused {
  p = f32[5,300]{1,0} parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  m = f32[5]{0} reduce(p, ninf), dimensions={1}, to_apply=max
  mm = f32[5]{0} reverse(m), dimensions={0}
  mb = f32[5,300]{1,0} broadcast(mm), dimensions={0}
  d = f32[5,300]{1,0} subtract(p, mb)
  e = f32[5,300]{1,0} exponential(d)
  s = f32[5]{0} reduce(e, zero), dimensions={1}, to_apply=add
  ROOT t = (f32[5]{0}, f32[5]{0}) tuple(m, s)
}
ENTRY e {
  x = f32[5,300]{1,0} parameter(0)
  ROOT f = (f32[5]{0}, f32[5]{0}) fusion(x), kind=kInput, calls=fused
}
"""


def test_inner_reduction_read_at_another_row():
    """An inner reduction read at another row's index (through a reverse): the block's
    value where the index is its own row at run time (row 2 of 5), recomputed for the
    others; results as the interpreter's."""
    module = parse(INNER_REVERSED)
    program, ir_text = emit_program(module, emulate=True)
    assert [k.kind for k in program.kernels] == ["row-reduction"]
    assert "row.then" in ir_text and "row.else" in ir_text  # (the run-time test)
    x = np.random.default_rng(8).standard_normal((5, 300)).astype(np.float32)
    x[2] += 3   # (row 2's max differs from the others')
    got = get_platform("gpu-emulator").compiler.compile(module).run(x)
    want = get_platform("interpreter").compiler.compile(module).run(x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5)


BENCH_PLANS = {
    # benchmarks/gpu.py's workloads at its sizes: (kind, grid, block) per kernel
    "softmax": [("row-reduction", (8192, 1, 1), (256, 1, 1)),
                ("loop", (131072, 1, 1), (256, 1, 1))],
    "layernorm_gelu": [("row-reduction", (8192, 1, 1), (256, 1, 1)),
                       ("loop", (131072, 1, 1), (256, 1, 1))],
    "dense_relu": [("gemm", (), ()), ("loop", (65536, 1, 1), (256, 1, 1))],
    "dense_relu_softmax": [("gemm", (), ()), ("row-reduction", (4096, 1, 1), (256, 1, 1)),
                           ("loop", (65536, 1, 1), (256, 1, 1))],
}


@pytest.mark.parametrize("name", sorted(BENCH_PLANS))
def test_benchmark_workload_plans(name):
    """One block per row for the row reductions, one thread per element for the loop
    fusions, the dense layers on cuBLAS with bias and relu in one loop kernel."""
    import pathlib
    import sys

    import xlapy as xp
    import xlapy.numpy as xnp
    sys.path.insert(0, str(pathlib.Path(__file__).parents[3] / "benchmarks"))
    try:
        from workloads import make_numpy_like
    finally:
        sys.path.pop(0)
    f = make_numpy_like(xnp)[name]
    def s(shape, dtype):  # (zeros: calloc'd pages, never touched by tracing)
        return np.zeros(shape, dtype)
    if name in ("softmax", "layernorm_gelu"):
        args = [s((8192, 4096), np.float32)] + [s((4096,), np.float32)] * (name != "softmax") * 2
    else:
        args = [s((4096, 4096), np.float32), s((4096, 4096), np.float32),
                s((4096,), np.float32)]
    program, _ = emit_program(xp.jit(f).lower(*args).module)
    assert [(k.kind, k.grid, k.block) for k in program.kernels] == BENCH_PLANS[name]
    gemms = [t for t in program.thunks if isinstance(t, Gemm)]
    assert len(gemms) == (name.startswith("dense")) and all(
        (g.m, g.n, g.k, g.dtype) == (4096, 4096, 4096, "f32") for g in gemms)


@pytest.mark.parametrize("dtype,largest", [("f32", "true"), ("f32", "false"),
                                           ("s32", "true"), ("u8", "false")])
def test_topk_total_order_and_ties(dtype, largest):
    text = f"""HloModule tk
ENTRY e {{
  x = {dtype}[5,40]{{1,0}} parameter(0)
  ROOT t = ({dtype}[5,4]{{1,0}}, s32[5,4]{{1,0}}) topk(x), k=4, largest={largest}
}}
"""
    module = parse(text)
    rng = np.random.default_rng(6)
    if dtype == "f32":
        x = rng.integers(-3, 3, (5, 40)).astype(np.float32)  # many ties
        x[0, [3, 9]] = np.nan
        x[1, 5] = -np.nan
        x[2, [1, 7]] = [np.inf, -np.inf]
        x[3, [2, 4]] = [0.0, -0.0]
    else:
        x = rng.integers(0, 5, (5, 40)).astype(module.entry.parameters[0].shape.dtype)
    got = get_platform("gpu-emulator").compiler.compile(module).run(x)
    want = get_platform("interpreter").compiler.compile(module).run(x)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[0].view(np.uint8), want[0].view(np.uint8))
