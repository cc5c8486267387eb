"""What a while loop's state and the module's loops need from buffer assignment: leaves
with one slot (passed through or updated in place), leaves that start as zeros or
constants, parameters the module asks to alias, and the computations that run once per
iteration (program.py emits them)."""

from __future__ import annotations

import numpy as np

from xlapy.hlo.aliasing import leaf_position, module_aliases
from xlapy.hlo.ir import ELIDED, Computation, Instruction, Worklist
from xlapy.hlo.opcodes import ALIASING


def _single_buffer_leaves(body: Computation) -> set:
    """Leaves of a while loop's state that can keep one buffer across iterations instead
    of two (program._while swaps the two halves of the state every iteration, so every
    leaf is rewritten whole each time): a leaf the body returns unchanged, and a leaf the
    body only updates with a dynamic-update-slice (a stacked output), which then writes
    just its update (dynamic_update_slice.py). For the latter the old value must have no
    other reader in the body. Flat tuples of arrays only."""
    if len(body.parameters) != 1:
        return set()
    param = body.parameters[0]
    root = body.root
    if root.opcode != "tuple" or not param.shape.is_tuple or \
            any(e.is_tuple for e in param.shape.tuple_shapes) or \
            len(root.operands) != len(param.shape.tuple_shapes):
        return set()
    readers: dict[int, list] = {}   # leaf -> users of its get-tuple-elements
    for u in param.users:
        if u.opcode != "get-tuple-element":
            return set()   # the whole state read at once
        readers.setdefault(u.attrs["index"], []).extend(u.users)

    def own_leaf(i: Instruction, k: int) -> bool:
        return i.opcode == "get-tuple-element" and i.operands[0] is param and \
            i.attrs["index"] == k

    out = set()
    for k, e in enumerate(root.operands):
        if own_leaf(e, k):
            out.add(k)
        elif e.opcode == "dynamic-update-slice" and own_leaf(e.operands[0], k) and \
                readers.get(k) == [e] and root.operands.count(e) == 1 and \
                e.shape == e.operands[0].shape:
            out.add(k)
    return out


def zero_filled(instr: Instruction) -> bool:
    """Whether an array instruction is a broadcast of a scalar constant whose bytes are all
    zero (0, 0.0, false), alone or as a loop fusion's root: a while whose state starts as
    such a leaf (a scan's stacked outputs, its gradient accumulators) clears the state's
    buffer instead of copying the broadcast's output into it (half the memory traffic)."""
    root = instr.fused_computation.root if instr.opcode == "fusion" and \
        instr.attrs.get("kind", "kLoop") == "kLoop" else instr
    if root.opcode != "broadcast" or root.shape.is_tuple:
        return False
    c = root.operands[0]
    if c.opcode != "constant" or c.shape.rank != 0 or c.literal is ELIDED:
        return False
    return not any(np.asarray(c.literal).tobytes())


def leaf_origins(instr: Instruction) -> list[tuple]:
    """(instruction, its leaf index) holding each leaf of instr's value, looking through
    tuple and get-tuple-element."""
    if instr.opcode == "tuple":
        return [x for o in instr.operands for x in leaf_origins(o)]
    if instr.opcode == "get-tuple-element":
        shapes = instr.operands[0].shape.tuple_shapes
        start = sum(len(s.leaves()) for s in shapes[:instr.attrs["index"]])
        return leaf_origins(instr.operands[0])[start:start + len(instr.shape.leaves())]
    return [(instr, k) for k in range(len(instr.shape.leaves()))]


def invariant_leaves(loop: Instruction) -> frozenset:
    """The state leaves a while's body passes through unchanged (its root's leaf k is its
    parameter's leaf k)."""
    body = loop.attrs["body"]
    param = body.parameters[0]
    return frozenset(k for k, (i, j) in enumerate(leaf_origins(body.root))
                     if i is param and j == k)


def _requested_aliases(module) -> dict[int, int]:
    entry = module.entry
    starts, n = [], 0
    for p in entry.parameters:
        starts.append(n)
        n += len(p.shape.leaves())
    return {leaf_position(entry.root.shape, a.output_index):
            starts[a.parameter_number] + leaf_position(entry.parameters[a.parameter_number].shape,
                                                       a.parameter_index)
            for a in module_aliases(module)}


_PASS_ALONG = ALIASING  # pointer-only ops (the opcode table's aliases_operand column)


def _readers(param: Instruction) -> list:
    """(instruction, operand it reads) for every user of param's buffer, looking through
    the instructions that only pass pointers along (tuple, get-tuple-element, bitcast)."""
    out = []
    for v in (todo := Worklist([param])):
        for u in v.users:
            out.append((u, v))
            if u.opcode in _PASS_ALONG:
                todo.push(u)
    return out


def carried_in_place(body: Computation) -> set:
    """Leaves of a while body's state that it may update in place (the loop then keeps one
    buffer for each instead of two): root element k is a dynamic-update-slice of the
    parameter's element k (a scan's stacked outputs), written by that instruction alone,
    and every other reader of that element runs before it (so none sees the update)."""
    param = body.parameters[0] if len(body.parameters) == 1 else None
    root = body.root
    if param is None or root is None or root.opcode != "tuple" or not param.shape.is_tuple \
            or any(s.is_tuple for s in param.shape.tuple_shapes):
        return set()
    pos = {id(i): k for k, i in enumerate(body.post_order())}
    out = set()
    for k, d in enumerate(root.operands):
        if d.opcode != "dynamic-update-slice" or sum(o is d for o in root.operands) != 1:
            continue
        src = d.operands[0]
        if src.opcode != "get-tuple-element" or src.operands[0] is not param \
                or src.attrs["index"] != k or any(u is not root for u in d.users):
            continue
        same = [g for g in param.users
                if g.opcode == "get-tuple-element" and g.attrs["index"] == k]
        ok = True
        for g in same:
            for u, _ in _readers(g):
                if u is d:
                    continue
                # the root copies its other leaves out after d has run: none may be this one
                if u.opcode in _PASS_ALONG or pos.get(id(u), -1) >= pos[id(d)]:
                    ok = False
        if ok and not any(o is src for o in d.operands[1:]):
            out.add(k)
    return out


def _loop_computations(module) -> set[int]:
    """ids of the computations that run once per iteration of a while loop (its condition
    and body, and everything they call)."""
    out: set[int] = set()
    work = [c for comp in module.computations for i in comp.instructions
            if i.opcode == "while" for c in i.called_computations()]
    while work:
        c = work.pop()
        if id(c) not in out:
            out.add(id(c))
            work.extend(c.called_computations())
    return out
