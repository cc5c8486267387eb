"""The narrow gemm kernels' symbols (gemm_narrow.py) and their registration with the loader,
apart from the kernels' IR builder: a program from the disk cache that calls one imports
this module only (compiler.EMITTER_SYMBOLS), and the kernel's object comes from the
runtime's disk cache (codegen.cached_object) without building its IR.

    symbol(t, n, form) -> "xlapy_gemm_narrow{n}{form}_{t}"
    load(t, n, form)   -> the loaded object (LoadedObject) providing that symbol
"""

from __future__ import annotations

import functools
import importlib

from xlapy.backends.cpu.codegen import cached_object
from xlapy.backends.cpu.runtime.loader import LoadedObject, register_lazy
from xlapy.backends.cpu.target import vector_bits

MAX_N = 16
# LLVM pipelines (codegen.optimize) of the two forms, chosen by building and timing each
# (a /tmp script, N = 5, 8, 10, 12, shapes 64x32 to 2048x256): form b's code is vector code
# as emitted, and the direct pipeline built it in 0.4-0.7 of "light"'s time, running as
# fast or faster (N = 12, 784 x 100: 18 us against 28); form a ran 21 us with "light",
# 29 with "direct" (and 30 with -O3) on the MNIST tutorial's 100 x 784 x 10
PIPELINES = {"a": "light", "b": "direct"}
TYPES = ("f32", "f64")
FORMS = ("a", "b")


def symbol(t: str, n: int, form: str) -> str:
    # (N before the form letter: no name is a part of another, as the loader's symbol scan
    # needs, runtime/loader.py)
    return f"xlapy_gemm_narrow{n}{form}_{t}"


def _build(bits: int, t: str, n: int, form: str) -> str:
    # the IR builder, on a runtime-cache miss only; by name, as compiler.EMITTER_SYMBOLS
    # loads this module: gemm_narrow imports this module for symbol() (one direction)
    builder = importlib.import_module("xlapy.backends.cpu.emitters.gemm_narrow")
    return builder.build_ir(bits, t, n, form)


def load(t: str, n: int, form: str, bits: int | None = None) -> LoadedObject:
    bits = bits or vector_bits()
    obj = cached_object(functools.partial(_build, bits, t, n, form),
                        f"gemm-narrow-{t}-{n}{form}-{bits}", pipeline=PIPELINES[form])
    return LoadedObject(obj, provides=(symbol(t, n, form),))


_LOADED: list = []


def _register(t: str, n: int, form: str) -> None:
    import llvmlite.binding as llvm  # (when a program first calls the kernel)
    lib = load(t, n, form)
    _LOADED.append(lib)  # keeps the code alive for the process
    llvm.add_symbol(symbol(t, n, form), lib.address(symbol(t, n, form)))


for _t in TYPES:
    for _n in range(1, MAX_N + 1):
        for _f in FORMS:
            register_lazy([symbol(_t, _n, _f)], functools.partial(_register, _t, _n, _f))
