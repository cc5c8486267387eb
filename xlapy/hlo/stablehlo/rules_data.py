"""Lowering rules, StableHLO -> HLO: elementwise ops, data movement, linear algebra and
indexing. A rule takes the OpContext of convert.py and returns one HLO value per MLIR
result; the op table (ops.py) says which rule lowers which op, and rules with parameters
are made by factories (`elementwise("add")`). Control flow, reductions and calls are in
rules_control.py.
"""

from __future__ import annotations

import re

import numpy as np

from xlapy.hlo import attributes as A
from xlapy.hlo.shapes import Shape
from xlapy.hlo.stablehlo.attrs import Dense, Enum, Struct
from xlapy.hlo.stablehlo.rule_attrs import (bool_, bools, check_len, enum, field_int, field_ints,
                                            int_, ints, pairs, struct)
from xlapy.hlo.stablehlo.types import type_to_mlir

# ---- elementwise and simple 1:1 ops ----------------------------------------------------------

def elementwise(opcode: str):
    def lower(cx):
        return [cx.emit(opcode, cx.operands())]
    return lower


def declared(opcode: str):
    """Ops whose result type the text gives (convert, bitcast_convert, reshape)."""
    def lower(cx):
        return [cx.emit(opcode, cx.operands(), declared=cx.result_type())]
    return lower


def compare(cx):
    attrs = {"direction": enum(cx, "comparison_direction", "comparison_direction")}
    if attrs["direction"] is None:
        raise cx.error("missing attribute 'comparison_direction'")
    t = enum(cx, "compare_type", "comparison_type")
    if t is not None and t != "NOTYPE":
        attrs["type"] = t
    return [cx.emit("compare", cx.operands(), attrs)]


def constant(cx):
    v = cx.attr("value", required=True)
    if not isinstance(v, Dense):
        raise cx.error(f"the value must be dense<...>, got {v}")
    return [cx.emit("constant", declared=v.shape, literal=v.array)]


def iota(cx):
    return [cx.emit("iota", attrs={"iota_dimension": int_(cx, "iota_dimension")},
                    declared=cx.result_type())]


def broadcast_in_dim(cx):
    (x,) = cx.operands()
    out = cx.result_type()
    dims = ints(cx, "broadcast_dimensions")
    xdims = x.shape.dims if x.shape.is_array else ()
    if len(dims) == len(xdims) and all(0 <= d < out.rank for d in dims):
        keep = [i for i, n in enumerate(xdims) if not (n == 1 and out.dims[dims[i]] != 1)]
        if len(keep) != len(xdims):  # size-1 dims that expand: HLO broadcast cannot
            x = cx.emit("reshape", [x], declared=x.shape.with_dims([xdims[i] for i in keep]))
            dims = tuple(dims[i] for i in keep)
    return [cx.emit("broadcast", [x], {"dimensions": dims}, declared=out)]


def broadcast(cx):
    (x,) = cx.operands()
    sizes = ints(cx, "broadcast_sizes")
    out = Shape.array(x.shape.element_type, sizes + x.shape.dims)
    return [cx.emit("broadcast", [x], {"dimensions": tuple(range(len(sizes), out.rank))},
                    declared=out)]


def transpose(cx):
    return [cx.emit("transpose", cx.operands(), {"dimensions": ints(cx, "permutation")})]


def reverse(cx):
    return [cx.emit("reverse", cx.operands(), {"dimensions": ints(cx, "dimensions")})]


def slice_(cx):
    starts, limits = ints(cx, "start_indices"), ints(cx, "limit_indices")
    strides = ints(cx, "strides", (1,) * len(starts))
    return [cx.emit("slice", cx.operands(), {"slice": A.SliceSpec(starts, limits, strides)})]


def dynamic_slice(cx):
    return [cx.emit("dynamic-slice", cx.operands(),
                    {"dynamic_slice_sizes": ints(cx, "slice_sizes")})]


def concatenate(cx):
    return [cx.emit("concatenate", cx.operands(), {"dimensions": (int_(cx, "dimension"),)})]


def pad(cx):
    lo, hi = ints(cx, "edge_padding_low"), ints(cx, "edge_padding_high")
    interior = ints(cx, "interior_padding", (0,) * len(lo))
    return [cx.emit("pad", cx.operands(), {"padding": A.PaddingConfig(lo, hi, interior)})]


def get_tuple_element(cx):
    return [cx.emit("get-tuple-element", cx.operands(), {"index": int_(cx, "index")})]


def tuple_(cx):
    return [cx.emit("tuple", cx.operands())]


def optimization_barrier(cx):
    xs = cx.operands()
    if len(xs) == 1:
        return [cx.emit("opt-barrier", xs)]
    return cx.unpack(cx.emit("opt-barrier", [cx.emit("tuple", xs)]), len(xs))


def reduce_precision(cx):
    return [cx.emit("reduce-precision", cx.operands(),
                    {"exponent_bits": int_(cx, "exponent_bits"),
                     "mantissa_bits": int_(cx, "mantissa_bits")})]


def after_all(cx):
    return [cx.emit("after-all", cx.operands())]


def get_dimension_size(cx):
    (x,) = cx.operands()
    d = int_(cx, "dimension")
    if not 0 <= d < x.shape.rank:
        raise cx.error(f"dimension {d} is out of range for rank {x.shape.rank}")
    return [cx.em.constant(x.shape.dims[d], np.int32)]


# ---- linear algebra --------------------------------------------------------------------------

_PRECISIONS = ("DEFAULT", "HIGH", "HIGHEST")
# (lhs, rhs, accumulation, lhs components, rhs components, primitive ops) -> XLA's name
DOT_ALGORITHMS = {
    ("bf16", "bf16", "f32", 1, 1, 1): "dot_bf16_bf16_f32",
    ("bf16", "bf16", "f32", 1, 1, 3): "dot_bf16_bf16_f32_x3",
    ("bf16", "bf16", "f32", 1, 1, 6): "dot_bf16_bf16_f32_x6",
    ("bf16", "bf16", "f32", 1, 1, 9): "dot_bf16_bf16_f32_x9",
    ("tf32", "tf32", "f32", 1, 1, 1): "dot_tf32_tf32_f32",
    ("tf32", "tf32", "f32", 1, 1, 3): "dot_tf32_tf32_f32_x3",
    ("f32", "f32", "f32", 1, 1, 1): "dot_f32_f32_f32",
    ("f64", "f64", "f64", 1, 1, 1): "dot_f64_f64_f64",
    ("f16", "f16", "f16", 1, 1, 1): "dot_f16_f16_f16",
    ("f16", "f16", "f32", 1, 1, 1): "dot_f16_f16_f32",
    ("bf16", "bf16", "bf16", 1, 1, 1): "dot_bf16_bf16_bf16",
}


def _precision_attrs(cx, attrs: dict) -> None:
    v = cx.attr("precision_config")
    if v is None:
        return
    if not isinstance(v, list) or not all(isinstance(e, Enum) and e.value in _PRECISIONS
                                          for e in v):
        raise cx.error(f"precision_config must be a list of #stablehlo<precision ...>, got {v}")
    if any(e.value != "DEFAULT" for e in v):
        attrs["operand_precision"] = A.Raw("{" + ",".join(e.value.lower() for e in v) + "}")


def _algorithm_attr(cx, attrs: dict) -> None:
    v = cx.attr("algorithm")
    if v is None:
        return
    if not isinstance(v, Struct):
        raise cx.error(f"algorithm must be <lhs_precision_type = ..., ...>, got {v}")
    f = v.fields
    key = (str(f.get("lhs_precision_type")), str(f.get("rhs_precision_type")),
           str(f.get("accumulation_type")), field_int(cx, f, "lhs_component_count", 1),
           field_int(cx, f, "rhs_component_count", 1),
           field_int(cx, f, "num_primitive_operations", 1))
    name = DOT_ALGORITHMS.get(key)
    if name is None or f.get("allow_imprecise_accumulation", False) is not False:
        raise cx.error(f"dot algorithm {v} is not one xlapy knows (it knows "
                       f"{', '.join(DOT_ALGORITHMS.values())})")
    attrs["algorithm"] = A.Raw(name)


def dot_general(cx):
    f = struct(cx, "dot_dimension_numbers", "stablehlo.dot")
    attrs = {}
    for hlo, key in (("lhs_batch_dims", "lhs_batching_dimensions"),
                     ("lhs_contracting_dims", "lhs_contracting_dimensions"),
                     ("rhs_batch_dims", "rhs_batching_dimensions"),
                     ("rhs_contracting_dims", "rhs_contracting_dimensions")):
        dims = field_ints(cx, f, key)
        if dims:
            attrs[hlo] = dims
    _precision_attrs(cx, attrs)
    _algorithm_attr(cx, attrs)
    return [cx.emit("dot", cx.operands(), attrs, declared=cx.result_type())]


def dot(cx):
    lhs, rhs = cx.operands()
    attrs = {"lhs_contracting_dims": (lhs.shape.rank - 1,), "rhs_contracting_dims": (0,)}
    _precision_attrs(cx, attrs)
    return [cx.emit("dot", [lhs, rhs], attrs, declared=cx.result_type())]


def cholesky(cx):
    return [cx.emit("cholesky", cx.operands(), {"lower": bool_(cx, "lower")})]


def conv_dimension_numbers(cx, v) -> A.ConvDimensionNumbers:
    if not isinstance(v, Struct) or v.name != "stablehlo.conv":
        raise cx.error(f"dimension_numbers must be #stablehlo.conv<...>, got {v}")
    labels = v.fields["labels"]
    if labels.startswith("raw"):
        return _raw_conv_dims(cx, labels[3:])
    parts = re.fullmatch(r"\s*\[([^\]]*)\]\s*x\s*\[([^\]]*)\]\s*->\s*\[([^\]]*)\]\s*", labels)
    if not parts:
        raise cx.error(f"malformed convolution dimension numbers '{labels}'")
    lists = [[t.strip() for t in p.split(",") if t.strip()] for p in parts.groups()]
    if any(len(t) > 1 and int(t) > 9 for lst in lists for t in lst if t.isdigit()):
        raise cx.error("convolutions with more than 10 spatial dimensions are not supported")
    text = "_".join("".join(lst) for lst in lists[:2]) + "->" + "".join(lists[2])
    try:
        return A.ConvDimensionNumbers.parse(text)
    except ValueError as e:
        raise cx.error(str(e)) from None


def _raw_conv_dims(cx, body: str) -> A.ConvDimensionNumbers:
    fields = {}
    for m in re.finditer(r"(\w+)\s*=\s*(\[[^\]]*\]|-?\d+)", body):
        vals = [int(x) for x in re.findall(r"-?\d+", m.group(2))]
        fields[m.group(1)] = vals if m.group(2).startswith("[") else vals[0]
    try:
        return A.ConvDimensionNumbers(
            fields["input_batch_dimension"], fields["input_feature_dimension"],
            tuple(fields["input_spatial_dimensions"]),
            fields["kernel_input_feature_dimension"], fields["kernel_output_feature_dimension"],
            tuple(fields["kernel_spatial_dimensions"]), fields["output_batch_dimension"],
            fields["output_feature_dimension"], tuple(fields["output_spatial_dimensions"]))
    except KeyError as e:
        raise cx.error(f"raw convolution dimension numbers lack {e}") from None


def convolution(cx):
    lhs, rhs = cx.operands()
    dn = conv_dimension_numbers(cx, cx.attr("dimension_numbers", required=True))
    n = len(dn.kernel_spatial)
    if any(d >= rhs.shape.rank for d in dn.kernel_spatial):
        raise cx.error(f"kernel spatial dimensions {dn.kernel_spatial} are out of range for "
                       f"the kernel {type_to_mlir(rhs.shape)}")
    size = tuple(rhs.shape.dims[d] for d in dn.kernel_spatial)
    lo, hi = pairs(cx, "padding", n)
    reversal = bools(cx, "window_reversal")
    window = A.Window.make(
        size, check_len(cx, "window_strides", ints(cx, "window_strides", required=False), n),
        lo, hi, check_len(cx, "lhs_dilation", ints(cx, "lhs_dilation", required=False), n),
        check_len(cx, "rhs_dilation", ints(cx, "rhs_dilation", required=False), n),
        None if reversal is None else tuple(int(b) for b in check_len(cx, "window_reversal",
                                                                        reversal, n)))
    attrs = {"window": window, "dim_labels": dn}
    for key in ("feature_group_count", "batch_group_count"):
        v = int_(cx, key, 1)
        if v != 1:
            attrs[key] = v
    _precision_attrs(cx, attrs)
    return [cx.emit("convolution", [lhs, rhs], attrs, declared=cx.result_type())]


# ---- indexing --------------------------------------------------------------------------------

def gather(cx):
    f = struct(cx, "dimension_numbers", "stablehlo.gather")
    attrs = {"offset_dims": field_ints(cx, f, "offset_dims"),
             "collapsed_slice_dims": field_ints(cx, f, "collapsed_slice_dims")}
    if field_ints(cx, f, "operand_batching_dims"):
        attrs["operand_batching_dims"] = field_ints(cx, f, "operand_batching_dims")
        attrs["start_indices_batching_dims"] = field_ints(cx, f, "start_indices_batching_dims")
    attrs["start_index_map"] = field_ints(cx, f, "start_index_map")
    attrs["index_vector_dim"] = field_int(cx, f, "index_vector_dim", 0)
    attrs["slice_sizes"] = ints(cx, "slice_sizes")
    if bool_(cx, "indices_are_sorted"):
        attrs["indices_are_sorted"] = True
    return [cx.emit("gather", cx.operands(), attrs)]


def scatter(cx):
    xs = cx.operands()
    if len(xs) < 3 or len(xs) % 2 == 0:
        raise cx.error(f"takes N inputs, the indices and N updates; got {len(xs)} operands")
    n = (len(xs) - 1) // 2
    f = struct(cx, "scatter_dimension_numbers", "stablehlo.scatter")
    attrs = {"update_window_dims": field_ints(cx, f, "update_window_dims"),
             "inserted_window_dims": field_ints(cx, f, "inserted_window_dims")}
    if field_ints(cx, f, "input_batching_dims"):
        attrs["input_batching_dims"] = field_ints(cx, f, "input_batching_dims")
        attrs["scatter_indices_batching_dims"] = field_ints(cx, f,
                                                            "scatter_indices_batching_dims")
    attrs["scatter_dims_to_operand_dims"] = field_ints(cx, f, "scatter_dims_to_operand_dims")
    attrs["index_vector_dim"] = field_int(cx, f, "index_vector_dim", 0)
    if bool_(cx, "indices_are_sorted"):
        attrs["indices_are_sorted"] = True
    if bool_(cx, "unique_indices"):
        attrs["unique_indices"] = True
    attrs["to_apply"] = cx.scalar_computation(0, "update")
    return cx.unpack(cx.emit("scatter", xs, attrs), n)
