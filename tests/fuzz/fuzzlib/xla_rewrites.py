"""Rewrites of a module copy into what XLA:CPU's simplifier effectively computes where it
departs from HLO (see deviations.py)."""

from __future__ import annotations

import dataclasses

import numpy as np

from xlapy.hlo.ir import Instruction
from xlapy.hlo.shapes import Shape

from fuzzlib.xla_evaluators import _NARROW


def _conv_padded(i: Instruction) -> bool:
    w = i.attrs.get("window")
    return (i.opcode == "convolution" and w is not None
            and (any(w.pad_low) or any(w.pad_high) or any(d > 1 for d in w.lhs_dilate)))


def _materialize_padding(i: Instruction) -> None:
    """convolution(lhs, pad=p, lhs_dilate=d) -> convolution(pad(lhs, 0, p, interior d-1)):
    padding and holes become real zeros that the kernel multiplies."""
    from xlapy.hlo import attributes as A
    from xlapy.hlo.shape_inference import infer_shape
    comp = i.parent
    lhs = i.operands[0]
    dn = i.attrs["dim_labels"]
    w = i.attrs["window"]
    config = [(0, 0, 0)] * lhs.shape.rank
    for s, d in enumerate(dn.input_spatial):
        config[d] = (w.pad_low[s], w.pad_high[s], w.lhs_dilate[s] - 1)
    zero = comp.add_instruction(Instruction(
        "constant", Shape.array(lhs.shape.element_type, ()), (), name="dev.zero",
        literal=np.zeros((), lhs.shape.dtype)))
    attrs = {"padding": A.PaddingConfig(*map(tuple, zip(*config)))}
    shape = infer_shape("pad", [lhs.shape, zero.shape], attrs)
    pad = comp.add_instruction(Instruction("pad", shape, [lhs, zero], attrs, name="dev.pad"))
    i.replace_operand_with(lhs, pad)
    i.attrs = dict(i.attrs)
    n = len(w.size)
    i.attrs["window"] = dataclasses.replace(w, lhs_dilate=(1,) * n, pad_low=(0,) * n,
                                            pad_high=(0,) * n)


def _constant_negative_zero(i: Instruction) -> bool:
    if i.opcode != "constant" or not i.shape.is_array or not i.shape.element_type.is_float:
        return False
    lit = np.asarray(i.literal)
    return bool((np.signbit(lit) & (lit == 0)).any())


def _positive_zeros(i: Instruction) -> None:
    lit = np.asarray(i.literal)
    i.literal = np.where(lit == 0, np.zeros((), lit.dtype), lit).astype(lit.dtype)


def _float_constant_divisor(i: Instruction):
    """divide(x, c) with c a float constant or a broadcast of one: the constant, or None."""
    if i.opcode != "divide" or not i.shape.is_array or not i.shape.element_type.is_float:
        return None
    d = i.operands[1]
    if d.opcode == "broadcast":
        d = d.operands[0]
    return d if d.opcode == "constant" else None


def _reciprocal_multiply(i: Instruction) -> None:
    c = _float_constant_divisor(i)
    lit = np.asarray(c.literal)
    with np.errstate(all="ignore"):
        inv = (np.ones((), np.float64) / lit.astype(np.float64)).astype(lit.dtype)
    comp = i.parent
    new = comp.add_instruction(Instruction("constant", c.shape, (), name="dev.inv",
                                           literal=inv))
    d = i.operands[1]
    if d.opcode == "broadcast":
        new = comp.add_instruction(Instruction("broadcast", d.shape, [new], d.attrs,
                                               name="dev.invb"))
    i.replace_operand_with(d, new)
    i.opcode = "multiply"


def _broadcast_divisor(i: Instruction):
    """divide(x, broadcast(y)) in f16/f32/f64 with y no constant (that is
    _float_constant_divisor's): the broadcast, or None. (bf16 is computed in f32 with the
    reciprocal unrounded: the same quotients, measured.)"""
    if (i.opcode != "divide" or not i.shape.is_array
            or i.shape.element_type.name not in ("f16", "f32", "f64")):
        return None
    d = i.operands[1]
    if d.opcode != "broadcast" or d.operands[0].opcode == "constant":
        return None
    return d


def _broadcast_reciprocal_multiply(i: Instruction) -> None:
    """divide(x, broadcast(y)) -> multiply(x, broadcast(divide(1, y)))."""
    d = _broadcast_divisor(i)
    y = d.operands[0]
    comp = i.parent
    one = comp.add_instruction(Instruction(
        "constant", y.shape, (), name="dev.one",
        literal=np.ones(y.shape.dims, y.shape.dtype)))
    inv = comp.add_instruction(Instruction("divide", y.shape, [one, y], name="dev.recip"))
    new = comp.add_instruction(Instruction("broadcast", d.shape, [inv], d.attrs,
                                           name="dev.recipb"))
    i.replace_operand_with(d, new)
    i.opcode = "multiply"


def _literal_constant(o: Instruction) -> bool:
    """A constant XLA's simplifier matches as one: a scalar, a one-element array or a
    non-uniform array (a uniform array of several elements becomes a broadcast of a
    scalar before, and a broadcast is no constant to these rules: measured)."""
    if o.opcode != "constant" or o.literal is None or not o.shape.is_array:
        return False
    lit = np.asarray(o.literal).reshape(-1)
    return lit.size <= 1 or lit.tobytes() != np.repeat(lit[:1], lit.size).tobytes()


def _zero_value(o: Instruction) -> bool:
    """o is a constant all of whose elements are zeros (of either sign), or a broadcast
    of one."""
    while o.opcode == "broadcast":
        o = o.operands[0]
    return o.opcode == "constant" and o.literal is not None and o.shape.is_array and \
        bool(np.all(np.asarray(o.literal) == 0))


def _add_of_zero(i: Instruction) -> bool:
    return i.opcode == "add" and i.shape.is_array and i.shape.element_type.is_float and \
        any(_zero_value(o) for o in i.operands)


def _drop_added_zero(i: Instruction) -> None:
    a, b = i.operands
    i.opcode = "copy"
    i.replace_operands([b if _zero_value(a) else a])


def _log_of_exp(i: Instruction) -> bool:
    return i.opcode == "log" and i.shape.is_array and i.shape.element_type.is_float and \
        i.operands[0].opcode == "exponential"


def _drop_log_of_exp(i: Instruction) -> None:
    i.opcode = "copy"
    i.replace_operands([i.operands[0].operands[0]])


def _int_power_of_minus_one(i: Instruction) -> bool:
    """power(a, c) of signed integers with c a constant (or a broadcast of one) of -1s."""
    if i.opcode != "power" or not i.shape.is_array or i.shape.element_type.kind != "s":
        return False
    c = i.operands[1]
    while c.opcode == "broadcast":
        c = c.operands[0]
    return c.opcode == "constant" and c.literal is not None and \
        bool(np.all(np.asarray(c.literal) == -1))


def _power_as_reciprocal(i: Instruction) -> None:
    comp = i.parent
    one = comp.add_instruction(Instruction(
        "constant", Shape.array(i.shape.element_type, ()), (), name="dev.one",
        literal=np.ones((), i.shape.dtype)))
    ones = comp.add_instruction(Instruction("broadcast", i.shape, [one], {"dimensions": ()},
                                            name="dev.ones"))
    i.opcode = "divide"
    i.replace_operands([ones, i.operands[0]])


def _scaled(o: Instruction):
    """(x, c) where o is x * c or c * x (c a literal constant, x none), or x / c (which
    XLA has made x * (1 / c), 1 / c rounded to the type, by then), else None."""
    if o.opcode == "multiply":
        a, b = o.operands
        if _literal_constant(b) and a.opcode != "constant":
            return a, np.asarray(b.literal)
        if _literal_constant(a) and b.opcode != "constant":
            return b, np.asarray(a.literal)
    if o.opcode == "divide" and o.shape.element_type.is_float and \
            _literal_constant(o.operands[1]) and o.operands[0].opcode != "constant":
        c = np.asarray(o.operands[1].literal)
        with np.errstate(all="ignore"):
            return o.operands[0], np.divide(np.ones((), c.dtype), c).astype(c.dtype)
    return None


def _scalar_broadcast(o: Instruction):
    """The scalar literal o broadcasts (a broadcast of a scalar constant), or None."""
    if o.opcode == "broadcast" and o.operands[0].opcode == "constant" and \
            o.operands[0].literal is not None and np.asarray(o.operands[0].literal).ndim == 0:
        return np.asarray(o.operands[0].literal)
    return None


def _scaled_by_broadcast(o: Instruction):
    """(x, c) where o is x * broadcast(c) or broadcast(c) * x (x not constant), or None."""
    if o.opcode != "multiply":
        return None
    a, b = o.operands
    if _scalar_broadcast(b) is not None and a.opcode not in ("constant", "broadcast"):
        return a, _scalar_broadcast(b)
    if _scalar_broadcast(a) is not None and b.opcode not in ("constant", "broadcast"):
        return b, _scalar_broadcast(a)
    return None


def _product_of_broadcast_scalars(i: Instruction) -> bool:
    """(a * broadcast(c1)) * broadcast(c2), any order (f32/f64: an f16 chain is XLA's
    excess precision, computed in f32, which gives the same values there)."""
    if i.opcode != "multiply" or not i.shape.is_array or \
            i.shape.element_type.name not in ("f32", "f64"):
        return False
    x, y = i.operands
    return (_scaled_by_broadcast(x) is not None and _scalar_broadcast(y) is not None) or \
        (_scaled_by_broadcast(y) is not None and _scalar_broadcast(x) is not None)


def _fold_broadcast_scalars(i: Instruction) -> None:
    x, y = i.operands
    if _scaled_by_broadcast(x) is None or _scalar_broadcast(y) is None:
        x, y = y, x
    a, c1 = _scaled_by_broadcast(x)
    with np.errstate(all="ignore"):
        prod = np.multiply(c1, _scalar_broadcast(y)).astype(i.shape.dtype)
    comp = i.parent
    c = comp.add_instruction(Instruction("constant", Shape.array(i.shape.element_type, ()),
                                         (), name="dev.c1c2", literal=np.asarray(prod)))
    b = comp.add_instruction(Instruction("broadcast", i.shape, [c], {"dimensions": ()},
                                         name="dev.bc1c2"))
    i.replace_operands([a, b])


def _square_of_abs(i: Instruction):
    """The operands of multiply i, with abs(a) * abs(a) read as a * a (XLA's simplifier
    drops the abs of a square's factors first: (abs(x / c))^2 at x = 0 and c = 0.00198 is
    NaN in f16, as (x * x) * (1/c * 1/c) = 0 * inf, jax 22000259)."""
    x, y = i.operands
    if x is y and x.opcode == "abs":
        return x.operands[0], x.operands[0]
    return x, y


def _product_of_constants(i: Instruction) -> bool:
    """(a * c1) * (b * c2) or (a * c1) * c2 (any order; f16/f32/f64: XLA computes bf16
    in f32 with converts between, which this rule does not see)."""
    if i.opcode != "multiply" or not i.shape.is_array or \
            i.shape.element_type.name not in ("f16", "f32", "f64"):
        return False
    x, y = _square_of_abs(i)
    sx, sy = _scaled(x), _scaled(y)
    return (sx is not None and (sy is not None or _literal_constant(y))) or \
        (sy is not None and _literal_constant(x))


def _reassociate_products(module) -> None:
    """(a * c1) * (b * c2) -> (a * b) * (c1 * c2) and (a * c1) * c2 -> a * (c1 * c2), the
    constants' product rounded to the type, innermost first (XLA repeats the rules until
    nothing changes: ((a * 3) * 7) * 11 is a * 231)."""
    for comp in module.computations:
        for i in comp.post_order():
            if i.parent is not comp or not _product_of_constants(i):
                continue
            x, y = _square_of_abs(i)
            sx, sy = _scaled(x), _scaled(y)
            if sx is None:
                x, y, sx, sy = y, x, sy, sx
            a, c1 = sx
            with np.errstate(all="ignore"):
                if sy is not None:
                    b, c2 = sy
                    prod = np.multiply(c1, c2).astype(i.shape.dtype)
                    a = comp.add_instruction(Instruction("multiply", i.shape, [a, b],
                                                         name="dev.ab"))
                else:
                    prod = np.multiply(c1, np.asarray(y.literal)).astype(i.shape.dtype)
            c = comp.add_instruction(Instruction("constant", i.shape, (), name="dev.c1c2",
                                                 literal=np.array(prod).reshape(i.shape.dims)))
            i.replace_operands([a, c])


def _converted_pred(o: Instruction) -> Instruction | None:
    """The pred p where o is convert(p) or a broadcast or reshape of it (XLA moves the
    reshape below the convert first: hlo 30002102), else None."""
    inner = o.operands[0] if o.opcode in ("broadcast", "reshape") else o
    if inner.opcode == "convert" and inner.operands[0].shape.element_type.is_pred:
        return inner.operands[0]
    return None


def _multiply_by_pred(i: Instruction) -> bool:
    """multiply(x, convert<float>(pred)) (either order; not bf16, which XLA computes in f32
    and does not rewrite)."""
    return (i.opcode == "multiply" and i.shape.is_array and i.shape.element_type.is_float
            and i.shape.element_type.name != "bf16"
            and any(_converted_pred(o) is not None for o in i.operands))


def _select_for_multiply(i: Instruction) -> None:
    """multiply(x, convert(p)) -> select(p, x, +0)."""
    comp = i.parent
    k = 1 if _converted_pred(i.operands[1]) is not None else 0
    factor, x = i.operands[k], i.operands[1 - k]
    p = _converted_pred(factor)
    if factor.opcode in ("broadcast", "reshape"):
        p = comp.add_instruction(Instruction(
            factor.opcode, Shape.array(p.shape.element_type, factor.shape.dims), [p],
            factor.attrs, name="dev.predb"))
    zero = comp.add_instruction(Instruction(
        "constant", Shape.array(i.shape.element_type, ()), (), name="dev.zero",
        literal=np.zeros((), i.shape.dtype)))
    zeros = comp.add_instruction(Instruction("broadcast", i.shape, [zero],
                                             {"dimensions": ()}, name="dev.zeros"))
    i.replace_operands([p, x, zeros])
    i.opcode = "select"


def _f16_logistic(i: Instruction) -> bool:
    return i.opcode == "logistic" and i.shape.element_type.name == "f16"


def _expand_logistic(i: Instruction) -> None:
    """logistic(x) -> 1 / (1 + exp(-x)), each op in the instruction's type."""
    comp = i.parent
    x = i.operands[0]
    et = i.shape.element_type
    one = comp.add_instruction(Instruction("constant", Shape.array(et, ()), (),
                                           name="dev.one", literal=np.ones((), i.shape.dtype)))
    ones = comp.add_instruction(Instruction("broadcast", i.shape, [one], {"dimensions": ()},
                                            name="dev.ones"))
    neg = comp.add_instruction(Instruction("negate", i.shape, [x], name="dev.neg"))
    exp = comp.add_instruction(Instruction("exponential", i.shape, [neg], name="dev.exp"))
    den = comp.add_instruction(Instruction("add", i.shape, [ones, exp], name="dev.den"))
    i.replace_operands([ones, den])
    i.opcode = "divide"


def _divide_by_quotient(i: Instruction) -> bool:
    return (i.opcode == "divide" and i.shape.is_array and i.shape.element_type.is_float
            and i.operands[1].opcode == "divide")


def _reassociate_divide(i: Instruction) -> None:
    """a / (b / c) -> (a * c) / b."""
    a, q = i.operands
    b, c = q.operands
    prod = i.parent.add_instruction(Instruction("multiply", i.shape, [a, c], name="dev.ac"))
    i.replace_operands([prod, b])


def _divide_by_power(i: Instruction) -> bool:
    return (i.opcode == "divide" and i.shape.is_array
            and i.operands[1].opcode == "power")


def _negative_power(i: Instruction) -> None:
    """a / pow(b, c) -> a * pow(b, -c)."""
    a, p = i.operands
    b, c = p.operands
    comp = i.parent
    neg = comp.add_instruction(Instruction("negate", c.shape, [c], name="dev.negc"))
    inv = comp.add_instruction(Instruction("power", p.shape, [b, neg], name="dev.pow"))
    i.replace_operands([a, inv])
    i.opcode = "multiply"


def _log_of_power(i: Instruction) -> bool:
    return (i.opcode == "log" and i.shape.is_array and i.operands[0].opcode == "power"
            and i.shape.element_type.is_float)


def _log_power_as_product(i: Instruction) -> None:
    """log(pow(a, b)) -> b * log(abs(a))."""
    a, b = i.operands[0].operands
    comp = i.parent
    mag = comp.add_instruction(Instruction("abs", a.shape, [a], name="dev.abs"))
    lg = comp.add_instruction(Instruction("log", i.shape, [mag], name="dev.log"))
    i.replace_operands([b, lg])
    i.opcode = "multiply"




def _widenable(i: Instruction) -> bool:
    """An arithmetic instruction on f16/bf16 that XLA:CPU computes in f32."""
    from xlapy.hlo.opcodes import opinfo
    if not i.shape.is_array or not i.operands:
        return False
    kind = opinfo(i.opcode).category
    if kind not in ("unary", "binary") and i.opcode != "compare":
        return False
    if i.opcode in ("abs", "negate", "is-finite", "real", "imag"):
        return False
    types = {o.shape.element_type.name for o in i.operands if o.shape.is_array}
    return len(types) == 1 and types <= set(_NARROW)


def _widened_convert(i: Instruction) -> bool:
    """convert<f32>(op<bf16>(...)) with op arithmetic that XLA:CPU computes in f32: an
    elementwise op, a dot or a convolution (whose bf16 result XLA:CPU computes as an f32 dot
    and a convert back, which the convert to f32 cancels: measured on jaxlib 0.10.2, every
    bf16 dot and convolution under a convert<f32> gives unrounded f32 values; an f16 dot
    rounds)."""
    if i.opcode != "convert" or not i.shape.is_array or i.shape.element_type.name != "f32":
        return False
    o = i.operands[0]
    if not (o.shape.is_array and o.shape.element_type.name == "bf16"):
        return False
    if o.opcode in ("dot", "convolution"):
        return all(x.shape.is_array and x.shape.element_type.name == "bf16"
                   for x in o.operands)
    return _widenable(o)


def _excess_precision(module, options=()) -> None:
    """f16/bf16 arithmetic computed in f32 with roundings dropped, in one of two forms
    (measured on jaxlib 0.10.2, which one depends on what else XLA rewrites around it):

    "excess:last-op": convert<f32>(op<bf16>(a, b)) -> op<f32>(convert<f32>(a), convert<
    f32>(b)): the op right under a convert to f32 keeps its f32 value while the ops before
    it round (convert<f32>(exp<bf16>(x) + 1) is the f32 sum of the rounded exp);

    "excess:chain": every widenable op becomes convert<narrow>(op<f32>(...)), and
    convert<f32>(convert<narrow>(y)) of such a y is y itself (SimplifyFPConversions), so a
    chain rounds once at its end (x * 1.55 * 0.43 in f16 does not overflow for x = -65504).

    Calls are inlined first, as XLA does before its simplifier, so a chain running out of
    a called computation (JAX's nested jit functions) is seen whole."""
    from xlapy.hlo.shapes import F32
    from xlapy.passes.inliner import CallInliner
    CallInliner().run(module)
    last_op = "excess:last-op" in options
    for comp in module.computations:
        wide: dict[int, Instruction] = {}
        for instr in list(comp.post_order()):
            if last_op:
                if _widened_convert(instr):
                    op = instr.operands[0]
                    ops = [comp.add_instruction(Instruction(
                        "convert", Shape.array(F32, o.shape.dims), [o])) for o in op.operands]
                    instr.replace_all_uses_with(comp.add_instruction(Instruction(
                        op.opcode, Shape.array(F32, op.shape.dims), ops, op.attrs)))
            elif _widenable(instr):
                ops = []
                for o in instr.operands:
                    w = wide.get(id(o))
                    if w is None:
                        w = comp.add_instruction(Instruction(
                            "convert", Shape.array(F32, o.shape.dims), [o]))
                    ops.append(w)
                shape = instr.shape
                if shape.element_type.name in _NARROW:
                    shape = Shape.array(F32, shape.dims)
                w = comp.add_instruction(Instruction(instr.opcode, shape, ops, instr.attrs))
                if w.shape is shape and instr.shape.element_type.name in _NARROW:
                    back = comp.add_instruction(Instruction("convert", instr.shape, [w]))
                    instr.replace_all_uses_with(back)
                    wide[id(back)] = w
                else:
                    instr.replace_all_uses_with(w)
            elif (instr.opcode == "convert" and instr.shape.element_type is F32
                  and id(instr.operands[0]) in wide):
                instr.replace_all_uses_with(wide[id(instr.operands[0])])


def _reduce_over_nothing(i: Instruction) -> bool:
    """A one-input reduce over no dimensions, or over dimensions of size 1 only (as many
    outputs as inputs: jax 15006433, a sum of an f32[1]), or a one-input reduce-window of
    one-element windows."""
    if len(i.operands) != 2 or not i.shape.is_array:
        return False
    if i.opcode == "reduce-window":  # (a window of one element: jax's cumsum of an f32[1])
        w = i.attrs.get("window")
        return w is not None and i.shape.dims == i.operands[0].shape.dims and all(
            x == 1 for x in (*w.size, *w.stride, *w.lhs_dilate)) and not any(
            (*w.pad_low, *w.pad_high))
    if i.opcode != "reduce":
        return False
    dims = i.operands[0].shape.dims
    return all(dims[d] == 1 for d in i.attrs.get("dimensions", ()))


def _operand_for_reduce(i: Instruction) -> None:
    """reduce(x, init) over no dimensions or size-1 ones (a reduce-window of one-element
    windows) -> reshape(x): the init never applied."""
    i.replace_operands([i.operands[0]])
    i.opcode = "reshape"
    i.attrs = {}


_ROUNDINGS = ("floor", "ceil")


def _select_tree_has_constant(v, memo, depth=0) -> bool:
    """Whether v is a select whose arms (through nested selects) include one that depends
    on no parameter."""
    from fuzzlib.xla import _constant_only
    if v.opcode != "select" or depth > 8:
        return False
    return any(_constant_only(a, memo) or _select_tree_has_constant(a, memo, depth + 1)
               for a in v.operands[1:])


def _selected_constant(i: Instruction):
    """(select, bitcast-convert or None) where i is floor/ceil (f32, bf16, f64) of a select
    (through at most one bitcast-convert) with an arm, or an arm of a nested select, that
    depends on no parameter, else None."""
    if i.opcode not in _ROUNDINGS or not i.shape.is_array or \
            i.shape.element_type.name not in ("f32", "bf16", "f64"):
        return None
    o, cast = i.operands[0], None
    if o.opcode == "bitcast-convert":
        o, cast = o.operands[0], o
    if o.opcode != "select" or o.shape.dims != i.shape.dims:
        return None
    return (o, cast) if _select_tree_has_constant(o, {}) else None


def _rounding_of_selected_constant(i: Instruction) -> bool:
    return _selected_constant(i) is not None


def _fold_rounding_into_select(i: Instruction) -> None:
    """floor(cast(select(p, c, x))) -> select(p, floor_ieee(cast(c)), floor(cast(x))) for a
    constant arm c, through nested selects: LLVM moves the rounding into the select's arms
    and folds the constant ones with IEEE subnormals (the evaluator computes instructions
    named ieee_fold.* without flushing)."""
    from fuzzlib.xla import _constant_only
    sel, cast = _selected_constant(i)
    comp = i.parent
    memo: dict = {}

    def pushed(v, depth=0):
        if v.opcode == "select" and v.shape.dims == i.shape.dims and depth <= 8:
            a, b = (pushed(arm, depth + 1) for arm in v.operands[1:])
            return comp.add_instruction(Instruction("select", i.shape, [v.operands[0], a, b]))
        w = v
        if cast is not None:
            w = comp.add_instruction(Instruction("bitcast-convert", cast.shape, [v]))
        const = _constant_only(v, memo)
        return comp.add_instruction(Instruction(
            i.opcode, i.shape, [w], i.attrs), name="ieee_fold." + i.opcode if const else None)

    i.replace_all_uses_with(pushed(sel))
