"""The cpu emitters' registries: dedicated emitters by opcode, custom-call targets by name.

  @custom_emitter("sort")
  def emit(pe, instr, dest, operands) -> bool     False: not handled, the generic loop
                                                  kernel (kernels.py) computes instr
  @custom_call_target("TopK")
  def emit(pe, instr, dest, operands) -> bool     same signature; False: not handled

`pe` is the ProgramEmitter (program.py) emitting the computation, `dest` the output leaf
pointers, `operands` the operands' pointer trees. The emitter modules register themselves
when imported; emitters/__init__.py imports them all. Implemented custom-call targets:
  TopK                 sort.py (XLA's top_k: sort by the comparator, first k)
  lapack_?potrf_ffi,   lapack_calls.py (the LAPACK custom-calls jax emits for the cpu:
  lapack_?getrf_ffi,   potrf, getrf, trsm, geqrf, orgqr, syevd, gesdd, gesvd, gees, gehrd,
  ...                  sytrd, gtsv, geev (also c/z); their contracts in hlo/lapack_calls.py)
  __xlapy$gemm_update  gemm_update.py (W + alpha * A.B as one gemm)
  xlapy_host_callback  host_callback.py (a Python function: debug.print, pure_callback)
"""

from __future__ import annotations

from typing import Callable

from xlapy.hlo.opcodes import registrar

# opcode -> emitter(pe, instr, dest_leaves, operand_trees) -> bool
CUSTOM_EMITTERS: dict[str, Callable] = {}
# custom_call_target -> emitter, the same signature
CUSTOM_CALL_TARGETS: dict[str, Callable] = {}


custom_emitter = registrar(CUSTOM_EMITTERS, "cpu emitter")
custom_call_target = registrar(CUSTOM_CALL_TARGETS, "custom-call emitter", opcode_keys=False)


@custom_emitter("custom-call")
def emit_custom_call(pe, instr, dest, operands) -> bool:
    fn = CUSTOM_CALL_TARGETS.get(instr.attrs.get("custom_call_target", ""))
    return fn is not None and fn(pe, instr, dest, operands)
