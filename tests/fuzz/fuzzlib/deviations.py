"""Known departures of XLA:CPU (jaxlib 0.10.2) from HLO semantics, where xlapy keeps the
semantics (README, "Numerics").

Each entry names the instructions it concerns, says why XLA differs, and rewrites a copy of
the module into what XLA effectively computes. A mismatch is explained by an entry when the
reference interpreter, run on the rewritten module (with denormals flushed, as compiled
code runs), reproduces XLA's value at every mismatching element. Nothing else is excused:
an entry that does not reproduce XLA's numbers explains nothing.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable

import numpy as np

from xlapy.backends.base import flatten
from xlapy.hlo.evaluator import Evaluator
from xlapy.hlo.ir import Instruction

from fuzzlib import compare as C
from fuzzlib.xla_evaluators import (SAS_TIE_VARIANTS, _AsXla, _MergedSlices, _NanDroppingMinMax,
                                    _ScatterBoundInIndexType, _scatter_bounds,
                                    _ScatterAsUpdateSlice, _one_index_scatter_of_slice,
    _batch_grouped_conv, _f32_cbrt, _f32_log, _float_power, _grouped_conv, _minmax_reducer,
    _select_as_minmax, _sliced_slice, _tiny_argument_returned, _unsigned_indices,
    _unsigned_power)
from fuzzlib.xla_rewrites import (_add_of_zero, _constant_negative_zero, _conv_padded,
                                  _drop_log_of_exp, _int_power_of_minus_one, _log_of_exp,
                                  _power_as_reciprocal, _product_of_broadcast_scalars,
                                  _fold_broadcast_scalars,
                                  _divide_by_power, _drop_added_zero,
                                  _operand_for_reduce, _reduce_over_nothing,
    _divide_by_quotient, _excess_precision, _expand_logistic, _f16_logistic,
    _broadcast_divisor, _broadcast_reciprocal_multiply, _float_constant_divisor,
    _log_of_power, _log_power_as_product, _materialize_padding,
    _multiply_by_pred, _negative_power, _positive_zeros, _product_of_constants,
    _reassociate_divide, _reassociate_products, _reciprocal_multiply, _select_for_multiply,
    _fold_rounding_into_select, _rounding_of_selected_constant,
    _widenable, _widened_convert)


@dataclass
class Deviation:
    name: str
    reason: str
    applies: Callable[[Instruction], bool]
    rewrite: Callable[[Instruction], None] | None  # on the copy's matching instruction
    evaluator: type | None = None  # evaluates as XLA does instead of a rewrite
    module_rewrite: Callable | None = None  # rewrites the whole copy (module) instead
    # the forms the departure takes, tried one by one (tokens the evaluator reads in its
    # active names): XLA's order of visiting a window, which it does not fix
    variants: Callable | None = None
    # XLA departs in some elements only (which ones depends on its kernel's blocking): an
    # element is explained when either the mimic or HLO's own value (the backend's) matches
    per_element: bool = False


DEVIATIONS = [
    Deviation(
        "constant-negative-zero",
        "XLA:CPU gives +0 for the -0 elements of a constant (jax.jit(lambda x: x * "
        "np.float32([-0.0]))(1.0) is +0), so 1/c, copysign and atan2 of them take the "
        "other sign; HLO's constant is -0, as xlapy keeps it",
        _constant_negative_zero, _positive_zeros),
    Deviation(
        "pow-of-subnormal-base",
        "XLA:CPU's pow runs glibc's pow/powf with denormals flushed, whose normalization of "
        "a subnormal base multiplies it by 2^23 into a zero, so every subnormal base reads "
        "as 2^-150 (f64: 2^-1075): pow(4e-45, 1e-4) is 0.98835, not 0.98855; xlapy's "
        "compiled code reads the base as zero (0.0), the interpreter as IEEE. A subnormal "
        "exponent is not zero to it either: pow(-2, 4e-45) is NaN (xlapy: pow(-2, 0) = 1)",
        _float_power, None, _AsXla),
    Deviation(
        "tiny-argument-returned",
        "XLA:CPU's sin, tan and expm1 (and f32 tanh) return a tiny argument itself through "
        "a select, which denormal flushing does not touch, so a subnormal argument comes "
        "out unflushed: sin(-1e-45) is -1e-45, and pow(NaN, sin(-1e-45)) is NaN where "
        "xlapy's compiled code, reading and flushing subnormals as documented, computes "
        "sin(-0) = -0 and pow(NaN, -0) = 1 (hlo 18006367)",
        _tiny_argument_returned, None, _AsXla),
    Deviation(
        "rounding-of-selected-constant-folded",
        "XLA:CPU's floor (and ceil) of a select with a constant arm is folded into the arms "
        "by LLVM, and the constant arm's rounding is computed at compile time with IEEE "
        "subnormals: floor(bitcast(select(p, 0x8001, bits))) is -1 where the select takes "
        "the constant (a bf16 -9.2e-41), while the same floor of a computed subnormal is -0 "
        "(flushed, as xlapy's compiled code computes both; jax 19006017, jnp.nextafter then "
        "floor)",
        _rounding_of_selected_constant, _fold_rounding_into_select, _AsXla),
    Deviation(
        "select-simplified-to-minmax",
        "XLA's simplifier turns select(a < b, b, a) (and the other orders) into maximum or "
        "minimum, which x86's maxps/minps compute with denormals read as zero: a tie between "
        "a subnormal and zero gives one operand by position, where HLO's select compares "
        "the values (xlapy's compiled code: flushed; the interpreter: IEEE): for a = 4e-45, "
        "b = 0, atan2(a, select(a < b, b, a)) is pi/2 in XLA (its atan2 of a subnormal over "
        "zero), 0 in xlapy's compiled code and pi/4 in the interpreter (hlo 20001831)",
        lambda i: _select_as_minmax(i) is not None, None, _AsXla,
        variants=lambda module: ["minmax-tie:second", "minmax-tie:first"]),
    Deviation(
        "divide-by-constant-as-reciprocal",
        "XLA's simplifier rewrites x / c for a constant c as x * (1 / c), with 1 / c rounded "
        "to the type: a rounding more (f16: 2 ulps off, -47.66 for -47.72), and 1/c may "
        "overflow or flush where x / c would not; HLO divides, as xlapy does",
        lambda i: _float_constant_divisor(i) is not None, _reciprocal_multiply),
    Deviation(
        "divide-by-broadcast-as-reciprocal",
        "XLA's simplifier rewrites x / broadcast(y) as x * broadcast(1 / y) for any y, the "
        "reciprocal rounded to the type (f16/f32/f64; measured: every f16 and f32 quotient "
        "of a [200,4] / [200] division is the rounded reciprocal's product): a rounding "
        "more, so a softmax's probabilities are a few ulps off (f16 0.2488 for 0.2487) and "
        "a remainder by them much more (jax 15002905); HLO divides, as xlapy does",
        lambda i: _broadcast_divisor(i) is not None, _broadcast_reciprocal_multiply),
    Deviation(
        "products-of-constants-reassociated",
        "XLA's simplifier rewrites (a * c1) * (b * c2) as (a * b) * (c1 * c2) and "
        "(a * c1) * c2 as a * (c1 * c2) for literal constants (scalars, one-element or "
        "non-uniform arrays; not broadcasts) in f16/f32/f64, after x / c became "
        "x * (1 / c): jnp.var(x) ** 2 of [2147483647, 2147483647, ...] (80 elements) is "
        "(s * s) * 0.000156250011, s * s overflowing to inf, where HLO's (s / 80) * "
        "(s / 80) is 2.1e35, as xlapy computes it; the constants' product is one rounding "
        "more",
        _product_of_constants, None, None, _reassociate_products),
    Deviation(
        "clz-folded-negative",
        "XLA's constant folding counts the leading zeros of a negative signed integer as "
        "bits - 1 - 63 (it takes log2 of the value widened to 64 bits): clz(-1) is -32 in "
        "s32 where its operand folds to a constant (a reduce over a size-0 dimension, a "
        "constant); HLO counts the zeros of the value's own bits (0), as xlapy does",
        lambda i: i.opcode == "count-leading-zeros"
        and i.shape.element_type.name[0] == "s", None, _AsXla),
    Deviation(
        "cbrt-of-subnormal",
        "XLA:CPU's f32 cbrt gives -2^(-152/3) = -5.595e-16 for every subnormal argument, "
        "positive or negative (its exponent split does not normalize subnormals, and its "
        "sign comes from the garbage); xlapy reads the subnormal as zero (cbrt +-0) in "
        "compiled code, the interpreter as IEEE",
        _f32_cbrt, None, _AsXla),
    Deviation(
        "log-of-subnormal",
        "XLA:CPU's f32 log (its default, MLIR-emitted one) splits the argument into "
        "exponent and mantissa without normalizing a subnormal, which reads as 2^-150 with "
        "denormals flushed: log(5.9e-39) is -103.972 for every positive subnormal and NaN "
        "for a negative one (IEEE: -88.03; XLA's fast configuration and xlapy's compiled "
        "code read it as zero: -inf; the interpreter computes IEEE)",
        _f32_log, None, _AsXla),
    Deviation(
        "multiply-by-converted-pred",
        "XLA's simplifier rewrites x * convert(p) for a pred p (f16/f32/f64) as "
        "select(p, x, 0), so inf * 0 and NaN * 0 are 0 instead of NaN and -2 * 0 is +0 "
        "instead of -0 (jnp.var of a NaN, compared with itself, times that: 0, not NaN); "
        "HLO multiplies, as xlapy does",
        _multiply_by_pred, _select_for_multiply),
    Deviation(
        "select-and-scatter-window-order",
        "XLA:CPU's default select-and-scatter visits the positions of some windows with the "
        "last dimension outermost (seen with padding in the last dimension and a window "
        "two wide in it: 2x2, 3x2), so among equal candidates a select like GE keeps "
        "another one: x = [[2,1,0,3],[2,3,3,1]], a 2x2 window padded 0_0x0_1 over columns "
        "2-3 gives the source to (1,2); HLO calls select with the lexicographically first "
        "index first and GE keeps (0,3), as xlapy and XLA's fast configuration do. Other "
        "windows are visited in other dimension orders (a 3x2x2 window padded in its "
        "first two dimensions, with a NaN that resets an LE select: the middle dimension "
        "outermost, hlo 14001031); the entry tries every order of the window's "
        "dimensions, which gives one selection unless the window holds ties or NaNs",
        lambda i: i.opcode == "select-and-scatter", None, _AsXla,
        variants=lambda module: _visit_orders(module)),
    Deviation(
        "abs-of-square-dropped",
        "XLA's simplifier drops abs(x * x), taking a square to be non-negative, which a "
        "wrapping signed integer product need not be: in s8, 12 * 12 wraps to -112 and "
        "abs gives 112 (jnp.abs(x ** 2)); XLA returns -112",
        lambda i: i.opcode == "abs" and not i.shape.element_type.is_float
        and i.operands[0].opcode == "multiply"
        and i.operands[0].operands[0] is i.operands[0].operands[1],
        lambda i: setattr(i, "opcode", "copy")),
    Deviation(
        "add-of-zero-dropped",
        "XLA's simplifier rewrites x + 0 and 0 + x (a constant zero, or a broadcast of one) "
        "as x for floats too, so -0 + 0 is -0 where IEEE gives +0 (hlo 21001140); xlapy's "
        "simplifier does the same (its compiled code agrees with XLA), the interpreter "
        "adds",
        _add_of_zero, _drop_added_zero),
    Deviation(
        "broadcast-scalar-products-reassociated",
        "XLA's simplifier rewrites (a * broadcast(c1)) * broadcast(c2) as a * broadcast(c1 * "
        "c2), the scalars' product rounded to the type, which differs where a * c1 "
        "overflows: 1.8e308 * 26.68 * 0.0139 is inf by HLO and 6.7e307 in XLA (hlo "
        "23006297, x * 26.68 * 0.0139 inside a call)",
        _product_of_broadcast_scalars, _fold_broadcast_scalars),
    Deviation(
        "integer-power-of-minus-one-as-divide",
        "XLA's simplifier rewrites pow(a, -1) for a constant exponent as 1 / a, for signed "
        "integers too, so pow(0, -1) is 1 / 0 = -1 (HLO's integer division by zero) where "
        "XLA's own integer power (and HLO's, which xlapy computes) gives 0: pow(-2, -1) is 0 "
        "either way (hlo 23000713)",
        _int_power_of_minus_one, _power_as_reciprocal),
    Deviation(
        "log-of-exp-dropped",
        "XLA's simplifier rewrites log(exp(x)) as x, so where exp overflows or underflows "
        "the result is x: log(exp(-123.7)) is -123.7 in XLA and -inf in HLO (exp(-123.7) "
        "is 0 in f32; jax 22001164, jnp.log(jnp.exp(x @ w)))",
        _log_of_exp, _drop_log_of_exp),
    Deviation(
        "sqrt-of-square-as-abs",
        "XLA's simplifier rewrites sqrt(x * x) as abs(x) (f16, f32, f64; not bf16), which "
        "differs where the square under- or overflows: sqrt(5e-324 * 5e-324) is 5e-324 in "
        "XLA and 0 in HLO, sqrt(1e200 * 1e200) 1e200 and inf (jax 20001039, "
        "jnp.sqrt(x * x)); xlapy computes the square, as HLO defines it",
        lambda i: i.opcode == "sqrt" and i.shape.is_array
        and i.shape.element_type.name in ("f16", "f32", "f64")
        and i.operands[0].opcode == "multiply"
        and i.operands[0].operands[0] is i.operands[0].operands[1],
        lambda i: (setattr(i, "opcode", "abs"),
                   i.replace_operand_with(i.operands[0], i.operands[0].operands[0]))),
    Deviation(
        "f16-logistic-expanded",
        "XLA computes an f16 logistic as 1 / (1 + exp(-x)) with every op rounded to f16, "
        "so exp(-x) overflows for x < -11.09 and the result is 0 (logistic(-16.6) is "
        "6.2e-8, the f16 subnormal 6e-8), and 1 + exp(-x) loses digits near 0 (x = -10.4: "
        "3.0518e-5 for 3.0458e-5); xlapy rounds the function's value once",
        _f16_logistic, _expand_logistic),
    Deviation(
        "divide-by-quotient-reassociated",
        "XLA's simplifier rewrites a / (b / c) as (a * c) / b: another rounding (x / (x / x) "
        "is x + 1 ulp for x = 0.78687984, so x / (x / x) <= x is false) and another "
        "overflow (a * c may overflow where b / c does not: NaN for 0); HLO divides twice, "
        "as xlapy does",
        _divide_by_quotient, _reassociate_divide),
    Deviation(
        "divide-by-power-as-negative-power",
        "XLA's simplifier rewrites a / pow(b, c) as a * pow(b, -c): for integers pow(b, -c) "
        "is 0 (b > 1), so 100 / 2^3 is 0 (HLO: 12), and a divisor pow(0, 2) = 0 gives 0 "
        "instead of HLO's x / 0 = -1; for floats one rounding more (33.333336 for "
        "100 / 3^1); HLO divides, as xlapy does",
        _divide_by_power, _negative_power),
    Deviation(
        "log-of-power-as-product",
        "XLA's simplifier rewrites log(pow(a, b)) as b * log(abs(a)): log(pow(-2.95, 1)) is "
        "1.0823 instead of log(-2.95) = NaN, and the product rounds differently (1 ulp); "
        "HLO takes the log of the power, as xlapy does",
        _log_of_power, _log_power_as_product),
    Deviation(
        "excess-precision",
        "XLA:CPU computes f16/bf16 arithmetic in f32 and, with excess precision allowed "
        "(xla_allow_excess_precision, on by default), drops roundings to the narrow type: "
        "of a whole chain (x * 1.55 * 0.43 in f16 does not overflow for x = -65504), or of "
        "the bf16 op right under a convert to f32 only (convert<f32>(exp<bf16>(x) + 1) is "
        "the f32 sum of the rounded exp: 1.0322266 for exp(x) = 0.0322266, HLO 1.03125; a "
        "bf16 dot or convolution right under a convert to f32 is its f32 result: jax "
        "28002450); HLO rounds every op's result to its type, as xlapy does",
        lambda i: _widenable(i) or _widened_convert(i), None, None, _excess_precision,
        variants=lambda module: ["excess:chain", "excess:last-op"]),
    Deviation(
        "grouped-conv-nan-across-groups",
        "XLA:CPU computes a convolution with feature groups as one convolution over all "
        "input features with a block-diagonal kernel, so an inf or NaN input feature times "
        "the zeros of the other groups' blocks makes their outputs NaN; HLO's groups read "
        "only their own features, as xlapy computes them",
        _grouped_conv, None, _AsXla),
    Deviation(
        "batch-grouped-conv-nan-across-groups",
        "XLA:CPU computes a convolution with batch groups as one over every batch group and "
        "every group's kernel and keeps each output feature's own part (the rest times "
        "zero), so an inf or NaN in one group's kernel or batch makes the other groups' "
        "outputs NaN; HLO's output features read only their own batch group and kernel, as "
        "xlapy computes them",
        _batch_grouped_conv, None, _AsXla),
    Deviation(
        "clamp-nan-sign",
        "XLA:CPU's clamp(lo, x, hi) of a NaN x is its maximum(lo, x), which ands the two "
        "sign bits, then the minimum with hi, which keeps that NaN: a -NaN clamped above a "
        "lo >= +0 comes out +NaN (hi's sign plays no part), which a TOTALORDER compare "
        "sees. x86's invalid-operation NaN is negative, so pow(-0.7, 0.37) clamped to "
        "[0.3, 2] sorts above every number in XLA and below them in HLO, which leaves NaN "
        "signs to the implementation; xlapy keeps x's NaN (hlo 32007639). Bounds that are "
        "constants XLA rewrites into a maximum and a minimum of x first, which keep it",
        lambda i: i.opcode == "clamp" and i.shape.is_array
        and i.shape.element_type.is_float, None, _AsXla),
    Deviation(
        "atan2-of-two-subnormals",
        "XLA:CPU's atan2 divides y by x: with both subnormal (read as zeros) that is 0/0 and "
        "gives NaN, where its tests for zero operands see nonzero values; atan2(+-0, +-0) is "
        "+-0 or +-pi, what xlapy gives with denormals read as zero; and with y subnormal "
        "and x negative its quadrant test reads y as zero but not as +0, giving -pi for "
        "either sign of y (xlapy: +pi for +0, the flushed positive subnormal); a "
        "subnormal y over a zero x (f64: or a subnormal one, which it reads as zero) gives "
        "+-pi/2 (xlapy: atan2(+-0, +-0), 0 or pi); f32 atan2(y, 1) is y unflushed "
        "(atan2(4e-45, 1) = 4e-45; xlapy: 0). The -pi for either sign of y is f64's; f32 "
        "gives +-pi by y's sign, as xlapy",
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
        "slice-of-dynamic-slice-merged",
        "XLA's simplifier merges a dynamic-slice (or a one-index gather) of a dynamic-slice "
        "(or of a one-index gather, whatever its batch dims) "
        "into one dynamic-slice of the inner operand at the sum of the starts (the inner "
        "one clamped for the outer slice's size, the sum wrapping in the outer index's "
        "type), clamped against the inner operand only: x = [-5,-11,-12,9,11], a 2-wide "
        "slice at 0 read at 4 gives x[4] = 11; HLO clamps the outer start against the "
        "2-wide slice (-11), as xlapy does",
        _sliced_slice, None, _MergedSlices),
    Deviation(
        "scatter-of-slice-as-update-slice",
        "XLA's simplifier turns a scatter with one index into a dynamic-update-slice of "
        "select(in bounds, combine(old window, update), old window) at the index clamped, "
        "and when the scatter's operand is a dynamic-slice it merges the read of the old "
        "window into one dynamic-slice of the inner operand (as slice-of-dynamic-slice-"
        "merged): an out-of-bounds update, which HLO drops, writes elements of the inner "
        "operand: x = arange(20).reshape(4,5), a scatter-add at (1,4) into its 2x2 slice at "
        "(0,0) sets element (1,1) to x[1,4] = 9 (HLO: 6, unchanged), as xlapy computes",
        _one_index_scatter_of_slice, None, _ScatterAsUpdateSlice),
    Deviation(
        "scatter-bound-in-index-type",
        "XLA:CPU's scatter bounds check computes dim - window in the index type, where it "
        "wraps when the type cannot hold it (225 - 1 = 224 is -32 in s8), so no index passes "
        "and every update is dropped: a minimum-scatter of 0 at s8 index 0 into an f32[225] "
        "of 15s leaves 15 (into an f32[8], or with an s32 index, 0); HLO's indices are "
        "values, in bounds when 0 <= i <= dim - window, as xlapy applies them",
        lambda i: bool(_scatter_bounds(i)), None, _ScatterBoundInIndexType),
    Deviation(
        "reduce-over-no-dimensions-is-operand",
        "XLA's simplifier replaces a reduce over no dimensions, or over dimensions of size "
        "1 only, and a reduce-window of one-element windows, by (a reshape of) its "
        "operand, never applying the init value (XLA asks that it be the reducer's "
        "identity): with init 0 and add, -0 stays -0 where HLO's "
        "0 + -0 is +0 (atan2 of it against -1 is -pi, not pi; 0.76 / sum(f32[1] -0) is "
        "-inf, not inf), and a non-identity init (5) is dropped; xlapy applies it once, as "
        "HLO's reduce of one element does",
        _reduce_over_nothing, _operand_for_reduce),
    Deviation(
        "conv-padding-multiplied",
        "XLA:CPU runs many convolutions through Eigen (and rewrites one with both lhs "
        "dilation and a window stride) with the padding and the lhs-dilation holes made "
        "real zeros, so an infinite or NaN kernel element times padding gives NaN; HLO, and "
        "XLA's own elemental emitter for the other convolutions, add nothing for them; "
        "in some elements only (hlo seed 24000311: one output element of 67 that Eigen "
        "computes without the padding's product)",
        _conv_padded, _materialize_padding, per_element=True),
    Deviation(
        "minmax-reduce-drops-nan",
        "XLA:CPU's vectorized min- and max-reduces ignore NaNs in some shapes (a column "
        "reduce of 112 or more rows, a reduce over two or more middle dimensions above a "
        "kept minor one: jnp.min(x, axis=1) of an f32[8,112,7] holding one NaN per column "
        "gives the other elements' minimum, of f32[8,64,7] NaN); HLO's minimum and maximum "
        "propagate NaN, as xlapy's reduces do. In others it folds with x86's minps/maxps "
        "((a < b) ? a : b: a NaN element stands until the next replaces it, the init "
        "combined last: a column min of [a, NaN, b, c] is min(b, c), of [a, b, c, NaN] the "
        "init inf; hlo 15007248); or in two loops, the innermost reduced dim from its "
        "first element and the partials into the init, a NaN skipped in each (a max-reduce "
        "of a dot's output over three dims: a partial that began with NaN drops out; hlo "
        "27002769)",
        lambda i: _minmax_reducer(i) is not None, None, _NanDroppingMinMax,
        variants=lambda module: ["minmax-fold:drop-nan", "minmax-fold:x86",
                                 "minmax-fold:x86-nested"]),
]


def _visit_orders(module) -> list[str]:
    """Every order of visiting a select-and-scatter window (the reversed one, the first
    seen, first), as the token _AsXla reads."""
    ranks = {i.shape.rank for c in module.computations for i in c.instructions
             if i.opcode == "select-and-scatter"}
    if len(ranks) != 1 or max(ranks) > 4:  # (several ranks, or 120+ orders: reversed only)
        return ["visit-order:reversed"] + [f"sas-ties:{k}" for k in range(SAS_TIE_VARIANTS)]
    rank = ranks.pop()
    perms = sorted(itertools.permutations(range(rank)),
                   key=lambda p: p != tuple(reversed(range(rank))))
    return ["visit-order:" + ",".join(map(str, p)) for p in perms] + [
        f"sas-ties:{k}" for k in range(SAS_TIE_VARIANTS)]


def _evaluate(module, inputs, evaluator=Evaluator, active=(), flush=True):
    with np.errstate(all="ignore"):
        ev = evaluator(flush_denormals=flush, active=active) if active else \
            evaluator(flush_denormals=flush)
        return flatten(ev.evaluate(module, list(inputs)))


def _mimic(module, inputs, devs, flush=True, options=()):
    """The module's outputs with the deviations `devs` (and their instruction names)
    applied, as the flushing interpreter computes them."""
    copy = module.clone()
    evaluators = []
    for dev, names in devs:
        if dev.module_rewrite is not None and dev.variants is not None:
            dev.module_rewrite(copy, options)
        elif dev.module_rewrite is not None:
            dev.module_rewrite(copy)
        elif dev.rewrite is not None:
            for c in copy.computations:
                for i in list(c.instructions):
                    if i.name in names:
                        dev.rewrite(i)
        if dev.evaluator is not None and dev.evaluator not in evaluators:
            evaluators.append(dev.evaluator)
    if not evaluators:
        return _evaluate(copy, inputs, flush=flush)
    # (several: one class with each one's apply, cooperatively through super())
    evaluator = evaluators[0] if len(evaluators) == 1 else type(
        "_Combined", tuple(evaluators), {})
    return _evaluate(copy, inputs, evaluator, [dev.name for dev, _ in devs] + list(options),
                     flush)


def _both_non_finite(module, k: int, expected, actual):
    """Where output k is a convolution's result and both values are non-finite (NaN or
    +-inf): with an infinite operand, which products XLA's Eigen kernel skips (padding,
    lhs-dilation holes) or sums first decides among NaN, inf and -inf element by element
    (hlo seed 24000311: -inf where HLO's sum of -inf * 0 with the rest is NaN)."""
    root = module.entry.root
    out = root.operands[k] if root.opcode == "tuple" and k < len(root.operands) else root
    if out.opcode != "convolution":
        return np.zeros(np.shape(expected), bool)
    with np.errstate(all="ignore"):
        e, a = C._f64(np.asarray(expected)), C._f64(np.asarray(actual))
        return ~np.isfinite(e) & ~np.isfinite(a)


def explain(module, inputs, expected, actual, mismatch, acc, flush=True):
    """The name of the known deviation that explains `mismatch` (several joined by "+"
    when only all of those that apply together do), or None. With `flush` False the
    departures are applied to the program computed with IEEE subnormals (XLA keeping a
    subnormal where xlapy's compiled code flushes it, harness.py)."""
    if mismatch.mask is None:
        return None
    # XLA inlines calls before its simplifier runs, so a departure that needs to see a
    # constant (x / c, made inside a called computation that JAX emits for a nested jit
    # function) or a whole chain is judged on the inlined module
    from xlapy.passes.inliner import CallInliner
    module = module.clone()
    CallInliner().run(module)
    found = _explain_on(module, inputs, expected, actual, mismatch, acc, flush)
    if found is None:
        # XLA folds constants and selects on constant predicates before these rewrites
        # (xla_folding.py): judged again on the module folded exactly, which computes the
        # same values, so that an entry sees the constants XLA's rules see
        from fuzzlib.xla_folding import fold_exact
        if fold_exact(module):
            found = _explain_on(module, inputs, expected, actual, mismatch, acc, flush)
    return found


# a pair of departures whose variants make more combinations than this is not tried (each
# is an evaluation of the module): the select-and-scatter tie orders (64) with another
# many-formed one
PAIR_VARIANTS = 256


def _explain_on(module, inputs, expected, actual, mismatch, acc, flush=True):
    applicable = []
    for dev in DEVIATIONS:
        names = {i.name for c in module.computations for i in c.instructions
                 if dev.applies(i)}
        if names:
            applicable.append((dev, names))
    # each alone, each pair (two departures XLA makes together while a third it could make
    # does not show: jax 31001160, an f64 atan2 of a subnormal and a multiply by a converted
    # pred, with a NaN max that XLA kept), then all together
    tries = [[a] for a in applicable]
    if len(applicable) > 2:
        tries += [list(pair) for pair in itertools.combinations(applicable, 2)]
    if len(applicable) > 1:
        tries.append(applicable)
    k = mismatch.output
    for devs in tries:
        forms = [dev.variants(module) if dev.variants else [None] for dev, _ in devs]
        if len(devs) == 2 and len(forms[0]) * len(forms[1]) > PAIR_VARIANTS:
            continue
        for options in itertools.product(*forms):
            try:
                mimic = _mimic(module, inputs, devs, flush, [o for o in options if o])
            except Exception:
                continue
            leaf = C.compare_leaf(k, expected[k], mimic[k], acc[k], unstable=~mismatch.mask)
            if leaf is None or (leaf.mask is not None and any(d.per_element for d, _ in devs)
                                and not (leaf.mask & mismatch.mask
                                         & ~_both_non_finite(module, k, expected[k],
                                                             actual[k])).any()):
                return "+".join(dev.name for dev, _ in devs)
    return None
