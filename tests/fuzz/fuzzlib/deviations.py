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


DEVIATIONS = [
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
        except Exception:  # noqa: BLE001 (a rewrite that does not apply here)
            continue
        k = mismatch.output
        leaf = C.compare_leaf(k, expected[k], mimic[k], acc[k], unstable=~mismatch.mask)
        if leaf is None:
            return dev.name
    return None
