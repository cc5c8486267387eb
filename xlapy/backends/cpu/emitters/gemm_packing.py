"""The gemm kernel's packing routines (gemm_kernel.py): B into KC x NR slivers and A into
MR x KC slivers, copied with vectors (VL x VL transposes in registers) where the source's
strides allow, the edges zero-padded."""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters.gemm_ir import GemmIR
from xlapy.backends.cpu.emitters.gemm_params import I32, I64, MR, NV, PTR
from xlapy.backends.llvm.loops import c64, for_range


class Packing(GemmIR):
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
                    s = self._src_at(b, src, b.mul(k, rs))
                    with for_range(b, 0, whole_end, nr, name="jp") as jp:
                        d = self._at(b, dst, b.add(b.mul(jp, kc), b.mul(k, c64(nr))))
                        for v in range(NV):
                            x = self._src_vec(b, self._src_at(b, s, b.add(jp, c64(v * self.vl))))
                            b.store(x, self._at(b, d, c64(v * self.vl)), align=1)
            with transposed:
                # B stored transposed: each column is read along k
                with for_range(b, 0, whole_end, nr, name="jp") as jp:
                    cols = [self._src_at(b, src, b.mul(b.add(jp, c64(j)), cs))
                            for j in range(nr)]
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
                vecs = [self._src_vec(b, self._src_at(b, streams[g + i], kb))
                        for i in range(lanes)] + [zero] * (vl - lanes)
                for k, x in enumerate(self._transpose(b, vecs)):
                    at = b.add(b.mul(b.add(kb, c64(k)), c64(width)), c64(g))
                    self._store_lanes(b, x, self._at(b, out, at), lanes)
        with for_range(b, kfull, kc, name="k") as k:
            at = b.mul(k, step)
            d = b.mul(k, c64(width))
            vals = [self._src_scalar(b, self._src_at(b, p, at)) for p in streams]
            for j, x in enumerate(vals):
                b.store(x, self._at(b, out, b.add(d, c64(j))))

    def _interleave_edge(self, b, src, first, limit, lane_stride, step, kc, width, out):
        """The same for the last, partial sliver: out[k*width + j] =
        src[(first + j)*lane_stride + k*step] for j < limit, zero for limit <= j < width."""
        with for_range(b, 0, width, name="j") as j:
            inside = b.icmp_signed("<", j, limit)
            base = b.mul(b.select(inside, b.add(first, j), c64(0)), lane_stride)
            with for_range(b, 0, kc, name="k") as k:
                x = self._src_scalar(b, self._src_at(b, src, b.add(b.mul(k, step), base)))
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
                                s_k = self._src_at(b, src, b.add(ip, b.mul(k, cs)))
                                d_k = self._at(b, out, b.mul(k, c64(MR)))
                                for g, lanes in self._groups(MR):
                                    x = self._load_lanes(b, self._src_at(b, s_k, c64(g)),
                                                         lanes)
                                    self._store_lanes(b, x, self._at(b, d_k, c64(g)), lanes)
                        with edge:
                            with for_range(b, 0, kc, name="k") as k:
                                base = b.mul(k, cs)
                                with for_range(b, 0, MR, name="i") as i:
                                    row = b.add(ip, i)
                                    inside = b.icmp_signed("<", row, mc)
                                    at = b.add(base, b.select(inside, row, c64(0)))
                                    x = self._src_scalar(b, self._src_at(b, src, at))
                                    x = b.select(inside, x, ir.Constant(self.fty, 0.0))
                                    b.store(x, self._at(b, out, b.add(b.mul(k, c64(MR)), i)))
                with by_row:
                    with b.if_else(full) as (whole, edge):
                        with whole:
                            rows = [self._src_at(b, src, b.mul(b.add(ip, c64(i)), rs))
                                    for i in range(MR)]
                            self._interleave(b, rows, cs, kc, MR, out)
                        with edge:
                            self._interleave_edge(b, src, ip, b.sub(mc, ip), rs, cs, kc, MR,
                                                  out)
        b.ret_void()
        return fn

