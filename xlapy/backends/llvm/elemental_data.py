"""Elemental rules for data movement and indexing: each maps an output index to operand
indices (no data is moved until a loop stores the final value).

  broadcast       out[i] = in[i[dimensions]]
  reshape         via the logical row-major linear index of each group of dimensions
                  with equal element counts (reshape_groups)
  bitcast         via the PHYSICAL linear index (layouts of both shapes)
  transpose       out[i] = in[i permuted back]
  slice           in[start + i*stride]
  concatenate     select the operand whose range holds i[d]
  pad             edge/interior padding: the operand element if i maps onto one, else the pad value
  reverse         in[d-1-i] on the reversed dims
  iota            i[iota_dimension] converted to the element type
  dynamic-slice   starts clamped to [0, dim - size] (XLA semantics), read at start + i
  dynamic-update-slice  the update element where i lies in the (clamped) window, else operand
  gather          XLA's general gather with clamped starts (see _gather)
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import TupleGen, elemental_rule, lowering_error
from xlapy.backends.llvm.elemental_ops import convert_value
from xlapy.backends.llvm.loops import (c64, clamp_index, index_of, linear_of, row_major_index_of,
                                       row_major_linear)
from xlapy.hlo.shapes import S64


@elemental_rule("copy", "opt-barrier")
def _identity(em, instr, gens, index):
    return gens[0](index)


@elemental_rule("constant")
def _constant(em, instr, gens, index):
    t = instr.shape.element_type
    if instr.shape.rank == 0 and instr.literal is not None and not isinstance(instr.literal, tuple):
        try:
            return T.const(t, instr.literal.reshape(()).item() if hasattr(instr.literal, "reshape")
                           else instr.literal)
        except AttributeError:
            pass
    g = em.constant_global(instr)
    b = em.b
    addr = b.gep(g, [c64(0), c64(0)], inbounds=True, source_etype=g.value_type)
    addr = b.gep(addr, [linear_of(b, instr.shape, index)], inbounds=True,
                 source_etype=T.storage_type(t))
    return T.load(b, addr, t)


@elemental_rule("broadcast")
def _broadcast(em, instr, gens, index):
    return gens[0]([index[d] for d in instr.attrs["dimensions"]])


@elemental_rule("reshape")
def _reshape(em, instr, gens, index):
    b = em.b
    src = instr.operands[0].shape
    if src.dims == instr.shape.dims:
        return gens[0](index)
    groups = reshape_groups(src.dims, instr.shape.dims)
    if groups is None:
        linear = row_major_linear(b, instr.shape.dims, index)
        return gens[0](row_major_index_of(b, src.dims, linear))
    out = [c64(0)] * src.rank
    for sdims, ddims in groups:
        if len(sdims) == 1 and len(ddims) == 1:
            out[sdims[0]] = index[ddims[0]]
            continue
        linear = row_major_linear(b, [instr.shape.dims[d] for d in ddims],
                                  [index[d] for d in ddims])
        for d, v in zip(sdims, row_major_index_of(b, [src.dims[d] for d in sdims], linear)):
            out[d] = v
    return gens[0](out)


def reshape_groups(src_dims, dst_dims):
    """A reshape's dimensions in groups of equal element count: [(source dims, result
    dims)], size-1 dimensions left out (their source index is 0), so that only a group of
    several dimensions needs the linear index and its division: inserting or removing
    size-1 dimensions ([1,8,60] <-> [8,60]) maps indices directly, with no division, which
    would hide the access pattern from LLVM's vectorizer. None for an empty array."""
    if 0 in src_dims or 0 in dst_dims:
        return None
    s = [d for d, n in enumerate(src_dims) if n != 1]
    t = [d for d, n in enumerate(dst_dims) if n != 1]
    groups, i, j = [], 0, 0
    while i < len(s):
        gs, gt = [s[i]], [t[j]]
        ps, pt = src_dims[s[i]], dst_dims[t[j]]
        i, j = i + 1, j + 1
        while ps != pt:
            if ps < pt:
                gs.append(s[i])
                ps *= src_dims[s[i]]
                i += 1
            else:
                gt.append(t[j])
                pt *= dst_dims[t[j]]
                j += 1
        groups.append((gs, gt))
    return groups


@elemental_rule("bitcast")
def _bitcast(em, instr, gens, index):
    b = em.b
    src = instr.operands[0].shape
    linear = linear_of(b, instr.shape, index)
    v = gens[0](index_of(b, src, linear))
    st, dt = src.element_type, instr.shape.element_type
    if st != dt:  # same-width reinterpretation (XLA's comparators bitcast f32[] to s32[])
        if st.is_pred:
            v = b.zext(v, T.I8)
        v = b.bitcast(v, T.storage_type(dt))
        if dt.is_pred:
            v = b.trunc(v, T.I1)
    return v


@elemental_rule("transpose")
def _transpose(em, instr, gens, index):
    perm = instr.attrs["dimensions"]
    src_index = [None] * len(perm)
    for out_d, in_d in enumerate(perm):
        src_index[in_d] = index[out_d]
    return gens[0](src_index)


@elemental_rule("slice")
def _slice(em, instr, gens, index):
    b = em.b
    sl = instr.attrs["slice"]
    src = []
    for d, i in enumerate(index):
        v = i if sl.strides[d] == 1 else b.mul(i, c64(sl.strides[d]), flags=["nsw", "nuw"])
        src.append(v if sl.starts[d] == 0 else b.add(v, c64(sl.starts[d]), flags=["nsw", "nuw"]))
    return gens[0](src)


@elemental_rule("reverse")
def _reverse(em, instr, gens, index):
    b = em.b
    dims = set(instr.attrs["dimensions"])
    src = [b.sub(c64(instr.shape.dims[d] - 1), i) if d in dims else i for d, i in enumerate(index)]
    return gens[0](src)


@elemental_rule("iota")
def _iota(em, instr, gens, index):
    t = instr.shape.element_type
    return convert_value(em, index[instr.attrs["iota_dimension"]], S64, t)


@elemental_rule("concatenate")
def _concatenate(em, instr, gens, index):
    """Chained selects between operands; each operand's load happens in its own block so
    only one operand is read per element."""
    d = instr.attrs["dimensions"][0]
    if len(gens) == 1:
        return gens[0](index)
    return piecewise(em, index, d, [op.shape.dims[d] for op in instr.operands], gens)


def piecewise(em, index, d: int, sizes, gens):
    """The value of the piece whose range along dim d holds index[d]: the pieces (gens,
    each taking its own index) laid end to end, `sizes` long. A branch per piece, each
    piece computed in its own block and scope (only that piece is read), merged by a phi.
    Also the vector form's (elemental_vector: a vector lies in one piece)."""
    b = em.b
    fn = b.function
    merge = fn.append_basic_block("concat.merge")
    incoming = []
    offset = 0
    for k, (g, size) in enumerate(zip(gens, sizes)):
        last = k == len(gens) - 1
        if not last:
            this = fn.append_basic_block(f"concat.{k}")
            nxt = fn.append_basic_block(f"concat.next{k}")
            b.cbranch(b.icmp_signed("<", index[d], c64(offset + size)), this, nxt)
            b.position_at_end(this)
        local = list(index)
        local[d] = b.sub(index[d], c64(offset)) if offset else index[d]
        with em.scope():
            v = g(local)
        incoming.append((v, b.block))
        b.branch(merge)
        if not last:
            b.position_at_end(nxt)
        offset += size
    b.position_at_end(merge)
    phi = b.phi(incoming[0][0].type)
    for v, blk in incoming:
        phi.add_incoming(v, blk)
    return phi


@elemental_rule("pad")
def _pad(em, instr, gens, index):
    b = em.b
    cfg = instr.attrs["padding"]
    src_shape = instr.operands[0].shape
    in_bounds = ir.Constant(T.I1, 1)
    src = []
    for d, i in enumerate(index):
        lo, it = cfg.lows[d], cfg.interiors[d]
        shifted = b.sub(i, c64(lo)) if lo else i
        stride = it + 1
        if stride == 1:
            q = shifted
            ok = b.icmp_signed(">=", shifted, c64(0))
        else:
            q = b.sdiv(shifted, c64(stride))
            ok = b.and_(b.icmp_signed(">=", shifted, c64(0)),
                        b.icmp_signed("==", b.srem(shifted, c64(stride)), c64(0)))
        ok = b.and_(ok, b.icmp_signed("<", q, c64(src_shape.dims[d])))
        in_bounds = b.and_(in_bounds, ok)
        src.append(q)
    return if_else(em, in_bounds, "pad", lambda: gens[0](src), lambda: gens[1]([]))


def if_else(em, cond, name: str, then, otherwise):
    """The value of then() where cond holds, else of otherwise(), each emitted in a block
    (and a value scope) of its own and joined by a phi."""
    b = em.b
    fn = b.function
    blocks = fn.append_basic_block(f"{name}.then"), fn.append_basic_block(f"{name}.else")
    merge = fn.append_basic_block(f"{name}.merge")
    b.cbranch(cond, *blocks)
    incoming = []
    for block, value in zip(blocks, (then, otherwise)):
        b.position_at_end(block)
        with em.scope():
            incoming.append((value(), b.block))
        b.branch(merge)
    b.position_at_end(merge)
    phi = b.phi(incoming[0][0].type)
    for v, block in incoming:
        phi.add_incoming(v, block)
    return phi


def clamped_starts(em, gens, first, operand_shape, sizes, index_empty=()):
    """Start indices (operands first..) as i64, clamped to [0, dim - size]."""
    b = em.b
    starts = []
    for d, size in enumerate(sizes):
        g = gens[first + d]
        starts.append(clamp_index(b, g(list(index_empty)), g.shape.element_type,
                                  operand_shape.dims[d] - size))
    return starts


@elemental_rule("dynamic-slice")
def _dynamic_slice(em, instr, gens, index):
    b = em.b
    shape = instr.operands[0].shape
    starts = clamped_starts(em, gens, 1, shape, instr.attrs["dynamic_slice_sizes"])
    return gens[0]([b.add(s, i) for s, i in zip(starts, index)])


@elemental_rule("dynamic-update-slice")
def _dynamic_update_slice(em, instr, gens, index):
    b = em.b
    shape = instr.operands[0].shape
    upd = instr.operands[1].shape
    starts = clamped_starts(em, gens, 2, shape, upd.dims)
    inside = ir.Constant(T.I1, 1)
    local = []
    for s, i, size in zip(starts, index, upd.dims):
        rel = b.sub(i, s)
        inside = b.and_(inside, b.icmp_unsigned("<", rel, c64(size)))  # 0 <= rel < size
        local.append(rel)
    return if_else(em, inside, "dus", lambda: gens[1](local), lambda: gens[0](index))


@elemental_rule("get-tuple-element")
def _gte(em, instr, gens, index):
    g = gens[0]
    k = instr.attrs["index"]
    if isinstance(g, TupleGen):
        return g.elements[k](index)
    return g(index)[k]


@elemental_rule("map")
def _map(em, instr, gens, index):
    args = [g(index) for g in gens]
    return em.call_scalar(instr.attrs["to_apply"], args)


@elemental_rule("call")
def _call(em, instr, gens, index):
    comp = instr.attrs["to_apply"]
    if instr.shape.is_tuple or any(p.shape.rank for p in comp.parameters) or instr.shape.rank:
        raise lowering_error(instr, "only scalar calls can be emitted elementally")
    return em.call_scalar(comp, [g(index) for g in gens])


@elemental_rule("gather")
def _gather(em, instr, gens, index):
    """XLA gather. Output dims split into batch dims (not in offset_dims) and offset dims.
    The start vector comes from the indices at the batch index (index_vector_dim inserted);
    each start is clamped to [0, operand_dim - slice_size]."""
    b = em.b
    a = instr.attrs
    operand, indices = instr.operands[0].shape, instr.operands[1].shape
    offset_dims = list(a.get("offset_dims", ()))
    collapsed = set(a.get("collapsed_slice_dims", ()))
    start_index_map = list(a.get("start_index_map", ()))
    op_batching = list(a.get("operand_batching_dims", ()))
    idx_batching = list(a.get("start_indices_batching_dims", ()))
    ivd = a["index_vector_dim"]
    sizes = a["slice_sizes"]
    batch_out_dims = [d for d in range(instr.shape.rank) if d not in offset_dims]
    batch_index = [index[d] for d in batch_out_dims]

    def indices_at(k):
        idx = list(batch_index)
        if ivd < indices.rank:
            idx.insert(ivd, c64(k))
        return idx

    t = indices.element_type
    full_start = [c64(0)] * operand.rank
    for k, od in enumerate(start_index_map):
        full_start[od] = clamp_index(b, gens[1](indices_at(k)), t, operand.dims[od] - sizes[od])
    # batching dims: operand_batching_dims[i] takes the batch index of the indices' dim
    # start_indices_batching_dims[i] (indices dims without index_vector_dim -> batch dims)
    idx_dims_wo_ivd = [d for d in range(indices.rank) if d != ivd]
    for od, idd in zip(op_batching, idx_batching):
        full_start[od] = batch_index[idx_dims_wo_ivd.index(idd)]
    # offset dims map, in order, to operand dims that are neither collapsed nor batching
    window_dims = [d for d in range(operand.rank) if d not in collapsed and d not in op_batching]
    src = list(full_start)
    for k, od in enumerate(window_dims):
        src[od] = b.add(full_start[od], index[offset_dims[k]])
    return gens[0](src)
