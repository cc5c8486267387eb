"""What tensorflow.python.framework.op_def_registry answers: the registered op types with
their name and whether they are stateful (random ops, variables, assignments, py_func)."""

from __future__ import annotations

from dataclasses import dataclass

from xlapy.compat.v1.op_registry import registered_ops


@dataclass(frozen=True)
class OpDef:
    name: str
    is_stateful: bool


def get_registered_ops() -> dict:
    """{op type: OpDef} (TF 1.x's op_def_registry.get_registered_ops())."""
    return {name: OpDef(name, d.stateful) for name, d in registered_ops().items()}


def get(name: str):
    """The OpDef of op type `name`, or None (TF 2's op_def_registry.get)."""
    d = registered_ops().get(name)
    return None if d is None else OpDef(name, d.stateful)
