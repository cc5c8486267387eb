"""A compiled gpu program: its buffers and the thunks that run it (as XLA's thunk sequence).

  Buffer       one device allocation: a parameter leaf, a constant (uploaded once per
               device), or a temporary of one call
  Launch       a kernel of the PTX module on its grid and block, pointer arguments by
               buffer index (outputs first, then inputs)
  Copy         device-to-device copy (loop state, conditional results)
  While        cond thunks, then the predicate read back; body thunks; the moves from the
               body's results into the loop state
  Conditional  the selector read back (pred: true -> branch 0; s32: out of range -> the
               last branch), one branch's thunks
  Gemm         a dot through cuBLAS (f32/f16/bf16, row-major operands)
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Buffer:
    index: int
    nbytes: int
    kind: str                      # "param" | "constant" | "temp"
    param: tuple | None = None     # (parameter number, leaf number) of a "param"
    data: bytes | None = None      # a constant's bytes, physical order


@dataclass(frozen=True)
class Launch:
    kernel: str
    grid: tuple
    block: tuple
    args: tuple                    # buffer indices: outputs, then inputs
    shared_bytes: int = 0


@dataclass(frozen=True)
class Copy:
    dst: int
    src: int
    nbytes: int


@dataclass
class While:
    cond: list
    pred: int                      # buffer holding the condition's pred
    body: list
    moves: list                    # Copy thunks: body results -> loop state


@dataclass
class Conditional:
    selector: int
    selector_is_pred: bool
    branches: list                 # per branch: its thunks (results copied to the outputs)


@dataclass(frozen=True)
class Gemm:
    """out[b] = lhs[b] @ rhs[b] for row-major [batch, m, k] x [batch, k, n] -> [batch, m, n]."""
    out: int
    lhs: int
    rhs: int
    batch: int
    m: int
    n: int
    k: int
    dtype: str                     # "f32" | "f16" | "bf16"


@dataclass(frozen=True)
class KernelInfo:
    """Which HLO instruction a kernel computes, how, and its launch."""
    name: str
    instruction: str
    kind: str                      # "loop" | "row-reduction"
    grid: tuple
    block: tuple


@dataclass
class Program:
    buffers: list = field(default_factory=list)
    thunks: list = field(default_factory=list)
    params: list = field(default_factory=list)    # per parameter: its leaves' buffer indices
    outputs: list = field(default_factory=list)   # the result's leaves' buffer indices
    kernels: list = field(default_factory=list)   # KernelInfo, in emission order
    ptx: str = ""
    llvm_ir: str = ""                              # the kernels before NVPTX (the emulator's)

    def launches(self) -> list:
        """Every Launch thunk, nested ones included."""
        out = []

        def walk(thunks):
            for t in thunks:
                if isinstance(t, Launch):
                    out.append(t)
                elif isinstance(t, While):
                    walk(t.cond)
                    walk(t.body)
                elif isinstance(t, Conditional):
                    for br in t.branches:
                        walk(br)
        walk(self.thunks)
        return out
