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
1024x256x1024 took 1.66 ms against 1.56 in one `--sequence --compare` run).

The code is built once per process (and cached on disk, like the thread pool): its shape
parameters are run-time arguments, so no module pays for compiling a gemm.
"""

from __future__ import annotations

import functools

from llvmlite import ir

from xlapy.backends.cpu.codegen import cached_object
from xlapy.backends.cpu.emitters.kernel_abi import add_string_attribute
from xlapy.backends.cpu.runtime import threadpool
from xlapy.backends.cpu.runtime.loader import LoadedObject, register_lazy
from xlapy.backends.cpu.target import vector_bits
from xlapy.backends.llvm.loops import c64, entry_alloca, for_range
from xlapy.backends.llvm.types import splat

I32, I64, PTR, VOID = ir.IntType(32), ir.IntType(64), ir.PointerType(), ir.VoidType()

# argument slots (8 bytes each): integers, pointers, then alpha and beta as doubles
ARGS = ("M", "N", "K", "A", "rsa", "csa", "B", "rsb", "csb", "Cin", "ldcin", "cscin", "C",
        "ldc", "csc", "ws", "chunks", "epi", "epi_ctx", "alpha", "beta")
# epilogue: void epi(ptr epi_ctx, i64 row, i64 col, i64 rows, i64 cols), called (when `epi` is
# not null) on the thread that finished C's tile [row, row + rows) x [col, col + cols), right
# after its final values are stored, while they are in that core's L1 cache
EPILOGUE_TYPE = ir.FunctionType(VOID, [PTR, I64, I64, I64, I64])
SLOT = {name: k for k, name in enumerate(ARGS)}

MR = 12          # rows of the micro-tile
NV = 2           # vectors per micro-tile row
KC = 256         # depth of a packed sliver
MC = 192         # rows of A packed at a time
NC = 1024        # columns of B packed at a time
GV = 4           # vectors of C's columns per block of the direct phase (thin products)


def lanes(t: str, vector_bits: int) -> int:
    return vector_bits // (32 if t == "f32" else 64)


def _esize(t: str) -> int:
    return 4 if t == "f32" else 8


def swaps(t: str, m: int, n: int, vector_bits: int) -> bool:
    """Whether a call computes C^T = B^T . A^T instead (C has few columns, so the
    micro-tile's long side runs along M): fewer than two slivers of columns and more rows."""
    return n < 2 * NV * lanes(t, vector_bits) and m > n


def direct_rows(vector_bits: int) -> int:
    """Rows of C the direct phase computes at once: RD x GV accumulators plus GV vectors of
    B and RD of A fit AVX-512's 32 registers with 4, 16-register targets with 2."""
    return 4 if vector_bits >= 512 else 2


def direct_call(t: str, m: int, n: int, vector_bits: int, rows_contiguous: bool) -> bool:
    """Whether a call runs the direct phase (no packing): one row, or C at most GV vectors
    wide with A's, B's and C's rows contiguous (the kernel decides at run time by the same
    rule, from the strides; A read down its columns would touch a cache line per element)."""
    return m == 1 or (n <= GV * lanes(t, vector_bits) and rows_contiguous)


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def b_slice_bytes(t: str, vector_bits: int) -> int:
    """Packing space for B slivers, per chunk."""
    return _round_up(_esize(t) * KC * (NC + NV * lanes(t, vector_bits)), 64) + 64


def a_slice_bytes(t: str) -> int:
    """Packing space for one MC x KC block of A, per chunk (row-split calls)."""
    return _round_up(_esize(t) * MC * KC, 64) + 64


def workspace_bytes(t: str, vector_bits: int, m: int, k: int, chunks: int, n: int) -> int:
    """Scratch one call needs, whichever way it splits (splits_rows): by columns, all of A
    packed once (shared by the chunks), then each chunk's B slivers; by rows, all of B
    packed once, then each chunk's block of A. One chunk packs only as many columns of B
    as there are (a 13 x 120 x 240 product needs about 130 KB rather than 1.1 MB); one
    row (the matrix-vector phase) none."""
    es, kpad = _esize(t), _round_up(k, KC)
    if m == 1:  # the matrix-vector phase packs nothing
        return 0
    if chunks <= 1:  # serial: all of A, then B slivers of at most min(N, NC) columns
        nr = NV * lanes(t, vector_bits)
        return 64 + _round_up(es * _round_up(m, MR) * kpad, 64) \
            + _round_up(es * min(k, KC) * _round_up(min(n, NC), nr), 64) + 64
    by_columns = _round_up(es * _round_up(m, MR) * kpad, 64) \
        + chunks * b_slice_bytes(t, vector_bits)
    by_rows = _round_up(es * _round_up(n, NV * lanes(t, vector_bits)) * kpad, 64) \
        + chunks * a_slice_bytes(t)
    return 64 + max(by_columns, by_rows)


def splits_rows(m: int, n: int, chunks: int) -> bool:
    """Whether a call on several threads splits C by rows (B packed once and shared, each
    thread packing blocks of A as it goes) rather than by columns (A packed once, each thread
    packing its B): when A is the larger operand (M > N), so that the operand packed in a
    pass of its own, before any arithmetic, is the smaller one. The kernel decides at run
    time by the same rule."""
    return chunks > 1 and m > n


@functools.lru_cache(maxsize=None)
def build_ir(vector_bits: int, t: str) -> str:
    m = ir.Module(f"xlapy_gemm_{t}")
    _Gemm(m, t, lanes(t, vector_bits), vector_bits).build()
    return str(m)


def numpy_call(fn, a, b, c, alpha=1.0, beta=0.0, cin=None, chunks=1, bits=None, ws=None):
    """A zero-argument call of a loaded kernel `fn` (ctypes, one pointer argument) computing
    c = alpha * a @ b + beta * cin on NumPy arrays of any strides (tests, benchmarks), in
    scratch `ws` (a uint8 array; default: a new one of workspace_bytes)."""
    import ctypes
    import numpy as np
    t = "f32" if a.dtype == np.float32 else "f64"
    cin = c if cin is None else cin
    es = a.itemsize
    m, k = a.shape
    if ws is None:
        ws = np.empty(workspace_bytes(t, bits or vector_bits(), m, k, chunks, b.shape[1]),
                      np.uint8)
    slots = (ctypes.c_int64 * len(ARGS))()
    vals = dict(M=m, N=b.shape[1], K=k, A=a.ctypes.data, rsa=a.strides[0] // es,
                csa=a.strides[1] // es, B=b.ctypes.data, rsb=b.strides[0] // es,
                csb=b.strides[1] // es, Cin=cin.ctypes.data, ldcin=cin.strides[0] // es,
                cscin=cin.strides[1] // es, C=c.ctypes.data, ldc=c.strides[0] // es,
                csc=c.strides[1] // es, ws=ws.ctypes.data, chunks=chunks, epi=0, epi_ctx=0)
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


for _t in ("f32", "f64"):
    register_lazy([f"xlapy_gemm_{_t}"], functools.partial(_register, _t))


class _Gemm:
    def __init__(self, m: ir.Module, t: str, vl: int, vector_bits: int):
        self.m, self.t, self.vl = m, t, vl
        self.fty = ir.FloatType() if t == "f32" else ir.DoubleType()
        self.vty = ir.VectorType(self.fty, vl)
        self.nr = NV * vl
        self.bits = vector_bits
        self.rd = direct_rows(vector_bits)
        self.esize = _esize(t)
        self.fmuladd = ir.Function(m, ir.FunctionType(self.vty, [self.vty] * 3),
                                   f"llvm.fmuladd.v{vl}{t}")

    # ---- helpers --------------------------------------------------------------------------
    def _fn(self, name, args, ret=VOID):
        fn = ir.Function(self.m, ir.FunctionType(ret, args), f"xlapy.gemm.{self.t}.{name}")
        fn.linkage = "internal"
        fn.attributes.add("nounwind")
        if name not in ("pack_all", "chunk", "pack_all_b", "chunk_rows"):
            # each helper runs for a whole tile or panel: a call costs nothing there, and
            # inlined into the loop nests they made LLVM's loop passes take 0.4 s
            fn.attributes.add("noinline")
        add_string_attribute(fn, f'"min-legal-vector-width"="{self.bits}"')
        add_string_attribute(fn, f'"prefer-vector-width"="{self.bits}"')
        return fn

    def _at(self, b, p, i):
        return b.gep(p, [i], source_etype=self.fty)

    def _splat(self, b, x):
        return splat(b, x, self.vl)

    @staticmethod
    def _min(b, x, y):
        return b.select(b.icmp_signed("<", x, y), x, y)

    # ---- the micro-kernel -----------------------------------------------------------------
    def micro(self):
        """micro(kc, ap, bp, tile): tile[MR][NR] = ap-sliver . bp-sliver."""
        fn = self._fn("micro", [I64, PTR, PTR, PTR])
        kc, ap, bp, tile = fn.args
        for a in (ap, bp, tile):
            a.add_attribute("noalias")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        entry = b.block
        head, body, done = (fn.append_basic_block(n) for n in ("k.head", "k.body", "k.done"))
        b.branch(head)
        b.position_at_end(head)
        k = b.phi(I64, "k")
        k.add_incoming(c64(0), entry)
        zero = ir.Constant(self.vty, [0.0] * self.vl)
        accs = []
        for _ in range(MR * NV):
            p = b.phi(self.vty)
            p.add_incoming(zero, entry)
            accs.append(p)
        b.cbranch(b.icmp_signed("<", k, kc), body, done)
        b.position_at_end(body)
        brow = b.mul(k, c64(self.nr))
        bv = [b.load(self._at(b, bp, b.add(brow, c64(v * self.vl))), typ=self.vty,
                     align=self.vl * self.esize)
              for v in range(NV)]
        arow = b.mul(k, c64(MR))
        new = []
        for i in range(MR):
            a = self._splat(b, b.load(self._at(b, ap, b.add(arow, c64(i))), typ=self.fty))
            for v in range(NV):
                new.append(b.call(self.fmuladd, [a, bv[v], accs[i * NV + v]]))
        k.add_incoming(b.add(k, c64(1)), b.block)
        for p, n in zip(accs, new):
            p.add_incoming(n, b.block)
        b.branch(head)
        b.position_at_end(done)
        for i in range(MR):
            for v in range(NV):
                b.store(accs[i * NV + v], self._at(b, tile, c64(i * self.nr + v * self.vl)),
                        align=self.vl * self.esize)
        b.ret_void()
        return fn

    # ---- packing ---------------------------------------------------------------------------
    def pack_b(self):
        """pack_b(src, rs, cs, kc, nc, dst): dst[jp][k][NR] = src[k*rs + (jp*NR + j)*cs],
        zero beyond nc."""
        fn = self._fn("pack_b", [PTR, I64, I64, I64, I64, PTR])
        src, rs, cs, kc, nc, dst = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        nr = self.nr
        whole_end = b.mul(b.sdiv(nc, c64(nr)), c64(nr))  # columns in whole slivers
        with b.if_else(b.icmp_signed("==", cs, c64(1))) as (rows_contiguous, transposed):
            with rows_contiguous:
                # row by row: each row of B is read front to back (a 4 KB stride between
                # rows defeats the hardware prefetcher when a sliver is copied at a time)
                with for_range(b, 0, kc, name="k") as k:
                    s = self._at(b, src, b.mul(k, rs))
                    with for_range(b, 0, whole_end, nr, name="jp") as jp:
                        d = self._at(b, dst, b.add(b.mul(jp, kc), b.mul(k, c64(nr))))
                        for v in range(NV):
                            x = b.load(self._at(b, s, b.add(jp, c64(v * self.vl))),
                                       typ=self.vty, align=1)
                            b.store(x, self._at(b, d, c64(v * self.vl)), align=1)
            with transposed:
                # B stored transposed: each column is read along k
                with for_range(b, 0, whole_end, nr, name="jp") as jp:
                    cols = [self._at(b, src, b.mul(b.add(jp, c64(j)), cs)) for j in range(nr)]
                    self._interleave(b, cols, rs, kc, nr, self._at(b, dst, b.mul(jp, kc)))
        with b.if_then(b.icmp_signed("<", whole_end, nc)):
            self._interleave_edge(b, src, whole_end, b.sub(nc, whole_end), cs, rs, kc, nr,
                                  self._at(b, dst, b.mul(whole_end, kc)))
        b.ret_void()
        return fn

    def _transpose(self, b, rows):
        """Transpose VL vectors of VL lanes: log2(VL) rounds of pairing vector i with
        vector i + VL/2 and interleaving their low and high halves."""
        n = self.vl
        lo = ir.Constant(ir.VectorType(I32, n), [x for i in range(n // 2) for x in (i, n + i)])
        hi = ir.Constant(ir.VectorType(I32, n),
                         [x for i in range(n // 2, n) for x in (i, n + i)])
        for _ in range(n.bit_length() - 1):
            new = []
            for i in range(n // 2):
                new += [b.shuffle_vector(rows[i], rows[i + n // 2], lo),
                        b.shuffle_vector(rows[i], rows[i + n // 2], hi)]
            rows = new
        return rows

    def _interleave(self, b, streams, step, kc, width, out):
        """out[k*width + j] = streams[j][k*step] for k < kc: one element of each stream
        (a row of A, a column of B) per k, stored side by side. Streams contiguous along k
        (step 1: row-major A, B stored transposed for a dot with W^T) are copied as VL x VL
        blocks transposed in registers (vector loads, shuffles, vector stores; a last group
        of fewer than VL streams with masked stores), the last kc % VL values element by
        element; other steps element by element throughout."""
        vl = self.vl
        unit = b.icmp_signed("==", step, c64(1))
        kfull = b.select(unit, b.mul(b.sdiv(kc, c64(vl)), c64(vl)), c64(0))
        zero = ir.Constant(self.vty, [0.0] * vl)
        with for_range(b, 0, kfull, vl, name="kb") as kb:
            for g, lanes in self._groups(len(streams)):
                vecs = [b.load(self._at(b, streams[g + i], kb), typ=self.vty, align=1)
                        for i in range(lanes)] + [zero] * (vl - lanes)
                for k, x in enumerate(self._transpose(b, vecs)):
                    at = b.add(b.mul(b.add(kb, c64(k)), c64(width)), c64(g))
                    self._store_lanes(b, x, self._at(b, out, at), lanes)
        with for_range(b, kfull, kc, name="k") as k:
            at = b.mul(k, step)
            d = b.mul(k, c64(width))
            vals = [b.load(self._at(b, p, at), typ=self.fty) for p in streams]
            for j, x in enumerate(vals):
                b.store(x, self._at(b, out, b.add(d, c64(j))))

    def _interleave_edge(self, b, src, first, limit, lane_stride, step, kc, width, out):
        """The same for the last, partial sliver: out[k*width + j] =
        src[(first + j)*lane_stride + k*step] for j < limit, zero for limit <= j < width."""
        with for_range(b, 0, width, name="j") as j:
            inside = b.icmp_signed("<", j, limit)
            base = b.mul(b.select(inside, b.add(first, j), c64(0)), lane_stride)
            with for_range(b, 0, kc, name="k") as k:
                x = b.load(self._at(b, src, b.add(b.mul(k, step), base)), typ=self.fty)
                x = b.select(inside, x, ir.Constant(self.fty, 0.0))
                b.store(x, self._at(b, out, b.add(b.mul(k, c64(width)), j)))

    def pack_a(self):
        """pack_a(src, rs, cs, mc, kc, dst): dst[ip][k][MR] = src[(ip*MR + i)*rs + k*cs],
        zero beyond mc."""
        fn = self._fn("pack_a", [PTR, I64, I64, I64, I64, PTR])
        src, rs, cs, mc, kc, dst = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        with for_range(b, 0, mc, MR, name="ip") as ip:
            out = self._at(b, dst, b.mul(ip, kc))
            full = b.icmp_signed("<=", b.add(ip, c64(MR)), mc)
            # read along whichever dimension is contiguous in memory
            with b.if_else(b.icmp_signed("==", rs, c64(1))) as (by_k, by_row):
                with by_k:
                    with b.if_else(full) as (whole, edge):
                        with whole:
                            # the panel's MR values at each k are contiguous: vector copies
                            with for_range(b, 0, kc, name="k") as k:
                                s_k = self._at(b, src, b.add(ip, b.mul(k, cs)))
                                d_k = self._at(b, out, b.mul(k, c64(MR)))
                                for g, lanes in self._groups(MR):
                                    x = self._load_lanes(b, self._at(b, s_k, c64(g)), lanes)
                                    self._store_lanes(b, x, self._at(b, d_k, c64(g)), lanes)
                        with edge:
                            with for_range(b, 0, kc, name="k") as k:
                                base = b.mul(k, cs)
                                with for_range(b, 0, MR, name="i") as i:
                                    row = b.add(ip, i)
                                    inside = b.icmp_signed("<", row, mc)
                                    at = b.add(base, b.select(inside, row, c64(0)))
                                    x = b.load(self._at(b, src, at), typ=self.fty)
                                    x = b.select(inside, x, ir.Constant(self.fty, 0.0))
                                    b.store(x, self._at(b, out, b.add(b.mul(k, c64(MR)), i)))
                with by_row:
                    with b.if_else(full) as (whole, edge):
                        with whole:
                            rows = [self._at(b, src, b.mul(b.add(ip, c64(i)), rs))
                                    for i in range(MR)]
                            self._interleave(b, rows, cs, kc, MR, out)
                        with edge:
                            self._interleave_edge(b, src, ip, b.sub(mc, ip), rs, cs, kc, MR,
                                                  out)
        b.ret_void()
        return fn

    def _groups(self, n: int):
        """(first, valid lanes) of the vectors that hold n values (a panel's MR rows)."""
        return [(g, min(self.vl, n - g)) for g in range(0, n, self.vl)]

    def _lane_mask(self, lanes):
        return ir.Constant(ir.VectorType(ir.IntType(1), self.vl),
                           [1 if j < lanes else 0 for j in range(self.vl)])

    def _masked(self, op):
        t = f"v{self.vl}{self.t}"
        name = f"llvm.masked.{op}.{t}.p0"
        mask_t = ir.VectorType(ir.IntType(1), self.vl)
        fty = ir.FunctionType(self.vty, [PTR, I32, mask_t, self.vty]) if op == "load" else \
            ir.FunctionType(VOID, [self.vty, PTR, I32, mask_t])
        return self.m.globals.get(name) or ir.Function(self.m, fty, name)

    def _load_lanes(self, b, p, lanes):
        """The first `lanes` elements at p in a vector (the rest zero; never read)."""
        if lanes == self.vl:
            return b.load(p, typ=self.vty, align=1)
        return b.call(self._masked("load"), [p, ir.Constant(I32, 1), self._lane_mask(lanes),
                                              ir.Constant(self.vty, None)])

    def _store_lanes(self, b, x, p, lanes):
        if lanes == self.vl:
            b.store(x, p, align=1)
        else:
            b.call(self._masked("store"), [x, p, ir.Constant(I32, 1), self._lane_mask(lanes)])

    # ---- write-back ------------------------------------------------------------------------
    def store_tile(self):
        """store_tile(tile, rows, cols, c, ldc, cin, ldcin, alpha, beta, mode):
        mode 0: c = alpha*t + beta*cin; 1: c = alpha*t; 2: c += alpha*t."""
        f = self.fty
        fn = self._fn("store", [PTR, I64, I64, PTR, I64, I64, PTR, I64, I64, f, f, I32])
        tile, rows, cols, c, ldc, csc, cin, ldcin, cscin, alpha, beta, mode = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        nr, vl = self.nr, self.vl
        va, vb = self._splat(b, alpha), self._splat(b, beta)
        one = {True: ir.Constant(self.vty, [1.0] * vl), False: ir.Constant(f, 1.0)}

        def loops(body):
            """body(acc, i, col, vector) over the tile: whole vectors for a full tile,
            element by element at the edges."""
            full = b.and_(b.icmp_signed("==", rows, c64(MR)), b.icmp_signed("==", cols, c64(nr)))
            unit = b.and_(b.icmp_signed("==", csc, c64(1)), b.icmp_signed("==", cscin, c64(1)))
            full = b.and_(full, unit)
            with b.if_else(full) as (then, otherwise):
                with then:
                    with for_range(b, 0, MR, name="vi") as i:
                        for v in range(NV):
                            acc = b.load(self._at(b, tile, b.add(b.mul(i, c64(nr)), c64(v * vl))),
                                         typ=self.vty)
                            body(acc, i, c64(v * vl), True)
                with otherwise:
                    with for_range(b, 0, rows, name="i") as i:
                        with for_range(b, 0, cols, name="j") as j:
                            acc = b.load(self._at(b, tile, b.add(b.mul(i, c64(nr)), j)), typ=f)
                            body(acc, i, j, False)

        def write(src_ptr, src_ld, src_cs, factor):
            def body(acc, i, col, vector):
                typ = self.vty if vector else f
                dst = self._at(b, c, b.add(b.mul(i, ldc), b.mul(col, csc)))
                value = b.fmul(va if vector else alpha, acc)
                if src_ptr is not None:
                    at = b.add(b.mul(i, src_ld), b.mul(col, src_cs))
                    old = b.load(self._at(b, src_ptr, at), typ=typ, align=1)
                    fac = factor[vector] if isinstance(factor, dict) else \
                        (vb if vector else beta)
                    value = b.fadd(value, b.fmul(fac, old))
                b.store(value, dst, align=1)
            loops(body)

        is1 = b.icmp_signed("==", mode, ir.Constant(I32, 1))
        is2 = b.icmp_signed("==", mode, ir.Constant(I32, 2))
        with b.if_else(is1) as (m1, rest):
            with m1:
                write(None, None, None, None)
            with rest:
                with b.if_else(is2) as (m2, m0):
                    with m2:
                        write(c, ldc, csc, one)
                    with m0:
                        write(cin, ldcin, cscin, "beta")
        b.ret_void()
        return fn

    # ---- the two parallel phases ------------------------------------------------------------
    def _chunk_start(self, b, a):
        """A chunk's tile buffer and write-back flags: (tile, has_epi, first_mode), the mode
        of the first depth block (beta 0: C = alpha*t, else C = alpha*t + beta*Cin)."""
        f = self.fty
        tile = b.alloca(f, size=MR * self.nr)
        tile.align = 64
        beta_zero = b.fcmp_ordered("==", a["beta"], ir.Constant(f, 0.0))
        has_epi = b.icmp_unsigned("!=", b.ptrtoint(a["epi"], I64), c64(0))
        first_mode = b.select(beta_zero, ir.Constant(I32, 1), ir.Constant(I32, 0))
        return tile, has_epi, first_mode

    def _tiles(self, b, a, micro, store, tile, ap, bp, row0, col0, mc, nc, kc, mode, last,
               has_epi):
        """C[row0:+mc, col0:+nc] from the packed A block `ap` (MR-row slivers) and B block
        `bp` (NR-column slivers) of depth kc: each B sliver stays in L1 while the A
        slivers pass under it; each tile is written back in `mode` and, after the last
        depth block, handed to the epilogue."""
        nr = self.nr
        with for_range(b, 0, nc, nr, name="jr") as jr:
            cols = self._min(b, b.sub(nc, jr), c64(nr))
            bsliver = self._at(b, bp, b.mul(jr, kc))
            with for_range(b, 0, mc, MR, name="ir") as ir_:
                rows = self._min(b, b.sub(mc, ir_), c64(MR))
                b.call(micro, [kc, self._at(b, ap, b.mul(ir_, kc)), bsliver, tile])
                row, col = b.add(row0, ir_), b.add(col0, jr)
                cptr = self._at(b, a["C"], b.add(b.mul(row, a["ldc"]), b.mul(col, a["csc"])))
                cin = self._at(b, a["Cin"], b.add(b.mul(row, a["ldcin"]),
                                                  b.mul(col, a["cscin"])))
                b.call(store, [tile, rows, cols, cptr, a["ldc"], a["csc"], cin, a["ldcin"],
                               a["cscin"], a["alpha"], a["beta"], mode])
                with b.if_then(b.and_(last, has_epi)):
                    b.call(a["epi"], [a["epi_ctx"], row, col, rows, cols])

    def _row_split(self, micro, pack_a, pack_b, store):
        """The phases of a call split by rows (splits_rows): pack_all_b(ctx, start, end)
        packs B's (depth block, NC column block) units [start, end) into the shared front of
        the workspace, [pc block][column sliver][k][NR]; chunk_rows(ctx, start, end) runs
        row ranges of C, each packing its MC-row blocks of A into its own slice, then
        looping over B's slivers (one stays in L1 while the MR-row slivers of the A block,
        in L2, pass under it)."""
        pack_all_b, b, a, start, end = self._phase("pack_all_b")
        nblocks = b.sdiv(b.add(a["N"], c64(NC - 1)), c64(NC))
        with for_range(b, start, end, name="unit") as u:
            pc = b.mul(b.sdiv(u, nblocks), a["kcb"])
            jc = b.mul(b.srem(u, nblocks), c64(NC))
            with b.if_then(b.icmp_signed("<", pc, a["K"])):
                kc = self._min(b, b.sub(a["K"], pc), a["kcb"])
                nc = self._min(b, b.sub(a["N"], jc), c64(NC))
                src = self._at(b, a["B"], b.add(b.mul(pc, a["rsb"]), b.mul(jc, a["csb"])))
                dst = self._at(b, a["bshared"], b.add(b.mul(pc, a["npad"]), b.mul(jc, kc)))
                b.call(pack_b, [src, a["rsb"], a["csb"], kc, nc, dst])
        b.ret_void()

        chunk_rows, b, a, start, end = self._phase("chunk_rows")
        M, N, K = a["M"], a["N"], a["K"]
        tile, has_epi, first_mode = self._chunk_start(b, a)
        span = self._chunk_span(b, M, a["chunks"], MR)
        with for_range(b, start, end, name="chunk") as ch:
            r0, r1 = span(ch)
            ap = b.inttoptr(b.add(a["aslices"], b.mul(ch, c64(a_slice_bytes(self.t)))), PTR)
            with for_range(b, 0, K, a["kcb"], name="pc") as pc:
                kc = self._min(b, b.sub(K, pc), a["kcb"])
                mode = b.select(b.icmp_signed("==", pc, c64(0)), first_mode,
                                ir.Constant(I32, 2))
                last = b.icmp_signed(">=", b.add(pc, kc), K)
                bblock = self._at(b, a["bshared"], b.mul(pc, a["npad"]))
                with for_range(b, r0, r1, MC, name="ic") as ic:
                    mc = self._min(b, b.sub(r1, ic), c64(MC))
                    asrc = self._at(b, a["A"], b.add(b.mul(ic, a["rsa"]), b.mul(pc, a["csa"])))
                    b.call(pack_a, [asrc, a["rsa"], a["csa"], mc, kc, ap])
                    self._tiles(b, a, micro, store, tile, ap, bblock, ic, c64(0), mc, N, kc,
                                mode, last, has_epi)
        b.ret_void()
        return pack_all_b, chunk_rows

    def _args(self, b, ctx):
        f = self.fty

        def arg(name, typ=I64):
            slot = b.gep(ctx, [c64(SLOT[name])], source_etype=I64)
            if typ is PTR:
                return b.load(slot, typ=PTR)
            if typ is I64:
                return b.load(slot, typ=I64)
            v = b.load(slot, typ=ir.DoubleType())
            return b.fptrunc(v, f) if self.t == "f32" else v
        a = {n: arg(n) for n in ("M", "N", "K", "rsa", "csa", "rsb", "csb", "ldcin", "cscin",
                                 "ldc", "csc", "chunks")}
        a.update({n: arg(n, PTR) for n in ("A", "B", "Cin", "C", "ws", "epi_ctx")})
        a["epi"] = b.load(b.gep(ctx, [c64(SLOT["epi"])], source_etype=I64),
                          typ=EPILOGUE_TYPE.as_pointer())
        a.update({n: arg(n, f) for n in ("alpha", "beta")})
        # scratch layout (workspace_bytes): the operand packed once and shared, then the
        # chunks' slices. Split by columns: A (M rounded to MR, K to KC), then B slivers;
        # by rows: B (N rounded to NR, K to KC), then blocks of A
        def up(x, unit):
            return b.mul(b.sdiv(b.add(x, c64(unit - 1)), c64(unit)), c64(unit))

        def after(base, elements):
            return b.add(base, up(b.mul(elements, c64(self.esize)), 64))

        base = up(b.ptrtoint(a["ws"], I64), 64)
        a["mpad"], a["npad"], kpad = up(a["M"], MR), up(a["N"], self.nr), up(a["K"], KC)
        a["apack"] = a["bshared"] = b.inttoptr(base, PTR)
        a["bpack"] = b.inttoptr(after(base, b.mul(a["mpad"], kpad)), PTR)
        a["aslices"] = after(base, b.mul(a["npad"], kpad))
        # depth blocks of equal size (784 = 4 x 196, not 3 x 256 + 16: a thin last block
        # costs a full pass over C for little arithmetic)
        blocks = b.sdiv(b.add(a["K"], c64(KC - 1)), c64(KC))
        a["kcb"] = b.sdiv(b.add(a["K"], b.sub(blocks, c64(1))), blocks)
        return a

    def _phase(self, name: str):
        """A parallel phase's function (ctx, start, end): (function, builder, args, start,
        end)."""
        fn = self._fn(name, [PTR, I64, I64])
        ctx, start, end = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        return fn, b, self._args(b, ctx), start, end

    def _chunk_span(self, b, total, chunks, unit):
        """ch -> [lo, hi): chunk ch's share of [0, total), in whole `unit`s."""
        per = b.sdiv(b.add(total, b.sub(chunks, c64(1))), chunks)
        per = b.mul(b.sdiv(b.add(per, c64(unit - 1)), c64(unit)), c64(unit))

        def span(ch):
            lo = self._min(b, b.mul(ch, per), total)
            return lo, self._min(b, b.add(lo, per), total)
        return span

    # ---- thin products, without packing -----------------------------------------------------
    def direct(self):
        """direct(ctx, start, end), for direct_call products (one row, or C at most GV
        vectors wide with A's, B's and C's rows contiguous): units [start, end) of (RD rows of C,
        one block of GV vectors of columns), B and A read where they lie (packing, and
        micro-tiles of MR x NR, would cost many times such a product). B with contiguous
        rows: RD x GV vector accumulators take A[i, k] * B[k, block] for k = 0..K-1 (a
        partial block: its whole vectors together, then the rest through masked loads and
        stores; the rows left after the last whole RD one at a time); one row of A times B
        with contiguous columns (x . W^T): a vector dot product per column, summed as a
        tree; other strides: one element at a time. Sums over k run in order in each lane."""
        fn, b, a, start, end = self._phase("direct")
        f, vl, rd = self.fty, self.vl, self.rd
        jb = GV * vl
        scalar_fma = ir.Function(self.m, ir.FunctionType(f, [f, f, f]), f"llvm.fmuladd.{self.t}")
        accs = [[entry_alloca(b, self.vty) for _ in range(GV)] for _ in range(rd)]
        sacc = entry_alloca(b, f)
        zero_v, zero = ir.Constant(self.vty, [0.0] * vl), ir.Constant(f, 0.0)
        beta_nz = b.fcmp_unordered("!=", a["beta"], zero)
        has_epi = b.icmp_unsigned("!=", b.ptrtoint(a["epi"], I64), c64(0))
        one = c64(1)
        rows_contig = b.and_(b.icmp_signed("==", a["csb"], one),
                             b.and_(b.icmp_signed("==", a["csc"], one),
                                    b.icmp_signed("==", a["cscin"], one)))
        cols_contig = b.and_(b.icmp_signed("==", a["rsb"], one), b.icmp_signed("==", a["csa"], one))
        k_whole = b.mul(b.sdiv(a["K"], c64(vl)), c64(vl))
        va, vb = self._splat(b, a["alpha"]), self._splat(b, a["beta"])
        iota = ir.Constant(ir.VectorType(I64, vl), list(range(vl)))

        def by_rows(i0, nrows, jv, count, mask=None):
            """C[i0 : i0 + nrows, jv : jv + count * VL] (`mask`: the lanes of one partial
            vector)."""
            def load(p):
                if mask is None:
                    return b.load(p, typ=self.vty, align=1)
                return b.call(self._masked("load"), [p, ir.Constant(I32, 1), mask, zero_v])
            rows = [b.add(i0, c64(r)) for r in range(nrows)]
            for r in range(nrows):
                for acc in accs[r][:count]:
                    b.store(zero_v, acc)
            with for_range(b, 0, a["K"], name="k") as k:
                xs = [self._splat(b, b.load(self._at(b, a["A"], b.add(
                    b.mul(row, a["rsa"]), b.mul(k, a["csa"]))), typ=f)) for row in rows]
                brow = self._at(b, a["B"], b.add(b.mul(k, a["rsb"]), jv))
                for v in range(count):
                    bv = load(self._at(b, brow, c64(v * vl)))
                    for r in range(nrows):
                        acc = accs[r][v]
                        b.store(b.call(self.fmuladd, [xs[r], bv, b.load(acc, typ=self.vty)]),
                                acc)
            for r, row in enumerate(rows):
                for v in range(count):
                    acc, col = accs[r][v], b.add(jv, c64(v * vl))
                    value = b.fmul(va, b.load(acc, typ=self.vty))
                    with b.if_then(beta_nz):
                        old = load(self._at(b, a["Cin"], b.add(b.mul(row, a["ldcin"]), col)))
                        b.store(b.fadd(value, b.fmul(vb, old)), acc)
                    value = b.select(beta_nz, b.load(acc, typ=self.vty), value)
                    dst = self._at(b, a["C"], b.add(b.mul(row, a["ldc"]), col))
                    if mask is None:
                        b.store(value, dst, align=1)
                    else:
                        b.call(self._masked("store"), [value, dst, ir.Constant(I32, 1), mask])

        def block(i0, nrows, j0, w):
            """C[i0 : i0 + nrows, j0 : j0 + w], w at most GV vectors, B's rows contiguous."""
            with b.if_else(b.icmp_signed("==", w, c64(jb))) as (whole, part):
                with whole:
                    by_rows(i0, nrows, j0, GV)
                with part:  # its whole vectors together, then the rest masked
                    whole_vectors = b.sdiv(w, c64(vl))
                    for count in range(1, GV):
                        with b.if_then(b.icmp_signed("==", whole_vectors, c64(count))):
                            by_rows(i0, nrows, j0, count)
                    rest = b.add(j0, b.mul(whole_vectors, c64(vl)))
                    lanes = b.sub(b.add(j0, w), rest)
                    with b.if_then(b.icmp_signed(">", lanes, c64(0))):
                        by_rows(i0, nrows, rest, 1, b.icmp_signed("<", iota, splat(b, lanes, vl)))

        def tree_sum(v):
            """The lanes of v added pairwise (halves, then quarters, ...)."""
            n = vl
            while n > 1:
                n //= 2
                lo = b.shuffle_vector(v, v, ir.Constant(ir.VectorType(I32, n), list(range(n))))
                hi = b.shuffle_vector(v, v, ir.Constant(ir.VectorType(I32, n),
                                                        list(range(n, 2 * n))))
                v = b.fadd(lo, hi)
            return b.extract_element(v, ir.Constant(I32, 0))

        def by_columns(j):
            """C[0, j] from a dot product of A's one row with column j of B."""
            col = self._at(b, a["B"], b.mul(j, a["csb"]))
            b.store(zero, sacc)
            with b.if_then(cols_contig):
                b.store(zero_v, accs[0][0])
                with for_range(b, 0, k_whole, vl, name="kv") as k:
                    xv = b.load(self._at(b, a["A"], k), typ=self.vty, align=1)
                    bv = b.load(self._at(b, col, k), typ=self.vty, align=1)
                    b.store(b.call(self.fmuladd, [xv, bv, b.load(accs[0][0], typ=self.vty)]),
                            accs[0][0])
                b.store(tree_sum(b.load(accs[0][0], typ=self.vty)), sacc)
            with for_range(b, b.select(cols_contig, k_whole, c64(0)), a["K"], name="ks") as k:
                x = b.load(self._at(b, a["A"], b.mul(k, a["csa"])), typ=f)
                y = b.load(self._at(b, col, b.mul(k, a["rsb"])), typ=f)
                b.store(b.call(scalar_fma, [x, y, b.load(sacc, typ=f)]), sacc)
            value = b.fmul(a["alpha"], b.load(sacc, typ=f))
            with b.if_then(beta_nz):
                old = b.load(self._at(b, a["Cin"], b.mul(j, a["cscin"])), typ=f)
                b.store(b.fadd(value, b.fmul(a["beta"], old)), sacc)
            value = b.select(beta_nz, b.load(sacc, typ=f), value)
            b.store(value, self._at(b, a["C"], b.mul(j, a["csc"])))

        col_blocks = b.sdiv(b.add(a["N"], c64(jb - 1)), c64(jb))
        with for_range(b, start, end, name="unit") as unit:
            i0 = b.mul(b.sdiv(unit, col_blocks), c64(rd))
            j0 = b.mul(b.srem(unit, col_blocks), c64(jb))
            nrows = self._min(b, b.sub(a["M"], i0), c64(rd))
            w = self._min(b, b.sub(a["N"], j0), c64(jb))
            with b.if_else(rows_contig) as (rows, columns):
                with rows:
                    with b.if_else(b.icmp_signed("==", nrows, c64(rd))) as (full, few):
                        with full:
                            block(i0, rd, j0, w)
                        with few:
                            with for_range(b, i0, b.add(i0, nrows), name="r") as r:
                                block(r, 1, j0, w)
                with columns:  # (one row: direct_call)
                    with for_range(b, j0, b.add(j0, w), name="j") as j:
                        by_columns(j)
            with b.if_then(has_epi):
                b.call(a["epi"], [a["epi_ctx"], i0, j0, nrows, w])
        b.ret_void()
        return fn

    def build(self):
        direct = self.direct()
        micro, pack_a, pack_b, store = self.micro(), self.pack_a(), self.pack_b(), self.store_tile()
        # phase 1: pack all of A, panel by panel: [pc block][panel][k][MR]
        pack_all, b, a, start, end = self._phase("pack_all")
        with for_range(b, start, end, name="panel") as p:
            row = b.mul(p, c64(MR))
            mc = self._min(b, b.sub(a["M"], row), c64(MR))
            with for_range(b, 0, a["K"], a["kcb"], name="pc") as pc:
                kc = self._min(b, b.sub(a["K"], pc), a["kcb"])
                src = self._at(b, a["A"], b.add(b.mul(row, a["rsa"]), b.mul(pc, a["csa"])))
                dst = self._at(b, a["apack"], b.add(b.mul(pc, a["mpad"]), b.mul(row, kc)))
                b.call(pack_a, [src, a["rsa"], a["csa"], mc, kc, dst])
        b.ret_void()

        # phase 2: one chunk = a range of C's columns; it packs its own B slivers
        chunk, b, a, start, end = self._phase("chunk")
        M, N, K = a["M"], a["N"], a["K"]
        tile, has_epi, first_mode = self._chunk_start(b, a)
        span = self._chunk_span(b, N, a["chunks"], self.nr)
        with for_range(b, start, end, name="chunk") as ch:
            n0, n1 = span(ch)
            bp = b.gep(a["bpack"], [b.mul(ch, c64(b_slice_bytes(self.t, self.bits)))],
                       source_etype=ir.IntType(8))
            with for_range(b, n0, n1, NC, name="jc") as jc:
                nc = self._min(b, b.sub(n1, jc), c64(NC))
                with for_range(b, 0, K, a["kcb"], name="pc") as pc:
                    kc = self._min(b, b.sub(K, pc), a["kcb"])
                    bsrc = self._at(b, a["B"], b.add(b.mul(pc, a["rsb"]), b.mul(jc, a["csb"])))
                    b.call(pack_b, [bsrc, a["rsb"], a["csb"], kc, nc, bp])
                    mode = b.select(b.icmp_signed("==", pc, c64(0)), first_mode,
                                    ir.Constant(I32, 2))
                    last = b.icmp_signed(">=", b.add(pc, kc), K)
                    ablock = self._at(b, a["apack"], b.mul(pc, a["mpad"]))
                    with for_range(b, 0, M, MC, name="ic") as ic:
                        mc = self._min(b, b.sub(M, ic), c64(MC))
                        ap = self._at(b, ablock, b.mul(ic, kc))
                        self._tiles(b, a, micro, store, tile, ap, bp, ic, jc, mc, nc, kc, mode,
                                    last, has_epi)
        b.ret_void()

        pack_all_b, chunk_rows = self._row_split(micro, pack_a, pack_b, store)

        pool = threadpool.declare(self.m)
        entry = ir.Function(self.m, ir.FunctionType(VOID, [PTR]), f"xlapy_gemm_{self.t}")
        b = ir.IRBuilder(entry.append_basic_block("entry"))
        ctx = entry.args[0]
        chunks, m = (b.load(b.gep(ctx, [c64(SLOT[name])], source_etype=I64), typ=I64)
                     for name in ("chunks", "M"))
        panels = b.sdiv(b.add(m, c64(MR - 1)), c64(MR))
        n = b.load(b.gep(ctx, [c64(SLOT["N"])], source_etype=I64), typ=I64)
        k = b.load(b.gep(ctx, [c64(SLOT["K"])], source_etype=I64), typ=I64)
        rows_contig = b.and_(b.and_(*(b.icmp_signed("==", b.load(b.gep(
            ctx, [c64(SLOT[name])], source_etype=I64), typ=I64), c64(1))
            for name in ("csb", "csc"))), b.and_(*(b.icmp_signed("==", b.load(b.gep(
                ctx, [c64(SLOT[name])], source_etype=I64), typ=I64), c64(1))
                for name in ("cscin", "csa"))))
        thin = b.and_(b.icmp_signed("<=", n, c64(GV * self.vl)), rows_contig)
        direct_blk, packed = entry.append_basic_block("direct"), entry.append_basic_block("packed")
        b.cbranch(b.or_(b.icmp_signed("==", m, c64(1)), thin), direct_blk, packed)  # direct_call
        b.position_at_end(direct_blk)
        units = b.mul(b.sdiv(b.add(m, c64(self.rd - 1)), c64(self.rd)),
                      b.sdiv(b.add(n, c64(GV * self.vl - 1)), c64(GV * self.vl)))
        grain = b.sdiv(b.add(units, b.sub(b.mul(chunks, c64(4)), c64(1))), b.mul(chunks,
                                                                                   c64(4)))
        with b.if_else(b.icmp_signed(">", chunks, c64(1))) as (par, ser):
            with par:
                b.call(pool, [direct, ctx, units, grain])
            with ser:
                b.call(direct, [ctx, c64(0), units])
        b.ret_void()
        b.position_at_end(packed)
        with b.if_else(b.icmp_signed(">", chunks, c64(1))) as (par, ser):
            with par:
                with b.if_else(b.icmp_signed(">", m, n)) as (by_rows, by_columns):  # splits_rows
                    with by_rows:
                        kblocks = b.sdiv(b.add(k, c64(KC - 1)), c64(KC))
                        nblocks = b.sdiv(b.add(n, c64(NC - 1)), c64(NC))
                        b.call(pool, [pack_all_b, ctx, b.mul(kblocks, nblocks), c64(1)])
                        b.call(pool, [chunk_rows, ctx, chunks, c64(1)])
                    with by_columns:
                        grain = b.sdiv(b.add(panels, c64(4 * 2 - 1)), c64(4 * 2))
                        b.call(pool, [pack_all, ctx, panels, grain])
                        b.call(pool, [chunk, ctx, chunks, c64(1)])
            with ser:
                b.call(pack_all, [ctx, c64(0), panels])
                b.call(chunk, [ctx, c64(0), c64(1)])
        b.ret_void()
