"""Known departures of XLA:CPU (jaxlib 0.10.2) from HLO semantics, where xlapy keeps the
semantics (README, "Numerics").

Each entry names the instructions it concerns, says why XLA differs, and rewrites a copy of
the module into what XLA effectively computes. A mismatch is explained by an entry when the
reference interpreter, run on the rewritten module (with denormals flushed, as compiled
code runs), reproduces XLA's value at every mismatching element. Nothing else is excused:
an entry that does not reproduce XLA's numbers explains nothing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

import numpy as np

from xlapy.backends.base import flatten
from xlapy.hlo.evaluator import Evaluator
from xlapy.hlo.ir import Instruction
from xlapy.hlo.shapes import Shape

from fuzzlib import compare as C


@dataclass
class Deviation:
    name: str
    reason: str
    applies: Callable[[Instruction], bool]
    rewrite: Callable[[Instruction], None] | None  # on the copy's matching instruction
    evaluator: type | None = None  # evaluates as XLA does instead of a rewrite


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


def _signed(a) -> np.ndarray:
    a = np.asarray(a)
    return a.view(np.dtype(f"i{a.dtype.itemsize}")) if a.dtype.kind == "u" else a


class _AsXla(Evaluator):
    """Evaluates atan2, unsigned start indices and unsigned integer exponents as XLA:CPU
    does (see DEVIATIONS)."""

    def apply(self, rule, instr, operands):
        if instr.opcode == "dynamic-slice":
            operands = operands[:1] + [_signed(o) for o in operands[1:]]
        elif instr.opcode == "dynamic-update-slice":
            operands = operands[:2] + [_signed(o) for o in operands[2:]]
        elif instr.opcode == "atan2":
            y, x = (np.asarray(o) for o in operands)
            out = super().apply(rule, instr, operands)
            return np.where(_subnormal(y) & _subnormal(x), np.asarray(np.nan, out.dtype), out)
        elif _grouped_conv(instr):
            return super().apply(rule, *_one_group(instr, operands))
        elif instr.opcode == "power" and _unsigned_power(instr):
            a, b = (np.asarray(o) for o in operands)
            out = super().apply(rule, instr, operands)
            return np.where(_signed(b) < 0, (a == 1).astype(a.dtype), out)
        return super().apply(rule, instr, operands)


def _subnormal(a) -> np.ndarray:
    if a.dtype.kind != "f":
        return np.zeros(a.shape, bool)
    tiny = np.finfo(np.float32 if a.dtype.itemsize < 4 else a.dtype).tiny
    with np.errstate(all="ignore"):
        return (a != 0) & (np.abs(a.astype(np.float64)) < tiny)


def _grouped_conv(i: Instruction) -> bool:
    return i.opcode == "convolution" and i.attrs.get("feature_group_count", 1) > 1


def _one_group(instr: Instruction, operands):
    """A grouped convolution as one ungrouped convolution whose kernel is block diagonal:
    (instruction copy, operands)."""
    import copy
    lhs, rhs = (np.asarray(o) for o in operands)
    dn = instr.attrs["dim_labels"]
    g = instr.attrs["feature_group_count"]
    ci, co = dn.kernel_input_feature, dn.kernel_output_feature
    per_in, per_out = rhs.shape[ci], rhs.shape[co] // g
    shape = list(rhs.shape)
    shape[ci] = per_in * g
    kernel = np.zeros(shape, rhs.dtype)
    for k in range(g):
        src = [slice(None)] * rhs.ndim
        dst = [slice(None)] * rhs.ndim
        src[co] = dst[co] = slice(k * per_out, (k + 1) * per_out)
        dst[ci] = slice(k * per_in, (k + 1) * per_in)
        kernel[tuple(dst)] = rhs[tuple(src)]
    one = copy.copy(instr)
    one.attrs = dict(instr.attrs, feature_group_count=1)
    return one, [lhs, kernel]


def _unsigned_indices(i: Instruction) -> bool:
    first = {"dynamic-slice": 1, "dynamic-update-slice": 2}.get(i.opcode)
    return first is not None and any(o.shape.element_type.name.startswith("u")
                                     for o in i.operands[first:])


def _unsigned_power(i: Instruction) -> bool:
    return i.opcode == "power" and i.shape.element_type.name.startswith("u")


DEVIATIONS = [
    Deviation(
        "grouped-conv-nan-across-groups",
        "XLA:CPU computes a convolution with feature groups as one convolution over all "
        "input features with a block-diagonal kernel, so an inf or NaN input feature times "
        "the zeros of the other groups' blocks makes their outputs NaN; HLO's groups read "
        "only their own features, as xlapy computes them",
        _grouped_conv, None, _AsXla),
    Deviation(
        "atan2-of-two-subnormals",
        "XLA:CPU's atan2 divides y by x: with both subnormal (read as zeros) that is 0/0 and "
        "gives NaN, where its tests for zero operands see nonzero values; atan2(+-0, +-0) is "
        "+-0 or +-pi, what xlapy gives with denormals read as zero",
        lambda i: i.opcode == "atan2", None, _AsXla),
    Deviation(
        "unsigned-start-index-read-signed",
        "XLA's simplifier, turning a dynamic-slice or dynamic-update-slice with constant "
        "start indices into a slice, reads an unsigned constant index as signed (u8 255 is "
        "-1, clamped to 0; XLA reads the same index given as a parameter as 255); HLO's "
        "indices are values of their type (255, clamped to dim - size), as xlapy reads them",
        _unsigned_indices, None, _AsXla),
    Deviation(
        "unsigned-exponent-read-signed",
        "XLA:CPU's integer power tests the exponent for `< 0` on its bits as a signed "
        "integer, so an unsigned exponent with the top bit set (u8 200) gives 0 (1 for "
        "base 1) instead of the wrapped product of repeated multiplication (3^200 mod 256 = "
        "161), which xlapy computes",
        _unsigned_power, None, _AsXla),
    Deviation(
        "conv-padding-multiplied",
        "XLA:CPU runs many convolutions through Eigen (and rewrites one with both lhs "
        "dilation and a window stride) with the padding and the lhs-dilation holes made "
        "real zeros, so an infinite or NaN kernel element times padding gives NaN; HLO, and "
        "XLA's own elemental emitter for the other convolutions, add nothing for them",
        _conv_padded, _materialize_padding),
]


def _evaluate(module, inputs, evaluator=Evaluator):
    with np.errstate(all="ignore"):
        return flatten(evaluator(flush_denormals=True).evaluate(module, list(inputs)))


def explain(module, inputs, expected, actual, mismatch, acc):
    """The name of the known deviation that explains `mismatch`, or None."""
    if mismatch.mask is None:
        return None
    for dev in DEVIATIONS:
        names = [i.name for c in module.computations for i in c.instructions
                 if dev.applies(i)]
        if not names:
            continue
        copy = module.clone()
        try:
            if dev.rewrite is not None:
                for c in copy.computations:
                    for i in list(c.instructions):
                        if i.name in names:
                            dev.rewrite(i)
            mimic = _evaluate(copy, inputs, dev.evaluator or Evaluator)
        except Exception:
            continue
        k = mismatch.output
        leaf = C.compare_leaf(k, expected[k], mimic[k], acc[k], unstable=~mismatch.mask)
        if leaf is None:
            return dev.name
    return None
