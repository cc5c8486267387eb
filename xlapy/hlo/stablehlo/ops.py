"""The op table: every operation the StableHLO reader and writer know, in one place.

Each row gives the MLIR op name, the HLO opcode it corresponds to (None when it becomes
several HLO instructions or none), how its short form reads (`syntax`, a reader from
pretty.py; None: only the generic form "op"(...) is read), how it lowers to HLO (`lower`,
a rule from rules_data.py, rules_control.py or chlo.py; elementwise rows lower 1:1 to
their opcode), and how an HLO instruction of that opcode prints back (`to_text`, from
print_rules.py: exactly one row per printable opcode has it). Rows with `unsupported` name
valid ops xlapy cannot run, with the reason given in the error.

Adding an op: add its row here (and a lowering rule, a printing rule if it has an HLO
opcode); tests/hlo/stablehlo/test_stablehlo_ops.py checks the table's consistency.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from xlapy.hlo.stablehlo import chlo, pretty
from xlapy.hlo.stablehlo import print_rules as P
from xlapy.hlo.stablehlo import rules_collective as K
from xlapy.hlo.stablehlo import rules_control as C
from xlapy.hlo.stablehlo import rules_data as R


@dataclass(frozen=True)
class Row:
    mlir: str
    hlo: str | None = None
    syntax: Callable | None = None
    lower: Callable | None = None
    to_text: Callable | None = None
    unsupported: str | None = None
    also_prints: tuple = ()  # more HLO opcodes to_text prints (fusion prints as a call)


SAME = pretty.same("same")


def _ew(mlir: str, hlo: str, syntax=SAME, prints: bool = True) -> Row:
    return Row(mlir, hlo, syntax, R.elementwise(hlo), P.elementwise if prints else None)


def _unsupported(names, reason: str, syntax=None) -> list[Row]:
    return [Row(n, unsupported=reason) for n in names.split()]


def _kw(**keys):
    return pretty.keywords(**keys)


_DYNAMIC = "xlapy compiles static shapes only"
_COLLECTIVE = "xlapy has no collective-broadcast"
_IO = "xlapy has no host transfers or channels"
_QUANT = "xlapy has no quantized types"
_NO_OP = "xlapy has no such HLO operation yet"

ROWS: list[Row] = [
    # ---- module structure --------------------------------------------------------------------
    Row("builtin.module", syntax=pretty.module),
    Row("sdy.mesh", syntax=pretty.mesh),  # a sharding declaration: ignored
    Row("func.func", syntax=pretty.func),
    Row("func.return", syntax=pretty.same("operands")),
    Row("stablehlo.return", syntax=pretty.same("operands")),
    Row("mhlo.return", syntax=pretty.same("operands")),
    Row("func.call", "call", pretty.call, C.call, P.call, also_prints=("fusion",)),
    Row("stablehlo.composite", None, pretty.composite, C.composite),
    # ---- elementwise -------------------------------------------------------------------------
    _ew("stablehlo.abs", "abs"),
    _ew("stablehlo.cbrt", "cbrt"),
    _ew("stablehlo.ceil", "ceil"),
    _ew("stablehlo.count_leading_zeros", "count-leading-zeros"),
    _ew("stablehlo.cosine", "cosine"),
    _ew("stablehlo.exponential", "exponential"),
    _ew("stablehlo.exponential_minus_one", "exponential-minus-one"),
    _ew("stablehlo.floor", "floor"),
    _ew("stablehlo.is_finite", "is-finite"),
    _ew("stablehlo.log", "log"),
    _ew("stablehlo.log_plus_one", "log-plus-one"),
    _ew("stablehlo.logistic", "logistic"),
    _ew("stablehlo.negate", "negate"),
    _ew("stablehlo.not", "not"),
    _ew("stablehlo.popcnt", "popcnt"),
    _ew("stablehlo.round_nearest_afz", "round-nearest-afz"),
    _ew("stablehlo.round_nearest_even", "round-nearest-even"),
    _ew("stablehlo.rsqrt", "rsqrt"),
    _ew("stablehlo.sign", "sign"),
    _ew("stablehlo.sine", "sine"),
    _ew("stablehlo.sqrt", "sqrt"),
    _ew("stablehlo.tan", "tan"),
    _ew("stablehlo.tanh", "tanh"),
    _ew("stablehlo.add", "add"),
    _ew("stablehlo.and", "and"),
    _ew("stablehlo.atan2", "atan2"),
    _ew("stablehlo.divide", "divide"),
    _ew("stablehlo.maximum", "maximum"),
    _ew("stablehlo.minimum", "minimum"),
    _ew("stablehlo.multiply", "multiply"),
    _ew("stablehlo.or", "or"),
    _ew("stablehlo.power", "power"),
    _ew("stablehlo.remainder", "remainder"),
    _ew("stablehlo.shift_left", "shift-left"),
    _ew("stablehlo.shift_right_arithmetic", "shift-right-arithmetic"),
    _ew("stablehlo.shift_right_logical", "shift-right-logical"),
    _ew("stablehlo.subtract", "subtract"),
    _ew("stablehlo.xor", "xor"),
    _ew("stablehlo.select", "select", pretty.same("last")),
    _ew("stablehlo.clamp", "clamp"),
    Row("stablehlo.compare", "compare", pretty.compare, R.compare, P.compare),
    Row("stablehlo.convert", "convert", SAME, R.declared("convert"), P.convert),
    Row("stablehlo.bitcast_convert", "bitcast-convert", SAME, R.declared("bitcast-convert"),
        P.convert),
    Row("stablehlo.reduce_precision", "reduce-precision",
        _kw(format=("exponent_bits", "format")), R.reduce_precision, P.reduce_precision),
    # ---- data movement -----------------------------------------------------------------------
    Row("stablehlo.constant", "constant", pretty.constant, R.constant, P.constant),
    Row("stablehlo.iota", "iota", _kw(dim=("iota_dimension", "int")), R.iota, P.iota),
    Row("stablehlo.broadcast_in_dim", "broadcast",
        _kw(dims=("broadcast_dimensions", "ints")), R.broadcast_in_dim, P.broadcast),
    Row("stablehlo.broadcast", None, _kw(sizes=("broadcast_sizes", "ints")), R.broadcast),
    Row("stablehlo.reshape", "reshape", SAME, R.declared("reshape"), P.reshape),
    Row("stablehlo.transpose", "transpose", _kw(dims=("permutation", "ints")), R.transpose,
        P.transpose),
    Row("stablehlo.reverse", "reverse", _kw(dims=("dimensions", "ints")), R.reverse, P.reverse),
    Row("stablehlo.slice", "slice", pretty.slice_, R.slice_, P.slice_),
    Row("stablehlo.concatenate", "concatenate", _kw(dim=("dimension", "int")), R.concatenate,
        P.concatenate),
    Row("stablehlo.pad", "pad", _kw(low=("edge_padding_low", "ints"),
                                    high=("edge_padding_high", "ints"),
                                    interior=("interior_padding", "ints")), R.pad, P.pad),
    Row("stablehlo.tuple", "tuple", SAME, R.tuple_),
    Row("stablehlo.get_tuple_element", "get-tuple-element", pretty.get_tuple_element,
        R.get_tuple_element),
    Row("stablehlo.optimization_barrier", "opt-barrier", pretty.same("results"),
        R.optimization_barrier, P.optimization_barrier),
    Row("stablehlo.get_dimension_size", None, _kw(dim=("dimension", "int")),
        R.get_dimension_size),
    Row("stablehlo.after_all", "after-all", SAME, R.after_all, P.after_all),
    Row("stablehlo.create_token", None, SAME, R.after_all),
    # ---- indexing ----------------------------------------------------------------------------
    Row("stablehlo.dynamic_slice", "dynamic-slice", _kw(sizes=("slice_sizes", "ints")),
        R.dynamic_slice, P.dynamic_slice),
    Row("stablehlo.dynamic_update_slice", "dynamic-update-slice", SAME,
        R.elementwise("dynamic-update-slice"), P.dynamic_update_slice),
    Row("stablehlo.gather", "gather", None, R.gather, P.gather),
    Row("stablehlo.scatter", "scatter", None, R.scatter, P.scatter),
    # ---- reductions, sort --------------------------------------------------------------------
    Row("stablehlo.reduce", "reduce", pretty.reduce, C.reduce, P.reduce),
    Row("stablehlo.reduce_window", "reduce-window", None, C.reduce_window, P.reduce_window),
    Row("stablehlo.select_and_scatter", "select-and-scatter", None, C.select_and_scatter,
        P.select_and_scatter),
    Row("stablehlo.sort", "sort", None, C.sort, P.sort),
    Row("stablehlo.map", "map", None, C.map_, P.map_),
    # ---- linear algebra ----------------------------------------------------------------------
    Row("stablehlo.dot_general", "dot",
        _kw(batching_dims=("dot_dimension_numbers", "dot_dims"),
            contracting_dims=("dot_dimension_numbers", "dot_dims"),
            precision=("precision_config", "precision"),
            algorithm=("algorithm", "dot_algorithm")), R.dot_general, P.dot),
    Row("stablehlo.dot", None, _kw(precision=("precision_config", "precision")), R.dot),
    Row("stablehlo.convolution", "convolution", pretty.convolution, R.convolution,
        P.convolution),
    Row("stablehlo.cholesky", "cholesky", _kw(lower=("lower", "bool")), R.cholesky, P.cholesky),
    # ---- complex numbers -----------------------------------------------------------------------
    _ew("stablehlo.real", "real"),
    _ew("stablehlo.imag", "imag"),
    _ew("stablehlo.complex", "complex"),
    Row("stablehlo.fft", "fft", _kw(type=("fft_type", "fft_type"), length=("fft_length", "ints")),
        R.fft, P.fft),
    # ---- control flow and calls --------------------------------------------------------------
    Row("stablehlo.while", "while", pretty.while_, C.while_, P.while_),
    Row("stablehlo.case", "conditional", None, C.case, P.conditional),
    Row("stablehlo.if", None, None, C.if_),
    Row("stablehlo.custom_call", "custom-call", pretty.custom_call, C.custom_call,
        P.custom_call),
    Row("stablehlo.rng_bit_generator", "rng-bit-generator",
        _kw(algorithm=("rng_algorithm", "rng_algorithm")), C.rng_bit_generator,
        P.rng_bit_generator),
    # ---- CHLO --------------------------------------------------------------------------------
    Row("chlo.erf", "erf", SAME, R.elementwise("erf"), P.chlo_elementwise),
    _ew("chlo.tan", "tan", prints=False),
    Row("chlo.top_k", "topk", pretty.top_k, chlo.top_k, P.top_k),
    Row("chlo.erfc", None, SAME, chlo.erfc),
    Row("chlo.erf_inv", None, SAME, chlo.erf_inv),
    Row("chlo.lgamma", None, SAME, chlo.lgamma),
    Row("chlo.digamma", None, SAME, chlo.digamma),
    Row("chlo.asin", None, SAME, chlo.asin),
    Row("chlo.acos", None, SAME, chlo.acos),
    Row("chlo.atan", None, SAME, chlo.atan),
    Row("chlo.sinh", None, SAME, chlo.sinh),
    Row("chlo.cosh", None, SAME, chlo.cosh),
    Row("chlo.asinh", None, SAME, chlo.asinh),
    Row("chlo.acosh", None, SAME, chlo.acosh),
    Row("chlo.atanh", None, SAME, chlo.atanh),
    Row("chlo.square", None, SAME, chlo.square),
    Row("chlo.next_after", None, SAME, chlo.next_after),
    Row("chlo.is_inf", None, SAME, chlo.is_inf),
    Row("chlo.is_pos_inf", None, SAME, chlo.is_pos_inf),
    Row("chlo.is_neg_inf", None, SAME, chlo.is_neg_inf),
    Row("chlo.conj", None, SAME, chlo.conj),
    *_unsupported("chlo.bessel_i1e chlo.polygamma chlo.zeta",
                  "xlapy has no decomposition of this special function yet"),
    *_unsupported("chlo.broadcast_add chlo.broadcast_subtract chlo.broadcast_multiply "
                  "chlo.broadcast_divide chlo.broadcast_maximum chlo.broadcast_minimum "
                  "chlo.broadcast_compare chlo.broadcast_select chlo.broadcast_and "
                  "chlo.broadcast_or chlo.broadcast_xor chlo.broadcast_power "
                  "chlo.broadcast_remainder chlo.broadcast_atan2",
                  "implicitly broadcasting CHLO ops are not supported (use stablehlo ops on "
                  "operands of equal shapes)"),
    # ---- valid StableHLO that xlapy cannot run -----------------------------------------------
    *_unsupported("stablehlo.dynamic_broadcast_in_dim stablehlo.dynamic_conv "
                  "stablehlo.dynamic_gather stablehlo.dynamic_iota stablehlo.dynamic_pad "
                  "stablehlo.dynamic_reshape stablehlo.real_dynamic_slice "
                  "stablehlo.set_dimension_size stablehlo.compute_reshape_shape "
                  "stablehlo.cstr_reshapable", _DYNAMIC),
    # ---- collectives (rules_collective.py; they print back as HLO text only) --------------
    Row("stablehlo.all_reduce", "all-reduce", None, K.all_reduce),
    Row("stablehlo.all_gather", "all-gather", None, K.all_gather),
    Row("stablehlo.reduce_scatter", "reduce-scatter", None, K.reduce_scatter),
    Row("stablehlo.all_to_all", "all-to-all", None, K.all_to_all),
    Row("stablehlo.collective_permute", "collective-permute", None, K.collective_permute),
    Row("stablehlo.replica_id", "replica-id", SAME, K.replica_id),
    Row("stablehlo.partition_id", "partition-id", SAME, K.partition_id),
    *_unsupported("stablehlo.collective_broadcast", _COLLECTIVE),
    *_unsupported("stablehlo.infeed stablehlo.outfeed stablehlo.send stablehlo.recv", _IO),
    *_unsupported("stablehlo.uniform_quantize stablehlo.uniform_dequantize", _QUANT),
    *_unsupported("stablehlo.triangular_solve stablehlo.rng "
                  "stablehlo.batch_norm_inference stablehlo.batch_norm_training "
                  "stablehlo.batch_norm_grad stablehlo.einsum stablehlo.unary_einsum "
                  "stablehlo.torch_index_select stablehlo.trace", _NO_OP),
]

OPS: dict[str, Row] = {}
for _row in ROWS:
    if _row.mlir in OPS:
        raise RuntimeError(f"two rows for {_row.mlir}")
    OPS[_row.mlir] = _row

# HLO opcode -> the row that prints it
PRINTERS: dict[str, Row] = {}
for _row in ROWS:
    if _row.to_text is not None:
        for _opcode in (_row.hlo, *_row.also_prints):
            if _opcode in PRINTERS:
                raise RuntimeError(f"two rows print {_opcode}: {PRINTERS[_opcode].mlir}, "
                                   f"{_row.mlir}")
            PRINTERS[_opcode] = _row
