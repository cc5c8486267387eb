"""Shape rules of reductions, windowed reductions and sorting (XLA's InferReduceShape,
InferReduceWindowShape, InferSelectAndScatterShape, HloVerifier::HandleSort, InferTopKShape).

reduce(x_0..x_N-1, init_0..init_N-1), dimensions, to_apply: the inputs share dimensions;
to_apply maps (acc_0..acc_N-1, x_0..x_N-1) -> acc (a scalar for N = 1, a tuple of N scalars
otherwise); the result drops the reduced dimensions and has the accumulator types (a tuple
for N > 1).
reduce-window: the same with a window; each result dimension is the window output size.
select-and-scatter(operand, source, init), select, scatter, window: select maps two
operand-typed scalars to pred[]; the windowed operand has the source's dimensions; scatter
is a reducer over the source type; the result has the operand's shape.
sort(x_0..x_N-1), dimensions={d}, to_apply: the comparator takes 2N scalars (x_i's type at
2i and 2i+1) and returns pred[]; result = the operands' shapes (a tuple for N > 1).
topk(x), k: (x with last dim k, s32 with last dim k).
"""

from __future__ import annotations

from xlapy.hlo import attributes as A
from xlapy.hlo.shape_context import (OpContext, check_dims_in_range, check_unique, fmt,
                                       is_scalar, scalar_of, shape_rule, verify_reducer,
                                       window_output_dims)
from xlapy.hlo.shapes import PRED, S32, Shape


def _inputs_and_inits(op: OpContext) -> tuple[list[Shape], list[Shape]]:
    if op.n < 2 or op.n % 2:
        raise op.fail(f"expects N inputs followed by N init values (an even count >= 2), got "
                      f"{op.n} operands: {fmt(op.shapes)}")
    n = op.n // 2
    inputs = [op.array(i, f"input {i}") for i in range(n)]
    inits = [op.array(n + i, f"init value {i}") for i in range(n)]
    for i, s in enumerate(inputs):
        if s.dims != inputs[0].dims:
            raise op.fail(f"all inputs must have the same dimensions, but input 0 is "
                          f"{fmt(inputs[0])} and input {i} is {fmt(s)}")
    for i, s in enumerate(inits):
        if not is_scalar(s):
            raise op.fail(f"init value {i} must be a scalar, got {fmt(s)}")
    return inputs, inits


def _result(accs: list[Shape], dims) -> Shape:
    shapes = [Shape.array(a.element_type, dims) for a in accs]
    return shapes[0] if len(shapes) == 1 else Shape.tuple(shapes)


@shape_rule("reduce")
def reduce(op: OpContext) -> Shape:
    inputs, inits = _inputs_and_inits(op)
    dims = op.ints("dimensions")
    rank = inputs[0].rank
    check_dims_in_range(op, dims, rank, f"dimensions (reducing {fmt(inputs[0])})")
    check_unique(op, dims, "dimensions")
    accs = verify_reducer(op, op.computation("to_apply"), "to_apply", inits,
                          [s.element_type for s in inputs])
    kept = [n for i, n in enumerate(inputs[0].dims) if i not in dims]
    return _result(accs, kept)


@shape_rule("reduce-window")
def reduce_window(op: OpContext) -> Shape:
    inputs, inits = _inputs_and_inits(op)
    window = op.typed("window", A.Window, "a window such as {size=2x2 stride=2x2}",
                      A.Window.make(()))
    accs = verify_reducer(op, op.computation("to_apply"), "to_apply", inits,
                          [s.element_type for s in inputs])
    out = window_output_dims(op, inputs[0].dims, window, f"input {fmt(inputs[0])}")
    return _result(accs, out)


@shape_rule("select-and-scatter")
def select_and_scatter(op: OpContext) -> Shape:
    operand, source, init = op.array(0), op.array(1, "the source"), op.array(2, "the init value")
    if not is_scalar(init):
        raise op.fail(f"the init value must be a scalar, got {fmt(init)}")
    window = op.typed("window", A.Window, "a window such as {size=2x2 stride=2x2}",
                      A.Window.make(()))
    select = op.computation("select")
    params, result = op.check_param_count(select, "select", 2)
    elem = scalar_of(operand.element_type)
    for i, p in enumerate(params):
        if not p.compatible(elem):
            raise op.fail(f"select computation {select.name}: parameter {i} is {fmt(p)} but the "
                          f"operand element type is {operand.element_type}")
    if not result.compatible(scalar_of(PRED)):
        raise op.fail(f"select computation {select.name} must return pred[], returns "
                      f"{fmt(result)}")
    windowed = window_output_dims(op, operand.dims, window, f"operand {fmt(operand)}")
    if tuple(source.dims) != windowed:
        raise op.fail(f"the source {fmt(source)} must have the dimensions of the windowed "
                      f"operand {list(windowed)}")
    verify_reducer(op, op.computation("scatter"), "scatter", [init], [source.element_type])
    return operand.without_layout()


@shape_rule("sort")
def sort(op: OpContext) -> Shape:
    shapes = op.arrays_of_one_shape("the arrays to sort")
    dims = op.ints("dimensions")
    if len(dims) != 1:
        raise op.fail(f"dimensions={{{','.join(map(str, dims))}}} must name exactly one "
                      "dimension to sort along")
    check_dims_in_range(op, dims, shapes[0].rank, f"dimensions (sorting {fmt(shapes[0])})")
    op.bool("is_stable")
    comp = op.computation("to_apply")
    params, result = op.check_param_count(comp, "comparator", 2 * len(shapes))
    for i, p in enumerate(params):
        want = scalar_of(shapes[i // 2].element_type)
        if not p.compatible(want):
            raise op.fail(f"comparator {comp.name}: parameter {i} is {fmt(p)}, expected "
                          f"{fmt(want)} (the element type of operand {i // 2})")
    if not result.compatible(scalar_of(PRED)):
        raise op.fail(f"comparator {comp.name} must return pred[], returns {fmt(result)}")
    if len(shapes) == 1:
        return shapes[0].without_layout()
    return Shape.tuple([s.without_layout() for s in shapes])


@shape_rule("topk")
def topk(op: OpContext) -> Shape:
    s = op.array(0)
    k = op.int("k")
    op.bool("largest", True)
    if s.rank < 1:
        raise op.fail(f"the operand must have rank >= 1, got {fmt(s)}")
    if not 0 <= k <= s.dims[-1]:
        raise op.fail(f"k={k} must be within [0, {s.dims[-1]}] (the last dimension of {fmt(s)})")
    dims = s.dims[:-1] + (k,)
    return Shape.tuple([Shape.array(s.element_type, dims), Shape.array(S32, dims)])
