"""Shape rules of operations that call computations (XLA's InferWhileShape,
InferConditionalShape, InferCallShape, InferMapShape, and the fusion/custom-call checks).

while(init), condition, body:   condition: T -> pred[], body: T -> T, init: T; result T.
conditional(index, x_0..x_B-1): index is pred[] (then true_computation/false_computation,
                                or two branch_computations) or s32[] (branch_computations,
                                at least one); branch i takes x_i; all branches return the
                                same shape, which is the result.
call(args...), to_apply:        the parameters match the arguments; result = root shape.
map(x_0..x_N-1), to_apply:      the x_i share dimensions; to_apply takes N scalars of their
                                element types and returns a scalar; dimensions, if given,
                                must be {0..rank-1}; result = x dims with the root's type.
fusion(args...), calls, kind:   like call, over the fused computation.
custom-call:                    the declared shape (the target decides); needs a target.
"""

from __future__ import annotations

from xlapy.hlo.attributes import FUSION_KINDS
from xlapy.hlo.shape_context import OpContext, fmt, is_scalar, scalar_of, shape_rule
from xlapy.hlo.shapes import PRED, S32, Shape


@shape_rule("while")
def while_(op: OpContext) -> Shape:
    init = op.shapes[0]
    cond, body = op.computation("condition"), op.computation("body")
    (cparam,), cresult = op.check_param_count(cond, "condition", 1)
    (bparam,), bresult = op.check_param_count(body, "body", 1)
    if not cresult.compatible(scalar_of(PRED)):
        raise op.fail(f"condition computation {cond.name} must return pred[], returns "
                      f"{fmt(cresult)}")
    for what, s in (("the condition's parameter", cparam), ("the body's parameter", bparam),
                    ("the body's result", bresult)):
        if not s.compatible(init):
            raise op.fail(f"{what} {fmt(s)} differs from the loop state {fmt(init)} (condition "
                          f"{cond.name}, body {body.name}); all must have the same shape")
    return init.without_layout()


@shape_rule("conditional")
def conditional(op: OpContext) -> Shape:
    op.count_at_least(1, "the branch index")
    index = op.shapes[0]
    is_pred = index.compatible(scalar_of(PRED))
    if not is_pred and not index.compatible(scalar_of(S32)):
        raise op.fail(f"the branch index must be pred[] or s32[], got {fmt(index)}")
    if op.has("branch_computations"):
        branches = op.computations("branch_computations")
        if is_pred and len(branches) != 2:
            raise op.fail(f"a pred branch index needs exactly two branches, got {len(branches)}")
        if not branches:
            raise op.fail("needs at least one branch computation")
    elif is_pred:
        branches = [op.computation("true_computation"), op.computation("false_computation")]
    else:
        raise op.fail("an s32 branch index needs branch_computations={...}")
    args = op.shapes[1:]
    if len(args) != len(branches):
        raise op.fail(f"has {len(branches)} branch computations but {len(args)} branch "
                      f"operands; each branch takes one operand")
    result = None
    for i, (comp, arg) in enumerate(zip(branches, args)):
        (param,), root = op.check_param_count(comp, f"branch {i}", 1)
        if not param.compatible(arg):
            raise op.fail(f"branch {i} computation {comp.name} takes {fmt(param)} but its "
                          f"operand is {fmt(arg)}")
        if result is not None and not root.compatible(result):
            raise op.fail(f"branch {i} computation {comp.name} returns {fmt(root)} but branch 0 "
                          f"returns {fmt(result)}; all branches must return the same shape")
        if result is None:
            result = root
    return result.without_layout()


def _check_args(op: OpContext, comp, role: str) -> Shape:
    params, result = op.signature(comp, role)
    if len(params) != op.n:
        raise op.fail(f"{role} computation {comp.name} takes {len(params)} parameter(s) "
                      f"{fmt(params)} but is given {op.n} operand(s) {fmt(op.shapes)}")
    for i, (p, a) in enumerate(zip(params, op.shapes)):
        if not p.compatible(a):
            raise op.fail(f"{role} computation {comp.name} parameter {i} is {fmt(p)} but the "
                          f"operand is {fmt(a)}")
    return result.without_layout()


@shape_rule("call")
def call(op: OpContext) -> Shape:
    return _check_args(op, op.computation("to_apply"), "to_apply")


@shape_rule("fusion")
def fusion(op: OpContext) -> Shape:
    kind = op.string("kind")
    if kind not in FUSION_KINDS:
        raise op.fail(f"kind={kind} is not one of {', '.join(FUSION_KINDS)}")
    return _check_args(op, op.computation("calls"), "fused")


@shape_rule("map")
def map_(op: OpContext) -> Shape:
    shapes = op.arrays_of_one_shape("the arrays to map over")
    rank = shapes[0].rank
    dims = op.ints("dimensions", tuple(range(rank)))
    if dims != tuple(range(rank)):
        raise op.fail(f"dimensions={{{','.join(map(str, dims))}}} must be all dimensions "
                      f"0..{rank - 1} in order (mapping a subset is not supported)")
    comp = op.computation("to_apply")
    params, result = op.check_param_count(comp, "to_apply", len(shapes))
    for i, (p, s) in enumerate(zip(params, shapes)):
        if not p.compatible(scalar_of(s.element_type)):
            raise op.fail(f"to_apply computation {comp.name} parameter {i} is {fmt(p)}, "
                          f"expected the scalar {s.element_type}[] of operand {fmt(s)}")
    if not is_scalar(result):
        raise op.fail(f"to_apply computation {comp.name} must return a scalar, returns "
                      f"{fmt(result)}")
    return Shape.array(result.element_type, shapes[0].dims)


@shape_rule("custom-call")
def custom_call(op: OpContext) -> Shape:
    op.string("custom_call_target")
    if op.has("called_computations"):
        op.computations("called_computations")
    return op.need_declared()
