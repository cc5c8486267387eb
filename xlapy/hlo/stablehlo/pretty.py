"""Readers for the short ("pretty") forms of operations.

Each reader takes the parser (syntax.MlirParser, positioned after the op name) and the Op
being read, and fills in the operands, the attributes under the names the generic form
uses (`dims = [0]` of broadcast_in_dim becomes broadcast_dimensions = array<i64: 0>), the
regions and the types. The op table (ops.py) names one reader per op; readers with
parameters are made by the factories `same`, `keywords`, ... Examples of what they read:

  same        %a, %b : tensor<4xf32>        or  %a : (tensor<4xi1>) -> tensor<4xf32>
  compare     LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
  keywords    %x, dims = [1, 0] : (...) -> ...     dim = 0 : tensor<4xi32>
  slice       %x [0:4, 1:3:2] : (...) -> ...
  reduce      (%x init: %c) applies stablehlo.add across dimensions = [1] : (...) -> ...
  while       (%i = %c, %x = %a) : tensor<i32>, tensor<4xf32> cond {...} do {...}
  convolution (%a, %b) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {...}
"""

from __future__ import annotations

import re

from xlapy.hlo.stablehlo.attrs import (DenseArray, Enum, Int, Struct, Symbol, parse_attr,
                                       parse_dense, parse_dict_body, parse_struct_body)
from xlapy.hlo.stablehlo.tree import Op
from xlapy.hlo.stablehlo.types import FunctionType

_DIM_LABEL = re.compile(r"[bfio]|\d+")


def _i64s(values) -> DenseArray:
    return DenseArray("i64", tuple(values))


# ---- value readers for `key = value` ---------------------------------------------------------

def _ints(p, op, key, name):
    op.attrs[name] = _i64s(p.int_list())


def _int(p, op, key, name):
    op.attrs[name] = Int(p.integer(), "i64")


def _precision(p, op, key, name):
    p.expect("[", "to open the precision list")
    op.attrs[name] = [Enum("precision", v) for v in p.items(p.bare_id, "]", "precision list")]


def _dot_dims(p, op, key, name):
    lhs = p.int_list()
    p.expect_keyword("x", f"between the lhs and rhs {key}")
    rhs = p.int_list()
    dims = op.attrs.setdefault("dot_dimension_numbers", Struct("stablehlo.dot", {}))
    side = "batching" if key == "batching_dims" else "contracting"
    dims.fields[f"lhs_{side}_dimensions"] = list(lhs)
    dims.fields[f"rhs_{side}_dimensions"] = list(rhs)


def _dot_algorithm(p, op, key, name):
    p.expect("<", "to open the algorithm <...>")
    fields = parse_struct_body(p, p.aliases)
    p.expect(">", "to close the algorithm <...>")
    op.attrs[name] = Struct("stablehlo.dot_algorithm", fields)


def _enum(kind):
    def read(p, op, key, name):
        op.attrs[name] = Enum(kind, p.bare_id(f"a {kind} value"))
    return read


def _format(p, op, key, name):
    pos = p.pos
    text = p.bare_id("a float format such as e5m10")
    m = re.fullmatch(r"e(\d+)m(\d+)", text)
    if not m:
        raise p.error(f"expected a float format such as e5m10, found '{text}'", pos)
    op.attrs["exponent_bits"] = Int(int(m.group(1)), "i32")
    op.attrs["mantissa_bits"] = Int(int(m.group(2)), "i32")


def _bool(p, op, key, name):
    if p.keyword("true"):
        op.attrs[name] = True
    elif p.keyword("false"):
        op.attrs[name] = False
    else:
        raise p.error(f"expected true or false after '{key} =', found {p.describe_next()}")


VALUE_READERS = {"ints": _ints, "int": _int, "bool": _bool, "precision": _precision,
                 "dot_dims": _dot_dims, "dot_algorithm": _dot_algorithm, "format": _format,
                 "rng_algorithm": _enum("rng_algorithm")}


# ---- readers ---------------------------------------------------------------------------------

def same(policy: str = "same"):
    """Operands, an optional attribute dict and a type signature (see
    MlirParser.type_signature for `policy`)."""
    def read(p, op: Op) -> None:
        op.operands = p.uses()
        p.opt_attr_dict(op)
        if policy == "operands" and not op.operands:  # `return` with nothing to return
            p.skip_ws()
            if not p.text.startswith(":", p.pos):
                op.operand_types, op.result_types = [], []
                return
        p.type_signature(op, policy)
    return read


def keywords(**keys):
    """Operands, then `key = value` pairs (value kinds in VALUE_READERS); keys maps each
    short key to (generic attribute name, kind)."""
    def read(p, op: Op) -> None:
        operands = []
        while True:
            p.skip_ws()
            if p.text.startswith("%", p.pos):
                operands.append(p.use())
            else:
                kpos = p.pos
                m = p.peek_re(re.compile(r"([A-Za-z_]\w*)\s*="))
                if not m:
                    break
                key = m.group(1)
                if key not in keys:
                    raise p.error(f"unexpected '{key} =' in {op.name} (expected one of "
                                  f"{', '.join(keys)})", kpos)
                p.pos = m.end()
                name, kind = keys[key]
                VALUE_READERS[kind](p, op, key, name)
            if not p.accept(","):
                break
        op.operands = operands
        p.opt_attr_dict(op)
        p.type_signature(op, "same")
    return read


def compare(p, op: Op) -> None:
    op.attrs["comparison_direction"] = Enum("comparison_direction",
                                            p.bare_id("a comparison direction such as LT"))
    p.expect(",", "after the comparison direction")
    op.operands = [p.use()]
    p.expect(",", "between the compared values")
    op.operands.append(p.use())
    if p.accept(","):
        op.attrs["compare_type"] = Enum("comparison_type",
                                        p.bare_id("a comparison type such as FLOAT"))
    p.opt_attr_dict(op)
    p.type_signature(op, "same")


def slice_(p, op: Op) -> None:
    op.operands = [p.use()]
    p.expect("[", "to open the slice ranges")
    starts, limits, strides = [], [], []

    def one():
        starts.append(p.integer("a slice start"))
        p.expect(":", "in a slice range start:limit")
        limits.append(p.integer("a slice limit"))
        strides.append(p.integer("a slice stride") if p.accept(":") else 1)
    p.items(one, "]", "the slice ranges")
    op.attrs.update(start_indices=_i64s(starts), limit_indices=_i64s(limits),
                    strides=_i64s(strides))
    p.opt_attr_dict(op)
    p.type_signature(op, "same")


def get_tuple_element(p, op: Op) -> None:
    op.operands = [p.use()]
    p.expect("[", "and the element index [N]")
    op.attrs["index"] = Int(p.integer("an element index"), "i32")
    p.expect("]")
    p.opt_attr_dict(op)
    p.type_signature(op, "same")


def constant(p, op: Op) -> None:
    p.opt_attr_dict(op)
    p.skip_ws()
    pos = p.pos
    if not p.keyword("dense"):
        value = parse_attr(p, p.aliases)
        raise p.error(f"expected dense<...> : tensor<...> for the constant, found {value}", pos)
    value = parse_dense(p, pos, p.aliases)
    op.attrs["value"] = value
    op.operand_types, op.result_types = [], [value.shape]


def convolution(p, op: Op) -> None:
    p.expect("(", "to open the convolution's operands")
    op.operands = p.items(p.use, ")", "the convolution's operands")
    p.expect_keyword("dim_numbers", "(the convolution's dimension numbers)")
    p.expect("=")
    p.skip_ws()
    start = p.pos
    for i, part in enumerate(("input", "kernel", "output")):
        if i:
            p.expect("x" if i == 1 else "->", f"before the {part} dimension labels")
        p.expect("[", f"to open the {part} dimension labels")
        p.items(lambda: p.match(_DIM_LABEL, "a dimension label (b, f, i, o or a digit)"),
                "]", f"the {part} dimension labels")
    op.attrs["dimension_numbers"] = Struct("stablehlo.conv", {"labels": p.text[start:p.pos]})
    p.expect(",", "before window = {...}")
    p.expect_keyword("window")
    p.expect("=")
    p.expect("{", "to open the window")
    names = {"stride": "window_strides", "lhs_dilate": "lhs_dilation",
             "rhs_dilate": "rhs_dilation", "reverse": "window_reversal", "pad": "padding"}

    def field():
        p.skip_ws()
        kpos = p.pos
        key = p.bare_id("a window field (stride, pad, lhs_dilate, rhs_dilate, reverse)")
        if key not in names:
            raise p.error(f"unknown window field '{key}'", kpos)
        p.expect("=")
        value = parse_attr(p, p.aliases)
        op.attrs[names[key]] = value
    p.items(field, "}", "the window")
    p.opt_attr_dict(op)
    p.type_signature(op, "same")


def reduce(p, op: Op) -> None:
    inputs, inits = [], []
    while True:
        p.expect("(", "to open '(%input init: %value)'")
        inputs.append(p.use())
        p.expect_keyword("init")
        p.expect(":")
        inits.append(p.use())
        p.expect(")")
        if not p.accept(","):
            break
    op.operands = inputs + inits
    applies = None
    if p.keyword("applies"):
        p.skip_ws()
        apos = p.pos
        applies = (p.bare_id("the reducing operation such as stablehlo.add"), apos)
    p.expect_keyword("across")
    p.expect_keyword("dimensions")
    p.expect("=")
    op.attrs["dimensions"] = _i64s(p.int_list())
    p.opt_attr_dict(op)
    p.type_signature(op, "same")
    if applies is not None:
        op.attrs["__applies__"] = applies
        return
    p.expect_keyword("reducer", "(the reduction body) or 'applies OP' before 'across'")
    groups = []
    while p.peek("("):
        p.expect("(")
        groups.append(p.items(p.block_arg, ")", "the reducer arguments"))
    if len(groups) != len(inputs) or any(len(g) != 2 for g in groups):
        raise p.error(f"the reducer takes one (accumulator, element) pair per input: "
                      f"{len(inputs)} pairs", op.pos)
    p.expect("{", "to open the reducer body")
    body = p.block("}")
    body.args = [g[0] for g in groups] + [g[1] for g in groups]
    op.regions = [[body]]


def while_(p, op: Op) -> None:
    p.expect("(", "to open the loop variables")
    names, inits = [], []

    def one():
        p.skip_ws()
        pos = p.pos
        names.append((p.ssa_name("a loop variable such as %iterArg"), pos))
        p.expect("=", "after the loop variable")
        inits.append(p.use())
    p.items(one, ")", "the loop variables")
    op.operands = inits
    if names:
        p.type_signature(op, "results")
    else:
        op.operand_types, op.result_types = [], []
    if p.keyword("attributes"):
        p.expect("{")
        op.attrs.update(parse_dict_body(p, p.aliases))
    regions = []
    for word in ("cond", "do"):
        p.expect_keyword(word)
        p.expect("{", f"to open the {word} region")
        block = p.block("}")
        block.args = [(n, t, pos) for (n, pos), t in zip(names, op.result_types)]
        regions.append([block])
    op.regions = regions


def custom_call(p, op: Op) -> None:
    op.attrs["call_target_name"] = p.symbol("the custom call target such as @foo")
    p.expect("(", "to open the custom call's operands")
    op.operands = p.items(p.use, ")", "the operands")
    p.opt_attr_dict(op)
    p.type_signature(op, "same")


def call(p, op: Op) -> None:
    op.attrs["callee"] = Symbol(p.symbol("the called function such as @f"))
    p.expect("(", "to open the call's arguments")
    op.operands = p.items(p.use, ")", "the arguments")
    p.opt_attr_dict(op)
    p.type_signature(op, "same")


def top_k(p, op: Op) -> None:
    p.expect("(", "to open chlo.top_k's operand")
    op.operands = [p.use()]
    p.expect(",")
    p.expect_keyword("k")
    p.expect("=")
    op.attrs["k"] = Int(p.integer("k"), "i64")
    p.expect(")")
    p.opt_attr_dict(op)
    p.type_signature(op, "same")


def composite(p, op: Op) -> None:
    op.attrs["name"] = p.string()
    op.operands = p.uses()
    p.opt_attr_dict(op)
    p.type_signature(op, "same")


# ---- func.func and module --------------------------------------------------------------------

def func(p, op: Op) -> None:
    """func.func [public|private] @name(%arg0: T {attrs} loc(...), ...) -> (T {attrs}, ...)
    [attributes {...}] { body }"""
    for vis in ("public", "private", "nested"):
        if p.keyword(vis):
            op.attrs["sym_visibility"] = vis
            break
    op.attrs["sym_name"] = p.symbol("the function name such as @main")
    p.expect("(", "to open the function's arguments")
    args, arg_attrs = [], []

    def arg():
        p.skip_ws()
        pos = p.pos
        name = p.ssa_name("an argument such as %arg0")
        p.expect(":", f"after argument %{name}")
        t = p.value_type()
        attrs = {}
        if p.accept("{"):
            attrs = parse_dict_body(p, p.aliases)
        if p.keyword("loc"):
            p.loc_body()
        args.append((name, t, pos))
        arg_attrs.append(attrs)
    p.items(arg, ")", "the function's arguments")
    results, res_attrs = [], []
    if p.accept("->"):
        p.skip_ws()
        if p.accept("("):
            def result():
                results.append(p.value_type())
                res_attrs.append(parse_dict_body(p, p.aliases) if p.accept("{") else {})
            p.items(result, ")", "the function's results")
        else:
            results.append(p.value_type())
            res_attrs.append({})
    op.attrs["function_type"] = FunctionType(tuple(t for _, t, _ in args), tuple(results))
    op.attrs["arg_attrs"] = arg_attrs
    op.attrs["res_attrs"] = res_attrs
    if p.keyword("attributes"):
        p.expect("{")
        op.attrs.update(parse_dict_body(p, p.aliases))
    op.operand_types, op.result_types = [], []
    p.skip_ws()
    if p.accept("{"):
        body = p.block("}")
        if body.args:
            raise p.error("a function body starts without a block label", body.pos)
        body.args = args
        op.regions = [[body]]


def mesh(p, op: Op) -> None:
    """sdy.mesh @name = <...> {attrs}: a sharding mesh declaration (JAX adds one even for a
    single device); read and ignored."""
    op.attrs["sym_name"] = p.symbol("the mesh name such as @mesh")
    p.expect("=", "after the mesh name")
    p.expect("<", "to open the mesh")
    p.balanced("<", ">")
    p.opt_attr_dict(op)
    op.operand_types, op.result_types = [], []


def module(p, op: Op) -> None:
    p.skip_ws()
    if p.text.startswith("@", p.pos):
        op.attrs["sym_name"] = p.symbol()
    if p.keyword("attributes"):
        p.expect("{")
        op.attrs.update(parse_dict_body(p, p.aliases))
    p.expect("{", "to open the module body")
    op.regions = [[p.block("}")]]
    op.operand_types, op.result_types = [], []

