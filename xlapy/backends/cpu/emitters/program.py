"""Program emission: one native function per non-fused computation.

  void program(ptr params, ptr outs, ptr arena)
  void xlapy_entry(ptr params, ptr outs, ptr arena, ptr desc)   (the entry computation)

`params` and `outs` are arrays of pointers to the leaf arrays of the computation's
parameters and of its result; `arena` is the executable's preallocated scratch memory; the
entry's `desc` is unused (it has launch.py's signature, so the executable calls either
alike). An entry whose only work is one kernel on the thread pool is left out of the
module (`ModuleEmitter.single_launch`): the runtime's xlapy_launch runs that kernel.
The function runs the computation's instructions in schedule order:

  parameter, constant, tuple, get-tuple-element, bitcast   no code: pointers are passed along
  elemental ops and loop fusions                           a loop kernel (kernels.py), run on
                                                           the calling thread or split across
                                                           xlapy's thread pool when big
  dot (f32/f64, gemm-compatible layouts)                   gemm (gemm.py)
  sort, scatter, select-and-scatter, ...                   dedicated emitters (registry.py)
  while / conditional / call                               native control flow calling the
                                                           callee computations' programs

Every intermediate array lives in the arena at the offset buffer assignment gave it; an
elementwise kernel may take over the slice of an operand that dies there (in-place, see
inplace.py). An array-shaped instruction that is a leaf of the root writes straight into
the caller's output, and so does the producer of its in-place operand when the output
kernel is its only reader (a gemm writes the result its bias+relu epilogue then updates);
other root leaves are copied there at the end. `while` keeps its state in two arena slots
and swaps them each iteration (the body reads one and writes the other); a state leaf the
body passes through unchanged (weights a scan carries) or updates with a dynamic-update-
slice has one slot only, which both sides of the swap point to, and a passed-through leaf
that starts as a constant none: the loop reads the constant where it lies; a leaf that
starts as a broadcast zero is cleared in its slot rather than copied (zero_filled).

Donation (the module's input_output_alias): an output may be written into a parameter's
buffer when nothing reads the parameter after the output's first writer runs
(`_donations`); the executable then passes the donated array as that output.
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.analysis.buffer_assignment import ALIGN, assign_buffers
from xlapy.backends.cpu.emitters.kernels import emit_kernel, kernel_cost
from xlapy.backends.cpu.emitters.loop_state import (_PASS_ALONG, _loop_computations, _readers,
                                                     _requested_aliases, _single_buffer_leaves,
                                                     carried_in_place, invariant_leaves,
                                                     leaf_origins, zero_filled)
from xlapy.backends.cpu.emitters.registry import emitter_for
from xlapy.backends.cpu.passes.inplace import donatable_operands, inplace_operands
from xlapy.backends.cpu.runtime import launch, threadpool
from xlapy.backends.llvm import fpmode
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import literal_global, lowering_error
from xlapy.backends.llvm.loops import NOT_VECTORIZED, c64, entry_alloca, set_loop_hints
from xlapy.hlo.ir import ELIDED, Computation, Instruction
from xlapy.hlo.opcodes import NO_KERNEL
from xlapy.hlo.shapes import Shape

ALIAS_OPS = NO_KERNEL  # no kernel writes their buffers (the opcode table's no_kernel column)

PROFILE_SLOTS = 4096    # instructions a --xla_hlo_profile build can time
PARALLEL_GRAIN = 16384  # minimum work (element operations) per chunk of a parallel kernel


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def leaf_sizes(shape: Shape) -> list[int]:
    return [s.byte_size for s in shape.leaves()]


def tree_size(shape: Shape) -> int:
    return sum(_align(max(n, 1)) for n in leaf_sizes(shape))


def flatten(tree) -> list:
    if isinstance(tree, tuple):
        return [leaf for t in tree for leaf in flatten(t)]
    return [tree]


def unflatten(shape: Shape, leaves: list):
    it = iter(leaves)

    def build(s):
        if s.is_tuple:
            return tuple(build(x) for x in s.tuple_shapes)
        return next(it)
    return build(shape)


class ModuleEmitter:
    """Emits the LLVM module for a whole HLO module."""

    def __init__(self, module, num_threads: int, parallel_threshold: int, use_threads: bool,
                 profile: bool = False, flush_denormals: bool = True):
        self.hlo = module
        self.flush_denormals = flush_denormals  # the entry runs with FTZ/DAZ (fpmode.py)
        self.profile_labels: list | None = [] if profile else None
        self._profile_globals: dict = {}
        self.llmod = ir.Module(name=module.name)
        self.llmod.flush_denormals = flush_denormals  # (types.flush_subnormal reads it)
        self.num_threads = num_threads
        self.parallel_threshold = parallel_threshold
        self.use_threads = use_threads and num_threads > 1
        self.arena_size = 0
        # donation: output leaf -> parameter leaf the caller allows it to overwrite, and the
        # subset the entry program can honour (ProgramEmitter._donations)
        self.requested_aliases: dict[int, int] = _requested_aliases(module)
        self.aliases: dict[int, int] = {}
        self._programs: dict[int, ir.Function] = {}
        self._names: set[str] = set()
        self._scratch: ir.GlobalVariable | None = None
        self._scratch_bytes = 0
        self._entry_emitter: ProgramEmitter | None = None
        self.loop_computations = _loop_computations(module)

    def scratch(self, b: ir.IRBuilder, arena, nbytes: int):
        """Pointer to a scratch region of at least nbytes at the end of the arena, shared by
        every user (the gemm's packing buffers): they run one at a time. Its offset is
        only known once the whole module is emitted, so the code loads it from a global."""
        if self._scratch is None:
            self._scratch = ir.GlobalVariable(self.llmod, T.I64, "xlapy.scratch_offset")
            self._scratch.global_constant = True
            self._scratch.linkage = "internal"
        self._scratch_bytes = max(self._scratch_bytes, nbytes)
        offset = b.load(self._scratch, typ=T.I64)
        return b.gep(arena, [offset], inbounds=True, source_etype=T.I8)

    def _profile_table(self, name: str):
        g = self._profile_globals.get(name)
        if g is None:
            ty = ir.ArrayType(T.I64, PROFILE_SLOTS)
            g = ir.GlobalVariable(self.llmod, ty, name)
            g.initializer = ir.Constant(ty, None)
            self._profile_globals[name] = g
        return g

    def profile_cycles(self):
        return self._profile_table("xlapy_profile_cycles")

    def profile_counts(self):
        return self._profile_table("xlapy_profile_counts")

    def unique(self, base: str) -> str:
        base = "".join(c if c.isalnum() or c in "._" else "_" for c in base)
        name, n = base, 0
        while name in self._names:
            n += 1
            name = f"{base}.{n}"
        self._names.add(name)
        return name

    def program(self, comp: Computation, name: str | None = None) -> ir.Function:
        fn = self._programs.get(id(comp))
        if fn is None:
            pe = ProgramEmitter(self, comp, name or self.unique("prog." + comp.name))
            if comp is self.hlo.entry:
                self._entry_emitter = pe
            fn = pe.emit()
            self._programs[id(comp)] = fn
        return fn

    def emit(self, entry_name: str = "xlapy_entry") -> ir.Module:
        """The LLVM module of the whole program (`llmod`), entry function `entry_name`."""
        fn = self.program(self.hlo.entry, entry_name)
        fn.linkage = "external"
        if self._scratch is not None:
            offset = -(-self.arena_size // 64) * 64
            self._scratch.initializer = ir.Constant(T.I64, offset)
            self.arena_size = offset + self._scratch_bytes
        return self.llmod

    def single_launch(self, entry_name: str = "xlapy_entry") -> launch.Launch | None:
        """After emit(): when the entry's only work is one kernel on the thread pool, with
        parameters, outputs and arena slots for pointers, remove the entry function from the
        module and return what the runtime's xlapy_launch needs to run that kernel instead
        (its wrapper made external); else None and the module is left alone."""
        fn = self.llmod.globals.get(entry_name)
        pe = self._entry_emitter
        if self.profile_labels is not None or pe is None or len(pe.launches) != 1 \
                or len(fn.blocks) != 1:
            return None
        wrapper, ptrs, n, chunk = pe.launches[0]
        sources = [pe.sources.get(id(p)) for p in ptrs]
        if None in sources or len(sources) > launch.MAX_POINTERS:
            return None
        for instr in fn.blocks[0].instructions:  # anything else the entry does: keep it
            if isinstance(instr, ir.CallInstr) and instr.callee.name != "xlapy_parallel_for" \
                    and not fpmode.is_mode_intrinsic(instr.callee.name):
                return None
        del self.llmod.globals[entry_name]
        wrapper.linkage = "external"
        return launch.Launch(wrapper.name, n, chunk, self.flush_denormals, tuple(sources))


class ProgramEmitter:
    def __init__(self, me: ModuleEmitter, comp: Computation, name: str):
        self.me = me
        self.comp = comp
        # run once per iteration of a while loop: kernels weigh the pool's per-call costs
        # against the loop's whole run (gemm.GEMM_LOOP_PARALLEL_FLOPS)
        self.in_loop = id(comp) in me.loop_computations
        self.llmod = me.llmod
        entry = comp is me.hlo.entry  # (with launch.py's signature: a fourth, unused, ptr)
        fty = ir.FunctionType(T.VOID, [T.PTR] * (4 if entry else 3))
        self.fn = ir.Function(self.llmod, fty, name)
        self.fn.linkage = "internal"
        self.fn.attributes.add("nounwind")
        self.params_tbl, self.outs_tbl, self.arena = self.fn.args[:3]
        self.b = ir.IRBuilder(self.fn.append_basic_block("entry"))
        self.vals: dict[int, object] = {}
        # for ModuleEmitter.single_launch: id(pointer value) -> (launch.PARAM | OUT | ARENA,
        # index or offset) of the pointers read from the tables or the arena, and the pool
        # calls made: (wrapper, pointers, n, chunk)
        self.sources: dict[int, tuple] = {}
        self.launches: list[tuple] = []

    # ---- helpers ---------------------------------------------------------------------------
    def alloca(self, ty, count=None):
        return entry_alloca(self.b, ty, count)

    def table(self, ptrs: list):
        """A stack array of pointers holding `ptrs`."""
        tbl = self.alloca(T.PTR, c64(max(len(ptrs), 1)))
        for k, p in enumerate(ptrs):
            self.b.store(p, self.b.gep(tbl, [c64(k)], source_etype=T.PTR))
        return tbl

    def table_entry(self, tbl, k: int):
        ptr = self.b.load(self.b.gep(tbl, [c64(k)], source_etype=T.PTR), typ=T.PTR)
        if tbl is self.params_tbl or tbl is self.outs_tbl:
            self.sources[id(ptr)] = (launch.PARAM if tbl is self.params_tbl else launch.OUT, k)
        return ptr

    def arena_ptr(self, offset: int):
        ptr = self.b.gep(self.arena, [c64(offset)], inbounds=True, source_etype=T.I8)
        self.sources[id(ptr)] = (launch.ARENA, offset)
        return ptr

    def memcpy(self, dst, src, nbytes: int):
        if nbytes == 0:
            return
        fn = self.llmod.declare_intrinsic("llvm.memcpy", [T.PTR, T.PTR, T.I64])
        self.b.call(fn, [dst, src, c64(nbytes), ir.Constant(T.I1, 0)])

    def memset_zero(self, dst, nbytes: int):
        if nbytes == 0:
            return
        fn = self.llmod.declare_intrinsic("llvm.memset", [T.PTR, T.I64])
        self.b.call(fn, [dst, ir.Constant(T.I8, 0), c64(nbytes), ir.Constant(T.I1, 0)])

    def memcpy_if_distinct(self, dst, src, nbytes: int):
        if nbytes == 0:
            return
        b = self.b
        differ = b.icmp_unsigned("!=", b.ptrtoint(dst, T.I64), b.ptrtoint(src, T.I64))
        with b.if_then(differ):
            self.memcpy(dst, src, nbytes)

    def _root_leaves_from_parameters(self) -> set:
        """Root leaf indices whose value is a parameter leaf (passed through)."""
        out, k = set(), 0
        root = self.comp.root
        elems = root.operands if root.opcode == "tuple" else [root]
        for e in elems:
            n = len(e.shape.leaves())
            i = e
            while i.opcode == "get-tuple-element":
                i = i.operands[0]
            if i.opcode == "parameter":
                out.update(range(k, k + n))
            k += n
        return out

    def copy_tree(self, shape: Shape, dst_leaves: list, src_leaves: list):
        for d, s, n in zip(dst_leaves, src_leaves, leaf_sizes(shape)):
            self.memcpy(d, s, n)

    # ---- emission --------------------------------------------------------------------------
    def emit(self) -> ir.Function:
        comp = self.comp
        schedule = comp.post_order()
        self.direct, self.direct_elems = self._direct_outputs()
        into_outputs = self._producers_into_outputs(schedule)
        defines = lambda i: i.opcode not in ALIAS_OPS and id(i) not in self.direct

        def size_of(i: Instruction) -> int:
            return self._slots(i)[1] if i.opcode == "while" else tree_size(i.shape)

        n_param_leaves = 0
        self.param_leaf_start = []
        for p in comp.parameters:
            self.param_leaf_start.append(n_param_leaves)
            n_param_leaves += len(p.shape.leaves())
        base = self.me.arena_size
        self.assignment = assign_buffers(comp, schedule, defines, size_of, base=base,
                                         may_share=inplace_operands)
        self.me.arena_size = base + self.assignment.size
        # operand indices each instruction overwrites in place (arena reuse, donation)
        self.shared: dict[int, set] = {k: {j} for k, j in self.assignment.shared.items()}
        for k, js in into_outputs.items():
            self.shared.setdefault(k, set()).update(js)
        if comp is self.me.hlo.entry and self.me.requested_aliases:
            self.me.aliases = self._donations(schedule)
        # denormals flushed while the program runs, the caller's mode restored on return
        saved_mode = fpmode.flush_denormals(self.b) \
            if comp is self.me.hlo.entry and self.me.flush_denormals else None
        for instr in schedule:
            self.vals[id(instr)] = self.emit_instruction(instr)
        # copy root leaves that are not already in place
        root_leaves = flatten(self.vals[id(comp.root)])
        in_place = set(self.direct.values()) | set(self.direct_elems.values())
        from_params = self._root_leaves_from_parameters()
        for k, (ptr, shape) in enumerate(zip(root_leaves, comp.root.shape.leaves())):
            if k not in in_place:
                dst = self.table_entry(self.outs_tbl, k)
                if k in from_params:  # a while loop may pass one buffer as both
                    self.memcpy_if_distinct(dst, ptr, shape.byte_size)
                else:
                    self.memcpy(dst, ptr, shape.byte_size)
        fpmode.set_mode(self.b, saved_mode)
        self.b.ret_void()
        return self.fn

    def _donations(self, schedule: list) -> dict[int, int]:
        """The requested (output leaf -> parameter leaf) aliases that are safe here: the
        output is written by its own kernel straight into the caller's buffer, and nothing
        reads the parameter after that kernel (the kernel itself only where it can overwrite
        that operand in place). Others are dropped: that output gets a fresh buffer."""
        pos = {id(i): k for k, i in enumerate(schedule)}
        # output leaf -> (the first instruction writing it, its element for a multi-output one)
        by_out: dict[int, tuple] = {}
        writers = [(self._by_id[x], None, k) for x, k in self.direct.items()] + \
            [(self._by_id[x], j, k) for (x, j), k in self.direct_elems.items()]
        for i, element, k in writers:
            if k not in by_out or pos[id(i)] < pos[id(by_out[k][0])]:
                by_out[k] = (i, element)
        params = self.comp.parameters
        param_of_leaf = {self.param_leaf_start[p.parameter_number]: p for p in params
                         if not p.shape.is_tuple}
        accepted: dict[int, int] = {}
        for out_leaf, param_leaf in sorted(self.me.requested_aliases.items()):
            (d, element), p = by_out.get(out_leaf, (None, None)), param_of_leaf.get(param_leaf)
            if d is None or p is None or not p.shape.has_default_layout:
                continue
            leaf_shape = d.shape if element is None else d.shape.tuple_shapes[element]
            if not leaf_shape.has_default_layout:
                continue
            readers = _readers(p)
            ok = True
            for u, via in readers:
                if u.opcode in _PASS_ALONG:
                    ok = ok and u is not self.comp.root  # the root is copied out at the end
                elif u is d:
                    ok = ok and all(j in donatable_operands(d, element)
                                    for j, o in enumerate(d.operands) if o is via)
                elif pos.get(id(u), -1) >= pos[id(d)]:  # (dead users never run)
                    ok = False
            if ok:
                accepted[out_leaf] = param_leaf
                self.shared.setdefault(id(d), set()).update(
                    j for j, o in enumerate(d.operands) if any(o is v for _, v in readers))
        return accepted

    def _producers_into_outputs(self, schedule: list) -> dict[int, set]:
        """An output kernel that can run in place (inplace.py) on an operand whose only
        reader it is lets that operand's producer write straight into the output buffer
        too: a gemm's bias+relu epilogue then updates the gemm's result where it lies,
        and the product never needs scratch memory. Extends self.direct; returns the
        operand indices each output kernel now reads through its output pointer."""
        pos = {id(i): k for k, i in enumerate(schedule)}
        shared: dict[int, set] = {}
        work = list(self.direct.items())
        while work:
            key, leaf = work.pop()
            d = self._by_id[key]
            for j in inplace_operands(d):
                o = d.operands[j]
                if o.opcode in ALIAS_OPS or o.opcode == "while" or id(o) in self.direct \
                        or any(u is not d for u in o.users if id(u) in pos):
                    continue
                self.direct[id(o)] = leaf
                shared[id(d)] = {k for k, x in enumerate(d.operands) if x is o}
                work.append((id(o), leaf))
                break
        return shared

    def shared_operands(self, instr: Instruction) -> set:
        return self.shared.get(id(instr), set())

    def _direct_outputs(self) -> tuple[dict, dict]:
        """id(instr) -> output leaf index, for array kernels that are root leaves once; and
        (id(fusion), element) -> output leaf index, for elements of multi-output kernels (a
        fusion with a flat tuple result) that are root leaves once: those kernels write them
        straight into the caller's output too."""
        self._by_id = {id(i): i for i in self.comp.instructions}
        leaves: list = []

        def walk(i: Instruction):
            if i.opcode == "tuple":
                for o in i.operands:
                    walk(o)
            elif i.shape.is_tuple:
                leaves.extend([None] * len(i.shape.leaves()))
            else:
                leaves.append(i)

        walk(self.comp.root)
        count: dict[int, int] = {}
        for i in leaves:
            if i is not None:
                count[id(i)] = count.get(id(i), 0) + 1
        out = {}
        for k, i in enumerate(leaves):
            if i is not None and count[id(i)] == 1 and i.opcode not in ALIAS_OPS \
                    and i.opcode != "while":
                out[id(i)] = k
        elems: dict = {}
        for k, i in enumerate(leaves):
            if i is not None and i.opcode == "get-tuple-element":
                src = i.operands[0]
                if src.opcode == "fusion" and all(not e.is_tuple for e in src.shape.tuple_shapes):
                    key = (id(src), i.attrs["index"])
                    elems[key] = None if key in elems else k
        return out, {key: k for key, k in elems.items() if k is not None}

    def dest_leaves(self, instr: Instruction) -> list:
        if id(instr) in self.direct:
            return [self.table_entry(self.outs_tbl, self.direct[id(instr)])]
        offset = self.assignment.offset(instr)
        out = []
        for j, n in enumerate(leaf_sizes(instr.shape)):
            leaf = self.direct_elems.get((id(instr), j))
            out.append(self.arena_ptr(offset) if leaf is None
                       else self.table_entry(self.outs_tbl, leaf))
            offset += _align(max(n, 1))
        return out

    def emit_instruction(self, instr: Instruction):
        op = instr.opcode
        if op == "parameter":
            k0 = self.param_leaf_start[instr.parameter_number]
            n = len(instr.shape.leaves())
            return unflatten(instr.shape,
                             [self.table_entry(self.params_tbl, k0 + j) for j in range(n)])
        if op == "constant":
            return self._constant(instr)
        if op == "tuple":
            return tuple(self.vals[id(o)] for o in instr.operands)
        if op == "get-tuple-element":
            return self.vals[id(instr.operands[0])][instr.attrs["index"]]
        if op in ("bitcast", "opt-barrier"):
            return self.vals[id(instr.operands[0])]
        if op == "after-all":
            return ()
        if self._only_clears_loops(instr):
            return unflatten(instr.shape, self.dest_leaves(instr))
        if self.me.profile_labels is not None:
            return self._profiled(instr)
        return self._emit_work(instr)

    def _only_clears_loops(self, instr: Instruction) -> bool:
        """Whether instr is a zero broadcast whose only use is starting while loops' state:
        each loop clears its own buffer for that leaf (zero_filled, _while), so instr's
        kernel would write bytes nobody reads (a scan's stacked outputs, gradient
        accumulators; on the thread pool when large, where a loaded machine's descheduled
        worker made the caller wait)."""
        if not instr.users or instr is self.comp.root or id(instr) in self.direct \
                or instr.shape.is_tuple or not zero_filled(instr):
            return False
        for t in instr.users:
            if t.opcode != "tuple" or t is self.comp.root or not t.users:
                return False
            if any(w.opcode != "while" or w.operands[0] is not t for w in t.users):
                return False
        return True

    def _profiled(self, instr: Instruction):
        """--xla_hlo_profile: cycle counters around the instruction (readcyclecounter)."""
        me = self.me
        k = len(me.profile_labels)
        if k >= PROFILE_SLOTS:
            return self._emit_work(instr)
        root = instr.fused_computation.root.opcode if instr.opcode == "fusion" else instr.opcode
        me.profile_labels.append((self.comp.name, instr.name, root))
        clock = self.llmod.declare_intrinsic("llvm.readcyclecounter", (),
                                             ir.FunctionType(T.I64, []))
        t0 = self.b.call(clock, [])
        out = self._emit_work(instr)
        t1 = self.b.call(clock, [])
        for table, value in ((me.profile_cycles(), self.b.sub(t1, t0)),
                             (me.profile_counts(), c64(1))):
            slot = self.b.gep(table, [c64(0), c64(k)])  # typed: the global's own array type
            self.b.store(self.b.add(self.b.load(slot, typ=T.I64), value), slot)
        return out

    def _emit_work(self, instr: Instruction):
        op = instr.opcode
        if op == "while":
            return self._while(instr)
        dest = self.dest_leaves(instr)
        operands = [self.vals[id(o)] for o in instr.operands]
        if op == "conditional":
            self._conditional(instr, dest, operands)
        elif op == "call":
            self._call(instr.attrs["to_apply"], operands, dest)
        elif (emit := emitter_for(op)) is not None and emit(self, instr, dest, operands):
            pass
        elif op == "custom-call":
            raise lowering_error(instr, f"unsupported custom-call target "
                                        f"'{instr.attrs.get('custom_call_target')}'")
        else:
            self.run_kernel(instr, dest, operands)
        return unflatten(instr.shape, dest)

    def _constant(self, instr: Instruction):
        if instr.literal is ELIDED:
            raise lowering_error(instr, "constant was printed as {...}; its value is unknown")

        def build(lit, shape, name):
            if shape.is_tuple:
                return tuple(build(l, s, f"{name}.{k}")
                             for k, (l, s) in enumerate(zip(lit, shape.tuple_shapes)))
            g = literal_global(self.llmod, lit, shape, name)
            return self.b.gep(g, [c64(0), c64(0)], source_etype=g.value_type)

        return build(instr.literal, instr.shape, f"const.{instr.name}")

    # ---- kernels -----------------------------------------------------------------------------
    def run_kernel(self, instr: Instruction, dest: list, operands: list):
        me = self.me
        ptrs = dest + [p for t in operands for p in flatten(t)]
        name = me.unique(f"k.{instr.name}")
        outer, cost = kernel_cost(instr)
        parallel = me.use_threads and outer >= 2 and cost >= me.parallel_threshold
        first_leaf, leaf = [], 0
        for o in instr.operands:
            first_leaf.append(leaf)
            leaf += len(o.shape.leaves())
        shared = frozenset(first_leaf[j] for j in self.shared_operands(instr))
        kernel = emit_kernel(self.llmod, instr, name, parallel=parallel, shared_inputs=shared)
        if parallel:
            self.run_parallel(kernel.wrapper, ptrs, outer, cost)
        else:
            self.b.call(kernel.function, ptrs + [c64(0), c64(outer)])

    def run_parallel(self, wrapper: ir.Function, ptrs: list, n: int, cost: int) -> None:
        """Run wrapper(ctx, start, end) over [0, n) on the thread pool, in chunks of at
        least PARALLEL_GRAIN work units (several chunks per thread, so a thread the OS
        deschedules just takes fewer)."""
        me = self.me
        per_iter = max(cost // max(n, 1), 1)
        chunk = max(n // (4 * me.num_threads), -(-PARALLEL_GRAIN // per_iter), 1)
        self.launches.append((wrapper, ptrs, n, chunk))
        self.b.call(threadpool.declare(self.llmod), [wrapper, self.table(ptrs), c64(n), c64(chunk)])

    # ---- control flow ------------------------------------------------------------------------
    def _call(self, comp: Computation, operands: list, dest: list):
        fn = self.me.program(comp)
        params = self.table([p for t in operands for p in flatten(t)])
        outs = self.table(dest)
        self.b.call(fn, [params, outs, self.arena])

    def _conditional(self, instr: Instruction, dest: list, operands: list):
        b = self.b
        sel = instr.operands[0]
        if "branch_computations" in instr.attrs:
            branches = list(instr.attrs["branch_computations"])
            idx = b.load(operands[0], typ=T.storage_type(sel.shape.element_type))
            idx = b.sext(idx, T.I64) if idx.type.width < 64 else idx
            n = len(branches)
            bad = b.or_(b.icmp_signed("<", idx, c64(0)), b.icmp_signed(">=", idx, c64(n)))
            idx = b.select(bad, c64(n - 1), idx)  # out of range -> last branch
        else:
            branches = [instr.attrs["true_computation"], instr.attrs["false_computation"]]
            pred = b.trunc(b.load(operands[0], typ=T.I8), T.I1)
            idx = b.select(pred, c64(0), c64(1))
        done = self.fn.append_basic_block("cond.done")
        switch = b.switch(idx, done)
        for k, comp in enumerate(branches):
            blk = self.fn.append_basic_block(f"cond.branch{k}")
            switch.add_case(c64(k), blk)
            b.position_at_end(blk)
            self._call(comp, [operands[k + 1]], dest)
            b.branch(done)
        b.position_at_end(done)

    def _never_written(self, instr: Instruction, leaf: int) -> bool:
        """Whether leaf `leaf` of instr's value keeps its bytes for the whole run: a
        constant, or a leaf of an entry parameter the caller did not donate (the caller's
        buffer, which nothing writes: a loop can read its loop-invariant weights and inputs
        there instead of copying them into its state on every call)."""
        if instr.opcode == "constant":
            return True
        if instr.opcode != "parameter" or self.comp is not self.me.hlo.entry:
            return False
        at = self.param_leaf_start[instr.parameter_number] + leaf
        return at not in self.me.requested_aliases.values()

    def _slots(self, loop: Instruction) -> tuple[list, int]:
        """Where each state leaf of a while lives: (first slot's offset, second slot's
        offset), relative to the while's arena range, and the range's size. A leaf that
        keeps one buffer (_single_buffer_leaves) has no second slot (None), and none at
        all when the body passes it through and it starts as a constant: the loop reads
        the constant where it lies (nothing writes it: the body's copy of a passed-through
        leaf is skipped when source and destination are one buffer, and a while's buffer is
        never shared in place, inplace_operands refusing tuple shapes); likewise a leaf
        passed through that starts as an entry parameter's (_never_written)."""
        # (and a leaf the body updates in place with a dynamic-update-slice whose other
        # readers all run before it: carried_in_place)
        one_buffer = _single_buffer_leaves(loop.attrs["body"]) | \
            carried_in_place(loop.attrs["body"])
        origins = leaf_origins(loop.operands[0])
        constant = {k for k in one_buffer & invariant_leaves(loop)
                    if self._never_written(*origins[k])}
        slots, total = [], 0
        for k, n in enumerate(leaf_sizes(loop.shape)):
            room = _align(max(n, 1))
            if k in constant:
                slots.append((None, None))
            elif k in one_buffer:
                slots.append((total, None))
                total += room
            else:
                slots.append((total, total + room))
                total += 2 * room
        return slots, total

    def _while(self, instr: Instruction):
        b = self.b
        shape = instr.shape
        sizes = leaf_sizes(shape)
        offset = self.assignment.offset(instr)
        slots, _ = self._slots(instr)
        init = flatten(self.vals[id(instr.operands[0])])
        origins = leaf_origins(instr.operands[0])
        a_leaves, b_leaves = [], []
        for k, (first, second) in enumerate(slots):
            if first is None:
                a_leaves.append(init[k])
            else:
                a_leaves.append(self.arena_ptr(offset + first))
                if zero_filled(origins[k][0]):
                    self.memset_zero(a_leaves[-1], sizes[k])
                else:
                    self.memcpy(a_leaves[-1], init[k], sizes[k])
            b_leaves.append(a_leaves[-1] if second is None else self.arena_ptr(offset + second))
        cur = self.table(a_leaves)
        nxt = self.table(b_leaves)
        pred_slot = self.alloca(T.I8)
        pred_tbl = self.table([pred_slot])
        cond_fn = self.me.program(instr.attrs["condition"])
        body_fn = self.me.program(instr.attrs["body"])
        header = self.fn.append_basic_block("while.cond")
        body = self.fn.append_basic_block("while.body")
        exit_ = self.fn.append_basic_block("while.exit")
        b.branch(header)
        b.position_at_end(header)
        b.call(cond_fn, [cur, pred_tbl, self.arena])
        go = b.trunc(b.load(pred_slot, typ=T.I8), T.I1)
        b.cbranch(go, body, exit_)
        b.position_at_end(body)
        b.call(body_fn, [cur, nxt, self.arena])
        for k in range(len(sizes)):
            if slots[k][1] is None:
                continue  # (one buffer, or the constant)
            pc = b.gep(cur, [c64(k)], source_etype=T.PTR)
            pn = b.gep(nxt, [c64(k)], source_etype=T.PTR)
            vc, vn = b.load(pc, typ=T.PTR), b.load(pn, typ=T.PTR)
            b.store(vn, pc)
            b.store(vc, pn)
        # a data-dependent trip count: LLVM's loop vectorizer never applies (marking it so
        # keeps loop_analysis from sending the whole part through -O3 for it)
        set_loop_hints(self.me.llmod, b.branch(header), NOT_VECTORIZED)
        b.position_at_end(exit_)
        return unflatten(shape, [self.table_entry(cur, k) for k in range(len(sizes))])
