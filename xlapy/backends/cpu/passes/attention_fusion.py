"""attention-fusion: a row kernel between two batched dots runs per batch element, in cache.

    s = dot(q, k)      f32[b,h,S,T]   batch dims leading, one free dim each side
    p = fusion(s)      f32[b,h,S,T]   kLoop: rows of s (softmax: max, exp, sum, divide)
    o = dot(p, v)      batch dims {0..}, contracting the last dim of p
 ->
    o = fusion(q, k, v), kind=kCustom, calls={s, p's computation inlined, o}

As three kernels, attention's scores and probabilities (b*h*S*T values each: 4 MB in the
model suite's block) go to memory and come back three times, with a pool barrier after
each kernel. The fused form (emitters/attention.py) runs, for each batch element and block
of rows (block_rows: all S rows when S x T fits BLOCK_BYTES) on one thread, the first gemm
into a thread-local block, the row computation on that block, and the second gemm from it:
the block stays in the core's L2 cache and the intermediate arrays are never written. The
fused computation holds the three steps as HLO, so the interpreter evaluates the optimized
module as any other.

Taken when: both dots are f32 / f64 strided gemms (dot_general_plan.strided_plan) whose
loops are exactly their batch dims, in the same order and sizes; s, p default layout; the
row fusion's only operand is s, and its computation works row by row along s's last dim,
so that per_element_rows() can restate it for one batch element and any block of its rows
(elementwise ops, reductions along the rows, broadcasts of scalars or of per-row values);
s and p have no other users; MIN_ROWS rows of T fit 4 x BLOCK_BYTES; at least two blocks
in all (a single one is better split by the gemms themselves).
"""

from __future__ import annotations

from xlapy.backends.cpu.passes.dot_general_plan import strided_plan
from xlapy.hlo.ir import Computation, Instruction, Module
from xlapy.hlo.opcodes import ELEMENTWISE
from xlapy.hlo.shapes import Shape

KIND = "kCustom"
BLOCK_BYTES = 256 * 1024   # a block of scores (and one of probabilities) per thread: rows of
MIN_ROWS = 16              # at least MIN_ROWS, as many as fit BLOCK_BYTES (all S when they fit)


def block_rows(rows: int, cols: int, esize: int) -> int:
    """Rows of S x T computed at a time: as many as fit BLOCK_BYTES, at least MIN_ROWS."""
    return min(rows, max(MIN_ROWS, BLOCK_BYTES // max(cols * esize, 1)))


def _fused_computations(module: Module) -> set:
    return {id(i.fused_computation) for c in module.computations for i in c.instructions
            if i.opcode == "fusion"}


def _closure(root: Instruction, stop) -> list:
    """root's operand closure in post order, not looking through `stop`."""
    order, seen = [], set()
    stack = [(root, False)]
    while stack:
        i, expanded = stack.pop()
        if expanded:
            order.append(i)
            continue
        if id(i) in seen:
            continue
        seen.add(id(i))
        stack.append((i, True))
        if i is not stop:
            stack.extend((o, False) for o in reversed(i.operands))
    return order


def per_element_rows(comp: Computation, nb: int, as_param: Instruction | None = None,
                     root: Instruction | None = None) -> Computation | None:
    """The row computation over [batch..., S, T] (nb batch dims) restated for one batch
    element, [S, T]: a new computation computing `root` (default comp's root) from the
    parameters it reaches and `as_param` (an instruction standing for a parameter: the
    first dot of a fused attention), each without the batch dims. None when some
    instruction does not restate that way."""
    out = Computation(f"{comp.name}_rows")
    new: dict[int, Instruction] = {}
    batch = None
    root = comp.root if root is None else root
    if root is None:
        return None

    def drop(shape: Shape):
        nonlocal batch
        if shape.is_tuple or not shape.has_default_layout:
            return None
        if shape.rank == 0:
            return shape
        if shape.rank <= nb:
            return None
        lead = shape.dims[:nb]
        if batch is None:
            batch = lead
        if lead != batch:
            return None
        return Shape.array(shape.element_type, shape.dims[nb:])

    params = 0
    for i in _closure(root, as_param):
        shape = drop(i.shape)
        if shape is None:
            return None
        attrs = dict(i.attrs)
        if i.opcode == "parameter" or i is as_param:
            p = Instruction("parameter", shape, name=i.name, parameter_number=params)
            params += 1
            out.add_instruction(p)
            new[id(i)] = p
            continue
        if i.opcode == "constant":
            if i.shape.rank != 0:
                return None
        elif i.opcode == "broadcast":
            # of a scalar, or of per-row values along the row (row r from row r only)
            o = i.operands[0].shape
            dims = list(attrs.get("dimensions", ()))
            if o.rank == 0:
                attrs["dimensions"] = ()
            elif dims[:nb] == list(range(nb)) and dims[nb:] in ([nb], [nb, nb + 1]):
                attrs["dimensions"] = tuple(d - nb for d in dims[nb:])
            else:
                return None
        elif i.opcode == "reduce":
            # along the rows only: each row's statistic from that row
            if len(i.operands) != 2 or i.operands[1].shape.rank != 0:
                return None
            if list(attrs.get("dimensions", ())) != [nb + 1] or i.operands[0].shape.rank != nb + 2:
                return None
            attrs["dimensions"] = (1,)
        elif i.opcode not in ELEMENTWISE or i.opcode == "map":
            return None
        try:
            ops = [new[id(o)] for o in i.operands]
        except KeyError:
            return None
        x = Instruction(i.opcode, shape, ops, attrs, i.name, dict(i.metadata), i.literal)
        out.add_instruction(x)
        new[id(i)] = x
    out.root = new[id(root)]
    return out


def _same_loops(p1: dict, p2: dict, n_batch: int) -> bool:
    """Both plans loop over their batch dims only (no free dim left over), the same sizes
    in the same order."""
    l1, l2 = p1["loops"], p2["loops"]
    return (len(l1) == len(l2) == n_batch and [x[0] for x in l1] == [x[0] for x in l2])


def attention_plans(dot1: Instruction, dot2: Instruction, p_shape: Shape):
    """(plan1, plan2) of the two dots when they qualify (the row computation between them
    is per_element_rows' to judge), else None. p_shape: the row computation's result shape
    (dot2's lhs)."""
    s = dot1.shape
    t = s.element_type.name
    if t not in ("f32", "f64") or dot2.shape.element_type.name != t:
        return None
    if not (s.has_default_layout and p_shape.has_default_layout) or p_shape.dims != s.dims:
        return None
    if p_shape.element_type != s.element_type:
        return None
    a1, a2 = dot1.attrs, dot2.attrs
    nb = len(a1.get("lhs_batch_dims", ()))
    if nb < 1 or s.rank != nb + 2:
        return None
    if list(a2.get("lhs_batch_dims", ())) != list(range(nb)) \
            or list(a2.get("lhs_contracting_dims", ())) != [nb + 1] \
            or dot2.shape.rank != nb + 2:
        return None
    p1 = strided_plan(a1, dot1.operands[0].shape, dot1.operands[1].shape, s)
    p2 = strided_plan(a2, p_shape, dot2.operands[1].shape, dot2.shape)
    if p1 is None or p2 is None or p1.get("out_t") != t or p2.get("out_t") != t:
        return None
    n_batch = sum(1 for d in s.dims[:nb] if d != 1)
    if not _same_loops(p1, p2, n_batch):
        return None
    rows_s, cols_t = s.dims[nb], s.dims[nb + 1]
    if (p1["m"], p1["n"], p2["m"], p2["k"]) != (rows_s, cols_t, rows_s, cols_t):
        return None
    es = s.element_type.bits // 8
    if MIN_ROWS * cols_t * es > 4 * BLOCK_BYTES:
        return None
    if p1["batch"] * -(-rows_s // block_rows(rows_s, cols_t, es)) < 2:
        return None   # one block: the gemms split across threads by themselves do better
    return p1, p2


class AttentionFusion:
    """See the module docstring. `run(module) -> changed`."""
    name = "attention-fusion"

    def run(self, module: Module) -> bool:
        fused = _fused_computations(module)
        changed = False
        for comp in [c for c in module.computations if id(c) not in fused]:
            for f in list(comp.instructions):
                if f.parent is not comp or not self._candidate(f):
                    continue
                self._fuse(module, comp, f)
                changed = True
        return changed

    @staticmethod
    def _candidate(f: Instruction) -> bool:
        if f.opcode != "fusion" or f.attrs.get("kind") != "kLoop" or len(f.operands) != 1:
            return False
        d1 = f.operands[0]
        if d1.opcode != "dot" or len(d1.users) != 1 or d1.is_root:
            return False
        if len(f.users) != 1 or f.is_root:
            return False
        d2 = f.users[0]
        if d2.opcode != "dot" or d2.operands[0] is not f or d2.operands[1] is f:
            return False
        if attention_plans(d1, d2, f.shape) is None:
            return False
        nb = len(d1.attrs.get("lhs_batch_dims", ()))
        rows = per_element_rows(f.fused_computation, nb)
        return rows is not None and len(rows.parameters) == 1

    @staticmethod
    def _fuse(module: Module, comp: Computation, f: Instruction) -> None:
        d1, d2 = f.operands[0], f.users[0]
        fc = Computation(f"fused_{d2.name.replace('.', '_')}_attention")
        ops = [d1.operands[0], d1.operands[1], d2.operands[1]]
        params = [Instruction("parameter", o.shape, name=f"param_{k}", parameter_number=k)
                  for k, o in enumerate(ops)]
        for p in params:
            fc.add_instruction(p)
        s = Instruction("dot", d1.shape, params[:2], dict(d1.attrs), d1.name, dict(d1.metadata))
        fc.add_instruction(s)
        new = {}
        for i in f.fused_computation.post_order():
            if i.opcode == "parameter":
                new[id(i)] = s
                continue
            x = Instruction(i.opcode, i.shape, [new[id(o)] for o in i.operands], dict(i.attrs),
                            i.name, dict(i.metadata), i.literal)
            fc.add_instruction(x)
            new[id(i)] = x
        o = Instruction("dot", d2.shape, [new[id(f.fused_computation.root)], params[2]],
                        dict(d2.attrs), d2.name, dict(d2.metadata))
        fc.add_instruction(o)
        fc.root = o
        module.add_computation(fc, before=comp)
        fusion = Instruction("fusion", d2.shape, ops, {"kind": KIND, "calls": fc},
                             f"{d2.name.split('.')[0]}_attention_fusion", dict(d2.metadata))
        comp.add_instruction(fusion)
        comp.replace_instruction(d2, fusion)
        comp.remove_instruction(f)
        comp.remove_instruction(d1)
        comp.instructions = comp.post_order()


def attention_parts(comp: Computation):
    """(dot1, the row instructions' computation as fused, dot2) of a computation this
    pass built, or None."""
    o = comp.root
    if o is None or o.opcode != "dot" or o.operands[1].opcode != "parameter":
        return None
    dots = [i for i in comp.instructions if i.opcode == "dot" and i is not o]
    if len(dots) != 1:
        return None
    s = dots[0]
    if not all(x.opcode == "parameter" for x in s.operands):
        return None
    return s, o
