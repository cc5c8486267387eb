"""Lowering rules, StableHLO -> HLO: reductions, sort, map, calls, custom calls and control
flow (while, case, if), whose regions become HLO computations (see convert.py for how
values captured from outside a region are passed in)."""

from __future__ import annotations

from xlapy.hlo import attributes as A
from xlapy.hlo.opcodes import BINARY, OPCODES
from xlapy.hlo.shapes import Shape
from xlapy.hlo.stablehlo.attrs import Struct, Symbol, dict_text
from xlapy.hlo.stablehlo.lowering import Emitter, captured_uses
from xlapy.hlo.stablehlo.rule_attrs import (as_ints, bool_, check_len, enum, field_int,
                                            field_ints, int_, ints, pairs)
from xlapy.hlo.stablehlo.types import type_to_mlir

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
        comp = cx.scalar_computation(0, "body")
    attrs = {"dimensions": ints(cx, "dimensions"), "to_apply": comp}
    return cx.unpack(cx.emit("reduce", xs, attrs), n)


def _applies_computation(cx, applies, inits):
    name, pos = applies
    row = cx.conv.row(name)
    if row is None or row.hlo is None or row.hlo not in BINARY:
        raise cx.error(f"'applies {name}' needs a binary elementwise operation", pos)
    em = Emitter(cx.conv, f"{cx.short_name}_body")  # the name the region form gets
    em.metadata = dict(cx.em.metadata)
    accs = [em.parameter(i.shape, f"Arg_{k}") for k, i in enumerate(inits)]
    elems = [em.parameter(i.shape, f"Arg_{len(inits) + k}") for k, i in enumerate(inits)]
    outs = [em.emit(row.hlo, [a, e]) for a, e in zip(accs, elems)]
    return em.finish(em.tuple_of(outs))


def reduce_window(cx):
    xs = cx.operands()
    n = len(xs) // 2
    if n == 0 or len(xs) % 2:
        raise cx.error("takes N inputs and N initial values")
    size = ints(cx, "window_dimensions")
    rank = len(size)
    lo, hi = pairs(cx, "padding", rank)
    window = A.Window.make(
        size, check_len(cx, "window_strides", ints(cx, "window_strides", required=False), rank),
        lo, hi, check_len(cx, "base_dilations", ints(cx, "base_dilations", required=False),
                           rank),
        check_len(cx, "window_dilations", ints(cx, "window_dilations", required=False), rank))
    attrs = {"window": window, "to_apply": cx.scalar_computation(0, "body")}
    return cx.unpack(cx.emit("reduce-window", xs, attrs), n)


def select_and_scatter(cx):
    operand, source, init = cx.operands()
    size = ints(cx, "window_dimensions")
    rank = len(size)
    lo, hi = pairs(cx, "padding", rank)
    window = A.Window.make(size, check_len(cx, "window_strides",
                                            ints(cx, "window_strides", required=False), rank),
                           lo, hi)
    attrs = {"window": window, "select": cx.scalar_computation(0, "select"),
             "scatter": cx.scalar_computation(1, "scatter")}
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
    attrs["to_apply"] = cx.scalar_computation(0, "comparator")
    return cx.unpack(cx.emit("sort", xs, attrs), len(xs))


def map_(cx):
    attrs = {"dimensions": ints(cx, "dimensions"),
             "to_apply": cx.scalar_computation(0, "computation")}
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
    if "rng-bit-generator" not in OPCODES:
        raise cx.error("is not supported: xlapy has no rng-bit-generator opcode yet")
    attrs = {"algorithm": A.Raw(f"rng_{algorithm.lower()}")}
    return cx.unpack(cx.emit("rng-bit-generator", cx.operands(), attrs,
                             declared=Shape.tuple(cx.op.result_types)), 2)
