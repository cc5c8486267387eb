"""`python -m xlapy compile`: compile an HLO module without running it.

  python -m xlapy compile FILE --backend gpu [--gpu_arch sm_90] --emit ptx|llvm -o OUT
  python -m xlapy compile FILE --backend cpu --emit asm|obj|llvm -o OUT

gpu: the kernels' PTX (LLVM's NVPTX target, libdevice linked) or their LLVM IR, made
without a GPU; `--emit plan` prints which kernels the fusions became and their launches.
cpu: the program's LLVM IR as emitted, or the optimized module's assembly or object code
for this host. Without -o the text goes to stdout (obj needs -o).
"""

from __future__ import annotations

import argparse
import sys

from xlapy.errors import InputError

EMITS = {"gpu": ("ptx", "llvm", "plan"), "cpu": ("asm", "obj", "llvm")}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="HLO text file (or StableHLO: .mlir)")
    p.add_argument("--backend", choices=sorted(EMITS), default="cpu")
    p.add_argument("--gpu_arch", "--gpu-arch", default=None,
                   help="gpu architecture, e.g. sm_80, sm_90 (default sm_80)")
    p.add_argument("--emit", default=None,
                   help="gpu: ptx (default), llvm, plan; cpu: asm (default), obj, llvm")
    p.add_argument("-o", "--output", help="output file (default stdout)")


def run(args) -> int:
    from xlapy.hlo import parse_module_file as parse_file
    emit = args.emit or EMITS[args.backend][0]
    if emit not in EMITS[args.backend]:
        raise InputError(f"--emit {emit} is not available for the {args.backend} backend "
                         f"(choose from {', '.join(EMITS[args.backend])})")
    if args.gpu_arch and args.backend != "gpu":
        raise InputError("--gpu_arch applies to --backend gpu only")
    try:
        module = parse_file(args.file)
    except OSError as e:
        raise InputError(f"cannot read {args.file}: {e.strerror}") from e
    out = _gpu(module, emit, args.gpu_arch) if args.backend == "gpu" else _cpu(module, emit)
    if args.output:
        mode = "wb" if isinstance(out, bytes) else "w"
        with open(args.output, mode) as f:
            f.write(out)
    elif isinstance(out, bytes):
        raise InputError("--emit obj writes binary: give -o FILE")
    else:
        sys.stdout.write(out)
    return 0


def _gpu(module, emit: str, arch):
    from xlapy.backends.gpu.compiler import compile_program, emit_program
    from xlapy.backends.gpu.target import parse_arch
    arch = parse_arch(arch)
    if emit == "ptx":
        return compile_program(module, arch).ptx
    program, text = emit_program(module)
    if emit == "llvm":
        return text
    lines = [f"{k.name}: cuBLAS gemm of {k.instruction}" if k.kind == "gemm" else
             f"{k.name}: {k.kind} kernel of {k.instruction}, grid {k.grid}, block {k.block}"
             for k in program.kernels]
    return "\n".join(lines) + "\n"


def _cpu(module, emit: str):
    from xlapy.backends.cpu import codegen
    from xlapy.backends.cpu.emitters.program import ModuleEmitter
    from xlapy.backends.cpu.passes.pipeline import run_cpu_pipeline
    from xlapy.backends.cpu.target import target_machine
    from xlapy.hlo.verifier import verify
    verify(module)
    optimized = run_cpu_pipeline(module.clone())
    emitter = ModuleEmitter(optimized, 1, 100_000, use_threads=False)
    emitter.emit("xlapy_entry")
    text = str(emitter.llmod)
    if emit == "llvm":
        return text
    obj, _, asm = codegen.compile_one(text, target_machine(), "O3", dump=True)
    return obj if emit == "obj" else asm
