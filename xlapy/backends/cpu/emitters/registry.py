"""The cpu emitters' registries: dedicated emitters by opcode, custom-call targets by name.

  @custom_emitter("sort")
  def emit(pe, instr, dest, operands) -> bool     False: not handled, the generic loop
                                                  kernel (kernels.py) computes instr
  @custom_call_target("TopK")
  def emit(pe, instr, dest, operands) -> bool     same signature; False: not handled

`pe` is the ProgramEmitter (program.py) emitting the computation, `dest` the output leaf
pointers, `operands` the operands' pointer trees. The emitter modules register themselves
when imported, and are imported when a program first needs one (emitter_for: PROVIDERS,
CALL_TARGET_PROVIDERS), so a compilation without convolutions, sorts, FFTs or collectives
never loads their emitters (a process's first compile imported all of them: about a third
of the code generator's import). load_all() imports every one (the coverage tests, AOT).
Implemented custom-call targets:
  TopK                 sort.py (XLA's top_k: sort by the comparator, first k)
  lapack_?potrf_ffi,   lapack_calls.py (the LAPACK custom-calls jax emits for the cpu:
  lapack_?getrf_ffi,   potrf, getrf, trsm, geqrf, orgqr, syevd, gesdd, gesvd, gees, gehrd,
  ...                  sytrd, gtsv, geev (also c/z); their contracts in hlo/lapack_calls.py)
  __xlapy$gemm_update  gemm_update.py (W + alpha * A.B as one gemm)
  xlapy_host_callback  host_callback.py (a Python function: debug.print, pure_callback)
"""

from __future__ import annotations

import importlib
from typing import Callable

from xlapy.hlo.opcodes import registrar

# opcode -> emitter(pe, instr, dest_leaves, operand_trees) -> bool
CUSTOM_EMITTERS: dict[str, Callable] = {}
# custom_call_target -> emitter, the same signature
CUSTOM_CALL_TARGETS: dict[str, Callable] = {}


custom_emitter = registrar(CUSTOM_EMITTERS, "cpu emitter")
custom_call_target = registrar(CUSTOM_CALL_TARGETS, "custom-call emitter", opcode_keys=False)


# opcode -> the module (in this package) whose import registers its dedicated emitter
PROVIDERS: dict[str, str] = {
    **dict.fromkeys(("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                     "collective-permute", "replica-id", "partition-id"), "collectives"),
    "select-and-scatter": "select_and_scatter",
    "fusion": "gemm_epilogue",
    "sort": "sort", "topk": "sort",
    "dot": "gemm",
    "fft": "fft",
    "dynamic-update-slice": "dynamic_update_slice",
    "convolution": "conv",
    "scatter": "scatter",
    "cholesky": "lapack",
}
# custom-call target -> its module; a target not named here (JAX's LAPACK calls, whose
# names lapack_calls.py derives) loads every module of CALL_TARGET_MODULES
CALL_TARGET_PROVIDERS: dict[str, str] = {
    "__xlapy$gemm_update": "gemm_update", "xlapy_host_callback": "host_callback",
    "TopK": "sort",
}
CALL_TARGET_MODULES = ("gemm_update", "host_callback", "sort", "lapack_calls")


def _load(name: str) -> None:
    importlib.import_module(f"{__package__}.{name}")


def emitter_for(opcode: str) -> Callable | None:
    """The dedicated emitter of `opcode`, importing its module first if need be; None: the
    generic loop kernel (kernels.py) computes it."""
    fn = CUSTOM_EMITTERS.get(opcode)
    if fn is None and opcode in PROVIDERS:
        _load(PROVIDERS[opcode])
        fn = CUSTOM_EMITTERS.get(opcode)
    return fn


def call_target_emitter(target: str) -> Callable | None:
    fn = CUSTOM_CALL_TARGETS.get(target)
    if fn is None:
        for name in ((CALL_TARGET_PROVIDERS[target],) if target in CALL_TARGET_PROVIDERS
                     else CALL_TARGET_MODULES):
            _load(name)
        fn = CUSTOM_CALL_TARGETS.get(target)
    return fn


def load_all() -> None:
    """Import every emitter module (each registers its emitters)."""
    for name in sorted(set(PROVIDERS.values()) | set(CALL_TARGET_MODULES)):
        _load(name)


@custom_emitter("custom-call")
def emit_custom_call(pe, instr, dest, operands) -> bool:
    fn = call_target_emitter(instr.attrs.get("custom_call_target", ""))
    return fn is not None and fn(pe, instr, dest, operands)
