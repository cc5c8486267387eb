"""conv-phases: an lhs-dilated convolution becomes one convolution per output phase.

An lhs-dilated convolution (a transposed convolution, and the input gradient of a strided
one, as autodiff emits) reads the lhs with L - 1 holes between its elements along each
dilated dimension; computed as it stands, L - 1 of every L of its products (per dilated
dimension) multiply a hole's zero. Along a dilated dimension with window stride 1 and no
kernel dilation, the outputs o = L i + r of one phase r read real lhs elements only through
the kernel taps k = k0 + L t (k0 = (pad_low - r) mod L), at lhs index i + t + c, so

    out[L i + r] = sum_t lhs[i + t + c] . kernel[k0 + L t]        c = (r + k0 - pad_low) / L

a plain convolution (window T = ceil((K - k0) / L), stride 1, padding -c low, no dilation)
of the lhs with the kernel sliced with stride L. This pass computes each phase (one per
combination of the dilated dimensions' phases) so, and interleaves the results (_interleave:
concatenated along a phase dim after each dilated dim, then reshaped), a copy: every output
element comes from exactly one phase, with its value (signed zeros, inf, NaN) as computed.
A phase that no tap reaches is +0.0 (an empty sum, as HLO's convolution gives). XLA and
oneDNN compute transposed convolutions in the same way (without the holes' products).

Taken: float convolutions (f32, f64, bf16, f16 operands and result) whose
lhs-dilated dimensions have window stride 1 and no kernel dilation, with at most
MAX_PHASES phases. The padding semantics (a padded position adds nothing, conv_guard.py)
carry over: the sub-convolutions pad where the original read padding, and never read holes.
"""

from __future__ import annotations

import itertools

import numpy as np

from xlapy.hlo import attributes as A
from xlapy.hlo.ir import Instruction
from xlapy.hlo.shape_inference import infer_shape
from xlapy.hlo.shapes import Shape
from xlapy.passes.rewrite import InstructionPass

MAX_PHASES = 64


def phase_plan(conv: Instruction):
    """[(phase per spatial dim, [(window size, pad low, pad high, kernel slice start,
    outputs)] per spatial dim)] of an lhs-dilated convolution this pass splits, else None."""
    if conv.opcode != "convolution" or "window" not in conv.attrs:
        return None
    w = conv.attrs["window"]
    # (conv_plan: imported when a module has a convolution; 3 ms of every first compile)
    from xlapy.backends.cpu.passes.conv_plan import GEMM_TYPES, HALF_TYPES
    types = GEMM_TYPES + HALF_TYPES
    if conv.shape.element_type.name not in types \
            or conv.operands[0].shape.element_type.name not in types:
        return None
    if not any(d > 1 for d in w.lhs_dilate) or conv.shape.size == 0:
        return None
    dn = conv.attrs["dim_labels"]
    lhs = conv.operands[0].shape
    n_phases = 1
    for s, dil in enumerate(w.lhs_dilate):
        if dil > 1 and (w.stride[s] != 1 or w.rhs_dilate[s] != 1):
            return None
        n_phases *= dil
    if n_phases > MAX_PHASES or lhs.size == 0:
        return None
    per_dim = []
    for s, dil in enumerate(w.lhs_dilate):
        n_in = lhs.dims[dn.input_spatial[s]]
        n_out = conv.shape.dims[dn.output_spatial[s]]
        if dil == 1:
            per_dim.append([(0, w.size[s], w.pad_low[s], w.pad_high[s], 0, n_out)])
            continue
        opts = []
        for r in range(min(dil, n_out)):
            outs = -(-(n_out - r) // dil)
            k0 = (w.pad_low[s] - r) % dil
            taps = -(-(w.size[s] - k0) // dil) if k0 < w.size[s] else 0
            c = (r + k0 - w.pad_low[s]) // dil
            start = w.size[s] - 1 - k0 - dil * (taps - 1) if w.rhs_reversal[s] else k0
            opts.append((r, taps, -c, outs - 1 + taps - n_in + c, start, outs))
        per_dim.append(opts)
    return list(itertools.product(*per_dim))


class ConvPhases(InstructionPass):
    name = "conv-phases"

    def rewrite(self, comp, conv) -> bool:
        plan = phase_plan(conv)
        if plan is None:
            return False
        w, dn = conv.attrs["window"], conv.attrs["dim_labels"]
        lhs, rhs = conv.operands
        et = conv.shape.element_type
        nsp = w.rank
        meta = dict(conv.metadata)

        def add(opcode, operands, attrs=None, literal=None, declared=None):
            shape = infer_shape(opcode, [o.shape for o in operands], attrs or {}, declared,
                                literal)
            ins = Instruction(opcode, shape, operands, attrs, opcode, meta, literal=literal)
            comp.add_instruction(ins)
            return ins

        def scalar(value):
            lit = np.array(value, dtype=et.np_dtype)
            return add("constant", [], literal=lit, declared=Shape.array(et, ()))

        subs = []
        for phase in plan:
            taps = [p[1] for p in phase]
            out_dims = list(conv.shape.dims)
            for s, p in enumerate(phase):
                out_dims[dn.output_spatial[s]] = p[5]
            if min(taps) == 0:    # no tap reaches a real lhs element: an empty sum
                sub = add("broadcast", [scalar(0.0)], {"dimensions": ()},
                          declared=Shape.array(et, out_dims))
            else:
                starts, limits, strides = [0] * rhs.shape.rank, list(rhs.shape.dims), \
                    [1] * rhs.shape.rank
                for s, p in enumerate(phase):
                    d, dil = dn.kernel_spatial[s], w.lhs_dilate[s]
                    starts[d], limits[d], strides[d] = p[4], p[4] + dil * (p[1] - 1) + 1, dil
                kernel = rhs
                if [p[1] for p in phase] != [rhs.shape.dims[d] for d in dn.kernel_spatial]:
                    kernel = add("slice", [rhs], {"slice": A.SliceSpec(
                        tuple(starts), tuple(limits), tuple(strides))})
                window = A.Window(tuple(taps), w.stride, tuple(p[2] for p in phase),
                                  tuple(p[3] for p in phase), (1,) * nsp, w.rhs_dilate,
                                  w.rhs_reversal)
                attrs = dict(conv.attrs)
                attrs["window"] = window
                sub = add("convolution", [lhs, kernel], attrs, declared=Shape.array(et, out_dims))
            subs.append((phase, sub))
        total = _interleave(add, scalar, conv, subs)
        if total.shape.minor_to_major != conv.shape.minor_to_major:
            total = Instruction("copy", conv.shape, [total], name="copy", metadata=meta)
            comp.add_instruction(total)
        comp.replace_instruction(conv, total)
        comp.instructions = comp.post_order()
        return True


def _interleave(add, scalar, conv, subs):
    """The phases' results put in place: out[.., L q + r, ..] = phase r's [.., q, ..] along
    each lhs-dilated dim (L phases; fewer when the output is shorter than L). Each phase is
    padded at the end to the first phase's size Q, given a size-1 dim after each dilated
    dim, and the phases are concatenated along those dims ([.., Q, L, ..]), which a reshape
    makes [.., Q L, ..] and a slice the output's size: a copy, so every value (signed zeros,
    inf, NaN) stays as the phase computed it. (Placing each phase with an interior-padded
    pad and summing them took 0.45 ms for NCHW 8x32x32x32 out of four 8x32x16x16 phases,
    against 0.14 ms as this copy, one thread.)"""
    w, dn = conv.attrs["window"], conv.attrs["dim_labels"]
    et = conv.shape.element_type
    out = conv.shape.dims
    dilated = [s for s in range(w.rank) if w.lhs_dilate[s] > 1]
    dims = {dn.output_spatial[s]: s for s in dilated}
    count = {s: min(w.lhs_dilate[s], out[dn.output_spatial[s]]) for s in dilated}
    first = {s: -(-out[dn.output_spatial[s]] // w.lhs_dilate[s]) for s in dilated}
    # the padded phases' shape with a phase dim after each dilated dim, and where those are
    expanded, at = [], {}
    for d, n in enumerate(out):
        if d in dims:
            expanded += [first[dims[d]], 1]
            at[dims[d]] = len(expanded) - 1
        else:
            expanded.append(n)
    zero = scalar(0.0)
    parts = []
    for phase, sub in subs:
        high = [0] * len(out)
        for s in dilated:
            high[dn.output_spatial[s]] = first[s] - phase[s][5]
        if any(high):
            sub = add("pad", [sub, zero], {"padding": A.PaddingConfig(
                (0,) * len(out), tuple(high), (0,) * len(out))})
        parts.append(add("reshape", [sub], declared=Shape.array(et, expanded)))

    def combine(items, level):
        """Concatenate the phases (product order: the first dilated dim's phase slowest)."""
        if level == len(dilated):
            return items[0]
        s = dilated[level]
        per = len(items) // count[s]
        groups = [combine(items[k * per:(k + 1) * per], level + 1) for k in range(count[s])]
        if len(groups) == 1:
            return groups[0]
        return add("concatenate", groups, {"dimensions": (at[s],)})

    joined = combine(parts, 0)
    full = [first[dims[d]] * count[dims[d]] if d in dims else n for d, n in enumerate(out)]
    total = add("reshape", [joined], declared=Shape.array(et, full))
    if full != list(out):
        total = add("slice", [total], {"slice": A.SliceSpec(
            (0,) * len(out), tuple(out), (1,) * len(out))})
    return total
