"""Reducer computations: which reductions are a plain associative, commutative op, and the
op's identity (shared by the passes that split or fuse reductions and by the emitters).

  simple_reducer(comp)   "add" for ROOT add(p0, p1) (any order of p0, p1), ... else None
  identity(op, t)        the value x with op(x, y) == y for every y of element type t
"""

from __future__ import annotations

import numpy as np

from xlapy.hlo.opcodes import opcode_set

# ops whose reduction may be evaluated in any order and split into partial results (the
# emitters have vector forms for exactly these)
_ASSOCIATIVE = opcode_set({"add", "multiply", "maximum", "minimum", "and", "or"},
                          "reducers._ASSOCIATIVE")


def simple_reducer(comp) -> str | None:
    """The opcode if `comp` is ROOT op(p0, p1) of an associative, commutative op."""
    root = comp.root
    if (root.opcode in _ASSOCIATIVE and len(comp.parameters) == 2 and not root.shape.is_tuple
            and set(map(id, root.operands)) == set(map(id, comp.parameters))
            and len(comp.instructions) == 3):
        return root.opcode
    return None


def identity(op: str, t):
    """The identity of reduction op `op` on primitive type t (-0.0 for a float sum, so that
    a sum of -0.0 values stays -0.0)."""
    if op == "add":
        return -0.0 if t.is_float else 0
    if op == "multiply":
        return 1
    if op in ("maximum", "minimum"):
        if t.is_float:
            return -np.inf if op == "maximum" else np.inf
        if t.is_pred:
            return op == "minimum"
        info = np.iinfo(t.np_dtype)
        return info.min if op == "maximum" else info.max
    if op == "and":
        return True if t.is_pred else -1
    return False if t.is_pred else 0
