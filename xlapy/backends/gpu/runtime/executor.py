"""Runs a Program's thunks on a Device (the CUDA driver's, cuda.py, or the host emulator's,
emulator.py): the same sequencing, buffer handling and control flow either way.

A Device offers:
  alloc(nbytes) -> int              an address (never 0; zero-byte buffers get one byte)
  free(addr)
  upload(addr, data: bytes)         asynchronous on the device's stream
  download(addr, nbytes) -> bytes   waits for the stream
  copy(dst, src, nbytes)
  launch(kernel, grid, block, shared_bytes, args: list[int])
  gemm(thunk: Gemm, out, lhs, rhs)
"""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from xlapy.backends.gpu.runtime.program import (Conditional, Copy, Gemm, Launch, Program,
                                                While)


class Device(Protocol):
    def alloc(self, nbytes: int) -> int: ...
    def free(self, addr: int) -> None: ...
    def upload(self, addr: int, data: bytes) -> None: ...
    def download(self, addr: int, nbytes: int) -> bytes: ...
    def copy(self, dst: int, src: int, nbytes: int) -> None: ...
    def launch(self, kernel: str, grid, block, shared_bytes: int, args: list) -> None: ...
    def gemm(self, thunk: Gemm, out: int, lhs: int, rhs: int) -> None: ...


class Executor:
    """One program on one device: constants uploaded once; per call, parameters uploaded,
    temporaries allocated, thunks run, results downloaded."""

    def __init__(self, program: Program, device: Device):
        self.program = program
        self.device = device
        self._constants: dict[int, int] = {}
        for buf in program.buffers:
            if buf.kind == "constant":
                addr = device.alloc(max(buf.nbytes, 1))
                device.upload(addr, buf.data)
                self._constants[buf.index] = addr

    def run(self, leaves: Sequence[np.ndarray]) -> list[bytes]:
        """leaves: the parameters' leaves in order (C-contiguous, physical order); returns
        the result leaves' bytes."""
        return self.start(leaves).result()

    def start(self, leaves: Sequence[np.ndarray]) -> "Pending":
        """Enqueue one call (uploads, kernels, copies) and return without waiting for the
        device, except where control flow reads a predicate back; Pending.result() waits."""
        dev = self.device
        addrs: dict[int, int] = dict(self._constants)
        owned = []
        try:
            for buf in self.program.buffers:
                if buf.kind == "constant":
                    continue
                addr = dev.alloc(max(buf.nbytes, 1))
                owned.append(addr)
                addrs[buf.index] = addr
            flat_params = [i for leaf_bufs in self.program.params for i in leaf_bufs]
            for i, arr in zip(flat_params, leaves):
                data = np.ascontiguousarray(arr).tobytes()
                if data:
                    dev.upload(addrs[i], data)
            self._run(self.program.thunks, addrs)
        except BaseException:
            for a in owned:
                dev.free(a)
            raise
        return Pending(self, addrs, owned)

    def _run(self, thunks, addrs) -> None:
        dev = self.device
        for t in thunks:
            if isinstance(t, Launch):
                dev.launch(t.kernel, t.grid, t.block, t.shared_bytes, [addrs[a] for a in t.args])
            elif isinstance(t, Copy):
                if t.nbytes and t.dst != t.src:
                    dev.copy(addrs[t.dst], addrs[t.src], t.nbytes)
            elif isinstance(t, While):
                while True:
                    self._run(t.cond, addrs)
                    if not dev.download(addrs[t.pred], 1)[0]:
                        break
                    self._run(t.body, addrs)
                    self._run(t.moves, addrs)
            elif isinstance(t, Conditional):
                self._run(t.branches[branch_index(dev, t, addrs)], addrs)
            elif isinstance(t, Gemm):
                dev.gemm(t, addrs[t.out], addrs[t.lhs], addrs[t.rhs])
            else:
                raise TypeError(f"unknown thunk {t!r}")


def branch_index(dev: Device, t: Conditional, addrs) -> int:
    """XLA's rule: a pred selects branch 0 when true; an s32 index out of range selects
    the last branch."""
    if t.selector_is_pred:
        return 0 if dev.download(addrs[t.selector], 1)[0] else 1
    k = int(np.frombuffer(dev.download(addrs[t.selector], 4), np.int32)[0])
    n = len(t.branches)
    return k if 0 <= k < n else n - 1


class Pending:
    """One call's results on the device; result() downloads them (waiting for the stream)
    once, then frees the call's buffers."""

    def __init__(self, executor: Executor, addrs: dict, owned: list):
        self._executor = executor
        self._addrs = addrs
        self._owned = owned
        self._result: list[bytes] | None = None

    @property
    def done(self) -> bool:
        return self._result is not None

    def result(self) -> list[bytes]:
        if self._result is None:
            ex = self._executor
            dev = ex.device
            try:
                self._result = [dev.download(self._addrs[i], ex.program.buffers[i].nbytes)
                                for i in ex.program.outputs]
            finally:
                for a in self._owned:
                    dev.free(a)
                self._owned = []
        return self._result
