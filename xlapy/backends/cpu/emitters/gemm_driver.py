"""The gemm kernel's driver (gemm_kernel.py): the entry point xlapy_gemm_<t>(args), which
picks the direct phase or the packed one, and the packed phases on the thread pool (A packed
once and C split by columns, or B packed once and C split by rows), looping over the
blocks of C, depth and slivers around the micro-kernel. The split phase runs up to
UNITS_PER_CHUNK units per chunk, claimed one at a time, each in a free scratch slice of the
`chunks` slices (_take_slice): a thread descheduled by the OS holds one small unit, not a
thread's whole share of C."""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters.gemm_micro import MicroKernel
from xlapy.backends.cpu.emitters.gemm_packing import Packing
from xlapy.backends.cpu.emitters.gemm_params import (DIRECT_DEPTH, EDGE_ROWS, EPILOGUE_TYPE,
                                                      GV, I32, I64, KC, MC, MR, NC, PTR, SLOT,
                                                      UNITS_PER_CHUNK, VOID, a_slice_bytes,
                                                      b_slice_bytes)
from xlapy.backends.cpu.passes.dot_plan import SHORT_DEPTH, short_rows
from xlapy.backends.cpu.runtime import threadpool
from xlapy.backends.llvm.loops import c64, for_range


class Gemm(Packing, MicroKernel):
    """The whole kernel for one element type, built into module m by build()."""

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

    @staticmethod
    def _take_slice(b, ctx, chunks):
        """Claims a free scratch slice (a clear bit below `chunks` of the `slices` mask) for
        the unit about to run; spins while all are taken (only when the pool has more
        threads than the call has slices: every running unit holds one)."""
        word = b.gep(ctx, [c64(SLOT["slices"])], source_etype=I64)
        fn = b.function
        look, claim, got = (fn.append_basic_block(n) for n in ("slice.look", "slice.claim",
                                                               "slice.got"))
        b.branch(look)
        b.position_at_end(look)
        w = b.load_atomic(word, "seq_cst", 8, typ=I64)
        free = b.cttz(b.xor(w, c64(-1)), ir.Constant(ir.IntType(1), 0))
        limit = b.select(b.icmp_signed("<", chunks, c64(1)), c64(1), chunks)
        b.cbranch(b.icmp_signed("<", free, limit), claim, look)
        b.position_at_end(claim)
        res = b.cmpxchg(word, w, b.or_(w, b.shl(c64(1), free)), "seq_cst", "seq_cst")
        b.cbranch(b.extract_value(res, 1), got, look)
        b.position_at_end(got)
        return free

    @staticmethod
    def _free_slice(b, ctx, index):
        word = b.gep(ctx, [c64(SLOT["slices"])], source_etype=I64)
        b.atomic_rmw("and", word, b.xor(b.shl(c64(1), index), c64(-1)), "seq_cst")

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
                args = [kc, self._at(b, ap, b.mul(ir_, kc)), bsliver, tile]
                self._micro_call(b, micro, rows, args)
                row, col = b.add(row0, ir_), b.add(col0, jr)
                cptr = self._at(b, a["C"], b.add(b.mul(row, a["ldc"]), b.mul(col, a["csc"])))
                cin = self._at(b, a["Cin"], b.add(b.mul(row, a["ldcin"]),
                                                  b.mul(col, a["cscin"])))
                b.call(store, [tile, rows, cols, cptr, a["ldc"], a["csc"], cin, a["ldcin"],
                               a["cscin"], a["alpha"], a["beta"], mode])
                with b.if_then(b.and_(last, has_epi)):
                    b.call(a["epi"], [a["epi_ctx"], row, col, rows, cols])

    def _micro_call(self, b, micro, rows, args) -> None:
        """The micro-kernel of the fewest rows (EDGE_ROWS, then MR) covering a panel of
        `rows` rows: an edge panel's padding rows cost no arithmetic (a 50-row product, the
        CNN's dense layer, did 60 rows' worth with one kernel of MR = 12)."""
        fns = [(r, micro[r]) for r in EDGE_ROWS] + [(MR, micro[MR])]

        def pick(i):
            r, fn = fns[i]
            if i == len(fns) - 1:
                b.call(fn, args)
                return
            with b.if_else(b.icmp_signed("<=", rows, c64(r))) as (small, rest):
                with small:
                    b.call(fn, args)
                with rest:
                    pick(i + 1)
        pick(0)

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
                src = self._src_at(b, a["B"], b.add(b.mul(pc, a["rsb"]),
                                                    b.mul(jc, a["csb"])))
                dst = self._at(b, a["bshared"], b.add(b.mul(pc, a["npad"]), b.mul(jc, kc)))
                b.call(pack_b, [src, a["rsb"], a["csb"], kc, nc, dst])
        b.ret_void()

        chunk_rows, b, a, start, end = self._phase("chunk_rows")
        M, N, K = a["M"], a["N"], a["K"]
        tile, has_epi, first_mode = self._chunk_start(b, a)
        span = self._chunk_span(b, M, a["units"], MR)
        own = self._take_slice(b, chunk_rows.args[0], a["chunks"])
        ap = b.inttoptr(b.add(a["aslices"], b.mul(own, c64(a_slice_bytes(self.t)))), PTR)
        with for_range(b, start, end, name="chunk") as ch:
            r0, r1 = span(ch)
            # row blocks outside the depth blocks: an MC-row block of C stays in cache while
            # every depth block adds to it (B, packed whole, is read from cache each time)
            with for_range(b, r0, r1, MC, name="ic") as ic:
                mc = self._min(b, b.sub(r1, ic), c64(MC))
                with for_range(b, 0, K, a["kcb"], name="pc") as pc:
                    kc = self._min(b, b.sub(K, pc), a["kcb"])
                    mode = b.select(b.icmp_signed("==", pc, c64(0)), first_mode,
                                    ir.Constant(I32, 2))
                    last = b.icmp_signed(">=", b.add(pc, kc), K)
                    bblock = self._at(b, a["bshared"], b.mul(pc, a["npad"]))
                    asrc = self._src_at(b, a["A"], b.add(b.mul(ic, a["rsa"]),
                                                         b.mul(pc, a["csa"])))
                    b.call(pack_a, [asrc, a["rsa"], a["csa"], mc, kc, ap])
                    self._tiles(b, a, micro, store, tile, ap, bblock, ic, c64(0), mc, N, kc,
                                mode, last, has_epi)
        self._free_slice(b, chunk_rows.args[0], own)
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
                                 "ldc", "csc", "chunks", "units")}
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

    def build(self):
        direct = self.direct()
        micro = {r: self.micro(r) for r in EDGE_ROWS + (MR,)}
        pack_a, pack_b, store = self.pack_a(), self.pack_b(), self.store_tile()
        # phase 1: pack all of A, panel by panel: [pc block][panel][k][MR]
        pack_all, b, a, start, end = self._phase("pack_all")
        with for_range(b, start, end, name="panel") as p:
            row = b.mul(p, c64(MR))
            mc = self._min(b, b.sub(a["M"], row), c64(MR))
            with for_range(b, 0, a["K"], a["kcb"], name="pc") as pc:
                kc = self._min(b, b.sub(a["K"], pc), a["kcb"])
                src = self._src_at(b, a["A"], b.add(b.mul(row, a["rsa"]),
                                                    b.mul(pc, a["csa"])))
                dst = self._at(b, a["apack"], b.add(b.mul(pc, a["mpad"]), b.mul(row, kc)))
                b.call(pack_a, [src, a["rsa"], a["csa"], mc, kc, dst])
        b.ret_void()

        # phase 2: one chunk = a range of C's columns; it packs its own B slivers
        chunk, b, a, start, end = self._phase("chunk")
        M, N, K = a["M"], a["N"], a["K"]
        tile, has_epi, first_mode = self._chunk_start(b, a)
        span = self._chunk_span(b, N, a["units"], self.nr)
        own = self._take_slice(b, chunk.args[0], a["chunks"])
        bp = b.gep(a["bpack"], [b.mul(own, c64(b_slice_bytes(self.t, self.bits)))],
                   source_etype=ir.IntType(8))
        with for_range(b, start, end, name="chunk") as ch:
            n0, n1 = span(ch)
            with for_range(b, n0, n1, NC, name="jc") as jc:
                nc = self._min(b, b.sub(n1, jc), c64(NC))
                with for_range(b, 0, K, a["kcb"], name="pc") as pc:
                    kc = self._min(b, b.sub(K, pc), a["kcb"])
                    bsrc = self._src_at(b, a["B"], b.add(b.mul(pc, a["rsb"]),
                                                         b.mul(jc, a["csb"])))
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
        self._free_slice(b, chunk.args[0], own)
        b.ret_void()

        pack_all_b, chunk_rows = self._row_split(micro, pack_a, pack_b, store)

        pool = threadpool.declare(self.m)
        entry = ir.Function(self.m, ir.FunctionType(VOID, [PTR]), f"xlapy_gemm_{self.src_t}")
        b = ir.IRBuilder(entry.append_basic_block("entry"))
        ctx = entry.args[0]
        chunks, m = (b.load(b.gep(ctx, [c64(SLOT[name])], source_etype=I64), typ=I64)
                     for name in ("chunks", "M"))
        panels = b.sdiv(b.add(m, c64(MR - 1)), c64(MR))
        n = b.load(b.gep(ctx, [c64(SLOT["N"])], source_etype=I64), typ=I64)

        def units_slot():
            return b.load(b.gep(ctx, [c64(SLOT["units"])], source_etype=I64), typ=I64)

        def set_units(total, unit):
            """C split in units of whole `unit`s of `total`, up to UNITS_PER_CHUNK per chunk."""
            most = b.sdiv(b.add(total, c64(unit - 1)), c64(unit))
            units = self._min(b, most, b.mul(chunks, c64(UNITS_PER_CHUNK)))
            b.store(units, b.gep(ctx, [c64(SLOT["units"])], source_etype=I64))

        b.store(c64(0), b.gep(ctx, [c64(SLOT["slices"])], source_etype=I64))
        k = b.load(b.gep(ctx, [c64(SLOT["K"])], source_etype=I64), typ=I64)
        rows_contig = b.and_(b.and_(*(b.icmp_signed("==", b.load(b.gep(
            ctx, [c64(SLOT[name])], source_etype=I64), typ=I64), c64(1))
            for name in ("csb", "csc"))), b.icmp_signed("==", b.load(b.gep(
                ctx, [c64(SLOT["cscin"])], source_etype=I64), typ=I64), c64(1)))
        short = b.and_(b.icmp_signed("<=", k, c64(SHORT_DEPTH)),
                       b.icmp_signed("<=", m, c64(short_rows(self.bits))))   # dot_plan
        # a thin C (at most GV vectors wide) with A read down its columns (csa != 1, B's
        # and C's rows contiguous): direct too when one depth block deep, the block of B a
        # row group reads staying in cache (measured: gemm_params.direct_call)
        a_rows = b.icmp_signed("==", b.load(b.gep(ctx, [c64(SLOT["csa"])], source_etype=I64),
                                            typ=I64), c64(1))
        narrow = b.icmp_signed("<=", n, c64(GV * self.vl))
        thin = b.and_(rows_contig, b.or_(
            b.and_(a_rows, b.or_(b.or_(narrow, b.icmp_signed("<=", m, c64(2 * self.rd))),
                                 short)),   # direct_small_rows
            b.and_(narrow, b.icmp_signed("<=", k, c64(KC)))))
        direct_blk, packed = entry.append_basic_block("direct"), entry.append_basic_block("packed")
        go_direct = b.or_(b.icmp_signed("==", m, c64(1)), thin)   # direct_call
        shallow = b.icmp_signed("<=", k, c64(DIRECT_DEPTH))   # B's and C's rows contiguous
        for name in ("csb", "csc", "cscin"):
            shallow = b.and_(shallow, b.icmp_signed("==", b.load(b.gep(
                ctx, [c64(SLOT[name])], source_etype=I64), typ=I64), c64(1)))
        go_direct = b.or_(go_direct, shallow)
        if self.src_t != self.t:   # (bf16 / f16: widened as they are packed)
            go_direct = ir.Constant(ir.IntType(1), 0)
        b.cbranch(go_direct, direct_blk, packed)
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
                        set_units(m, MR)
                        b.call(pool, [chunk_rows, ctx, units_slot(), c64(1)])
                    with by_columns:
                        grain = b.sdiv(b.add(panels, c64(4 * 2 - 1)), c64(4 * 2))
                        b.call(pool, [pack_all, ctx, panels, grain])
                        set_units(n, self.nr)
                        b.call(pool, [chunk, ctx, units_slot(), c64(1)])
            with ser:
                b.store(c64(1), b.gep(ctx, [c64(SLOT["units"])], source_etype=I64))
                # one thread: the same choice (the pass that packs an operand whole before
                # any arithmetic reads the smaller one; A of a tall product stays in blocks)
                with b.if_else(b.icmp_signed(">", m, n)) as (by_rows, by_columns):
                    with by_rows:
                        kblocks = b.sdiv(b.add(k, c64(KC - 1)), c64(KC))
                        nblocks = b.sdiv(b.add(n, c64(NC - 1)), c64(NC))
                        b.call(pack_all_b, [ctx, c64(0), b.mul(kblocks, nblocks)])
                        b.call(chunk_rows, [ctx, c64(0), c64(1)])
                    with by_columns:
                        b.call(pack_all, [ctx, c64(0), panels])
                        b.call(chunk, [ctx, c64(0), c64(1)])
        b.ret_void()

