"""xlapy's own gemm (gemm_kernel.py): its argument slots, blocking parameters and the
scratch space a call needs; plain Python, shared by the kernel's builders and its callers."""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.passes.dot_plan import SHORT_DEPTH, short_rows

I32, I64, PTR, VOID = ir.IntType(32), ir.IntType(64), ir.PointerType(), ir.VoidType()

# argument slots (8 bytes each): integers, pointers, then alpha and beta as doubles
ARGS = ("M", "N", "K", "A", "rsa", "csa", "B", "rsb", "csb", "Cin", "ldcin", "cscin", "C",
        "ldc", "csc", "ws", "chunks", "epi", "epi_ctx", "alpha", "beta",
        # written by the kernel itself (callers leave them): how many units C is split in,
        # and the mask of the chunks' scratch slices in use (UNITS_PER_CHUNK)
        "units", "slices")
# epilogue: void epi(ptr epi_ctx, i64 row, i64 col, i64 rows, i64 cols), called (when `epi` is
# not null) on the thread that finished C's tile [row, row + rows) x [col, col + cols), right
# after its final values are stored, while they are in that core's L1 cache
EPILOGUE_TYPE = ir.FunctionType(VOID, [PTR, I64, I64, I64, I64])
SLOT = {name: k for k, name in enumerate(ARGS)}

MR = 12          # rows of the micro-tile
EDGE_ROWS = (4, 8)   # rows of the smaller micro-kernels edge panels take (gemm_driver)
NV = 2           # vectors per micro-tile row
KC = 256         # depth of a packed sliver
MC = 192         # rows of A packed at a time
NC = 1024        # columns of B packed at a time
GV = 4           # vectors of C's columns per block of the direct phase (thin products)
# On several threads C is split in up to UNITS_PER_CHUNK units per chunk (thread), claimed
# from the pool one at a time: a thread the OS deschedules (another process on its core)
# holds one small unit rather than half of C, which the others would wait for. Each running
# unit takes a free scratch slice of the `chunks` slices (the `slices` mask).
UNITS_PER_CHUNK = 4


def compute_type(t: str) -> str:
    """The type a kernel kind computes in: bf16 and f16 operands are widened to f32 as
    they are packed (C, Cin, alpha and beta are f32)."""
    return "f32" if t in ("bf16", "f16") else t


def lanes(t: str, vector_bits: int) -> int:
    return vector_bits // (64 if compute_type(t) == "f64" else 32)


def _esize(t: str) -> int:
    return 8 if compute_type(t) == "f64" else 4


def swaps(t: str, m: int, n: int, vector_bits: int) -> bool:
    """Whether a call computes C^T = B^T . A^T instead (C has few columns, so the
    micro-tile's long side runs along M): fewer than two slivers of columns and more rows."""
    return n < 2 * NV * lanes(t, vector_bits) and m > n


def direct_rows(vector_bits: int) -> int:
    """Rows of C the direct phase computes at once: RD x GV accumulators plus GV vectors of
    B and RD of A fit AVX-512's 32 registers with 4, 16-register targets with 2."""
    return 4 if vector_bits >= 512 else 2


def direct_small_rows(vector_bits: int) -> int:
    """C with at most this many rows (two of the direct phase's row groups) and contiguous
    rows runs the direct phase whatever its width: a recurrent cell's x . W (batch 8 rows,
    K = 256, N = 1024) read its 1 MB of B twice, once to pack it and once packed, from L3
    on each step of the scan; unpacked, the units that share a block of B's columns run one
    after the other, so B comes from memory once."""
    return 2 * direct_rows(vector_bits)


DIRECT_DEPTH = 16   # products this shallow run the direct phase (direct_call)


def direct_call(t: str, m: int, n: int, vector_bits: int, rows_contiguous: bool,
                k: int | None = None, bc_rows_contiguous: bool = False) -> bool:
    """Whether a call runs the direct phase (no packing): one row, or A's, B's and C's rows
    contiguous and C at most GV vectors wide or at most direct_small_rows high, or (given
    its depth k) at most DIRECT_DEPTH deep with B's and C's rows contiguous, A any way (the
    kernel decides at run time by the same rule, from the strides; A read down its columns
    would touch a cache line per element, which only a shallow product, a gradient's
    rank-8 update W += x^T . dz, can afford: packing cost it more), or C at most GV vectors
    wide, B's and C's rows contiguous, A any way, at most KC deep: a row group's block of
    B stays in cache, and packing A for so few columns cost more than reading it down its
    columns (one thread, A column-major, GFLOP/s packed -> direct: 1568x64x256, the NHWC
    filter gradient's blocks, 91-94 -> 107-115; 1024x32x256 64 -> 110; 784x10x100 28 ->
    62; 16x16x128 13 -> 85)."""
    if compute_type(t) != t:
        return False   # bf16 / f16 operands are widened as they are packed: always packed
    if k is not None and k <= DIRECT_DEPTH and (bc_rows_contiguous or rows_contiguous):
        return True
    if k is not None and k <= KC and (bc_rows_contiguous or rows_contiguous) \
            and n <= GV * lanes(t, vector_bits):
        return True
    if k is not None and k <= SHORT_DEPTH and rows_contiguous and m <= short_rows(vector_bits):
        return True   # (dot_plan.SHORT_DEPTH: B's shared column block stays in cache)
    return m == 1 or (rows_contiguous and (n <= GV * lanes(t, vector_bits)
                                           or m <= direct_small_rows(vector_bits)))


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
    if m == 1 and compute_type(t) == t:  # the matrix-vector phase packs nothing
        return 0
    if chunks <= 1:  # serial: all of A, then B slivers of at most min(N, NC) columns;
        # or, when M > N (split by rows, as on several threads), all of B, then one block
        # of at most min(M, MC) rows of A
        nr = NV * lanes(t, vector_bits)
        by_columns = 64 + _round_up(es * _round_up(m, MR) * kpad, 64) \
            + _round_up(es * min(k, KC) * _round_up(min(n, NC), nr), 64) + 64
        if m <= n:
            return by_columns
        by_rows = 64 + _round_up(es * _round_up(n, nr) * kpad, 64) \
            + _round_up(es * _round_up(min(m, MC), MR) * KC, 64) + 64
        return max(by_columns, by_rows)
    by_columns = _round_up(es * _round_up(m, MR) * kpad, 64) \
        + chunks * b_slice_bytes(t, vector_bits)
    by_rows = _round_up(es * _round_up(n, NV * lanes(t, vector_bits)) * kpad, 64) \
        + chunks * a_slice_bytes(t)
    return 64 + max(by_columns, by_rows)


def splits_rows(m: int, n: int, chunks: int) -> bool:
    """Whether a call splits C by rows (B packed once and shared, each
    thread packing blocks of A as it goes) rather than by columns (A packed once, each thread
    packing its B): when A is the larger operand (M > N), so that the operand packed in a
    pass of its own, before any arithmetic, is the smaller one. The kernel decides at run
    time by the same rule."""
    return m > n


