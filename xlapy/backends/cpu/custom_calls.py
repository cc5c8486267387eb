"""custom-call targets the cpu backend implements, keyed by custom_call_target.

  @custom_call_target("TopK")
  def emit(pe, instr, dest, operands) -> bool     same signature as program.py's custom
                                                  emitters; False: not handled

The "custom-call" custom emitter registered here dispatches on the target name; an unknown
target returns False and the program emitter reports it as unsupported. Implemented:
  TopK                 sort.py (XLA's top_k: sort by the comparator, first k)
  lapack_spotrf_ffi    lapack.py (Cholesky through LAPACK potrf, as jax emits for cpu)
  lapack_dpotrf_ffi
"""

from __future__ import annotations

from typing import Callable

from xlapy.backends.cpu.program import custom_emitter

CUSTOM_CALL_TARGETS: dict[str, Callable] = {}


def custom_call_target(*names: str):
    def register(fn):
        for name in names:
            if name in CUSTOM_CALL_TARGETS:
                raise RuntimeError(f"two emitters for custom-call target {name}")
            CUSTOM_CALL_TARGETS[name] = fn
        return fn
    return register


@custom_emitter("custom-call")
def emit_custom_call(pe, instr, dest, operands) -> bool:
    fn = CUSTOM_CALL_TARGETS.get(instr.attrs.get("custom_call_target", ""))
    return fn is not None and fn(pe, instr, dest, operands)
