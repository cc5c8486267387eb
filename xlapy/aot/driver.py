"""Ahead-of-time compilation of one HLO module into one self-contained object file.

  obj = build_object(module, target, entry_point, max_threads)     ObjectCode

The cpu backend's own stages, for another machine: the cpu HLO pipeline and the program
emitter run inside `target.emitting_for(...)` (the target's vector widths; every dot on
xlapy's own gemm, Cholesky on IR instead of LAPACK: backends/cpu/target.Emission), the
module's triple is the target's (fpmode.py reads it), and the program gets a C entry
point instead of the JIT's trampoline or launcher (runtime_ir.py). The object then holds,
as separate LLVM modules optimized each with its own pipeline and linked into one:

  program     the entry, its kernels and the math library (codegen's pipelines, as the JIT)
  gemm_<t>    xlapy's gemm (f32, f64, bf16, f16) for the target's vector width, those called
  pool        the thread pool and ENTRY_set_num_threads, or a serial stand-in (max_threads 1)

Everything but the entry point and the thread-count functions is made internal, so objects
of several programs link into one executable. What the object still needs at link time is
checked against the C library, libm, the compiler's runtime and pthread_create: anything
else is an error naming the symbol.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import llvmlite.binding as llvm
from llvmlite import ir

from xlapy.aot import runtime_ir
from xlapy.aot.targets import AotTarget
from xlapy.backends.cpu import codegen, elf
from xlapy.backends.cpu.compiler import part_pipelines, scalar_functions
from xlapy.backends.cpu.emitters import gemm_kernel
from xlapy.backends.cpu.emitters.program import ModuleEmitter
from xlapy.backends.cpu.passes.pipeline import run_cpu_pipeline
from xlapy.backends.cpu.target import emitting_for
from xlapy.backends.llvm import call_graph
from xlapy.errors import AotError
from xlapy.flags import flags
from xlapy.hlo.dump import Dumper
from xlapy.hlo.ir import Instruction, Module
from xlapy.hlo.shapes import Layout, Shape
from xlapy.hlo.verifier import verify

PARALLEL_THRESHOLD = 100_000  # work (element operations) from which a kernel is split

_LIBC = {"memcpy", "memmove", "memset", "syscall"}
_MATH = ("acos asin atan atan2 cos sin tan cosh sinh tanh acosh asinh atanh exp exp2 expm1 "
         "log log10 log1p log2 pow sqrt cbrt fmod remainder floor ceil trunc round rint "
         "nearbyint fma fmax fmin hypot erf erfc lgamma tgamma ldexp frexp modf copysign "
         "nextafter sincos roundeven").split()
LIBM = {f + s for f in _MATH for s in ("", "f")}


@dataclass
class ObjectCode:
    data: bytes
    temp_size: int          # bytes of scratch the entry needs (the arena), 64-byte aligned
    optimized: Module       # the module after the cpu pipeline
    libraries: list = field(default_factory=list)   # -lpthread, -lm where the object needs them
    parts: dict = field(default_factory=dict)       # function name -> part it came from
    info: elf.ElfInfo | None = None

    def part_sizes(self) -> dict:
        """Code bytes of each part: program (kernels, math), gemm_f32 / gemm_f64, pool,
        entry (the exported functions)."""
        out: dict = {}
        for name, size in self.info.functions().items():
            part = self.parts.get(name, "program")
            out[part] = out.get(part, 0) + size
        return out


def _row_major(shape: Shape) -> Shape:
    return shape.with_layout(Layout.default(shape.rank))


def row_major_interface(module: Module) -> None:
    """Arguments and results of an object are row-major arrays: a parameter laid out
    otherwise gets a copy into its layout after entry, a result a copy out of it (the root
    becomes a flat tuple then)."""
    entry = module.entry
    for p in entry.parameters:
        if p.shape.is_tuple or p.shape.has_default_layout:
            continue
        laid_out = p.shape
        p.shape = _row_major(laid_out)
        users = list(p.users)
        copy = entry.add_instruction(Instruction("copy", laid_out, [p]))
        for u in users:
            u.replace_operand_with(p, copy)
    if all(s.has_default_layout for s in entry.root.shape.leaves()):
        return
    leaves: list = []

    def walk(instr):
        if instr.shape.is_tuple:
            for k, s in enumerate(instr.shape.tuple_shapes):
                walk(instr.operands[k] if instr.opcode == "tuple" else entry.add_instruction(
                    Instruction("get-tuple-element", s, [instr], {"index": k})))
        elif not instr.shape.has_default_layout:
            leaves.append(entry.add_instruction(
                Instruction("copy", _row_major(instr.shape), [instr])))
        else:
            leaves.append(instr)
    walk(entry.root)
    if len(leaves) == 1 and not entry.root.shape.is_tuple:
        entry.root = leaves[0]
    else:
        entry.root = entry.add_instruction(
            Instruction("tuple", Shape.tuple([x.shape for x in leaves]), leaves))


def build_object(module: Module, target: AotTarget, entry_point: str,
                 max_threads: int = 1) -> ObjectCode:
    """The object code of `module` for `target`, exporting `entry_point` (see
    runtime_ir.py). max_threads: the most threads the object may run on (1: no pool)."""
    verify(module)
    module = module.clone()
    row_major_interface(module)
    verify(module)
    threads = max_threads > 1 and target.threads_supported
    dumper = Dumper(module, backend="aot")
    fl = dumper.fl if dumper.fl is not None else flags()
    with emitting_for(target.emission()):
        dumper.module(module, "before_optimizations")
        optimized = run_cpu_pipeline(module.clone(), observers=dumper.observers())
        dumper.module(optimized, "aot_after_optimizations")
        emitter = ModuleEmitter(optimized, max(max_threads, 1), PARALLEL_THRESHOLD,
                                use_threads=threads, flush_denormals=fl.xla_cpu_ftz)
        emitter.llmod.triple = target.target.triple
        emitter.emit(runtime_ir.PROGRAM)
        runtime_ir.add_entry(emitter.llmod, entry_point)
        call_graph.inline_single_calls(emitter.llmod, ())
        program = str(emitter.llmod)
        gemms = [t for t in ("f32", "f64", "bf16", "f16")
                 if f"xlapy_gemm_{t}" in emitter.llmod.globals]
        pipeline = part_pipelines([program], scalar_functions(emitter.llmod))[0]
        modules = [("program", program, pipeline)]
        modules += [(f"gemm_{t}", _optimized(target, gemm_kernel.build_ir(
            target.vector_bits, t), "light"), None) for t in gemms]
        support = (runtime_ir.pool_ir if threads else runtime_ir.serial_ir)(
            target.target.triple, entry_point)
        modules += [("pool", _optimized(target, text, "O3"), None) for text in support]
    if dumper.enabled:
        dumper.raw("ir-no-opt.ll", "\n".join(f"; ---- {tag}\n{text}" for tag, text, _ in
                                             modules))
    exports = {entry_point, f"{entry_point}_set_num_threads", f"{entry_point}_num_threads"}
    data, parts = _codegen(modules, target, exports)
    info = elf.read(data)
    needed = info.undefined()
    bad = [s for s in needed if s not in _LIBC | LIBM | {"pthread_create"}
           and not s.startswith("__")]
    if bad:
        raise AotError(f"the object for {module.name} would need {', '.join(bad)} at link "
                       "time, which no C toolchain provides: this is a bug in xlapy's "
                       "ahead-of-time code generation")
    libraries = (["-lpthread"] if "pthread_create" in needed else []) + \
        (["-lm"] if any(s in LIBM for s in needed) else [])
    parts.update({name: "entry" for name in exports})
    return ObjectCode(data, _round64(emitter.arena_size), optimized, libraries, parts, info)


@functools.lru_cache(maxsize=16)
def _optimized(target: AotTarget, text: str, pipeline: str) -> str:
    """A support module (gemm, pool) optimized for the target: the same for every program,
    so optimized once per process."""
    with codegen.llvm_lock():
        tm = target.target_machine()
        mod = codegen.parse_ir(text, tm)
        codegen.optimize(mod, pipeline, tm)
        return str(mod)


def _round64(n: int) -> int:
    return -(-n // 64) * 64


def _codegen(modules: list, target: AotTarget, exports: set) -> tuple[bytes, dict]:
    """Parse, optimize (each with its pipeline, unless None), link, internalize, emit:
    (object code, {function name: part})."""
    parts: dict = {}
    with codegen.llvm_lock():
        tm = target.target_machine()
        linked = None
        for tag, text, pipeline in modules:
            mod = codegen.parse_ir(text, tm)
            if pipeline is not None:  # (None: optimized already)
                codegen.optimize(mod, pipeline, tm)
            for fn in mod.functions:
                if fn.is_declaration:
                    continue
                if fn.name not in exports and fn.linkage.name in ("internal", "private"):
                    fn.name = f"{tag}.{fn.name}"   # unique across parts, and tells the part
                parts[fn.name] = tag
            for g in mod.global_variables:
                if not g.is_declaration and g.linkage.name in ("internal", "private"):
                    g.name = f"{tag}.{g.name}"
            if linked is None:
                linked = mod
            else:
                linked.link_in(mod)
        for v in list(linked.functions) + list(linked.global_variables):
            if not v.is_declaration and v.name not in exports:
                v.linkage = "internal"
        mpm = llvm.create_new_module_pass_manager()
        mpm.add_global_dead_code_eliminate_pass()
        mpm.run(linked, llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options()))
        live = {fn.name for fn in linked.functions if not fn.is_declaration}
        return tm.emit_object(linked), {k: v for k, v in parts.items() if k in live}


def metadata_object(entry_point: str, signature: str, hlo: str, target: AotTarget) -> bytes:
    """An object defining `const char ENTRY_signature[]` and `const char ENTRY_hlo[]`
    (NUL-terminated text)."""
    m = ir.Module(f"{entry_point}_metadata")
    m.triple = target.target.triple
    for name, text in (("signature", signature), ("hlo", hlo)):
        raw = bytearray(text.encode() + b"\0")
        g = ir.GlobalVariable(m, ir.ArrayType(ir.IntType(8), len(raw)), f"{entry_point}_{name}")
        g.global_constant = True
        g.initializer = ir.Constant(g.value_type, raw)
    with codegen.llvm_lock():
        tm = target.target_machine()
        return tm.emit_object(codegen.parse_ir(str(m), tm))
