"""xlapy's own gemm: packed, register-blocked matrix multiplication in LLVM IR.

    void xlapy_gemm_f32(ptr args)        args: GemmArgs slots (see ARGS below)
    void xlapy_gemm_f64(ptr args)

computes, for row-major C (M x N, row stride ldc):

    C = alpha * A.B + beta * Cin         (beta == 0: Cin is not read; Cin may be C)

where A (M x K) and B (K x N) are read through element strides (rsa, csa), (rsb, csb), so
any transposition is just other strides. It is the classic Goto/BLIS algorithm: B is
packed in KC x NR slivers, A in MR x KC slivers, and an MR x NR micro-kernel keeps its
MR * NR / VL accumulators in vector registers while it streams both slivers (one vector
load of B and one broadcast of A per FMA row). Tiles at the edges are zero-padded in the
packed copies and stored through a small buffer.

Why not only BLAS: the result goes where the program wants it, in one pass. A plain dot
writes C once (OpenBLAS first zeroes C, then accumulates into it); a weight update
W' = W + alpha * A.B reads W and writes W' in that same pass (with BLAS, W is first copied
into W' and the gemm then reads W' back); and the gemm runs on xlapy's thread pool, so no
second set of threads (OpenBLAS's, which keep spinning after a call) competes with the
pool's next kernels.

Measured on the 2-core AVX-512 machine (`.venv/bin/python benchmarks/gemm_kernel.py`, and
with `OPENBLAS_NUM_THREADS=1 ... --threads 1`): on the MLP step's shapes, one thread
156-191 GFLOP/s against OpenBLAS's 161-173, two threads 279-347 against 284-309. It is the
default for products of at least dot_plan.OWN_GEMM_MIN_FLOPS (XLAPY_GEMM=auto): alone
it only matched OpenBLAS inside the 784-1024-1024-10 MLP training step, but it runs the
dot's elementwise consumers on each finished tile (gemm_epilogue.py, EPILOGUE_TYPE), which
BLAS cannot; `.venv/bin/python benchmarks/mlp_gemm_ab.py` (one process per choice, each
timing the step against JAX, `--rounds 8`): xlapy / JAX median 0.980 (0.972-1.004) with
the default, 1.053 (1.024-1.065) with XLAPY_GEMM=blas. Small products stay with
OpenBLAS (its small-matrix paths need no packing: the MNIST step's 100x784x10 gemms took
the step from 50 to 74 us on this kernel, `XLAPY_GEMM=xlapy .venv/bin/python
benchmarks/run.py --no-torch --only MNIST`).

Packing is where the time goes inside a step: run back to back with one workspace
(`benchmarks/gemm_kernel.py --sequence`), the eight gemms take 9.5-10.4 ms, and 7.2-8.4 ms
with the packing routines replaced by no-ops (results wrong; a bound only). Both packers
therefore copy with vectors where the source allows: B stored transposed (a dot with W^T)
and A row-major are transposed VL x VL in registers, A stored column-major is copied MR
values at a time with masked loads and stores. Against the kernel before those two and
equal depth blocks, in the same process (`--sequence --compare`): the transposed-B gemm
2.04-2.17 instead of 2.17-2.27 ms, and the eight 1.5-2 % faster in total. Software
prefetching in the packers, and packing B one sliver at a time inside the first row block
(to overlap reading B with arithmetic), measured no gain or a loss against this version
with `--sequence --compare` and were not kept.

Threads, in two phases of xlapy's pool: all of A is packed once into the shared front of
the scratch space `ws` (panels split across threads), then C's columns are split in
`chunks` ranges, each packing its own B slivers into its slice of `ws` (the program takes
`ws` from the end of its arena: gemms run one at a time). When A is the larger operand
(M > N, `splits_rows`), the roles swap: all of B is packed once (depth and column blocks
split across threads), then C's rows are split, each range packing its MC-row blocks of A
into its own slice as it goes, so the pass that packs an operand before any arithmetic
reads the smaller one. Against the kernel that split by columns only (commit 4f58709's
gemm_kernel.py as FILE), two threads, two runs each: in hot loops (`.venv/bin/python
benchmarks/gemm_kernel.py --shapes dense --compare FILE`) the dense layer's 1024x784x512
2.21 / 2.32 ms against 2.38 / 2.51 (OpenBLAS 2.17 / 2.24), 1024x784x64 0.32 / 0.33
against 0.49 / 0.50; with cold operands (`--sequence --shapes dense --compare FILE`)
1024x784x256 1.45 / 1.44 against 1.68 / 1.63, 1024x784x64 0.51 / 0.49 against 0.68 / 0.69,
4096x1024x1024 25.7 / 25.5 against 26.2 / 26.2, the dense layer's 2.99 / 2.96 against
2.99 / 2.98 (its 3 MB of A read from memory while computing rather than in a pass of its
own). The MLP step's gemms have M <= N and keep the column split (by rows, its dW2
1024x256x1024 took 1.66 ms against 1.56 in one `--sequence --compare` run). One thread
(chunks = 1) makes the same choice: a tall product (a convolution's 9800x800x64) no longer
packs all of A in a pass of its own; CPU time against OpenBLAS single-threaded on the
loaded machine, 0.91-0.97x its rate before, 0.94-1.02x after. A row-split chunk loops
over its MC-row blocks outside the depth blocks, so each block of C stays in cache while
every depth block adds to it (C was streamed from memory once per depth block): one
thread, A/B in alternating processes, 9800x800x64 69-71 -> 82-84 GFLOP/s (OpenBLAS 76),
16384x576x64 74 -> 83-84 (75), 4096x1024x256 89-92 -> 99-101 (94-97).

The code is built once per process (and cached on disk, like the thread pool): its shape
parameters are run-time arguments, so no module pays for compiling a gemm.

The kernel's parts: gemm_params.py (argument slots, blocking, scratch sizes), gemm_ir.py
(IR helpers), gemm_micro.py (micro-kernel, tile write-back, direct phase), gemm_packing.py
(packing routines), gemm_driver.py (entry point and parallel phases).
"""

from __future__ import annotations

import functools

from llvmlite import ir

from xlapy.backends.cpu.codegen import cached_object
from xlapy.backends.cpu.emitters.gemm_driver import Gemm
from xlapy.backends.cpu.emitters.gemm_params import (  # noqa: F401 (the kernel's interface)
    ARGS, EPILOGUE_TYPE, GV, KC, MC, MR, NC, NV, SLOT, a_slice_bytes, b_slice_bytes,
    compute_type, direct_call, direct_rows, lanes, splits_rows, swaps, workspace_bytes)
from xlapy.backends.cpu.runtime.loader import LoadedObject, register_lazy
from xlapy.backends.cpu.target import vector_bits


@functools.lru_cache(maxsize=None)
def build_ir(vector_bits: int, t: str) -> str:
    m = ir.Module(f"xlapy_gemm_{t}")
    Gemm(m, compute_type(t), lanes(t, vector_bits), vector_bits, src_t=t).build()
    return str(m)


def numpy_call(fn, a, b, c, alpha=1.0, beta=0.0, cin=None, chunks=1, bits=None, ws=None):
    """A zero-argument call of a loaded kernel `fn` (ctypes, one pointer argument) computing
    c = alpha * a @ b + beta * cin on NumPy arrays of any strides (tests, benchmarks), in
    scratch `ws` (a uint8 array; default: a new one of workspace_bytes)."""
    import ctypes
    import numpy as np
    t = {"float32": "f32", "float64": "f64", "bfloat16": "bf16", "float16": "f16"}[a.dtype.name]
    cin = c if cin is None else cin
    es = a.itemsize
    ec = c.itemsize     # C and Cin: the compute type (f32 for bf16 / f16 operands)
    m, k = a.shape
    if ws is None:
        ws = np.empty(workspace_bytes(t, bits or vector_bits(), m, k, chunks, b.shape[1]),
                      np.uint8)
    slots = (ctypes.c_int64 * len(ARGS))()
    vals = dict(M=m, N=b.shape[1], K=k, A=a.ctypes.data, rsa=a.strides[0] // es,
                csa=a.strides[1] // es, B=b.ctypes.data, rsb=b.strides[0] // es,
                csb=b.strides[1] // es, Cin=cin.ctypes.data, ldcin=cin.strides[0] // ec,
                cscin=cin.strides[1] // ec, C=c.ctypes.data, ldc=c.strides[0] // ec,
                csc=c.strides[1] // ec, ws=ws.ctypes.data, chunks=chunks, epi=0, epi_ctx=0)
    for name, v in vals.items():
        slots[SLOT[name]] = v
    doubles = ctypes.cast(slots, ctypes.POINTER(ctypes.c_double))
    doubles[SLOT["alpha"]], doubles[SLOT["beta"]] = alpha, beta
    addr = ctypes.addressof(slots)

    def run():
        fn(addr)
    run.keep = (slots, ws, a, b, c, cin)
    return run


def load(t: str, bits: int | None = None):
    """(loaded object, ctypes function) of the kernel for dtype t, outside any program."""
    import ctypes
    name = f"xlapy_gemm_{t}"
    bits = bits or vector_bits()
    obj = cached_object(lambda: build_ir(bits, t), f"gemm-{t}-{bits}", pipeline="light")
    lib = LoadedObject(obj, provides=(name,))
    return lib, ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lib.address(f"xlapy_gemm_{t}"))


_LOADED: list = []


def _register(t: str) -> None:
    import llvmlite.binding as llvm
    lib, _ = load(t)
    _LOADED.append(lib)  # keeps the code alive for the process
    llvm.add_symbol(f"xlapy_gemm_{t}", lib.address(f"xlapy_gemm_{t}"))


for _t in ("f32", "f64", "bf16", "f16"):
    register_lazy([f"xlapy_gemm_{_t}"], functools.partial(_register, _t))

