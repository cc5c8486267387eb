"""Printing rules: one HLO instruction -> its StableHLO text (the writer's half of the op
table; ops.py names the rule of each opcode).

A rule gets the function printer `p` (printer.py) and the instruction, and calls
`p.define(instr, text)` with the op's text after `%name = `. Simple ops use their short
forms (`stablehlo.add %0, %1 : tensor<4xf32>`); ops with regions and the structured
attributes (gather, scatter, convolution, reduce_window, ...) the generic form, which every
MLIR tool reads.
"""

from __future__ import annotations

import re

from xlapy.errors import XlapyError
from xlapy.hlo.ir import ELIDED, Computation
from xlapy.hlo.parser import _unescape, parse_shape
from xlapy.hlo.stablehlo.attrs import dense_text, dict_text, symbol_text
from xlapy.hlo.stablehlo.reader import mlir_quote
from xlapy.hlo.stablehlo.rules_data import DOT_ALGORITHMS


def _ints(values) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def _array(values, element="i64") -> str:
    values = list(values)
    if not values:
        return f"array<{element}>"
    if element == "i1":
        return "array<i1: " + ", ".join("true" if v else "false" for v in values) + ">"
    return f"array<{element}: " + ", ".join(str(int(v)) for v in values) + ">"


def _pairs(lows, highs) -> str:
    n = len(lows)
    if n == 0:
        return "dense<> : tensor<0x2xi64>"
    return ("dense<[" + ", ".join(f"[{lo}, {hi}]" for lo, hi in zip(lows, highs))
            + f"]> : tensor<{n}x2xi64>")


def _sig(p, instr, operands=None) -> str:
    operands = instr.operands if operands is None else operands
    return "(" + ", ".join(p.t(o.shape) for o in operands) + ") -> " + p.results_type(instr)


def _opnds(p, instr, operands=None) -> str:
    return ", ".join(p.ref(o) for o in (instr.operands if operands is None else operands))


def _name(p, instr) -> str:
    return p.row(instr.opcode).mlir


# ---- elementwise -----------------------------------------------------------------------------

def elementwise(p, instr):
    same = all(o.shape.compatible(instr.shape) for o in instr.operands)
    sig = p.t(instr.shape) if same else _sig(p, instr)
    p.define(instr, f"{_name(p, instr)} {_opnds(p, instr)} : {sig}")


def chlo_elementwise(p, instr):
    """CHLO's short form spells the types `T -> R`."""
    ins = ", ".join(p.t(o.shape) for o in instr.operands)
    p.define(instr, f"{_name(p, instr)} {_opnds(p, instr)} : {ins} -> {p.t(instr.shape)}")


def compare(p, instr):
    a, b = instr.operands
    text = f"stablehlo.compare {instr.attrs['direction']}, {p.ref(a)}, {p.ref(b)}"
    if "type" in instr.attrs:
        text += f", {instr.attrs['type']}"
    p.define(instr, f"{text} : {_sig(p, instr)}")


def convert(p, instr):
    p.define(instr, f"{_name(p, instr)} {_opnds(p, instr)} : {_sig(p, instr)}")


def reduce_precision(p, instr):
    e, m = instr.attrs["exponent_bits"], instr.attrs["mantissa_bits"]
    p.define(instr, f"stablehlo.reduce_precision {_opnds(p, instr)}, format = e{e}m{m} : "
                    f"{p.t(instr.shape)}")


# ---- data movement ---------------------------------------------------------------------------

def constant(p, instr):
    if instr.literal is ELIDED:
        raise XlapyError(f"cannot print the elided constant {instr.name} ({{...}}) as "
                         "StableHLO: its value is unknown")
    if instr.shape.is_tuple:
        parts = []
        for value, shape in zip(instr.literal, instr.shape.tuple_shapes):
            parts.append(p.line_value(f"stablehlo.constant {dense_text(value, shape)} : "
                                      f"{p.t(shape)}"))
        p.bind(instr, parts)
        return
    p.define(instr, f"stablehlo.constant {dense_text(instr.literal, instr.shape)} : "
                    f"{p.t(instr.shape)}")


def iota(p, instr):
    p.define(instr, f"stablehlo.iota dim = {instr.attrs['iota_dimension']} : {p.t(instr.shape)}")


def broadcast(p, instr):
    p.define(instr, f"stablehlo.broadcast_in_dim {_opnds(p, instr)}, dims = "
                    f"{_ints(instr.attrs['dimensions'])} : {_sig(p, instr)}")


def reshape(p, instr):
    p.define(instr, f"stablehlo.reshape {_opnds(p, instr)} : {_sig(p, instr)}")


def transpose(p, instr):
    p.define(instr, f"stablehlo.transpose {_opnds(p, instr)}, dims = "
                    f"{_ints(instr.attrs['dimensions'])} : {_sig(p, instr)}")


def reverse(p, instr):
    p.define(instr, f"stablehlo.reverse {_opnds(p, instr)}, dims = "
                    f"{_ints(instr.attrs['dimensions'])} : {p.t(instr.shape)}")


def slice_(p, instr):
    s = instr.attrs["slice"]
    ranges = ", ".join(f"{a}:{b}" if st == 1 else f"{a}:{b}:{st}"
                       for a, b, st in zip(s.starts, s.limits, s.strides))
    p.define(instr, f"stablehlo.slice {_opnds(p, instr)} [{ranges}] : {_sig(p, instr)}")


def concatenate(p, instr):
    (d,) = instr.attrs["dimensions"]
    p.define(instr, f"stablehlo.concatenate {_opnds(p, instr)}, dim = {d} : {_sig(p, instr)}")


def pad(p, instr):
    c = instr.attrs["padding"]
    p.define(instr, f"stablehlo.pad {_opnds(p, instr)}, low = {_ints(c.lows)}, high = "
                    f"{_ints(c.highs)}, interior = {_ints(c.interiors)} : {_sig(p, instr)}")


def optimization_barrier(p, instr):
    (x,) = instr.operands
    elems = p.flat_operand(x)
    types = ", ".join(p.t(s) for s in p.flat_shapes(x.shape))
    p.define(instr, f"stablehlo.optimization_barrier {', '.join(elems)} : {types}")


def after_all(p, instr):
    p.define(instr, f"stablehlo.after_all {_opnds(p, instr)} : !stablehlo.token")


def dynamic_slice(p, instr):
    p.define(instr, f"stablehlo.dynamic_slice {_opnds(p, instr)}, sizes = "
                    f"{_ints(instr.attrs['dynamic_slice_sizes'])} : {_sig(p, instr)}")


def dynamic_update_slice(p, instr):
    p.define(instr, f"stablehlo.dynamic_update_slice {_opnds(p, instr)} : {_sig(p, instr)}")


def _props(d: dict) -> str:
    return "<{" + ", ".join(f"{k} = {v}" for k, v in d.items()) + "}>"


def gather(p, instr):
    a = instr.attrs
    fields = []
    for key in ("offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                "start_indices_batching_dims", "start_index_map"):
        if a.get(key):
            fields.append(f"{key} = {_ints(a[key])}")
    fields.append(f"index_vector_dim = {a['index_vector_dim']}")
    props = {"dimension_numbers": "#stablehlo.gather<" + ", ".join(fields) + ">",
             "indices_are_sorted": "true" if a.get("indices_are_sorted") else "false",
             "slice_sizes": _array(a["slice_sizes"])}
    p.define(instr, f'"stablehlo.gather"({_opnds(p, instr)}) {_props(props)} : {_sig(p, instr)}')


def scatter(p, instr):
    a = instr.attrs
    fields = []
    for key in ("update_window_dims", "inserted_window_dims", "input_batching_dims",
                "scatter_indices_batching_dims", "scatter_dims_to_operand_dims"):
        if a.get(key):
            fields.append(f"{key} = {_ints(a[key])}")
    fields.append(f"index_vector_dim = {a['index_vector_dim']}")
    props = {"indices_are_sorted": "true" if a.get("indices_are_sorted") else "false",
             "scatter_dimension_numbers": "#stablehlo.scatter<" + ", ".join(fields) + ">",
             "unique_indices": "true" if a.get("unique_indices") else "false"}
    region = p.region(a["to_apply"])
    p.define(instr, f'"stablehlo.scatter"({_opnds(p, instr)}) {_props(props)} ({region}) : '
                    f"{_sig(p, instr)}")


# ---- reductions ------------------------------------------------------------------------------

def _applies(p, comp) -> str | None:
    """The op of a reducer that is just op(param0, param1), for the compact form."""
    root = comp.root
    if (len(comp.parameters) == 2 and len(comp.instructions) == 3
            and list(root.operands) == list(comp.parameters) and not root.attrs):
        row = p.row(root.opcode)
        if row is not None and row.to_text is elementwise and len(root.operands) == 2:
            return row.mlir
    return None


def reduce(p, instr):
    comp = instr.attrs["to_apply"]
    applies = _applies(p, comp) if len(instr.operands) == 2 else None
    if applies is not None:
        x, init = instr.operands
        p.define(instr, f"stablehlo.reduce({p.ref(x)} init: {p.ref(init)}) applies {applies} "
                        f"across dimensions = {_ints(instr.attrs['dimensions'])} : "
                        f"{_sig(p, instr)}")
        return
    region = p.region(comp)
    props = {"dimensions": _array(instr.attrs["dimensions"])}
    p.define(instr, f'"stablehlo.reduce"({_opnds(p, instr)}) {_props(props)} ({region}) : '
                    f"{_sig(p, instr)}")


def _window_props(w, base=True) -> dict:
    props = {"window_dimensions": _array(w.size), "window_strides": _array(w.stride)}
    if base:
        props["base_dilations"] = _array(w.lhs_dilate)
        props["window_dilations"] = _array(w.rhs_dilate)
    props["padding"] = _pairs(w.pad_low, w.pad_high)
    return props


def reduce_window(p, instr):
    w = instr.attrs["window"]
    if any(w.rhs_reversal):
        raise XlapyError(f"reduce-window {instr.name} reverses its window: StableHLO cannot say so")
    region = p.region(instr.attrs["to_apply"])
    p.define(instr, f'"stablehlo.reduce_window"({_opnds(p, instr)}) {_props(_window_props(w))} '
                    f"({region}) : {_sig(p, instr)}")


def select_and_scatter(p, instr):
    w = instr.attrs["window"]
    if any(d != 1 for d in w.lhs_dilate + w.rhs_dilate) or any(w.rhs_reversal):
        raise XlapyError(f"select-and-scatter {instr.name} has a dilated or reversed window: "
                         "StableHLO cannot say so")
    select = p.region(instr.attrs["select"])
    scatter_ = p.region(instr.attrs["scatter"])
    p.define(instr, f'"stablehlo.select_and_scatter"({_opnds(p, instr)}) '
                    f"{_props(_window_props(w, base=False))} ({select}, {scatter_}) : "
                    f"{_sig(p, instr)}")


def sort(p, instr):
    (d,) = instr.attrs["dimensions"]
    props = {"dimension": f"{d} : i64",
             "is_stable": "true" if instr.attrs.get("is_stable") else "false"}
    region = p.region(instr.attrs["to_apply"])
    p.define(instr, f'"stablehlo.sort"({_opnds(p, instr)}) {_props(props)} ({region}) : '
                    f"{_sig(p, instr)}")


def map_(p, instr):
    props = {"dimensions": _array(instr.attrs["dimensions"])}
    region = p.region(instr.attrs["to_apply"])
    p.define(instr, f'"stablehlo.map"({_opnds(p, instr)}) {_props(props)} ({region}) : '
                    f"{_sig(p, instr)}")


def top_k(p, instr):
    if not instr.attrs.get("largest", True):
        raise XlapyError(f"topk {instr.name} has largest=false, which chlo.top_k cannot say")
    (x,) = instr.operands
    p.define(instr, f"chlo.top_k({p.ref(x)}, k = {instr.attrs['k']}) : {p.t(x.shape)} -> "
                    f"{p.results_type(instr)}")


# ---- linear algebra --------------------------------------------------------------------------

def _precision(instr) -> str | None:
    v = instr.attrs.get("operand_precision")
    if v is None:
        return None
    names = [s.strip().upper() for s in str(v).strip("{}").split(",")]
    return "[" + ", ".join(names) + "]"


def dot(p, instr):
    a = instr.attrs
    text = f"stablehlo.dot_general {_opnds(p, instr)}"
    if a.get("lhs_batch_dims") or a.get("rhs_batch_dims"):
        text += (f", batching_dims = {_ints(a.get('lhs_batch_dims', ()))} x "
                 f"{_ints(a.get('rhs_batch_dims', ()))}")
    text += (f", contracting_dims = {_ints(a.get('lhs_contracting_dims', ()))} x "
             f"{_ints(a.get('rhs_contracting_dims', ()))}")
    prec = _precision(instr)
    if prec:
        text += f", precision = {prec}"
    if "algorithm" in a:
        key = next((k for k, v in DOT_ALGORITHMS.items() if v == str(a["algorithm"])), None)
        if key is None:
            raise XlapyError(f"dot {instr.name}: algorithm {a['algorithm']} has no StableHLO form")
        text += (f", algorithm = <lhs_precision_type = {key[0]}, rhs_precision_type = {key[1]}, "
                 f"accumulation_type = {key[2]}, lhs_component_count = {key[3]}, "
                 f"rhs_component_count = {key[4]}, num_primitive_operations = {key[5]}, "
                 "allow_imprecise_accumulation = false>")
    p.define(instr, f"{text} : {_sig(p, instr)}")


def cholesky(p, instr):
    lower = ", lower = true" if instr.attrs.get("lower") else ""
    p.define(instr, f"stablehlo.cholesky {_opnds(p, instr)}{lower} : {p.t(instr.shape)}")


def convolution(p, instr):
    a = instr.attrs
    dn, w = a["dim_labels"], a["window"]

    def labels(rank, named, spatial):
        out = ["?"] * rank
        for c, i in named:
            out[i] = c
        for k, i in enumerate(spatial):
            out[i] = str(k)
        return "[" + ", ".join(out) + "]"
    n = len(dn.input_spatial) + 2
    text = (labels(n, [("b", dn.input_batch), ("f", dn.input_feature)], dn.input_spatial) + "x"
            + labels(n, [("i", dn.kernel_input_feature), ("o", dn.kernel_output_feature)],
                     dn.kernel_spatial) + "->"
            + labels(n, [("b", dn.output_batch), ("f", dn.output_feature)], dn.output_spatial))
    props = {"batch_group_count": f"{a.get('batch_group_count', 1)} : i64",
             "dimension_numbers": f"#stablehlo.conv<{text}>",
             "feature_group_count": f"{a.get('feature_group_count', 1)} : i64",
             "lhs_dilation": _array(w.lhs_dilate),
             "padding": _pairs(w.pad_low, w.pad_high),
             "rhs_dilation": _array(w.rhs_dilate),
             "window_reversal": _array([bool(r) for r in w.rhs_reversal], "i1"),
             "window_strides": _array(w.stride)}
    prec = _precision(instr)
    if prec:
        props["precision_config"] = "[" + ", ".join(
            f"#stablehlo<precision {x.strip()}>" for x in prec.strip("[]").split(",")) + "]"
    p.define(instr, f'"stablehlo.convolution"({_opnds(p, instr)}) {_props(props)} : '
                    f"{_sig(p, instr)}")


# ---- control flow and calls ------------------------------------------------------------------

def call(p, instr):
    comp = instr.attrs.get("to_apply") or instr.attrs.get("calls")
    sym = p.function(comp)
    p.define(instr, f"func.call @{sym}({_opnds(p, instr)}) : {_sig(p, instr)}")


def while_(p, instr):
    (init,) = instr.operands
    elems = p.flat_operand(init)
    shapes = p.flat_shapes(init.shape)
    cond = p.region(instr.attrs["condition"], flat_param=init.shape)
    body = p.region(instr.attrs["body"], flat_param=init.shape)
    sig = "(" + ", ".join(p.t(s) for s in shapes) + ") -> " + p.results_type(instr)
    p.define(instr, f'"stablehlo.while"({", ".join(elems)}) ({cond}, {body}) : {sig}')


def conditional(p, instr):
    a = instr.attrs
    index, args = instr.operands[0], instr.operands[1:]
    if "branch_computations" in a:
        branches = list(a["branch_computations"])
    else:
        branches = [a["true_computation"], a["false_computation"]]
    regions = [p.region(b, bind=[arg]) for b, arg in zip(branches, args)]
    pred = index.shape.element_type.name == "pred"
    if pred:  # if(pred) {true} {false}; with branch_computations the order is the same
        op = "stablehlo.if"
    else:
        op = "stablehlo.case"
    p.define(instr, f'"{op}"({p.ref(index)}) ({", ".join(regions)}) : '
                    f"({p.t(index.shape)}) -> {p.results_type(instr)}")


def rng_bit_generator(p, instr):
    """(used once xlapy has the rng-bit-generator opcode: algorithm=rng_default|...)"""
    algorithm = str(instr.attrs.get("algorithm", "rng_default")).removeprefix("rng_").upper()
    (state,) = instr.operands
    p.define(instr, f"stablehlo.rng_bit_generator {p.ref(state)}, algorithm = {algorithm} : "
                    f"{_sig(p, instr)}")


_API_NUMBERS = {"API_VERSION_UNSPECIFIED": 0, "API_VERSION_ORIGINAL": 1,
                "API_VERSION_STATUS_RETURNING": 2, "API_VERSION_STATUS_RETURNING_UNIFIED": 3,
                "API_VERSION_TYPED_FFI": 4}


def custom_call(p, instr):
    a = instr.attrs
    attrs = {}
    version = _API_NUMBERS.get(str(a.get("api_version", "API_VERSION_ORIGINAL")))
    if version is None:
        raise XlapyError(f"custom-call {instr.name}: unknown api_version {a['api_version']}")
    if version != 1:
        attrs["api_version"] = f"{version} : i32"
    config = a.get("backend_config")
    if config is not None:
        text = str(config)
        if version == 4 and text.startswith("{"):
            attrs["backend_config"] = text
        elif text.startswith('"'):
            attrs["backend_config"] = mlir_quote(_unescape(text[1:-1]))
        else:
            attrs["backend_config"] = mlir_quote(text)
    called = a.get("called_computations")
    if called:
        attrs["called_computations"] = "[" + ", ".join(
            "@" + p.function(c) for c in called if isinstance(c, Computation)) + "]"
    if a.get("custom_call_has_side_effect"):
        attrs["has_side_effect"] = "true"
    results = p.flat_shapes(instr.shape)
    operands = [o.shape for o in instr.operands]
    if "operand_layout_constraints" in a:
        operands = list(parse_shape("(" + str(a["operand_layout_constraints"]).strip()[1:-1]
                                    + ")").tuple_shapes)
    if "operand_layout_constraints" in a or not all(
            s.has_default_layout for s in results + operands if s.is_array):
        # XLA wants layouts for both the operands and the results, or for neither
        attrs["result_layouts"] = "[" + ", ".join(_layout(s) for s in results) + "]"
        attrs["operand_layouts"] = "[" + ", ".join(_layout(s) for s in operands) + "]"
    if "output_to_operand_aliasing" in a:
        aliases = []
        for m in re.finditer(r"\{([\d,\s]*)\}\s*:\s*\(\s*(\d+)\s*,\s*\{([\d,\s]*)\}\s*\)",
                             str(a["output_to_operand_aliasing"])):
            out, opnd, oin = (_ints(int(x) for x in m.group(1).split(",") if x.strip()),
                              m.group(2), _ints(int(x) for x in m.group(3).split(",") if x.strip()))
            aliases.append(f"#stablehlo.output_operand_alias<output_tuple_indices = {out}, "
                           f"operand_index = {opnd}, operand_tuple_indices = {oin}>")
        attrs["output_operand_aliases"] = "[" + ", ".join(aliases) + "]"
    if "frontend_attributes" in a:
        pairs = re.findall(r'([\w.\-]+)\s*=\s*"((?:[^"\\]|\\.)*)"', str(a["frontend_attributes"]))
        kept = {k: v for k, v in pairs if not k.startswith("xla.sdy.")}
        if kept:
            attrs["mhlo.frontend_attributes"] = dict_text(kept)
    body = "{" + ", ".join(f"{k} = {v}" for k, v in attrs.items()) + "} " if attrs else ""
    p.define(instr, f"stablehlo.custom_call @{symbol_text(a['custom_call_target'])}"
                    f"({_opnds(p, instr)}) {body}: {_sig(p, instr)}")


def _layout(shape) -> str:
    m2m = shape.minor_to_major if shape.is_array else ()
    n = len(m2m)
    return f"dense<{_ints(m2m)}> : tensor<{n}xindex>" if n else "dense<> : tensor<0xindex>"

