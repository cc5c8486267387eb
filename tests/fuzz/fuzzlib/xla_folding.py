"""The folds XLA makes before its simplifier's rewrites, for deviation matching only.

XLA inlines calls, removes a while loop whose condition is false on its init, forwards a
tuple's element to its get-tuple-element, folds
instructions computed from constants and replaces a select on a constant predicate by the
chosen operand before (and while) its algebraic simplifier
rewrites x / c as x * (1 / c) or reassociates products of constants. JAX's nested jit
functions hide such constants behind calls and arithmetic: jnp.var divides by
`80 - convert(ddof)` with ddof a constant argument of the call, under a
`select(80 - ddof > 0, ...)`. deviations.explain matches its entries on the inlined module
and, where none explains a mismatch, again on the module folded here.

Only exact folds, so that the folded module computes exactly what the module computes
(under the flushing reference interpreter, which judges the deviations) and a deviation
sees nothing XLA would not: an instruction is folded only where its opcode is in EXACT,
all its operands are constants, and its value is the same with denormals flushed and with
IEEE subnormals (no subnormal involved: the single correctly rounded value every IEEE
implementation, XLA's folder included, gives); a float-to-integer convert only where no
value saturates or is NaN (implementation-defined in C, where XLA's folder computes it);
integer division, remainder, shifts, min/max and the transcendental functions are never
folded (XLA's own folds of them are where it departs: clz of a negative constant, see
deviations). Folding changes no value, so it cannot explain anything by itself: an entry
must still reproduce XLA's numbers on the folded module.
"""

from __future__ import annotations

import numpy as np

from xlapy.hlo.evaluator import EVAL_RULES, Evaluator
from xlapy.hlo.ir import ELIDED, Instruction

EXACT = ("convert", "add", "subtract", "multiply", "divide", "negate", "abs", "compare",
         "and", "or", "xor", "not", "reshape")


def _constant(i: Instruction) -> bool:
    return (i.opcode == "constant" and i.shape.is_array and i.literal is not None
            and i.literal is not ELIDED)


def _value(instr: Instruction, flush: bool):
    args = [np.array(o.literal, o.shape.dtype) for o in instr.operands]
    with np.errstate(all="ignore"):
        return np.asarray(Evaluator(flush_denormals=flush).apply(
            EVAL_RULES[instr.opcode], instr, args))


def _exact_value(instr: Instruction):
    """instr's value where folding it is exact (see the module docstring), else None."""
    if instr.opcode not in EXACT or not instr.shape.is_array or not instr.operands:
        return None
    if not all(_constant(o) for o in instr.operands) or instr.shape.size > 4096:
        return None
    out_type, in_type = instr.shape.element_type, instr.operands[0].shape.element_type
    if instr.opcode == "divide" and not out_type.is_float:
        return None
    if instr.opcode == "convert" and in_type.is_float and not out_type.is_float \
            and not out_type.is_pred:
        v = np.asarray(instr.operands[0].literal).astype(np.float64)
        info = np.iinfo(instr.shape.dtype)
        if not np.isfinite(v).all() or (v.size and (np.trunc(v).min() < info.min
                                                    or np.trunc(v).max() > info.max)):
            return None
    try:
        flushed, ieee = _value(instr, True), _value(instr, False)
    except Exception:  # (the interpreter cannot fold it: left alone)
        return None
    if flushed.shape != instr.shape.dims or flushed.dtype != instr.shape.dtype \
            or flushed.tobytes() != ieee.tobytes():
        return None
    return flushed


def _never_runs(instr: Instruction) -> bool:
    """A while whose init is a tuple and whose condition, reading only constant elements of
    it, is false."""
    if instr.opcode != "while" or instr.operands[0].opcode != "tuple":
        return False
    init, cond = instr.operands[0], instr.attrs.get("condition")
    if cond is None or cond.num_parameters != 1:
        return False
    param = cond.parameters[0]
    read = [u for u in param.users]
    if not read or any(u.opcode != "get-tuple-element" for u in read):
        return False
    elements = init.operands
    if not all(_constant(elements[u.attrs["index"]]) for u in read):
        return False
    args = tuple(np.array(e.literal, e.shape.dtype) if _constant(e) else None
                 for e in elements)
    try:
        with np.errstate(all="ignore"):
            out = Evaluator(flush_denormals=True).call(cond, [args])
    except Exception:  # (the interpreter cannot evaluate it: left alone)
        return False
    out = np.asarray(out[0] if isinstance(out, (list, tuple)) else out)
    return out.shape == () and out.dtype == np.bool_ and not bool(out)


def _constant_predicate(instr: Instruction):
    """True/False where instr is a select whose predicate is a constant with one value."""
    if instr.opcode != "select" or not _constant(instr.operands[0]):
        return None
    p = np.asarray(instr.operands[0].literal)
    if p.size == 0 or not (p.all() or not p.any()):
        return None
    return bool(p.reshape(-1)[0])


def fold_exact(module) -> bool:
    """Fold (in place) what XLA folds exactly before its rewrites; whether anything
    changed."""
    changed = False
    for comp in module.computations:
        for instr in comp.post_order():
            if instr.parent is not comp:
                continue
            if (instr.opcode == "get-tuple-element"
                    and instr.operands[0].opcode == "tuple"):
                # gte(tuple(...)) is the tuple's operand (XLA's simplifier forwards it, so a
                # slice of a dynamic-slice passed through a tuple is merged: hlo 15004415)
                instr.replace_all_uses_with(instr.operands[0].operands[instr.attrs["index"]])
                changed = True
                continue
            if _never_runs(instr):
                # a while whose condition is false on its (constant) init is its init (XLA's
                # while-loop simplifier removes it: hlo 15004415)
                instr.replace_all_uses_with(instr.operands[0])
                changed = True
                continue
            pick = _constant_predicate(instr)
            if pick is not None:
                instr.replace_all_uses_with(instr.operands[1 if pick else 2])
                changed = True
                continue
            value = _exact_value(instr)
            if value is None:
                continue
            new = comp.add_instruction(Instruction("constant", instr.shape, (),
                                                   name=f"{instr.name}.folded",
                                                   literal=np.array(value, order="C")))
            instr.replace_all_uses_with(new)
            changed = True
    return changed
