"""The gemm kernel's arithmetic (gemm_kernel.py): the MR x NR micro-kernel on packed
slivers, the write-back of its tile into C (with alpha, beta and Cin), and the direct phase
of thin products, which reads A, B and C in place without packing."""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters.gemm_ir import GemmIR
from xlapy.backends.cpu.emitters.gemm_params import GV, I32, I64, MR, NV, PTR

from xlapy.backends.llvm.loops import c64, entry_alloca, for_range
from xlapy.backends.llvm.types import splat


class MicroKernel(GemmIR):
    # ---- the micro-kernel -----------------------------------------------------------------
    def micro(self, mr: int = MR):
        """micro(kc, ap, bp, tile): tile[MR][NR] = ap-sliver . bp-sliver; with mr < MR only
        the sliver's first mr rows (an edge panel of at most mr rows: the padding rows cost
        no arithmetic; the tile's other rows are left as they were)."""
        fn = self._fn("micro" if mr == MR else f"micro{mr}", [I64, PTR, PTR, PTR])
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
        for _ in range(mr * NV):
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
        for i in range(mr):
            a = self._splat(b, b.load(self._at(b, ap, b.add(arow, c64(i))), typ=self.fty))
            for v in range(NV):
                new.append(b.call(self.fmuladd, [a, bv[v], accs[i * NV + v]]))
        k.add_incoming(b.add(k, c64(1)), b.block)
        for p, n in zip(accs, new):
            p.add_incoming(n, b.block)
        b.branch(head)
        b.position_at_end(done)
        for i in range(mr):
            for v in range(NV):
                b.store(accs[i * NV + v], self._at(b, tile, c64(i * self.nr + v * self.vl)),
                        align=self.vl * self.esize)
        b.ret_void()
        return fn

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

    # ---- thin products, without packing -----------------------------------------------------
    def direct(self):
        """direct(ctx, start, end), for direct_call products (one row, or A's, B's and C's
        rows contiguous and C at most GV vectors wide or direct_small_rows high): units
        [start, end) of (RD rows of C, one block of GV vectors of columns), B and A read
        where they lie (packing, and micro-tiles of MR x NR, would cost many times such a
        product). B with contiguous rows: RD x GV vector accumulators take
        A[i, k] * B[k, block] for k = 0..K-1 (a partial block: its whole vectors together,
        then the rest through masked loads and stores; the rows left after the last whole RD
        one at a time); one row of A times B with contiguous columns (x . W^T): a vector dot
        product per column, summed as a tree; other strides: one element at a time. Sums
        over k run in order in each lane."""
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

        # units run column block by column block: the row groups of one block of B's
        # columns follow each other (a few rows and many columns: direct_small_rows), so
        # B's block is read from memory once
        row_groups = b.sdiv(b.add(a["M"], c64(rd - 1)), c64(rd))
        with for_range(b, start, end, name="unit") as unit:
            i0 = b.mul(b.srem(unit, row_groups), c64(rd))
            j0 = b.mul(b.sdiv(unit, row_groups), c64(jb))
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

