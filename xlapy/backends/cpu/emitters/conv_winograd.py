"""3x3 and 5x5 stride-1 convolutions by Winograd's minimal filtering (plan and matrices:
passes/winograd_plan.py), F(my x mx, r x r) with patches of ny x nx = (my + r - 1) x
(mx + r - 1) inputs, the transforms of each spatial dim its own (F(2x2, 3x3): n = 4;
F(1x2, 5x5): the identity along the first dim; one spatial dim, F(2, 3) and F(2, 5): the
two-dim form of a size-1 first dim, window 1 x r, winograd_plan.as_2d):

  1. the kernel transform, once per call (the kernel is usually a parameter):
     U[p][c][k] = (G g_ck G^T)[p] for the ny * nx positions p, on the thread pool;
  2. the tiles split in blocks (block_tiles: V and M in BLOCK_BYTES), the blocks across
     the pool's threads, each
     thread in its own slice of the scratch space; per block:
       input transform: V[p][t][c] = (B^T d_tc B)[p] of each tile t's input patch
         (zeros outside the lhs: HLO's padding, and the edge tiles' overhang);
       ny * nx gemms M[p] = V[p] . U[p] ([tiles, C] x [C, K]) through xlapy's own gemm;
       output transform: Y = A^T M_tk A stored where the tile is inside the output, then
       the fused epilogue (gemm_epilogue.py: bias, relu, residual) on each output pixel's
       features, while the block is in the core's cache.
     With one output per tile along the first dim (F(1x2, 5x5)), blocks are whole tile
     rows of an image and V is computed once per input row (_rows_blocks_fn).

The transforms are unrolled linear combinations with the matrices' constant coefficients
(no fast-math: the order of the sums is fixed). Winograd mixes every input value of a
patch, and every kernel value, into every product, so one inf or NaN would spread to
outputs the direct sum leaves finite (and padding would add 0 * inf): emit_guarded runs the
other convolution paths when the kernel or the lhs holds a non-finite value.
"""

from __future__ import annotations

from types import SimpleNamespace

from llvmlite import ir

from xlapy.backends.cpu.emitters import gemm_kernel as gk
from xlapy.backends.cpu.emitters.conv_guard import any_nonfinite, branch
from xlapy.backends.cpu.emitters.conv_relayout import emit_copy, minor_first
from xlapy.backends.cpu.emitters.gemm_call import OwnGemm, put, workspace_bytes
from xlapy.backends.cpu.emitters.kernel_abi import set_vector_width
from xlapy.backends.cpu.passes.conv_plan import conv_plan, strides_of
from xlapy.backends.cpu.passes.winograd_plan import as_2d
from xlapy.backends.cpu.runtime import threadpool
from xlapy.backends.cpu.target import vector_bits
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, entry_alloca, for_range

# V and M of a block of tiles (per thread). Larger blocks amortize the gemms' calls (30 per
# block with F(1x2, 5x5)): one thread, CPU time, load ~7, two runs each, the CNN's 5x5
# layer 7.3-7.4 ms at 384 KiB (48 tiles), 6.6-6.7 at 768 KiB, 6.6-6.7 at 1 MiB (84 tiles);
# the ResNet 3x3 layer 6.2-6.3 at 384 KiB, 5.9 at 1 MiB (252 tiles)
BLOCK_BYTES = 1 << 20
MIN_BLOCK_TILES = 48
PARALLEL_FLOPS = 1 << 22
KERNEL_PARALLEL = 1 << 14  # C * K at least: the kernel transform on the pool


def _align(n: int) -> int:
    return -(-n // 64) * 64


def block_tiles(wp, parts: int = 1) -> int:
    """Tiles per block (a multiple of the micro-tile's 12 rows): V and M in BLOCK_BYTES, and
    at least `parts` blocks where there are tiles enough (two per thread: even shares)."""
    per_tile = wp.points * (wp.c + wp.k) * 4
    t = max(BLOCK_BYTES // per_tile // 12 * 12, MIN_BLOCK_TILES)
    share = -(-wp.tiles // parts)
    return max(min(t, -(-share // 12) * 12), 12)


def emit_guarded(pe, instr, wp, out_ptr, lhs_ptr, rhs_ptr, other, epilogue=None) -> None:
    """Winograd, or other() (the convolution's other paths) when the kernel or the lhs
    holds an inf or NaN."""
    b = pe.b
    lhs, rhs = instr.operands[0].shape, instr.operands[1].shape
    t = lhs.element_type.name
    bad = b.or_(any_nonfinite(pe, rhs_ptr, rhs.size, t), any_nonfinite(pe, lhs_ptr, lhs.size, t))
    branch(pe, bad, other,
           lambda: emit_winograd(pe, instr, wp, out_ptr, lhs_ptr, rhs_ptr, epilogue))


def emit_winograd(pe, instr, wp, out_ptr, lhs_ptr, rhs_ptr, epilogue=None) -> None:
    """epilogue: (fn, ctx) of gemm_kernel.EPILOGUE_TYPE, called with (row, feature 0,
    1 row, K features) per output pixel, row the pixel's index in conv_plan's row order.

    An lhs whose features are not innermost (NCHW) is transformed from a copy with them
    innermost, and such a result (without an epilogue) is computed into one and copied
    back: the transforms run along the features, which were read and written one element
    a plane apart (NCHW 8x32x32x32 3x3 -> 64: 4.1 ms CPU against NHWC's 1.7).

    One spatial dim (NWC / NCW): the two-dim form with a size-1 first dim (as_2d)."""
    instr = as_2d(instr)
    dn = instr.attrs["dim_labels"]
    lhs, out = instr.operands[0].shape, instr.shape
    relayout_in = strides_of(lhs)[dn.input_feature] != 1
    relayout_out = strides_of(out)[dn.output_feature] != 1 and epilogue is None
    if relayout_in or relayout_out:
        lhs1 = minor_first(lhs, dn.input_feature) if relayout_in else lhs
        out1 = minor_first(out, dn.output_feature) if relayout_out else out
        one = SimpleNamespace(operands=[SimpleNamespace(shape=lhs1), instr.operands[1]],
                              shape=out1, attrs=instr.attrs, name=instr.name)
        es = {"f32": 4, "bf16": 2, "f16": 2}
        lhs_bytes = _align(lhs.size * es[lhs.element_type.name]) if relayout_in else 0
        out_bytes = _align(out.size * es[out.element_type.name]) if relayout_out else 0
        # the copies at the front of the scratch space, the transforms' buffers after them
        tmp = pe.me.scratch(pe.b, pe.arena, lhs_bytes + out_bytes)
        lhs_tmp = tmp
        out_tmp = pe.b.gep(tmp, [c64(lhs_bytes)], source_etype=T.I8)
        if relayout_in:
            emit_copy(pe, lhs, lhs1, lhs_ptr, lhs_tmp, f"{instr.name}.in")
        _winograd(pe, one, wp, out_tmp if relayout_out else out_ptr,
                  lhs_tmp if relayout_in else lhs_ptr, rhs_ptr, epilogue,
                  reserved=lhs_bytes + out_bytes)
        if relayout_out:
            emit_copy(pe, out1, out, out_tmp, out_ptr, f"{instr.name}.out")
        return
    _winograd(pe, instr, wp, out_ptr, lhs_ptr, rhs_ptr, epilogue)


def _winograd(pe, instr, wp, out_ptr, lhs_ptr, rhs_ptr, epilogue=None, reserved=0) -> None:
    """emit_winograd's work; its buffers after the first `reserved` bytes of the scratch
    space."""
    b, me = pe.b, pe.me
    n2 = wp.points
    flops = 2 * n2 * wp.tiles * wp.c * wp.k
    threads = me.num_threads if me.use_threads and flops >= PARALLEL_FLOPS else 1
    tb = block_tiles(wp, 2 * threads if threads > 1 else 1)
    rows = _block_rows(wp, tb)
    if rows:   # blocks of whole tile rows, V by input row (_rows_blocks_fn)
        tb = rows * wp.tiles_hw[1]
        n_blocks = wp.batch * -(-wp.tiles_hw[0] // rows)
        v_bytes = _align(wp.ns[1] * (rows + wp.ns[0] - 1) * wp.tiles_hw[1] * wp.c * 4)
    else:
        n_blocks = -(-wp.tiles // tb)
        v_bytes = _align(n2 * tb * wp.c * 4)
    chunks = min(threads, n_blocks)
    u_bytes = _align(n2 * wp.c * wp.k * 4)
    m_bytes = _align(n2 * tb * wp.k * 4)
    y_bytes = _align(wp.ms[0] * wp.ms[1] * wp.k * 4)
    ws_bytes = 0
    ends = {r * wp.tiles_hw[1] for r in range(1, rows + 1)} if rows else \
        {tb, wp.tiles - (n_blocks - 1) * tb}   # the row counts a block's gemms can have
    for m in ends:
        ws_bytes = max(ws_bytes, workspace_bytes("f32", m, wp.k, wp.c, 1, _swaps(wp, tb)))
    slice_bytes = v_bytes + m_bytes + y_bytes + _align(ws_bytes)
    scratch = me.scratch(b, pe.arena, reserved + u_bytes + chunks * slice_bytes)
    scratch = b.gep(scratch, [c64(reserved)], source_etype=T.I8)
    u_buf = scratch
    slices = b.gep(scratch, [c64(u_bytes)], source_etype=T.I8)

    kfn = _shared(pe, ("kernel", _key(instr), wp), lambda: _kernel_fn(pe, instr, wp))
    kctx = pe.table([rhs_ptr, u_buf])
    if me.use_threads and wp.c * wp.k >= KERNEL_PARALLEL and wp.c >= 2:
        b.call(threadpool.declare(pe.llmod),
               [kfn, kctx, c64(wp.c), c64(max(wp.c // (4 * me.num_threads), 1))])
    else:
        b.call(kfn, [kctx, c64(0), c64(wp.c)])

    sizes = (v_bytes, m_bytes, y_bytes, slice_bytes)
    fn = _rows_blocks_fn(pe, instr, wp, rows, chunks, sizes, epilogue) if rows else \
        _blocks_fn(pe, instr, wp, tb, chunks, sizes, epilogue)
    ctx = pe.table([lhs_ptr, out_ptr, u_buf, slices,
                    epilogue[1] if epilogue else ir.Constant(T.PTR, None)])
    if chunks > 1:
        b.call(threadpool.declare(pe.llmod), [fn, ctx, c64(chunks), c64(1)])
    else:
        b.call(fn, [ctx, c64(0), c64(1)])


# -- helpers ---------------------------------------------------------------------------

def _key(instr) -> tuple:
    """What the transforms' code depends on: the shapes (types, layouts), the window and
    the dimension labels (a network's repeated layers share it)."""
    a = instr.attrs
    shapes = (instr.operands[0].shape, instr.operands[1].shape, instr.shape)
    return (tuple((s.element_type.name, tuple(s.dims), tuple(s.minor_to_major))
                  for s in shapes),
            str(a["window"]), str(a["dim_labels"]))


def _shared(pe, key, build):
    """One function per key and module (the blocks functions of equal convolutions call
    the same transforms: less code to compile)."""
    cache = pe.me.__dict__.setdefault("_winograd_fns", {})
    if key not in cache:
        cache[key] = build()
    return cache[key]


def _fn(pe, name, arg_types, noalias=()):
    fn = ir.Function(pe.llmod, ir.FunctionType(T.VOID, arg_types), pe.me.unique(name))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    set_vector_width(fn)
    for k in noalias:
        fn.args[k].add_attribute("noalias")
    return fn, ir.IRBuilder(fn.append_basic_block("entry"))


def _ptrs(b, ctx, n):
    return [b.load(b.gep(ctx, [c64(k)], source_etype=T.PTR), typ=T.PTR) for k in range(n)]


def _load(b, base, off, et):
    """The element of type et at base + off (elements), as an f32."""
    v = b.load(b.gep(base, [off], source_etype=T.storage_type(et)), typ=T.storage_type(et))
    return T.to_float(b, v, et)


def _store(b, v, base, off, et) -> None:
    """f32 v rounded to type et (None: f32) at base + off (elements)."""
    if et is None or et.name == "f32":
        b.store(v, b.gep(base, [off], source_etype=T.F32))
    else:
        b.store(T.from_float(b, v, et), b.gep(base, [off], source_etype=T.storage_type(et)))


def _f32(x) -> ir.Constant:
    return ir.Constant(T.F32, float(x))


def _lin(b, coefs, vals):
    """sum_i coefs[i] * vals[i] (Fractions; zero terms left out, +-1 as adds), in order."""
    acc = None
    for f, v in zip(coefs, vals):
        if f == 0:
            continue
        if f == 1 or f == -1:
            term, neg = v, f == -1
        elif f < 0:
            term, neg = b.fmul(_f32(-f), v), True
        else:
            term, neg = b.fmul(_f32(f), v), False
        if acc is None:
            acc = b.fneg(term) if neg else term
        else:
            acc = b.fsub(acc, term) if neg else b.fadd(acc, term)
    return acc if acc is not None else _f32(0)


def _sandwich(b, left, right, x):
    """(L x R^T)[a][c] for L = left [p][i], R = right [q][j], x [i][j] (IR values)."""
    tmp = [[_lin(b, left[a], [x[i][j] for i in range(len(x))]) for j in range(len(x[0]))]
           for a in range(len(left))]
    return [[_lin(b, right[q], tmp[a]) for q in range(len(right))] for a in range(len(left))]


def _tile_coords(b, wp, t):
    """(batch, tile row, tile column) of tile t (an i64)."""
    th, tw = wp.tiles_hw
    tx = b.urem(t, c64(tw))
    rem = b.udiv(t, c64(tw))
    return b.udiv(rem, c64(th)), b.urem(rem, c64(th)), tx


# -- the kernel transform --------------------------------------------------------------

def _kernel_fn(pe, instr, wp):
    """fn(ctx = [rhs, U], c0, c1): U[p][c][k] for the input features [c0, c1)."""
    fn, b = _fn(pe, f"wino.kernel.{instr.name}", [T.PTR, T.I64, T.I64])
    ctx, c0, c1 = fn.args
    rhs_ptr, u_buf = _ptrs(b, ctx, 2)
    inner, ib = _fn(pe, f"wino.kernel_rows.{instr.name}", [T.PTR, T.PTR, T.I64], (0, 1))
    with for_range(b, c0, c1, name="c") as c:
        b.call(inner, [rhs_ptr, u_buf, c])
    b.ret_void()

    rhs = instr.operands[1].shape
    a = instr.attrs
    dn, w = a["dim_labels"], a["window"]
    rst = strides_of(rhs)
    rs_c, rs_k = rst[dn.kernel_input_feature], rst[dn.kernel_output_feature]
    rs_sp = [rst[d] for d in dn.kernel_spatial]
    (_, gy, _), (_, gx, _) = wp.matrices(0), wp.matrices(1)
    et = rhs.element_type
    src, dst, c = inner.args
    base = ib.mul(c, c64(rs_c))
    with for_range(ib, 0, wp.k, name="k") as k:
        at = ib.add(base, ib.mul(k, c64(rs_k)))
        x = []
        ry, rx = wp.rs
        for i in range(ry):
            row = []
            for j in range(rx):
                ki = ry - 1 - i if w.rhs_reversal[0] else i
                kj = rx - 1 - j if w.rhs_reversal[1] else j
                off = ib.add(at, c64(ki * rs_sp[0] + kj * rs_sp[1]))
                row.append(_load(ib, src, off, et))
            x.append(row)
        u = _sandwich(ib, gy, gx, x)
        nx = wp.ns[1]
        for p in range(wp.points):
            off = ib.add(ib.mul(ib.add(c64(p * wp.c), c), c64(wp.k)), k)
            ib.store(u[p // nx][p % nx], ib.gep(dst, [off], source_etype=T.F32))
    ib.ret_void()
    return fn


# -- the blocks ------------------------------------------------------------------------

def _blocks_frame(pe, name, instr, wp, tb, n_blocks, chunks, sizes, epilogue, block):
    """fn(ctx = [lhs, out, U, slices, epilogue ctx], u0, u1): the blocks of units (thread
    shares) [u0, u1), unit u in slice u (V, M, Y and the gemm's workspace). block(b, blk,
    lhs, V, U, M, gemm, slots) emits block blk's input transform and gemms and returns
    (first tile, tiles); the output transform and the epilogue follow here."""
    v_bytes, m_bytes, y_bytes, slice_bytes = sizes
    fn, b = _fn(pe, name, [T.PTR, T.I64, T.I64])
    ctx, u0, u1 = fn.args
    lhs_ptr, out_ptr, u_buf, slices, ectx = _ptrs(b, ctx, 5)
    per = -(-n_blocks // chunks)
    out_fn = _shared(pe, ("output", _key(instr), wp, tb), lambda: _output_fn(pe, instr, wp, tb))
    epi_fn = _epilogue_calls_fn(pe, instr, wp, epilogue[0]) if epilogue else None
    slots = entry_alloca(b, T.I64, c64(len(gk.ARGS)))
    gemm = OwnGemm(b, slots, "f32", tb, wp.k, wp.c, (wp.c, 1), (wp.k, 1), (wp.k, 1), c64(0), 1,
                   swap=_swaps(wp, tb))
    with for_range(b, u0, u1, name="unit") as u:
        base = b.gep(slices, [b.mul(u, c64(slice_bytes))], source_etype=T.I8)
        v_buf = base
        m_buf = b.gep(base, [c64(v_bytes)], source_etype=T.I8)
        y_buf = b.gep(base, [c64(v_bytes + m_bytes)], source_etype=T.I8)
        put(b, slots, "ws", b.gep(base, [c64(v_bytes + m_bytes + y_bytes)],
                                  source_etype=T.I8))
        blk0 = _umin(b, b.mul(u, c64(per)), c64(n_blocks))
        blk1 = _umin(b, b.add(blk0, c64(per)), c64(n_blocks))
        with for_range(b, blk0, blk1, name="block") as blk:
            t0, nt = block(b, blk, lhs_ptr, v_buf, u_buf, m_buf, gemm, slots)
            b.call(out_fn, [m_buf, out_ptr, y_buf, t0, nt])
            if epi_fn is not None:
                b.call(epi_fn, [ectx, t0, nt])
    b.ret_void()
    return fn


def _blocks_fn(pe, instr, wp, tb, chunks, sizes, epilogue):
    """_blocks_frame for blocks of tb tiles in tile order."""
    n2 = wp.points
    in_fn = _shared(pe, ("input", _key(instr), wp, tb), lambda: _input_fn(pe, instr, wp, tb))

    def block(b, blk, lhs_ptr, v_buf, u_buf, m_buf, gemm, slots):
        t0 = b.mul(blk, c64(tb))
        nt = _umin(b, c64(tb), b.sub(c64(wp.tiles), t0))
        b.call(in_fn, [lhs_ptr, v_buf, t0, nt])
        put(b, slots, "N" if gemm.swap else "M", nt)
        with for_range(b, 0, n2, name="p") as p:
            gemm.call(b, b.gep(v_buf, [b.mul(p, c64(tb * wp.c * 4))], source_etype=T.I8),
                      b.gep(u_buf, [b.mul(p, c64(wp.c * wp.k * 4))], source_etype=T.I8),
                      b.gep(m_buf, [b.mul(p, c64(tb * wp.k * 4))], source_etype=T.I8))
        return t0, nt

    return _blocks_frame(pe, f"wino.blocks.{instr.name}", instr, wp, tb,
                         -(-wp.tiles // tb), chunks, sizes, epilogue, block)


def _block_rows(wp, tb: int) -> int:
    """Tile rows per block where the first spatial dim has one output per tile (F(1x2,
    5x5): its transform is the identity, so tile row y's patch rows are input rows y to
    y + 4, shared with the next four tile rows): blocks of whole tile rows of one image,
    V computed once per input row (5x fewer input transforms), else 0."""
    if wp.ms[0] != 1 or wp.rs[0] == 1:
        return 0   # (one input row per tile row, NWC / NCW: nothing shared)
    th = wp.tiles_hw[0]
    most = max(min(tb // wp.tiles_hw[1], th), 1)
    return -(-th // -(-th // most))   # an image's rows in equal blocks (no small last one)


def _rows_blocks_fn(pe, instr, wp, rows, chunks, sizes, epilogue):
    """_blocks_frame for blocks of `rows` tile rows of one image (_block_rows): V[q][r][x][c]
    is the second dim's transform of input row ty0 + r (r < rows + ny - 1), and gemm
    (a, q) reads its rows from row a on: the tiles' patches (a, q) in tile order."""
    (ny, nx), (th, tw) = wp.ns, wp.tiles_hw
    tb, vrows = rows * tw, rows + ny - 1
    per_image = -(-th // rows)
    in_fn = _shared(pe, ("rows", _key(instr), wp, rows),
                    lambda: _input_rows_fn(pe, instr, wp, vrows))

    def block(b, blk, lhs_ptr, v_buf, u_buf, m_buf, gemm, slots):
        bi = b.udiv(blk, c64(per_image))
        ty0 = b.mul(b.urem(blk, c64(per_image)), c64(rows))
        nr = _umin(b, c64(rows), b.sub(c64(th), ty0))
        t0 = b.mul(b.add(b.mul(bi, c64(th)), ty0), c64(tw))
        nt = b.mul(nr, c64(tw))
        b.call(in_fn, [lhs_ptr, v_buf, bi, ty0, b.add(nr, c64(ny - 1))])
        put(b, slots, "N" if gemm.swap else "M", nt)
        for a in range(ny):
            with for_range(b, 0, nx, name="q") as q:
                p = b.add(c64(a * nx), q)
                v_at = b.add(b.mul(q, c64(vrows * tw * wp.c)), c64(a * tw * wp.c))
                gemm.call(b, b.gep(v_buf, [b.mul(v_at, c64(4))], source_etype=T.I8),
                          b.gep(u_buf, [b.mul(p, c64(wp.c * wp.k * 4))], source_etype=T.I8),
                          b.gep(m_buf, [b.mul(p, c64(tb * wp.k * 4))], source_etype=T.I8))
        return t0, nt

    return _blocks_frame(pe, f"wino.rows.{instr.name}", instr, wp, tb,
                         wp.batch * per_image, chunks, sizes, epilogue, block)


def _input_rows_fn(pe, instr, wp, vrows):
    """fn(lhs, V, b, ty0, nr): V[q][r][x][c] = (B^T d B)[q] of the second dim's patch of
    tile column x in input row ty0 + r - pad (zeros outside the lhs), for r < nr."""
    fn, b = _fn(pe, f"wino.input_rows.{instr.name}", [T.PTR, T.PTR, T.I64, T.I64, T.I64],
                (0, 1))
    lhs_ptr, v_buf, bi, ty0, nr = fn.args
    lhs = instr.operands[0].shape
    dn, w = instr.attrs["dim_labels"], instr.attrs["window"]
    lst = strides_of(lhs)
    ls_b, ls_c = lst[dn.input_batch], lst[dn.input_feature]
    ls_y, ls_x = (lst[d] for d in dn.input_spatial)
    (_, _, btx) = wp.matrices(1)
    nx, tw, mx = wp.ns[1], wp.tiles_hw[1], wp.ms[1]
    et = lhs.element_type
    with for_range(b, 0, nr, name="r") as r:
        y = b.sub(b.add(ty0, r), c64(w.pad_low[0]))
        y_ok = b.and_(b.icmp_signed(">=", y, c64(0)), b.icmp_signed("<", y, c64(wp.in_hw[0])))
        row = b.add(b.mul(bi, c64(ls_b)), b.mul(b.select(y_ok, y, c64(0)), c64(ls_y)))
        with for_range(b, 0, tw, name="x") as tx:
            srcs = []
            for j in range(nx):
                x = b.sub(b.add(b.mul(tx, c64(mx)), c64(j)), c64(w.pad_low[1]))
                valid = b.and_(y_ok, b.and_(b.icmp_signed(">=", x, c64(0)),
                                            b.icmp_signed("<", x, c64(wp.in_hw[1]))))
                off = b.select(valid, b.add(row, b.mul(x, c64(ls_x))), c64(0))
                srcs.append((b.gep(lhs_ptr, [off], source_etype=T.storage_type(et)), valid))
            dst = b.gep(v_buf, [b.mul(b.add(b.mul(r, c64(tw)), tx), c64(wp.c))],
                        source_etype=T.F32)
            with for_range(b, 0, wp.c, name="c") as c:
                coff = b.mul(c, c64(ls_c))
                d = [b.select(valid, _load(b, p, coff, et), _f32(0)) for p, valid in srcs]
                v = [_lin(b, btx[q], d) for q in range(nx)]
                for q in range(nx):
                    b.store(v[q], b.gep(dst, [b.add(c64(q * vrows * tw * wp.c), c)],
                                        source_etype=T.F32))
    b.ret_void()
    return fn


def _swaps(wp, rows: int) -> bool:
    """As conv._swaps: no C^T where the gemm's direct phase takes the product (V, U and M
    are row-major): a K = 16 convolution took 1.5x the gemm path's time swapped."""
    if wp.k > 1 and gk.direct_call("f32", rows, wp.k, vector_bits(), True):
        return False
    return gk.swaps("f32", rows, wp.k, vector_bits())


def _umin(b, x, y):
    return b.select(b.icmp_unsigned("<", x, y), x, y)


def _input_fn(pe, instr, wp, tb):
    """fn(lhs, V, t0, nt): V[p][t - t0][c] for the tiles [t0, t0 + nt)."""
    fn, b = _fn(pe, f"wino.input.{instr.name}", [T.PTR, T.PTR, T.I64, T.I64], (0, 1))
    lhs_ptr, v_buf, t0, nt = fn.args
    lhs = instr.operands[0].shape
    a = instr.attrs
    dn, w = a["dim_labels"], a["window"]
    lst = strides_of(lhs)
    ls_b, ls_c = lst[dn.input_batch], lst[dn.input_feature]
    ls_sp = [lst[d] for d in dn.input_spatial]
    (_, _, bty), (_, _, btx) = wp.matrices(0), wp.matrices(1)
    ns = wp.ns
    et = lhs.element_type
    with for_range(b, 0, nt, name="t") as tl:
        bi, ty, tx = _tile_coords(b, wp, b.add(t0, tl))
        pos, ok = [], []
        for s, tcoord in enumerate((ty, tx)):
            ps, oks = [], []
            for i in range(ns[s]):
                q = b.sub(b.add(b.mul(tcoord, c64(wp.ms[s])), c64(i)), c64(w.pad_low[s]))
                valid = b.and_(b.icmp_signed(">=", q, c64(0)),
                               b.icmp_signed("<", q, c64(wp.in_hw[s])))
                ps.append(b.mul(b.select(valid, q, c64(0)), c64(ls_sp[s])))
                oks.append(valid)
            pos.append(ps)
            ok.append(oks)
        base = b.mul(bi, c64(ls_b))
        srcs = [[None] * ns[1] for _ in range(ns[0])]
        for i in range(ns[0]):
            for j in range(ns[1]):
                valid = b.and_(ok[0][i], ok[1][j])
                off = b.select(valid, b.add(base, b.add(pos[0][i], pos[1][j])), c64(0))
                srcs[i][j] = (b.gep(lhs_ptr, [off], source_etype=T.storage_type(et)), valid)
        dst = b.gep(v_buf, [b.mul(tl, c64(wp.c))], source_etype=T.F32)
        with for_range(b, 0, wp.c, name="c") as c:
            coff = b.mul(c, c64(ls_c))
            d = [[b.select(valid, _load(b, p, coff, et), _f32(0)) for p, valid in row]
                 for row in srcs]
            v = _sandwich(b, bty, btx, d)
            for p in range(wp.points):
                b.store(v[p // ns[1]][p % ns[1]],
                        b.gep(dst, [b.add(c64(p * tb * wp.c), c)], source_etype=T.F32))
    b.ret_void()
    return fn


def _output_fn(pe, instr, wp, tb):
    """fn(M, out, ybuf, t0, nt): the output tiles of [t0, t0 + nt): whole tiles stored
    straight into the output, edge tiles through ybuf (their pixels inside copied)."""
    fn, b = _fn(pe, f"wino.output.{instr.name}", [T.PTR, T.PTR, T.PTR, T.I64, T.I64],
                (0, 1, 2))
    m_buf, out_ptr, y_buf, t0, nt = fn.args
    out = instr.shape
    dn = instr.attrs["dim_labels"]
    ost = strides_of(out)
    os_b, os_k = ost[dn.output_batch], ost[dn.output_feature]
    os_sp = [ost[d] for d in dn.output_spatial]
    (aty, _, _), (atx, _, _) = wp.matrices(0), wp.matrices(1)
    (my, mx), nx = wp.ms, wp.ns[1]
    ot = out.element_type

    def transform(src, dsts):
        """k loop: Y of the tile's column (src: M at tile t) stored at dsts[i][j] + k *
        stride."""
        with for_range(b, 0, wp.k, name="k") as k:
            x = [[b.load(b.gep(src, [b.add(c64((a * nx + q) * tb * wp.k), k)],
                               source_etype=T.F32), typ=T.F32) for q in range(nx)]
                 for a in range(wp.ns[0])]
            y = _sandwich(b, aty, atx, x)
            for i in range(my):
                for j in range(mx):
                    p, stride, ety = dsts[i][j]
                    _store(b, y[i][j], p, b.mul(k, c64(stride)), ety)

    with for_range(b, 0, nt, name="t") as tl:
        bi, ty, tx = _tile_coords(b, wp, b.add(t0, tl))
        src = b.gep(m_buf, [b.mul(tl, c64(wp.k))], source_etype=T.F32)
        oy = [b.add(b.mul(ty, c64(my)), c64(i)) for i in range(my)]
        ox = [b.add(b.mul(tx, c64(mx)), c64(j)) for j in range(mx)]
        base = b.mul(bi, c64(os_b))

        def at_out(i, j):
            return b.gep(out_ptr, [b.add(base, b.add(b.mul(oy[i], c64(os_sp[0])),
                                                     b.mul(ox[j], c64(os_sp[1]))))],
                         source_etype=T.storage_type(ot))

        whole = b.and_(b.icmp_signed("<=", oy[-1], c64(wp.out_hw[0] - 1)),
                       b.icmp_signed("<=", ox[-1], c64(wp.out_hw[1] - 1)))
        with b.if_else(whole) as (inside, edge):
            with inside:
                transform(src, [[(at_out(i, j), os_k, ot) for j in range(mx)]
                                 for i in range(my)])
            with edge:
                transform(src, [[(b.gep(y_buf, [c64((i * mx + j) * wp.k)],
                                        source_etype=T.F32), 1, None) for j in range(mx)]
                                for i in range(my)])
                for i in range(my):
                    for j in range(mx):
                        valid = b.and_(b.icmp_signed("<", oy[i], c64(wp.out_hw[0])),
                                       b.icmp_signed("<", ox[j], c64(wp.out_hw[1])))
                        with b.if_then(valid):
                            dst = at_out(i, j)
                            with for_range(b, 0, wp.k, name="copy") as k:
                                x = b.load(b.gep(y_buf, [b.add(c64((i * mx + j) * wp.k), k)],
                                                 source_etype=T.F32), typ=T.F32)
                                _store(b, x, dst, b.mul(k, c64(os_k)), ot)
    b.ret_void()
    return fn


def _epilogue_calls_fn(pe, instr, wp, epi):
    """fn(ectx, t0, nt): the epilogue on each output pixel of the tiles [t0, t0 + nt)."""
    fn, b = _fn(pe, f"wino.epilogue.{instr.name}", [T.PTR, T.I64, T.I64])
    ectx, t0, nt = fn.args
    plan = conv_plan(instr)
    coef, acc = {}, 1
    for kind, j, size in reversed(plan.rows):
        coef[(kind, j)] = acc
        acc *= size
    my, mx = wp.ms
    with for_range(b, 0, nt, name="t") as tl:
        bi, ty, tx = _tile_coords(b, wp, b.add(t0, tl))
        for i in range(my):
            for j in range(mx):
                oy = b.add(b.mul(ty, c64(my)), c64(i))
                ox = b.add(b.mul(tx, c64(mx)), c64(j))
                valid = b.and_(b.icmp_signed("<", oy, c64(wp.out_hw[0])),
                               b.icmp_signed("<", ox, c64(wp.out_hw[1])))
                row = b.add(b.mul(bi, c64(coef.get(("b", 0), 0))),
                            b.add(b.mul(oy, c64(coef.get(("s", 0), 0))),
                                  b.mul(ox, c64(coef.get(("s", 1), 0)))))
                with b.if_then(valid):
                    b.call(epi, [ectx, row, c64(0), c64(1), c64(wp.k)])
    b.ret_void()
    return fn
