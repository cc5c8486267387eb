"""Products with few output columns (N <= 16) on whole vectors: the narrow gemm kernels.

    void xlapy_gemm_narrow{N}{form}_{t}(ptr args)     args: SLOT's i64 slots

compute C = alpha * A.B + beta * Cin (beta == 0: Cin is not read; Cin is C or laid out like
it) for C M x N, A M x K and B K x N given by element strides. An
outer-product kernel (OpenBLAS's, xlapy's own gemm) puts C's N columns on a vector's lanes
and leaves 16 - N of 16 lanes idle (6 of 16 at N = 10). These kernels put the lanes along
K or along M instead:

  form "a" (A's rows contiguous: C[i, n] = A[i, :] . B[:, n]): B^T is packed once (N rows of
      K, in the scratch `ws`; read in place when B is column-major), then for each block of
      R rows R * N accumulators take one full-lane FMA per 16 k (a vector of A's row times
      one of B^T's); at the block's end the R * N accumulators are reduced 16 at a time by
      a transpose-add tree (4 levels of shuffles and adds), which leaves their sums in one
      vector, in C's row-major order: stored as they are when C's rows are contiguous.
      Each step also prefetches (to L2) a line of each row four blocks ahead: A is mostly
      a batch of activations streaming from memory, and the hardware's prefetchers alone
      left the tutorial's 100 x 784 x 10 product at 30 us when its batches came from an
      11 MB set (hot in cache: 17); prefetched, 21 (OpenBLAS: 28; /tmp script cycling 50
      batches through compiled programs; one and two blocks ahead: 26, six: 21-24).
  form "b" (A's columns contiguous, as x^T in a weight gradient x^T . g): for each block of
      V vectors of C's rows, N * V accumulators hold C^T's block, each FMA a vector of A's
      column k times B[k, n] broadcast; at the end each vector's N accumulators are
      transposed in registers and stored as rows of C (or stored as they are when C is
      column-major).

Either way about M * N * K / 16 FMAs (f32) and no lane is idle but in K's or M's last vector
(masked loads; the padding lanes are zeros, so a NaN or Inf only reaches the sums it is
part of). N is a compile-time parameter (the accumulators are registers); M, K, the strides,
alpha and beta are run-time ones, so each (t, N, form) is a fixed routine built once per
machine (codegen.cached_object, like gemm_kernel.py), when a program first calls it.
Measured against OpenBLAS in benchmarks/narrow_gemm.py; dot_plan.narrow_form says which
products run here (gemm.py emits the calls).
"""

from __future__ import annotations

import functools

from llvmlite import ir

from xlapy.backends.cpu.emitters import gemm_narrow_symbols as S
from xlapy.backends.cpu.emitters.kernel_abi import add_string_attribute
from xlapy.backends.cpu.target import vector_bits
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.loops import c64, for_range
from xlapy.backends.llvm.types import splat

I1, I32, I64, PTR, VOID = ir.IntType(1), ir.IntType(32), T.I64, ir.PointerType(), ir.VoidType()
ARGS = ("M", "K", "A", "rsa", "csa", "B", "rsb", "csb", "C", "rsc", "csc", "Cin", "ws",
        "alpha", "beta")
SLOT = {name: k for k, name in enumerate(ARGS)}
# (the symbols and their registration with the loader: gemm_narrow_symbols.py)
MAX_N, TYPES, FORMS, symbol = S.MAX_N, S.TYPES, S.FORMS, S.symbol


def lanes(t: str, bits: int) -> int:
    return bits // (32 if t == "f32" else 64)


def _registers(bits: int) -> int:
    return 32 if bits >= 512 else 16


def block_rows(t: str, n: int, bits: int) -> int:
    """Form a: rows per block, R * N accumulators and R vectors of A in the registers."""
    return max(1, min(8, (_registers(bits) - 2) // (n + 1)))


def block_vectors(t: str, n: int, bits: int) -> int:
    """Form b: vectors of C's rows per block (N * V accumulators, V of A, a broadcast)."""
    return max(1, min(4, (_registers(bits) - 2) // (n + 1)))


def workspace_bytes(t: str, n: int, k: int, bits: int) -> int:
    """Scratch of a form-a call: B^T packed, N rows of K rounded up to whole vectors."""
    vl = lanes(t, bits)
    return n * (-(-k // vl) * vl) * (4 if t == "f32" else 8) + 64


class _Kernel:
    def __init__(self, m: ir.Module, t: str, n: int, form: str, bits: int):
        self.m, self.t, self.n, self.form, self.bits = m, t, n, form, bits
        self.vl = lanes(t, bits)
        self.fty = ir.FloatType() if t == "f32" else ir.DoubleType()
        self.vty = ir.VectorType(self.fty, self.vl)
        self.mty = ir.VectorType(I1, self.vl)
        self.zero = ir.Constant(self.vty, [0.0] * self.vl)
        self.fma = ir.Function(m, ir.FunctionType(self.vty, [self.vty] * 3),
                               f"llvm.fmuladd.v{self.vl}{t}")
        self.mload = ir.Function(m, ir.FunctionType(self.vty, [PTR, I32, self.mty, self.vty]),
                                 f"llvm.masked.load.v{self.vl}{t}.p0")
        self.mstore = ir.Function(m, ir.FunctionType(VOID, [self.vty, PTR, I32, self.mty]),
                                  f"llvm.masked.store.v{self.vl}{t}.p0")
        self.iota = ir.Constant(ir.VectorType(I64, self.vl), list(range(self.vl)))
        self.prefetch = ir.Function(m, ir.FunctionType(VOID, [PTR, I32, I32, I32]),
                                    "llvm.prefetch.p0")

    # ---- helpers --------------------------------------------------------------------------
    def _fn(self, name, args, internal=True):
        fn = ir.Function(self.m, ir.FunctionType(VOID, args), name)
        if internal:
            fn.linkage = "internal"
        fn.attributes.add("nounwind")
        add_string_attribute(fn, f'"min-legal-vector-width"="{self.bits}"')
        add_string_attribute(fn, f'"prefer-vector-width"="{self.bits}"')
        return fn

    def at(self, b, p, i):
        return b.gep(p, [i], source_etype=self.fty)

    def mask(self, b, count):
        """Lanes [0, count) (an i64 value) set."""
        return b.icmp_signed("<", self.iota, splat(b, count, self.vl))

    def const_mask(self, count):
        return ir.Constant(self.mty, [1 if j < count else 0 for j in range(self.vl)])

    def load(self, b, p, mask=None):
        if mask is None:
            return b.load(p, typ=self.vty, align=1)
        return b.call(self.mload, [p, ir.Constant(I32, 1), mask, self.zero])

    def store(self, b, x, p, mask=None):
        if mask is None:
            b.store(x, p, align=1)
        else:
            b.call(self.mstore, [x, p, ir.Constant(I32, 1), mask])

    def loop(self, b, start, stop, step, values, body, name):
        """for (i = start; i < stop; i += step) values = body(i, values); returns the final
        values (a list of loop-carried values)."""
        pre = b.block
        head = b.function.append_basic_block(f"{name}.head")
        blk = b.function.append_basic_block(f"{name}.body")
        done = b.function.append_basic_block(f"{name}.done")
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(I64, name=name)
        i.add_incoming(start, pre)
        phis = []
        for v in values:
            p = b.phi(v.type)
            p.add_incoming(v, pre)
            phis.append(p)
        b.cbranch(b.icmp_signed("<", i, stop), blk, done)
        b.position_at_end(blk)
        out = body(i, phis)
        nxt = b.add(i, step if not isinstance(step, int) else c64(step), flags=["nsw"])
        i.add_incoming(nxt, b.block)
        for p, v in zip(phis, out):
            p.add_incoming(v, b.block)
        b.branch(head)
        b.position_at_end(done)
        return phis

    def when(self, b, cond, values, body, name):
        """values = body(values) if cond; returns the merged values."""
        pre = b.block
        then = b.function.append_basic_block(f"{name}.then")
        done = b.function.append_basic_block(f"{name}.done")
        b.cbranch(cond, then, done)
        b.position_at_end(then)
        out = body(values)
        end = b.block
        b.branch(done)
        b.position_at_end(done)
        merged = []
        for v, w in zip(values, out):
            p = b.phi(v.type)
            p.add_incoming(v, pre)
            p.add_incoming(w, end)
            merged.append(p)
        return merged

    def shuffle(self, b, x, y, idx):
        return b.shuffle_vector(x, y, ir.Constant(ir.VectorType(I32, self.vl), idx))

    def reduce(self, b, vecs):
        """One vector whose lane j is the sum of vecs[j]'s lanes (len(vecs) <= VL; missing
        lanes 0), by a tree of shuffles and adds: at each level two vectors that hold s
        sums of w lanes each become one of 2s sums of w/2 lanes."""
        vl = self.vl
        level = [(v, 1) for v in vecs] + [(None, 1)] * (vl - len(vecs))
        w = vl
        while w > 1:
            h, nxt = w // 2, []
            for (x, s), (y, _) in zip(level[0::2], level[1::2]):
                if x is None and y is None:
                    nxt.append((None, 2 * s))
                    continue
                x = self.zero if x is None else x
                y = self.zero if y is None else y
                lo, hi = [], []
                for slot in range(2 * s):
                    base = slot * w if slot < s else vl + (slot - s) * w
                    lo += [base + j for j in range(h)]
                    hi += [base + h + j for j in range(h)]
                nxt.append((b.fadd(self.shuffle(b, x, y, lo), self.shuffle(b, x, y, hi)),
                            2 * s))
            level, w = nxt, h
        return level[0][0] if level[0][0] is not None else self.zero

    def transpose(self, b, rows):
        """rows (at most VL vectors; missing ones 0) transposed: VL vectors, vector j holding
        lane j of each row."""
        vl = self.vl
        r = list(rows) + [self.zero] * (vl - len(rows))
        h = vl // 2
        while h >= 1:
            out = list(r)
            for i in range(vl):
                if i & h:
                    continue
                x, y = r[i], r[i + h]
                # out_i: x's lanes where (j & h) == 0, y's lanes j - h where set
                out[i] = self.shuffle(b, x, y, [j if not j & h else vl + j - h
                                                for j in range(vl)])
                out[i + h] = self.shuffle(b, x, y, [j + h if not j & h else vl + j
                                                    for j in range(vl)])
            r, h = out, h // 2
        return r

    # ---- the entry point ------------------------------------------------------------------
    def build(self):
        fn = self._fn(symbol(self.t, self.n, self.form), [PTR], internal=False)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        args = fn.args[0]
        v = {}
        for name in ARGS:
            x = b.load(b.gep(args, [c64(SLOT[name])], source_etype=I64), typ=I64)
            if name in ("A", "B", "C", "Cin", "ws"):
                x = b.inttoptr(x, PTR)
            elif name in ("alpha", "beta"):
                x = b.bitcast(x, ir.DoubleType())
                if self.t == "f32":
                    x = b.fptrunc(x, self.fty)
            v[name] = x
        self.has_beta = b.fcmp_ordered("!=", v["beta"], ir.Constant(self.fty, 0.0))
        (self._form_a if self.form == "a" else self._form_b)(b, v)
        b.ret_void()

    # ---- form a ---------------------------------------------------------------------------
    def _pack(self, b, v):
        """B^T into ws: N rows of kp (K rounded up to vectors); returns (pointer, row
        stride)."""
        vl, n = self.vl, self.n
        K, B, rsb, csb, ws = v["K"], v["B"], v["rsb"], v["csb"], v["ws"]
        kp = b.mul(b.sdiv(b.add(K, c64(vl - 1)), c64(vl)), c64(vl))
        kfull = b.mul(b.sdiv(K, c64(vl)), c64(vl))
        # B's rows contiguous: VL rows at a time, transposed in registers
        vec = b.icmp_signed("==", csb, c64(1))
        kv = b.select(vec, kfull, c64(0))
        def block(k0, _):
            for c0 in range(0, n, vl):   # (f64: more columns than lanes)
                cmask = self.const_mask(min(vl, n - c0))
                rows = [self.load(b, self.at(b, B, b.add(b.mul(b.add(k0, c64(r)), rsb),
                                                          c64(c0))), cmask)
                        for r in range(vl)]
                cols = self.transpose(b, rows)
                for j in range(c0, min(n, c0 + vl)):
                    self.store(b, cols[j - c0], self.at(b, ws, b.add(b.mul(c64(j), kp), k0)))
            return []
        self.loop(b, c64(0), kv, vl, [], block, "pack")
        with for_range(b, kv, K, name="pack.k") as k:
            for j in range(n):
                x = b.load(self.at(b, B, b.add(b.mul(k, rsb), b.mul(c64(j), csb))),
                           typ=self.fty)
                b.store(x, self.at(b, ws, b.add(b.mul(c64(j), kp), k)))
        return ws, kp

    def _form_a(self, b, v):
        vl, n = self.vl, self.n
        M, K, A, rsa = v["M"], v["K"], v["A"], v["rsa"]
        direct = b.icmp_signed("==", v["rsb"], c64(1))
        pre = b.block
        pack_bb = b.function.append_basic_block("pack")
        go = b.function.append_basic_block("go")
        b.cbranch(direct, go, pack_bb)
        b.position_at_end(pack_bb)
        ws, kp = self._pack(b, v)
        packed = b.block
        b.branch(go)
        b.position_at_end(go)
        bt = b.phi(PTR)
        bt.add_incoming(v["B"], pre)
        bt.add_incoming(ws, packed)
        ldbt = b.phi(I64)
        ldbt.add_incoming(v["csb"], pre)
        ldbt.add_incoming(kp, packed)
        kfull = b.mul(b.sdiv(K, c64(vl)), c64(vl))
        krem = b.sub(K, kfull)
        tail = self.mask(b, krem)
        C, rsc, csc = v["C"], v["rsc"], v["csc"]
        contiguous = b.and_(b.icmp_signed("==", csc, c64(1)),
                            b.icmp_signed("==", rsc, c64(n)))
        writeback = self._writeback_a()
        R = block_rows(self.t, n, self.bits)

        def rows_block(r_count, i0):
            arow = [self.at(b, A, b.mul(b.add(i0, c64(r)), rsa)) for r in range(r_count)]
            brow = [self.at(b, bt, b.mul(c64(j), ldbt)) for j in range(n)]
            # the next block's rows, a line of each per step: A usually streams from memory
            # (a batch of activations), and the block's FMAs hide the next one's loads
            anext = [self.at(b, A, b.mul(b.add(i0, c64(4 * r_count + r)), rsa))
                     for r in range(r_count)]

            def step(k, accs, mask=None):
                a = [self.load(b, self.at(b, p, k), mask) for p in arow]
                if mask is None:
                    for p in anext:
                        b.call(self.prefetch, [self.at(b, p, k), ir.Constant(I32, 0),
                                               ir.Constant(I32, 2), ir.Constant(I32, 1)])
                out = list(accs)
                for j in range(n):
                    bv = self.load(b, self.at(b, brow[j], k), mask)
                    for r in range(r_count):
                        out[r * n + j] = b.call(self.fma, [a[r], bv, out[r * n + j]])
                return out
            accs = self.loop(b, c64(0), kfull, vl, [self.zero] * (r_count * n),
                             lambda k, acc: step(k, acc), "k")
            accs = self.when(b, b.icmp_signed(">", krem, c64(0)), accs,
                             lambda acc: step(kfull, acc, tail), "ktail")
            sums = [self.reduce(b, accs[g:g + vl]) for g in range(0, r_count * n, vl)]
            # C's rows contiguous: the block is r_count * N consecutive elements
            fast = b.function.append_basic_block("wb.fast")
            slow = b.function.append_basic_block("wb.slow")
            done = b.function.append_basic_block("wb.done")
            b.cbranch(contiguous, fast, slow)
            b.position_at_end(fast)
            base = self.at(b, C, b.mul(i0, rsc))
            cbase = self.at(b, v["Cin"], b.mul(i0, rsc))
            for g, s in zip(range(0, r_count * n, vl), sums):
                cnt = min(vl, r_count * n - g)
                mask = None if cnt == vl else self.const_mask(cnt)
                p = self.at(b, base, c64(g))
                s = b.fmul(s, splat(b, v["alpha"], vl))
                s = self._plus_beta(b, s, self.at(b, cbase, c64(g)), mask, v)
                self.store(b, s, p, mask)
            b.branch(done)
            b.position_at_end(slow)
            buf = self._stack_buffer(b, -(-(r_count * n) // vl))
            for g, s in zip(range(0, r_count * n, vl), sums):
                b.store(s, self.at(b, buf, c64(g)), align=1)
            b.call(writeback, [buf, c64(r_count), self.at(b, C, b.mul(i0, rsc)),
                               self.at(b, v["Cin"], b.mul(i0, rsc)), rsc, csc, v["alpha"],
                               v["beta"]])
            b.branch(done)
            b.position_at_end(done)

        mfull = b.mul(b.sdiv(M, c64(R)), c64(R))
        self.loop(b, c64(0), mfull, R, [], lambda i, _: rows_block(R, i) or [], "rows")
        if R > 1:
            self.loop(b, mfull, M, 1, [], lambda i, _: rows_block(1, i) or [], "row")

    def _stack_buffer(self, b, vectors):
        entry = b.function.entry_basic_block
        saved = b.block
        b.position_before(entry.instructions[0])
        buf = b.alloca(self.vty, size=c64(vectors))
        b.position_at_end(saved)
        return buf

    def _plus_beta(self, b, s, p, mask, v):
        """s + beta * C at p (C is not read when beta is 0)."""
        pre = b.block
        add = b.function.append_basic_block("beta")
        done = b.function.append_basic_block("beta.done")
        b.cbranch(self.has_beta, add, done)
        b.position_at_end(add)
        t = b.call(self.fma, [splat(b, v["beta"], self.vl), self.load(b, p, mask), s])
        end = b.block
        b.branch(done)
        b.position_at_end(done)
        out = b.phi(self.vty)
        out.add_incoming(s, pre)
        out.add_incoming(t, end)
        return out

    def _writeback_a(self):
        """C[r, j] = alpha * buf[r * N + j] + beta * C[r, j] for any strides."""
        fn = self._fn(f"{symbol(self.t, self.n, self.form)}.writeback",
                      [PTR, I64, PTR, PTR, I64, I64, self.fty, self.fty])
        fn.attributes.add("noinline")
        buf, rows, C, Cin, rsc, csc, alpha, beta = fn.args
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        nz = b.fcmp_ordered("!=", beta, ir.Constant(self.fty, 0.0))
        with for_range(b, 0, rows, name="r") as r:
            for j in range(self.n):
                x = b.load(self.at(b, buf, b.add(b.mul(r, c64(self.n)), c64(j))), typ=self.fty)
                off = b.add(b.mul(r, rsc), b.mul(c64(j), csc))
                p = self.at(b, C, off)
                x = b.fmul(x, alpha)
                with b.if_then(nz):
                    old = b.load(self.at(b, Cin, off), typ=self.fty)
                    b.store(b.call(self._scalar_fma(), [beta, old, x]), p)
                with b.if_then(b.not_(nz)):
                    b.store(x, p)
        b.ret_void()
        return fn

    def _scalar_fma(self):
        name = f"llvm.fmuladd.{self.t}"
        return self.m.globals.get(name) or ir.Function(
            self.m, ir.FunctionType(self.fty, [self.fty] * 3), name)

    # ---- form b ---------------------------------------------------------------------------
    def _form_b(self, b, v):
        vl, n = self.vl, self.n
        M, K, A, csa = v["M"], v["K"], v["A"], v["csa"]
        B, rsb, csb = v["B"], v["rsb"], v["csb"]
        C, rsc, csc = v["C"], v["rsc"], v["csc"]
        col_major = b.icmp_signed("==", rsc, c64(1))
        alpha = splat(b, v["alpha"], vl)
        V = block_vectors(self.t, n, self.bits)

        def block(nv, m0, rem):
            """nv vectors of rows from m0; rem: None (all lanes), or the rows left (< VL,
            nv == 1)."""
            mask = None if rem is None else self.mask(b, rem)

            def step(k, accs):
                col = self.at(b, A, b.add(b.mul(k, csa), m0))
                x = [self.load(b, self.at(b, col, c64(u * vl)), mask) for u in range(nv)]
                brow = self.at(b, B, b.mul(k, rsb))
                out = list(accs)
                for j in range(n):
                    g = splat(b, b.load(self.at(b, brow, b.mul(c64(j), csb)), typ=self.fty), vl)
                    for u in range(nv):
                        out[j * nv + u] = b.call(self.fma, [x[u], g, out[j * nv + u]])
                return out
            accs = self.loop(b, c64(0), K, 1, [self.zero] * (n * nv), step, "k")
            cm = b.function.append_basic_block("wb.cm")
            rm = b.function.append_basic_block("wb.rm")
            done = b.function.append_basic_block("wb.done")
            b.cbranch(col_major, cm, rm)
            b.position_at_end(cm)
            for j in range(n):
                for u in range(nv):
                    off = b.add(b.add(m0, c64(u * vl)), b.mul(c64(j), csc))
                    s = b.fmul(accs[j * nv + u], alpha)
                    s = self._plus_beta(b, s, self.at(b, v["Cin"], off), mask, v)
                    self.store(b, s, self.at(b, C, off), mask)
            b.branch(done)
            b.position_at_end(rm)
            # rows[r]: (row within the block, first column, lanes) of C, a vector
            rows, where, vals = [], [], []
            for c0 in range(0, n, vl):   # (f64: more columns than lanes)
                for u in range(nv):
                    t = self.transpose(b, [accs[j * nv + u] for j in range(c0, min(n, c0 + vl))])
                    for mm in range(vl):
                        where.append((u * vl + mm, c0, min(vl, n - c0)))
                        vals.append(t[mm])
            offs = [b.add(b.mul(b.add(m0, c64(r)), rsc), c64(c0)) for r, c0, _ in where]
            ptrs = [self.at(b, C, o) for o in offs]
            cins = [self.at(b, v["Cin"], o) for o in offs]
            masks = [None if w == vl else self.const_mask(w) for _, _, w in where]
            rows = vals

            def write(beta):
                # every row of C read before any is written: a masked store ahead of a load
                # from the same 64 bytes made the load wait (5 us more for 784 x 10)
                olds = [None] * len(rows)
                if beta:
                    for q, p in enumerate(cins):
                        if rem is None:
                            olds[q] = self.load(b, p, masks[q])
                        else:
                            olds[q] = self.when(
                                b, b.icmp_signed("<", c64(where[q][0]), rem), [self.zero],
                                lambda _, p=p, q=q: [self.load(b, p, masks[q])], "old")[0]
                for q, (p, x) in enumerate(zip(ptrs, rows)):
                    s = b.fmul(x, alpha)
                    if beta:
                        s = b.call(self.fma, [splat(b, v["beta"], vl), olds[q], s])
                    if rem is None:
                        self.store(b, s, p, masks[q])
                    else:
                        with b.if_then(b.icmp_signed("<", c64(where[q][0]), rem)):
                            self.store(b, s, p, masks[q])
            with b.if_else(self.has_beta) as (then, otherwise):
                with then:
                    write(True)
                with otherwise:
                    write(False)
            b.branch(done)
            b.position_at_end(done)

        step_rows = V * vl
        mfull = b.mul(b.sdiv(M, c64(step_rows)), c64(step_rows))
        self.loop(b, c64(0), mfull, step_rows, [], lambda m0, _: block(V, m0, None) or [],
                  "mb")
        mvec = b.mul(b.sdiv(M, c64(vl)), c64(vl))
        if V > 1:
            self.loop(b, mfull, mvec, vl, [], lambda m0, _: block(1, m0, None) or [], "mv")
        rem = b.sub(M, mvec)
        with b.if_then(b.icmp_signed(">", rem, c64(0))):
            block(1, mvec, rem)


def put(b, slots, name, value):
    """Store an argument slot of a call (an int, a float or an IR value) from a program."""
    at = b.gep(slots, [c64(SLOT[name])], source_etype=I64)
    if isinstance(value, int):
        value = c64(value)
    elif isinstance(value, float):
        value = b.bitcast(ir.Constant(ir.DoubleType(), value), I64)
    elif value.type != I64:
        value = b.ptrtoint(value, I64)
    b.store(value, at)


def function(module: ir.Module, t: str, n: int, form: str) -> ir.Function:
    """The declaration of a kernel in a program's module."""
    name = symbol(t, n, form)
    return module.globals.get(name) or ir.Function(module, ir.FunctionType(VOID, [PTR]), name)


@functools.lru_cache(maxsize=None)
def build_ir(bits: int, t: str, n: int, form: str) -> str:
    m = ir.Module(symbol(t, n, form))
    _Kernel(m, t, n, form, bits).build()
    return str(m)


def load(t: str, n: int, form: str, bits: int | None = None):
    """(loaded object, ctypes function) of a kernel, outside any program (tests,
    benchmarks)."""
    import ctypes  # (tests and benchmarks only)
    lib = S.load(t, n, form, bits)
    return lib, ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lib.address(symbol(t, n, form)))


def numpy_call(fn, a, b, c, alpha=1.0, beta=0.0, cin=None):
    """A zero-argument call of a loaded kernel computing c = alpha * a @ b + beta * cin
    (default c) on NumPy arrays of any strides (cin laid out like c; tests, benchmarks)."""
    import ctypes  # (tests and benchmarks only)
    import numpy as np  # (tests and benchmarks only)
    es = a.itemsize
    k = a.shape[1]
    t = "f32" if a.dtype == np.float32 else "f64"
    ws = np.empty(workspace_bytes(t, b.shape[1], k, vector_bits()), np.uint8)
    slots = (ctypes.c_int64 * len(ARGS))()
    vals = dict(M=a.shape[0], K=k, A=a.ctypes.data, rsa=a.strides[0] // es,
                csa=a.strides[1] // es, B=b.ctypes.data, rsb=b.strides[0] // es,
                csb=b.strides[1] // es, C=c.ctypes.data, rsc=c.strides[0] // es,
                csc=c.strides[1] // es, Cin=(c if cin is None else cin).ctypes.data,
                ws=ws.ctypes.data)
    for name, x in vals.items():
        slots[SLOT[name]] = x
    doubles = ctypes.cast(slots, ctypes.POINTER(ctypes.c_double))
    doubles[SLOT["alpha"]], doubles[SLOT["beta"]] = alpha, beta
    addr = ctypes.addressof(slots)

    def run():
        fn(addr)
    run.keep = (slots, ws, a, b, c, cin)
    return run
