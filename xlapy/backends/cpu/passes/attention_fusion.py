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
row fusion's operands are s and values shared by every batch element (a mask or bias
broadcast across the batch dims: operands of the fused attention after q, k and v), and its
computation works row by row along s's last dim, so that per_element_rows() can restate it
for one batch element and any block of its rows (elementwise ops, reductions along the
rows, broadcasts of scalars, of per-row values or of the shared values);
s and p have no other users; MIN_ROWS rows of T fit 4 x BLOCK_BYTES; at least two blocks
in all (a single one is better split by the gemms themselves).
"""

from __future__ import annotations

from xlapy.backends.cpu.passes.reshape_bitcast import fused_computations
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


def _shared_rows(i: Instruction, nb: int):
    """For a parameter broadcast across the batch dims only (a mask or bias shared by
    every batch element: each use a broadcast onto trailing dims, in order): the element
    stride of its dim that runs along the rows (0 when none does). Else None."""
    if not i.users or not i.shape.has_default_layout or i.shape.rank > 2:
        return None
    row = None
    for u in i.users:
        dims = list(u.attrs.get("dimensions", ())) if u.opcode == "broadcast" else None
        if dims is None or any(d < nb for d in dims) or dims != sorted(dims):
            return None
        at = dims.index(nb) if nb in dims else None
        if row is not None and at != row:
            return None
        row = at
    if row is None:
        return 0
    stride = 1
    for d in i.shape.dims[row + 1:]:
        stride *= d
    return stride


def per_element_rows(comp: Computation, nb: int, as_param: Instruction | None = None,
                     root: Instruction | None = None):
    """The row computation over [batch..., S, T] (nb batch dims) restated for one batch
    element, [S, T]: (a new computation computing `root` (default comp's root), its
    parameters' sources [(instruction, row stride)]), or None when some instruction does
    not restate that way. Its parameters: `as_param` (an instruction standing for one: the
    first dot of a fused attention; default comp's parameter 0) without the batch dims, and
    the other parameters it reaches, each broadcast across the batch dims only (a shared
    mask: _shared_rows), as they are; a block of rows reads them from its first row on
    (row stride: elements from one row to the next; 0 when they do not vary by row)."""
    out = Computation(f"{comp.name}_rows")
    new: dict[int, Instruction] = {}
    batch = None
    root = comp.root if root is None else root
    if root is None:
        return None
    if as_param is None:
        as_param = next((p for p in comp.parameters if p.parameter_number == 0), None)
    shared: set = set()
    sources = []

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

    for i in _closure(root, as_param):
        attrs = dict(i.attrs)
        if i is as_param or i.opcode == "parameter":
            stride = None if i is as_param else _shared_rows(i, nb)
            if i is as_param:
                shape = drop(i.shape)
                stride = shape.dims[-1] if shape is not None and shape.rank == 2 else None
            else:
                shape = i.shape
                shared.add(id(i))
            if shape is None or stride is None:
                return None
            p = Instruction("parameter", shape, name=i.name, parameter_number=len(sources))
            out.add_instruction(p)
            new[id(i)] = p
            sources.append((i, stride))
            continue
        shape = drop(i.shape)
        if shape is None:
            return None
        if i.opcode == "constant":
            if i.shape.rank != 0:
                return None
        elif i.opcode == "broadcast":
            # of a scalar, of per-row values along the row (row r from row r only), or of
            # a shared parameter onto the trailing dims
            o = i.operands[0].shape
            dims = list(attrs.get("dimensions", ()))
            if o.rank == 0:
                attrs["dimensions"] = ()
            elif id(i.operands[0]) in shared:
                attrs["dimensions"] = tuple(d - nb for d in dims)
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
        if any(id(o) in shared for o in i.operands) and i.opcode != "broadcast":
            return None
        try:
            ops = [new[id(o)] for o in i.operands]
        except KeyError:
            return None
        x = Instruction(i.opcode, shape, ops, attrs, i.name, dict(i.metadata), i.literal)
        out.add_instruction(x)
        new[id(i)] = x
    if not any(x is as_param for x, _ in sources):
        return None
    out.root = new[id(root)]
    return out, sources


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
        fused = fused_computations(module)
        changed = False
        for comp in [c for c in module.computations if id(c) not in fused]:
            for f in list(comp.instructions):
                if f.parent is not comp or not self._candidate(f):
                    continue
                self._fuse(module, comp, f)
                changed = True
        return changed

    @staticmethod
    def _scores(f: Instruction):
        """The operand index of f's scores (the first dot), or None."""
        found = [k for k, o in enumerate(f.operands)
                 if o.opcode == "dot" and len(o.users) == 1 and not o.is_root]
        return found[0] if len(found) == 1 else None

    @classmethod
    def _candidate(cls, f: Instruction) -> bool:
        if f.opcode != "fusion" or f.attrs.get("kind") != "kLoop" or f.shape.is_tuple:
            return False
        j = cls._scores(f)
        if j is None or len(f.users) != 1 or f.is_root:
            return False
        d1, d2 = f.operands[j], f.users[0]
        if d2.opcode != "dot" or d2.operands[0] is not f or d2.operands[1] is f:
            return False
        if attention_plans(d1, d2, f.shape) is None:
            return False
        nb = len(d1.attrs.get("lhs_batch_dims", ()))
        fc = f.fused_computation
        param = next((p for p in fc.parameters if p.parameter_number == j), None)
        return param is not None and per_element_rows(fc, nb, as_param=param) is not None

    @classmethod
    def _fuse(cls, module: Module, comp: Computation, f: Instruction) -> None:
        j = cls._scores(f)
        d1, d2 = f.operands[j], f.users[0]
        fc = Computation(f"fused_{d2.name.replace('.', '_')}_attention")
        extras = [o for k, o in enumerate(f.operands) if k != j]
        ops = [d1.operands[0], d1.operands[1], d2.operands[1]] + extras
        params = [Instruction("parameter", o.shape, name=f"param_{k}", parameter_number=k)
                  for k, o in enumerate(ops)]
        for p in params:
            fc.add_instruction(p)
        s = Instruction("dot", d1.shape, params[:2], dict(d1.attrs), d1.name, dict(d1.metadata))
        fc.add_instruction(s)
        new = {}
        for i in f.fused_computation.post_order():
            if i.opcode == "parameter":
                k = i.parameter_number
                new[id(i)] = s if k == j else params[3 + (k if k < j else k - 1)]
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
