"""Encapsulation: each cluster becomes a function with explicit inputs and outputs.

A cluster's signature:
  inputs     tensors produced outside the cluster (or fed) that its ops consume, in order of
             first use; those feeding a shape/axis operand (an op's const_inputs) are
             compile-time constants: their values key the compilation cache
  variables  the variables its ops read or update, passed in as their current values
  outputs    tensors its ops produce that the rest of the plan (or the fetch) needs
  writes     the variables it updates, returned as new values for the session to store
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xlapy.compat.v1.framework import gpu_present, is_gpu_device, is_xla_device
from xlapy.compat.v1.op_registry import get_op_def


@dataclass
class Cluster:
    name: str
    ops: list
    inputs: list = field(default_factory=list)
    const_inputs: list = field(default_factory=list)   # indices into inputs
    variables: list = field(default_factory=list)      # VariableV2 ops, in order of first use
    writes: list = field(default_factory=list)         # VariableV2 ops updated
    outputs: list = field(default_factory=list)

    @property
    def device(self) -> str:
        """XLA_GPU where the ops ask for a GPU, or ask for no device under session-level
        JIT, and a GPU is present; else XLA_CPU (an XLA device asked for) or CPU."""
        prefix = "/job:localhost/replica:0/task:0/device:"
        devices = [o.device for o in self.ops]
        if gpu_present() and (any(is_gpu_device(d) for d in devices)
                              or not any(d for d in devices)):
            return prefix + "XLA_GPU:0"
        return prefix + ("XLA_CPU:0" if any(is_xla_device(d) for d in devices) else "CPU:0")


def encapsulate(name: str, ops: list, plan_ops: set, fed: set, fetched: set) -> Cluster:
    members = set(ops)
    c = Cluster(name, list(ops))
    seen_in: dict = {}
    seen_var: set = set()
    for op in ops:
        d = get_op_def(op.type)
        consts = {i % max(len(op.inputs), 1) for i in d.const_inputs}
        for i, t in enumerate(op.inputs):
            if t.op.type == "VariableV2" and t not in fed:
                if t.op not in seen_var:
                    seen_var.add(t.op)
                    c.variables.append(t.op)
                if i in d.ref_inputs and t.op not in c.writes:
                    c.writes.append(t.op)
                continue
            if t.op in members and t not in fed:
                continue
            if t not in seen_in:
                seen_in[t] = len(c.inputs)
                c.inputs.append(t)
            if i in consts and seen_in[t] not in c.const_inputs:
                c.const_inputs.append(seen_in[t])
    for op in ops:
        for t in op.outputs:
            if t in fed:
                continue
            if t in fetched or any(u in plan_ops and u not in members for u in t._consumers):
                c.outputs.append(t)
    return c
