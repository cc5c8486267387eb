"""Lowering rules: one StableHLO op (its generic attributes) -> HLO instructions.

A rule takes the OpContext of convert.py and returns one HLO value per MLIR result. The op
table (ops.py) says which rule lowers which op; rules with parameters are made by the
factories (`elementwise("add")`). Attribute readers at the top accept each attribute in the
forms MLIR allows (array<i64: ...>, a list of integers, dense<...>) and raise a ParseError
at the op when one is missing or malformed.
"""

from __future__ import annotations

import re

import numpy as np

from xlapy.hlo import attributes as A
from xlapy.hlo.shapes import Shape
from xlapy.hlo.stablehlo.attrs import Dense, DenseArray, Enum, Int, Struct, Symbol, dict_text
from xlapy.hlo.stablehlo.types import type_to_mlir

# ---- attribute readers -----------------------------------------------------------------------


def ints(cx, name: str, default=None, required: bool = True) -> tuple[int, ...]:
    v = cx.attr(name)
    if v is None:
        if default is not None or not required:
            return default
        raise cx.error(f"missing attribute '{name}'")
    return as_ints(cx, v, name)


def as_ints(cx, v, name: str) -> tuple[int, ...]:
    if isinstance(v, DenseArray) and v.element != "i1":
        return tuple(int(x) for x in v.values)
    if isinstance(v, (list, tuple)) and all(isinstance(x, (int, Int)) and not isinstance(x, bool)
                                            for x in v):
        return tuple(int(x.value if isinstance(x, Int) else x) for x in v)
    if isinstance(v, Dense) and v.array.ndim <= 1 and v.shape.element_type.is_integer:
        return tuple(int(x) for x in v.array.reshape(-1))
    raise cx.error(f"attribute '{name}' must be a list of integers, got {v}")


def int_(cx, name: str, default=None) -> int:
    v = cx.attr(name)
    if v is None:
        if default is None:
            raise cx.error(f"missing attribute '{name}'")
        return default
    if isinstance(v, Int):
        return v.value
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    raise cx.error(f"attribute '{name}' must be an integer, got {v}")


def bool_(cx, name: str, default: bool = False) -> bool:
    v = cx.attr(name)
    if v is None:
        return default
    if isinstance(v, bool):
        return v
    raise cx.error(f"attribute '{name}' must be true or false, got {v}")


def bools(cx, name: str) -> tuple[bool, ...] | None:
    v = cx.attr(name)
    if v is None:
        return None
    if isinstance(v, DenseArray) and v.element == "i1":
        return tuple(bool(x) for x in v.values)
    if isinstance(v, list) and all(isinstance(x, bool) for x in v):
        return tuple(v)
    if isinstance(v, Dense) and v.shape.element_type.is_pred:
        return tuple(bool(x) for x in v.array.reshape(-1))
    raise cx.error(f"attribute '{name}' must be a list of booleans, got {v}")


def enum(cx, name: str, kind: str, default: str | None = None) -> str | None:
    v = cx.attr(name)
    if v is None:
        return default
    if isinstance(v, Enum) and v.kind == kind:
        return v.value
    raise cx.error(f"attribute '{name}' must be #stablehlo<{kind} ...>, got {v}")


def struct(cx, name: str, sname: str) -> dict:
    v = cx.attr(name, required=True)
    if not isinstance(v, Struct) or v.name != sname:
        raise cx.error(f"attribute '{name}' must be #{sname}<...>, got {v}")
    return v.fields


def field_ints(cx, fields: dict, key: str, default=()) -> tuple[int, ...]:
    if key not in fields:
        return tuple(default)
    return as_ints(cx, fields[key], key)


def field_int(cx, fields: dict, key: str, default: int) -> int:
    v = fields.get(key, default)
    v = v.value if isinstance(v, Int) else v
    if not isinstance(v, int) or isinstance(v, bool):
        raise cx.error(f"field '{key}' must be an integer, got {v}")
    return v


def pairs(cx, name: str, rank: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """padding: dense<[[lo, hi], ...]> : tensor<Nx2xi64> (or a splat, or [[lo, hi], ...])."""
    v = cx.attr(name)
    if v is None:
        return (0,) * rank, (0,) * rank
    if isinstance(v, Dense) and v.shape.element_type.is_integer and v.array.shape in (
            (rank, 2), (0,) if rank == 0 else (rank, 2)):
        arr = v.array.reshape(rank, 2)
        return tuple(int(x) for x in arr[:, 0]), tuple(int(x) for x in arr[:, 1])
    if isinstance(v, list) and len(v) == rank and all(isinstance(p, list) and len(p) == 2
                                                      for p in v):
        rows = [as_ints(cx, p, name) for p in v]
        return tuple(r[0] for r in rows), tuple(r[1] for r in rows)
    raise cx.error(f"attribute '{name}' must be {rank} (low, high) pairs, got {v}")


def _check_len(cx, what: str, values, n: int):
    if values is not None and len(values) != n:
        raise cx.error(f"{what} has {len(values)} entries, {n} expected")
    return values


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
        size, _check_len(cx, "window_strides", ints(cx, "window_strides", required=False), n),
        lo, hi, _check_len(cx, "lhs_dilation", ints(cx, "lhs_dilation", required=False), n),
        _check_len(cx, "rhs_dilation", ints(cx, "rhs_dilation", required=False), n),
        None if reversal is None else tuple(int(b) for b in _check_len(cx, "window_reversal",
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
    attrs["to_apply"] = cx.scalar_computation(0, "update", None)
    return cx.unpack(cx.emit("scatter", xs, attrs), n)


# ---- reductions and sort ---------------------------------------------------------------------

def reduce(cx):
    xs = cx.operands()
    n = len(xs) // 2
    if n == 0 or len(xs) % 2:
        raise cx.error("takes N inputs and N initial values")
    applies = cx.attr("__applies__")
    if applies is not None:
        comp = _applies_computation(cx, applies, xs[n:])
    else:
        comp = cx.scalar_computation(0, "body", None)
    attrs = {"dimensions": ints(cx, "dimensions"), "to_apply": comp}
    return cx.unpack(cx.emit("reduce", xs, attrs), n)


def _applies_computation(cx, applies, inits):
    from xlapy.hlo.stablehlo.ops import OPS
    name, pos = applies
    row = OPS.get(name)
    if row is None or row.hlo is None or row.hlo not in _BINARY:
        raise cx.error(f"'applies {name}' needs a binary elementwise operation", pos)
    em = type(cx.em)(cx.conv, f"{cx.short_name}_body")  # the name the region form gets
    em.metadata = dict(cx.em.metadata)
    accs = [em.parameter(i.shape, f"Arg_{k}") for k, i in enumerate(inits)]
    elems = [em.parameter(i.shape, f"Arg_{len(inits) + k}") for k, i in enumerate(inits)]
    outs = [em.emit(row.hlo, [a, e]) for a, e in zip(accs, elems)]
    return em.finish(em.tuple_of(outs))


_BINARY = frozenset(("add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum",
                     "power", "atan2", "and", "or", "xor", "shift-left",
                     "shift-right-arithmetic", "shift-right-logical"))


def reduce_window(cx):
    xs = cx.operands()
    n = len(xs) // 2
    if n == 0 or len(xs) % 2:
        raise cx.error("takes N inputs and N initial values")
    size = ints(cx, "window_dimensions")
    rank = len(size)
    lo, hi = pairs(cx, "padding", rank)
    window = A.Window.make(
        size, _check_len(cx, "window_strides", ints(cx, "window_strides", required=False), rank),
        lo, hi, _check_len(cx, "base_dilations", ints(cx, "base_dilations", required=False),
                           rank),
        _check_len(cx, "window_dilations", ints(cx, "window_dilations", required=False), rank))
    attrs = {"window": window, "to_apply": cx.scalar_computation(0, "body", None)}
    return cx.unpack(cx.emit("reduce-window", xs, attrs), n)


def select_and_scatter(cx):
    operand, source, init = cx.operands()
    size = ints(cx, "window_dimensions")
    rank = len(size)
    lo, hi = pairs(cx, "padding", rank)
    window = A.Window.make(size, _check_len(cx, "window_strides",
                                            ints(cx, "window_strides", required=False), rank),
                           lo, hi)
    attrs = {"window": window, "select": cx.scalar_computation(0, "select", None),
             "scatter": cx.scalar_computation(1, "scatter", None)}
    return [cx.emit("select-and-scatter", [operand, source, init], attrs)]


def sort(cx):
    xs = cx.operands()
    rank = xs[0].shape.rank if xs and xs[0].shape.is_array else 0
    d = int_(cx, "dimension", -1)
    if d < 0:
        d += rank
    attrs = {"dimensions": (d,)}
    if bool_(cx, "is_stable"):
        attrs["is_stable"] = True
    attrs["to_apply"] = cx.scalar_computation(0, "comparator", None)
    return cx.unpack(cx.emit("sort", xs, attrs), len(xs))


def map_(cx):
    attrs = {"dimensions": ints(cx, "dimensions"),
             "to_apply": cx.scalar_computation(0, "computation", None)}
    return [cx.emit("map", cx.operands(), attrs)]


# ---- calls and custom calls ------------------------------------------------------------------

def call(cx):
    callee = cx.attr("callee", required=True)
    if not isinstance(callee, Symbol):
        raise cx.error(f"callee must be a symbol such as @f, got {callee}")
    comp = cx.conv.function(callee.name, cx.op.pos)
    return cx.unpack(cx.emit("call", cx.operands(), {"to_apply": comp}), cx.op.num_results)


def composite(cx):
    dec = cx.attr("decomposition", required=True)
    if not isinstance(dec, Symbol):
        raise cx.error(f"decomposition must be a symbol such as @f, got {dec}")
    comp = cx.conv.function(dec.name, cx.op.pos)
    return cx.unpack(cx.emit("call", cx.operands(), {"to_apply": comp}), cx.op.num_results)


_API_VERSIONS = {0: "API_VERSION_UNSPECIFIED", 1: "API_VERSION_ORIGINAL",
                 2: "API_VERSION_STATUS_RETURNING", 3: "API_VERSION_STATUS_RETURNING_UNIFIED",
                 4: "API_VERSION_TYPED_FFI"}


def custom_call(cx):
    target = cx.attr("call_target_name", required=True)
    if not isinstance(target, str):
        raise cx.error(f"call_target_name must be a string, got {target}")
    types = cx.op.result_types
    shape = types[0] if len(types) == 1 else Shape.tuple(types)
    layouts = cx.attr("result_layouts")
    if layouts is not None:
        shape = _with_layouts(cx, shape, layouts, "result_layouts")
    attrs = {"custom_call_target": target}
    if bool_(cx, "has_side_effect"):
        attrs["custom_call_has_side_effect"] = True
    operand_layouts = cx.attr("operand_layouts")
    xs = cx.operands()
    if operand_layouts is not None:
        shapes = [_with_layouts(cx, x.shape, [lay], "operand_layouts")
                  for x, lay in zip(xs, operand_layouts)]
        attrs["operand_layout_constraints"] = A.Raw("{" + ", ".join(str(s) for s in shapes) + "}")
    aliases = cx.attr("output_operand_aliases")
    if aliases:
        parts = []
        for a in aliases:
            if not isinstance(a, Struct) or a.name != "stablehlo.output_operand_alias":
                raise cx.error(f"output_operand_aliases must list "
                               f"#stablehlo.output_operand_alias<...>, got {a}")
            out = field_ints(cx, a.fields, "output_tuple_indices")
            opnd = field_int(cx, a.fields, "operand_index", 0)
            oin = field_ints(cx, a.fields, "operand_tuple_indices")
            parts.append("{" + ",".join(map(str, out)) + "}: (" + str(opnd) + ", {"
                         + ",".join(map(str, oin)) + "})")
        attrs["output_to_operand_aliasing"] = A.Raw("{" + ", ".join(parts) + "}")
    version = int_(cx, "api_version", 1)
    config = cx.attr("backend_config")
    mhlo_config = cx.attr("mhlo.backend_config")
    if isinstance(config, dict) or isinstance(mhlo_config, dict):
        version = 4 if version == 1 else version
        config = config if isinstance(config, dict) else mhlo_config
    if version not in _API_VERSIONS:
        raise cx.error(f"unknown api_version {version}")
    if version != 1:
        attrs["api_version"] = _API_VERSIONS[version]
    frontend = cx.attr("mhlo.frontend_attributes")
    if isinstance(frontend, dict) and frontend:
        attrs["frontend_attributes"] = A.Raw("{" + ",".join(
            f'{k}="{v}"' if isinstance(v, str) else f"{k}={v}" for k, v in frontend.items()) + "}")
    called = cx.attr("called_computations")
    if called:
        attrs["called_computations"] = [cx.conv.function(s.name, cx.op.pos) for s in called
                                        if isinstance(s, Symbol)]
    if isinstance(config, dict):
        attrs["backend_config"] = A.Raw(dict_text(config))
    elif isinstance(config, str) and config:
        attrs["backend_config"] = A.Raw('"' + config.replace("\\", "\\\\").replace('"', '\\"')
                                        + '"')
    elif config is not None and not isinstance(config, str):
        raise cx.error(f"backend_config must be a string or a dictionary, got {config}")
    result = cx.emit("custom-call", xs, attrs, declared=shape)
    return cx.unpack(result, len(types))


def _with_layouts(cx, shape: Shape, layouts, what: str) -> Shape:
    leaves = list(shape.tuple_shapes) if shape.is_tuple else [shape]
    if not isinstance(layouts, list) or len(layouts) != len(leaves):
        raise cx.error(f"{what} must list one layout per value")
    out = []
    for s, lay in zip(leaves, layouts):
        m2m = as_ints(cx, lay, what)
        if s.is_array:
            if sorted(m2m) != list(range(s.rank)):
                raise cx.error(f"{what}: {list(m2m)} is not a layout of {type_to_mlir(s)}")
            s = s.with_layout(m2m)
        out.append(s)
    return Shape.tuple(out) if shape.is_tuple else out[0]


# ---- control flow ----------------------------------------------------------------------------

def while_(cx):
    inits = cx.operands()
    n = len(inits)
    cond_block, body_block = cx.region(0, "cond"), cx.region(1, "body")
    for block, what in ((cond_block, "cond"), (body_block, "body")):
        if len(block.args) != n:
            raise cx.p.error(f"the {what} region of stablehlo.while takes {len(block.args)} "
                             f"arguments, the loop has {n} values", block.pos)
    captures = _captures(cx, [cond_block, body_block])
    outer = [cx.scope.get(u, cx.p) for u in captures]
    state = inits + outer
    init = state[0] if len(state) == 1 else cx.emit("tuple", state)
    shapes = [v.shape for v in state]

    def bind_state(em, scope, block):
        param = em.parameter(init.shape, "Arg_0")
        vals = [param] if len(state) == 1 else [
            em.emit("get-tuple-element", [param], {"index": k}) for k in range(len(state))]
        for (name, t, pos), v in zip(block.args, vals):
            if not v.shape.compatible(t):
                raise cx.p.error(f"loop variable %{name} is {type_to_mlir(t)} but its initial "
                                 f"value is {type_to_mlir(v.shape)}", pos)
            scope.define(name, [v], pos, cx.p)
        for u, v in zip(captures, vals[n:]):
            scope.values[(u.name, u.index)] = v
        return vals

    md = cx.em.metadata
    em, values = cx.conv.block(cond_block, "while_cond",
                               lambda em, scope: bind_state(em, scope, cond_block), md)
    if len(values) != 1:
        raise cx.p.error("the cond region of stablehlo.while must return one tensor<i1>",
                         cond_block.ops[-1].pos)
    cond = em.finish(values[0])
    passthrough = []
    em, values = cx.conv.block(body_block, "while_body",
                               lambda em, scope: passthrough.extend(
                                   bind_state(em, scope, body_block)[n:]), md)
    if len(values) != n:
        raise cx.p.error(f"the body region of stablehlo.while returns {len(values)} values, the "
                         f"loop has {n}", body_block.ops[-1].pos)
    for k, (v, s) in enumerate(zip(values, shapes)):
        if not v.shape.compatible(s):
            raise cx.p.error(f"the body returns {type_to_mlir(v.shape)} for loop value #{k}, "
                             f"which is {type_to_mlir(s)}", body_block.ops[-1].pos)
    body = em.finish(em.tuple_of(values + passthrough))
    loop = cx.emit("while", [init], {"condition": cond, "body": body})
    if len(state) == 1:
        return [loop]
    return [cx.unpack(loop, len(state))[k] for k in range(n)]


def _captures(cx, blocks):
    from xlapy.hlo.stablehlo.convert import captured_uses
    out, seen = [], set()
    for b in blocks:
        for u in captured_uses(b):
            if (u.name, u.index) not in seen:
                seen.add((u.name, u.index))
                out.append(u)
    return out


def case(cx):
    (index,) = cx.operands()
    return _conditional(cx, index, [cx.region(i, f"branch {i}")
                                    for i in range(len(cx.op.regions))], pred=False)


def if_(cx):
    (pred,) = cx.operands()
    return _conditional(cx, pred, [cx.region(0, "true branch"), cx.region(1, "false branch")],
                        pred=True)


def _conditional(cx, index, blocks, pred: bool):
    if not blocks:
        raise cx.error("needs at least one branch")
    n = cx.op.num_results
    branches, operands = [], []
    for k, block in enumerate(blocks):
        if block.args:
            raise cx.p.error(f"a branch of {cx.op.name} takes no arguments", block.pos)
        captures = _captures(cx, [block])
        outer = [cx.scope.get(u, cx.p) for u in captures]
        arg = outer[0] if len(outer) == 1 else cx.emit("tuple", outer)
        operands.append(arg)

        def bind(em, scope, captures=captures, arg=arg):
            param = em.parameter(arg.shape, "Arg_0")
            vals = [param] if len(captures) == 1 else [
                em.emit("get-tuple-element", [param], {"index": j}) for j in range(len(captures))]
            for u, v in zip(captures, vals):
                scope.values[(u.name, u.index)] = v
        what = ("true" if k == 0 else "false") if pred else f"branch{k}"
        em, values = cx.conv.block(block, f"{cx.short_name}_{what}", bind, cx.em.metadata)
        if len(values) != n:
            raise cx.p.error(f"branch {k} of {cx.op.name} returns {len(values)} values, the op "
                             f"has {n} results", block.ops[-1].pos)
        branches.append(em.finish(em.tuple_of(values) if n else em.emit("tuple", [])))
    attrs = ({"true_computation": branches[0], "false_computation": branches[1]} if pred
             else {"branch_computations": branches})
    return cx.unpack(cx.emit("conditional", [index] + operands, attrs), n)


def rng_bit_generator(cx):
    algorithm = enum(cx, "rng_algorithm", "rng_algorithm", "DEFAULT")
    from xlapy.hlo.opcodes import OPCODES
    if "rng-bit-generator" not in OPCODES:
        raise cx.error("is not supported: xlapy has no rng-bit-generator opcode yet")
    attrs = {"algorithm": A.Raw(f"rng_{algorithm.lower()}")}
    return cx.unpack(cx.emit("rng-bit-generator", cx.operands(), attrs,
                             declared=Shape.tuple(cx.op.result_types)), 2)

