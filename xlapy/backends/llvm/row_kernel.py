"""Row kernels: a loop fusion whose values include per-row statistics (row fusion, see
passes/row_fusion.py) runs row by row.

For each row (all loop indices but the minor one):
  1. hoist: every value that a row broadcast repeats along the minor dimension and that
     costs a reduction (the row max and sum of a softmax, the mean and variance of a
     layernorm) is computed once, at index [row[d] for d in dims]; the elemental emitter's
     cache then answers the broadcast's per-element requests with it;
  2. output: an inner loop over the row's elements computes and stores the outputs: as
     vector code LANES at a time where elemental_vector has the values' vector forms (the
     statistics are splat across the lanes), with a scalar loop for the remainder; a row
     shorter than LANES as one vector with masked loads and stores (no loop: a softmax's
     10 classes); otherwise a scalar loop that LLVM vectorizes.

Materialization: an expensive elementwise value (exp, log, tanh, divide, ...) that both
feeds a hoisted reduction and the outputs (exp(x - max) in a softmax) is written to a
row-sized stack buffer while the reduction computes it, and the output loop reads it back
from L1 instead of computing it a second time. Only when every reduction it feeds is a
hoisted row reduction over the minor dimension (so it is computed at [row, k] for every k
of the row before the output loop) and the row fits in MAX_SCRATCH_BYTES.
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.llvm import elemental_reduce
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental_reduce import LANES
from xlapy.backends.llvm.loops import c64, entry_alloca, lanes_then_rest, loop_nest
from xlapy.hlo.ir import Worklist, operand_closure
from xlapy.hlo.opcodes import ELEMENTWISE
from xlapy.hlo.shapes import Shape
from xlapy.passes import fusion

EXPENSIVE = fusion.EXPENSIVE & ELEMENTWISE   # exp, log, tanh, divide, sqrt, ...
MAX_SCRATCH_BYTES = 64 * 1024


class RowPlan:
    def __init__(self, comp, loop_shape: Shape, hoisted: list, materialized: list):
        self.comp = comp
        self.shape = loop_shape
        self.minor = loop_shape.minor_to_major[0]
        self.hoisted = hoisted            # [(instruction, broadcast dims)]
        self.materialized = materialized  # [instruction]

    @staticmethod
    def make(comp, loop_shape: Shape) -> "RowPlan | None":
        hoisted = row_values(comp, loop_shape)
        if not hoisted:
            return None
        return RowPlan(comp, loop_shape, hoisted, _materializable(comp, loop_shape, hoisted))

    def emit(self, b: ir.IRBuilder, em, gens: dict, start, end, store_outputs,
             vector_outputs=None) -> None:
        """vector_outputs(count): a store of LANES outputs along the minor dimension (with
        count: of its first `count` lanes only), or None (called once the row buffers are
        in place)."""
        shape, minor = self.shape, self.minor
        n = shape.dims[minor]
        phase = ["hoist"]
        for x in self.materialized:
            _tee(em, gens[id(x)], x, n, minor, phase)
        vector_store, short = None, False
        if vector_outputs is not None:
            if elemental_reduce.SHORT_VECTORS and 2 <= n < LANES:
                vector_store = vector_outputs(n)
                short = vector_store is not None
            if vector_store is None:  # (then a row shorter than LANES is a scalar loop
                vector_store = vector_outputs(None)  # that LLVM is told not to vectorize)
        outer = Shape.array(shape.element_type,
                            tuple(1 if d == minor else k for d, k in enumerate(shape.dims)),
                            shape.minor_to_major)
        with loop_nest(b, outer, start, end) as index, em.scope():
            phase[0] = "hoist"
            for x, dims in self.hoisted:
                gens[id(x)]([index[d] for d in dims])
            phase[0] = "output"

            def at(store):
                def body(j):
                    full = list(index)
                    full[minor] = j
                    store(full)
                return body
            if short:  # the whole row, one masked vector
                at(vector_store)(c64(0))
            else:
                lanes_then_rest(b, 0, n, LANES, vector_store and at(vector_store),
                                at(store_outputs), "row")


def _tee(em, gen, instr, n: int, minor: int, phase: list) -> None:
    """Make gen store its values into a row buffer while the row is hoisted, and load them
    from it in the output loop."""
    t = instr.shape.element_type
    st = T.storage_type(t)
    buf = entry_alloca(em.b, st, n, name=f"row.{instr.name}")
    buf.align = 64
    compute = gen.fn

    def fn(index):
        b = em.b
        addr = b.gep(buf, [index[minor]], inbounds=True, source_etype=st)
        if phase[0] == "hoist":
            value = compute(index)
            T.store(b, value, addr, t)
            return value
        return T.load(b, addr, t)

    gen.fn = fn
    gen.tee = (buf, minor, phase)  # vector code computing the same values fills it too


def row_values(comp, loop_shape: Shape) -> list:
    """(instruction, dims) for each value of `comp` that a row broadcast repeats along the
    loop's minor dimension and that costs a reduction to compute, in dependency order."""
    if loop_shape.rank < 2 or loop_shape.minor_to_major[-1] == loop_shape.minor_to_major[0]:
        return []
    minor = loop_shape.minor_to_major[0]
    order = comp.post_order()
    out, seen = [], set()
    for i in order:
        if i.opcode != "broadcast" or i.shape.dims != loop_shape.dims:
            continue
        dims = tuple(i.attrs["dimensions"])
        x = i.operands[0]
        if minor in dims or not dims or id(x) in seen or not _subtree_has(x, "reduce"):
            continue
        seen.add(id(x))
        out.append((x, dims))
    pos = {id(i): k for k, i in enumerate(order)}
    return sorted(out, key=lambda xd: pos[id(xd[0])])


def _subtree_has(x, opcode: str) -> bool:
    return any(i.opcode == opcode for i in operand_closure(x))


def _materializable(comp, shape: Shape, hoisted: list) -> list:
    if shape.dims[shape.minor_to_major[0]] * 8 > MAX_SCRATCH_BYTES:
        return []
    minor = shape.minor_to_major[0]
    in_hoisted = {id(i) for x, _ in hoisted for i in operand_closure(x)}
    hoisted_ids = {id(x) for x, _ in hoisted}
    # values the output loop computes: the root's subtree, not entering hoisted values
    out_side, stack = set(), [comp.root]
    while stack:
        i = stack.pop()
        if id(i) in out_side or id(i) in hoisted_ids:
            continue
        out_side.add(id(i))
        stack.extend(i.operands)
    found = []
    for e in comp.post_order():
        if (e.opcode in EXPENSIVE and e.shape.dims == shape.dims and not e.shape.is_tuple
                and e.shape.minor_to_major == shape.minor_to_major
                and id(e) in in_hoisted and id(e) in out_side
                and _feeds_only_row_reductions_or_root(e, comp.root, shape, minor, in_hoisted)):
            found.append(e)
    return found[:2]


def _feeds_only_row_reductions_or_root(e, root, shape, minor, in_hoisted) -> bool:
    """Every path from e goes through same-shape elementwise ops to the root, or to a
    hoisted reduction over the minor dimension only."""
    for i in (todo := Worklist([e])):
        for u in i.users:
            if u.opcode == "reduce":
                if id(u) not in in_hoisted or list(u.attrs["dimensions"]) != [minor] \
                        or len(u.operands) != 2:
                    return False
            elif u.opcode in ELEMENTWISE and u.shape.dims == shape.dims \
                    and u.shape.minor_to_major == shape.minor_to_major:
                todo.push(u)
            else:
                return False
    return True
