"""Runs a Program's thunks on a Device (the CUDA driver's, cuda.py, or the host emulator's,
emulator.py): the same sequencing, buffer handling and control flow either way.

A Device (one program's kernels) offers:
  context                           the memory its buffers live in (device_array.py lists
                                    what a context offers: allocator, upload, download,
                                    copy, synchronize)
  launch(kernel, grid, block, shared_bytes, args: list[int])
  gemm(thunk: Gemm, out, lhs, rhs)

Every block comes from the context's caching allocator (allocator.py): a call's
temporaries go back to it when the call's work is queued (the stream orders their reuse),
its results are blocks the caller owns (DeviceArrays); nothing waits for the device but
reading a loop's predicate or a conditional's selector.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, Sequence

import numpy as np

from xlapy.backends.gpu.runtime.program import (Conditional, Copy, Gemm, Launch, Program,
                                                While)


class Device(Protocol):
    context: object
    def launch(self, kernel: str, grid, block, shared_bytes: int, args: list) -> None: ...
    def gemm(self, thunk: Gemm, out: int, lhs: int, rhs: int) -> None: ...


class Borrowed(NamedTuple):
    """A result that is an input's own block (the entry returns a parameter): leaf k."""
    leaf: int


class Executor:
    """One program on one device: constants uploaded once; per call, NumPy parameters
    uploaded (device blocks used as they are), temporaries allocated, thunks queued."""

    def __init__(self, program: Program, device: Device):
        self.program = program
        self.device = device
        self.context = ctx = device.context
        self._constants: dict[int, int] = {}
        for buf in program.buffers:
            if buf.kind == "constant":
                addr = ctx.allocator.alloc(buf.nbytes)
                if buf.nbytes:
                    ctx.upload(addr, np.frombuffer(buf.data, np.uint8))
                self._constants[buf.index] = addr
        self._params = [i for leaf_bufs in program.params for i in leaf_bufs]
        self._temps = [(b.index, b.nbytes) for b in program.buffers if b.kind == "temp"]

    def start(self, inputs: Sequence) -> list:
        """Queue one call. inputs: per parameter leaf, a C-contiguous NumPy array in
        physical order (uploaded) or the address of a device block (read in place).
        Returns per result leaf an address the caller owns, or Borrowed(k) when the result
        is input leaf k's block as given."""
        ctx = self.context
        pool = ctx.allocator
        addrs: dict[int, int] = dict(self._constants)
        owned: dict[int, int] = {}
        made: list[int] = []
        try:
            for i, n in self._temps:
                owned[i] = addrs[i] = pool.alloc(n)
            for i, x in zip(self._params, inputs):
                if isinstance(x, int):
                    addrs[i] = x
                    continue
                owned[i] = addrs[i] = pool.alloc(x.nbytes)
                if x.nbytes:
                    ctx.upload(addrs[i], x)
            self._run(self.program.thunks, addrs)
            results: list = []
            for i in self.program.outputs:
                if i in owned and owned[i] not in made:
                    results.append(owned[i])
                    made.append(owned[i])
                elif i not in owned and i in self._params:
                    results.append(Borrowed(self._params.index(i)))
                else:  # a constant, or a block already returned once: a copy of its own
                    nbytes = self.program.buffers[i].nbytes
                    a = pool.alloc(nbytes)
                    made.append(a)
                    if nbytes:
                        ctx.copy(a, addrs[i], nbytes)
                    results.append(a)
        except BaseException:
            for a in set(owned.values()) | set(made):
                pool.free(a)
            raise
        for a in owned.values():
            if a not in made:
                pool.free(a)
        return results

    def _run(self, thunks, addrs) -> None:
        dev = self.device
        for t in thunks:
            if isinstance(t, Launch):
                dev.launch(t.kernel, t.grid, t.block, t.shared_bytes, [addrs[a] for a in t.args])
            elif isinstance(t, Copy):
                if t.nbytes and t.dst != t.src:
                    self.context.copy(addrs[t.dst], addrs[t.src], t.nbytes)
            elif isinstance(t, While):
                while True:
                    self._run(t.cond, addrs)
                    if not read_scalar(self.context, addrs[t.pred], np.uint8):
                        break
                    self._run(t.body, addrs)
                    self._run(t.moves, addrs)
            elif isinstance(t, Conditional):
                self._run(t.branches[branch_index(self.context, t, addrs)], addrs)
            elif isinstance(t, Gemm):
                dev.gemm(t, addrs[t.out], addrs[t.lhs], addrs[t.rhs])
            else:
                raise TypeError(f"unknown thunk {t!r}")


def read_scalar(ctx, addr: int, dtype):
    """One element read back (waits for the stream)."""
    out = np.empty(1, dtype)
    ctx.download(addr, out)
    return out[0]


def branch_index(ctx, t: Conditional, addrs) -> int:
    """XLA's rule: a pred selects branch 0 when true; an s32 index out of range selects
    the last branch."""
    if t.selector_is_pred:
        return 0 if read_scalar(ctx, addrs[t.selector], np.uint8) else 1
    k = int(read_scalar(ctx, addrs[t.selector], np.int32))
    n = len(t.branches)
    return k if 0 <= k < n else n - 1
