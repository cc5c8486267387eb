"""One node of the profile: a graph operation (or a step-stats entry that names no
operation, like a compiled XLA cluster) with its static facts (op types, FLOPs, parameter
shape, inputs) and its executions per traced step.

Times come from the step statistics a traced Session.run fills (RunOptions(trace_level=
FULL_TRACE)): each NodeExecStats gives a start and op_end_rel_micros (0 counts as 1).
Entries of a CPU device (".../cpu:N", XLA_CPU) are cpu time. Entries of a GPU device
(GPU, XLA_GPU) are accelerator time, as xlapy records one entry per op or cluster, the
kernel's; where a step also has ".../stream:all" entries for the node (TF's GPU tracer:
kernels on the streams, the device entry being the host's scheduling), the stream
entries are the accelerator time and the device entries cpu time.

Memory: xlapy's step statistics carry no allocator records, so the bytes of an execution
are estimated from the op's outputs: requested, peak and output bytes are the size of the
outputs whose static shape is fully known (0 where a shape is partly unknown), residual
bytes 0.

With step < 0 a statistic is the average over the steps in which the node ran.
"""

from __future__ import annotations

import math
import re

_CANONICAL = re.compile(r".*/(device:)?(xla_)?(cpu|gpu):\d+")


class ExecStep:
    """The executions of one node in one step."""

    __slots__ = ("run_count", "all_start", "latest_end", "cpu", "gpu", "stream", "memory")

    def __init__(self):
        self.run_count = 0
        self.all_start = 0
        self.latest_end = 0
        self.cpu: list = []     # (start micros, micros) on a CPU device
        self.gpu: list = []     # ... on a GPU device
        self.stream: list = []  # ... on a GPU's stream:all
        self.memory: list = []  # (requested, peak, residual, output) bytes per execution

    def add_time(self, dev: str, start: int, micros: int) -> None:
        if start <= 0:
            return
        micros = max(int(micros), 1)
        self.all_start = min(self.all_start, start) if self.all_start else start
        self.latest_end = max(self.latest_end, start + micros)
        if "stream:all" in dev:
            self.stream.append((start, micros))
        elif _CANONICAL.fullmatch(dev):
            (self.gpu if "gpu" in dev else self.cpu).append((start, micros))
            self.run_count += 1

    def cpu_execs(self) -> list:
        return self.cpu + self.gpu if self.stream else self.cpu

    def accelerator_execs(self) -> list:
        return self.stream or self.gpu

    def cpu_micros(self) -> int:
        return sum(m for _, m in self.cpu_execs())

    def accelerator_micros(self) -> int:
        return sum(m for _, m in self.accelerator_execs())

    def bytes(self, i: int) -> int:
        return sum(m[i] for m in self.memory)


class ProfNode:
    """A profile node: see the module doc."""

    def __init__(self, name: str, op_type: str, op=None):
        self.name = name
        self.op = op_type
        self.op_types = {op_type}
        self.static_float_ops = 0
        self.shape: list = []            # the "shape" attr (variables): parameters
        self.inputs: list = []           # names of the input ops (data, then control)
        self.input_shapes: dict = {}     # data input index -> dims (-1 unknown)
        self.attrs: dict = {}
        self.canonical_device = ""
        self.execs: dict = {}            # step -> ExecStep
        self.out_bytes = 0               # static size of the outputs (memory estimate)
        if op is not None:
            self._from_op(op)

    def _from_op(self, op) -> None:
        self.attrs = dict(op.attr)
        shape = self.attrs.get("shape")
        if shape is not None and getattr(shape, "dims", None) is not None \
                and hasattr(shape, "is_fully_defined"):
            dims = [-1 if d is None else int(d) for d in shape.dims]
            self.shape = dims or [1]     # a scalar variable holds one parameter
        self.inputs = [t.op.name for t in op.inputs] + [c.name for c in op.control_inputs]
        for i, t in enumerate(op.inputs):
            self.input_shapes[i] = _dims_of(t.shape)
        total = 0
        for t in op.outputs:
            n = t.shape.num_elements()
            if n is not None and t.dtype.name not in ("string", "variant", "resource"):
                total += n * t.dtype.size
        self.out_bytes = total

    # ---- execution statistics ----------------------------------------------------------------
    def add_step_stat(self, step: int, device: str, ns) -> None:
        dev = device.lower()
        if _CANONICAL.fullmatch(dev):
            if self.canonical_device and self.canonical_device != dev:
                return  # the node is already recorded on another device
            if not self.canonical_device:
                self.canonical_device = dev
                self.op_types.add(dev)
        ex = self.execs.setdefault(step, ExecStep())
        ex.add_time(dev, int(ns.all_start_micros), int(ns.op_end_rel_micros))
        if dev == self.canonical_device and ns.all_start_micros > 0:
            b = self.out_bytes
            ex.memory.append((b, b, 0, b))

    def _per_step(self, step: int, fn) -> int:
        if not self.execs:
            return 0
        if step >= 0:
            ex = self.execs.get(step)
            return fn(ex) if ex is not None else 0
        return sum(fn(ex) for ex in self.execs.values()) // len(self.execs)

    def run_count(self, step: int) -> int:
        return self._per_step(step, lambda e: e.run_count)

    def cpu_exec_micros(self, step: int) -> int:
        return self._per_step(step, ExecStep.cpu_micros)

    def accelerator_exec_micros(self, step: int) -> int:
        return self._per_step(step, ExecStep.accelerator_micros)

    def exec_micros(self, step: int) -> int:
        return self._per_step(step, lambda e: e.cpu_micros() + e.accelerator_micros())

    def mem_bytes(self, step: int, i: int) -> int:
        """i: 0 requested, 1 peak, 2 residual, 3 output."""
        return self._per_step(step, lambda e: e.bytes(i))

    def float_ops(self, step: int) -> int:
        """The static FLOPs; times the runs in the step for a node that ran."""
        if not self.execs:
            return self.static_float_ops
        return self.static_float_ops * self.run_count(step)

    def parameters(self) -> int:
        if not self.shape or any(d < 0 for d in self.shape):
            return 0
        return math.prod(self.shape)

    def stats(self, step: int) -> dict:
        """The node's own statistics for `step`, by GraphNodeProto field name."""
        return {"run_count": self.run_count(step), "exec_micros": self.exec_micros(step),
                "accelerator_exec_micros": self.accelerator_exec_micros(step),
                "cpu_exec_micros": self.cpu_exec_micros(step),
                "requested_bytes": self.mem_bytes(step, 0),
                "peak_bytes": self.mem_bytes(step, 1),
                "residual_bytes": self.mem_bytes(step, 2),
                "output_bytes": self.mem_bytes(step, 3),
                "parameters": self.parameters(), "float_ops": self.float_ops(step)}


def _dims_of(shape) -> list:
    if shape.dims is None:
        return []
    return [-1 if d is None else int(d) for d in shape.dims] or [1]
