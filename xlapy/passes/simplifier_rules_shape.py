"""Algebraic simplifier rules for data movement, tuples, dynamic slicing and trivial dots.

Every row is (opcode, algebra, rule); see simplifier_rules_common.py for what a rule is.
A rule that returns an operand relies on the driver to check that the operand's shape
(layout included) is the instruction's: a transpose/copy/reshape that only changes the
layout is a physical relayout and is kept.

Composition formulas used below:
  transpose(transpose(x, p1), p2)   output dim i is x dim p1[p2[i]]
  broadcast(broadcast(x, d1), d2)   x dim k lands in output dim d2[d1[k]]
  slice(slice(x, s1:_:t1), s2:_:t2) element j of the result is x[s1 + (s2 + j*t2)*t1]:
                                    start s1 + s2*t1, stride t1*t2, n elements
  reverse(reverse(x, a), b)         reverse(x, a xor b) (reversing a dim twice is identity)
  dynamic-slice(x, constant starts) slice(x) at the starts clamped to [0, dim - size], which
                                    is dynamic-slice's own clamping
  dynamic-update-slice(x, u, ...)   u when u has x's dims: the starts clamp to 0
  reduce(concatenate(x1..xn, d), dims without d)   concatenate(reduce(x1), ..., reduce(xn))
                                    along d minus the reduced dims before it: each output
                                    element reduces elements of one piece, in the same order
  dot(a, b) contracting only size-1 dims (or none): every output element is one product,
                                    so it is a multiply of the operands, each reshaped to drop
                                    the contracting dims and broadcast to the output
"""

from __future__ import annotations

from xlapy.hlo import attributes as A
from xlapy.hlo.ir import Instruction
from xlapy.passes.simplifier_rules_common import (element_type, make, same_shape, shape_like,
                                                  uniform_value, x_if)


def _operand(i: Instruction) -> Instruction:
    return i.operands[0]


def _is_identity(perm) -> bool:
    return tuple(perm) == tuple(range(len(perm)))


def _transpose_transpose(i: Instruction) -> Instruction | None:
    inner = _operand(i)
    if inner.opcode != "transpose":
        return None
    p1, p2 = inner.attrs["dimensions"], i.attrs["dimensions"]
    x = _operand(inner)
    perm = tuple(p1[k] for k in p2)
    if _is_identity(perm) and same_shape(x, i):
        return x
    return make("transpose", i.shape, [x], {"dimensions": perm})


def _reshape_reshape(i: Instruction) -> Instruction | None:
    inner = _operand(i)
    if inner.opcode != "reshape":
        return None
    return make("reshape", i.shape, [_operand(inner)])


def _reshape_scalar_broadcast(i: Instruction) -> Instruction | None:
    inner = _operand(i)
    if inner.opcode != "broadcast" or _operand(inner).shape.rank != 0:
        return None
    return make("broadcast", i.shape, [_operand(inner)], {"dimensions": ()})


def _broadcast_identity(i: Instruction) -> Instruction | None:
    x = _operand(i)
    return x_if(_is_identity(i.attrs["dimensions"]) and x.shape.rank == i.shape.rank
                and same_shape(x, i), x)


def _broadcast_broadcast(i: Instruction) -> Instruction | None:
    inner = _operand(i)
    if inner.opcode != "broadcast":
        return None
    d1, d2 = inner.attrs["dimensions"], i.attrs["dimensions"]
    return make("broadcast", i.shape, [_operand(inner)], {"dimensions": tuple(d2[k] for k in d1)})


def _slice_whole(i: Instruction) -> Instruction | None:
    x, spec = _operand(i), i.attrs["slice"]
    return x_if(not any(spec.starts) and i.shape.dims == x.shape.dims and same_shape(x, i), x)


def _slice_slice(i: Instruction) -> Instruction | None:
    inner = _operand(i)
    if inner.opcode != "slice":
        return None
    s1, s2 = inner.attrs["slice"], i.attrs["slice"]
    starts, limits, strides = [], [], []
    for d, n in enumerate(i.shape.dims):
        if n == 0:
            starts.append(0), limits.append(0), strides.append(1)
            continue
        start = s1.starts[d] + s2.starts[d] * s1.strides[d]
        stride = s1.strides[d] * s2.strides[d]
        starts.append(start)
        limits.append(start + (n - 1) * stride + 1)
        strides.append(stride)
    spec = A.SliceSpec(tuple(starts), tuple(limits), tuple(strides))
    return make("slice", i.shape, [_operand(inner)], {"slice": spec})


def _pad_nothing(i: Instruction) -> Instruction | None:
    cfg = i.attrs["padding"]
    return x_if(not any(cfg.lows) and not any(cfg.highs) and not any(cfg.interiors),
                _operand(i))


def _reverse_trivial(i: Instruction) -> Instruction | None:
    x = _operand(i)
    return x_if(all(x.shape.dims[d] <= 1 for d in i.attrs["dimensions"]), x)


def _reverse_reverse(i: Instruction) -> Instruction | None:
    inner = _operand(i)
    if inner.opcode != "reverse":
        return None
    dims = tuple(sorted(set(inner.attrs["dimensions"]) ^ set(i.attrs["dimensions"])))
    x = _operand(inner)
    if not dims and same_shape(x, i):
        return x
    return make("reverse", i.shape, [x], {"dimensions": dims})


def _gte_of_tuple(i: Instruction) -> Instruction | None:
    t = _operand(i)
    return t.operands[i.attrs["index"]] if t.opcode == "tuple" else None


def _dynamic_slice_constant(i: Instruction) -> Instruction | None:
    x, indices = i.operands[0], i.operands[1:]
    sizes = i.attrs["dynamic_slice_sizes"]
    values = [uniform_value(k) if k.shape.is_array and k.shape.rank == 0 else None
              for k in indices]
    if len(values) != x.shape.rank or any(v is None for v in values):
        return None
    starts = tuple(min(max(int(v), 0), d - z) for v, d, z in zip(values, x.shape.dims, sizes))
    limits = tuple(s + z for s, z in zip(starts, sizes))
    spec = A.SliceSpec(starts, limits, (1,) * len(starts))
    return make("slice", i.shape, [x], {"slice": spec})


def _dynamic_update_slice_whole(i: Instruction) -> Instruction | None:
    x, update = i.operands[0], i.operands[1]
    return x_if(update.shape.dims == x.shape.dims and same_shape(update, i), update)


def _reduce_of_concatenate(i: Instruction) -> Instruction | None:
    """Each output element of the reduce reads elements of one concatenated piece only (the
    concatenated dim is kept), in the same order: reducing the pieces apart changes nothing
    but lets each piece's reduction run without choosing a piece per element."""
    if len(i.operands) != 2:
        return None
    x, init = i.operands
    dims = tuple(i.attrs["dimensions"])
    if x.opcode != "concatenate" or not 1 < len(x.operands) <= 8:
        return None
    d = x.attrs["dimensions"][0]
    if d in dims:
        return None
    t = element_type(i)
    pieces = []
    for piece in x.operands:
        kept = [piece.shape.dims[k] for k in range(piece.shape.rank) if k not in dims]
        pieces.append(make("reduce", shape_like(i.shape, t, kept), [piece, init],
                           dict(i.attrs)))
    out = d - sum(1 for k in dims if k < d)
    return make("concatenate", i.shape, pieces, {"dimensions": (out,)})


_DOT_ATTRS = frozenset({"lhs_batch_dims", "rhs_batch_dims", "lhs_contracting_dims",
                        "rhs_contracting_dims", "operand_precision", "precision_config"})


def _dot_to_multiply(i: Instruction) -> Instruction | None:
    lhs, rhs = i.operands
    t = element_type(i)
    if (t is None or t.is_pred or element_type(lhs) != t or element_type(rhs) != t
            or not set(i.attrs) <= _DOT_ATTRS):
        return None
    lb, rb = i.attrs.get("lhs_batch_dims", ()), i.attrs.get("rhs_batch_dims", ())
    lc, rc = i.attrs.get("lhs_contracting_dims", ()), i.attrs.get("rhs_contracting_dims", ())
    if any(lhs.shape.dims[d] != 1 for d in lc) or any(rhs.shape.dims[d] != 1 for d in rc):
        return None
    lfree = [d for d in range(lhs.shape.rank) if d not in lb and d not in lc]
    rfree = [d for d in range(rhs.shape.rank) if d not in rb and d not in rc]
    out = i.shape

    def spread(x: Instruction, batch, contracting, free, offset: int) -> Instruction:
        keep = [d for d in range(x.shape.rank) if d not in contracting]
        position = {d: k for k, d in enumerate(batch)}
        position.update({d: offset + j for j, d in enumerate(free)})
        if contracting:
            x = make("reshape", shape_like(out, t, [x.shape.dims[d] for d in keep]), [x])
        dims = tuple(position[d] for d in keep)
        return make("broadcast", shape_like(out, t, out.dims), [x], {"dimensions": dims})

    return make("multiply", out, [spread(lhs, lb, lc, lfree, len(lb)),
                                  spread(rhs, rb, rc, rfree, len(lb) + len(lfree))])


SHAPE_RULES = [
    ("transpose", "transpose(x, identity) -> x",
     lambda i: x_if(_is_identity(i.attrs["dimensions"]) and same_shape(_operand(i), i),
                    _operand(i))),
    ("transpose", "transpose(transpose(x, p1), p2) -> transpose(x, p1.p2), or x",
     _transpose_transpose),
    ("reshape", "reshape(x) -> x when the shape is x's",
     lambda i: x_if(same_shape(_operand(i), i), _operand(i))),
    ("reshape", "reshape(reshape(x)) -> reshape(x)", _reshape_reshape),
    ("reshape", "reshape(broadcast(scalar s)) -> broadcast(s)", _reshape_scalar_broadcast),
    ("broadcast", "broadcast(x), dimensions={0..n-1}, same shape -> x", _broadcast_identity),
    ("broadcast", "broadcast(broadcast(x, d1), d2) -> broadcast(x, d2.d1)", _broadcast_broadcast),
    ("slice", "slice(x) covering all of x -> x", _slice_whole),
    ("slice", "slice(slice(x)) -> slice(x)", _slice_slice),
    ("concatenate", "concatenate(x) -> x",
     lambda i: x_if(len(i.operands) == 1 and same_shape(_operand(i), i), _operand(i))),
    ("pad", "pad(x, v), padding=0_0x...x0_0 -> x", _pad_nothing),
    ("reverse", "reverse(x) over dims of size <= 1 -> x", _reverse_trivial),
    ("reverse", "reverse(reverse(x, a), b) -> reverse(x, a xor b), or x", _reverse_reverse),
    ("copy", "copy(x) -> x when the layout is x's",
     lambda i: x_if(same_shape(_operand(i), i), _operand(i))),
    ("get-tuple-element", "get-tuple-element(tuple(a0, ..., an), k) -> ak", _gte_of_tuple),
    ("dynamic-slice", "dynamic-slice(x, constant starts) -> slice(x)", _dynamic_slice_constant),
    ("dynamic-update-slice", "dynamic-update-slice(x, u, ...) -> u when u covers x",
     _dynamic_update_slice_whole),
    ("dot", "dot(a, b) contracting only size-1 dims -> broadcast(a') * broadcast(b')",
     _dot_to_multiply),
    ("reduce", "reduce(concatenate(x1..xn, d)) keeping d -> concatenate(reduce(x1), ...)",
     _reduce_of_concatenate),
]
