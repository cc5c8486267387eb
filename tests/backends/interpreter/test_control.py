"""Control-flow and call rules: while, conditional, call, fusion, map, sort, topk,
custom-call, checked against XLA:CPU on the same HLO text (the oracle of
test_elementwise.py) and against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from xlapy.backends.interpreter import Evaluator, evaluate
from xlapy.hlo.evaluator import control
from xlapy.errors import EvaluationError
from xlapy.hlo import parse
from xlapy.hlo.shapes import primitive_type

from .test_elementwise import check

pytest.importorskip("jax")

ADD = "add {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT c = s32[] add(a, b)\n}\n"


# ---- while / conditional / call / fusion -----------------------------------------------------

WHILE = """HloModule m
cond {
  s = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(LIMIT)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[3] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  two = f32[] constant(2)
  b = f32[3] broadcast(two), dimensions={}
  y = f32[3] multiply(x, b)
  ROOT t = (s32[], f32[3]) tuple(j, y)
}
ENTRY e {
  x = f32[3] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[3]) tuple(zero, x)
  ROOT w = (s32[], f32[3]) while(init), condition=cond, body=body
}
"""


def test_while_loop():
    x = np.array([1, -0.5, 3], np.float32)
    i, y = check(WHILE.replace("LIMIT", "5"), x)
    assert i == 5 and y.tolist() == [32, -16, 96]
    i, y = check(WHILE.replace("LIMIT", "-1"), x)  # the body never runs
    assert i == 0 and y.tolist() == x.tolist()


def test_runaway_while_loop_is_an_evaluation_error():
    module = parse(WHILE.replace("LIMIT", "1000"))
    with pytest.raises(EvaluationError, match=r"line 23:\d+: while loop ran more than 10 "
                                              r"iterations"):
        Evaluator(max_loop_iterations=10).evaluate(module, [np.ones(3, np.float32)])


COND_INDEX = """HloModule m
b0 {
  x = f32[2] parameter(0)
  ROOT n = f32[2] negate(x)
}
b1 {
  x = f32[2] parameter(0)
  ROOT e = f32[2] exponential(x)
}
b2 {
  x = s32[] parameter(0)
  f = f32[] convert(x)
  ROOT c = f32[2] broadcast(f), dimensions={}
}
ENTRY e {
  i = s32[] parameter(0)
  x = f32[2] parameter(1)
  y = s32[] parameter(2)
  ROOT r = f32[2] conditional(i, x, x, y), branch_computations={b0, b1, b2}
}
"""


@pytest.mark.parametrize("index", [0, 1, 2, 3, 100, -1, -2 ** 31])
def test_conditional_index_out_of_range_runs_the_last_branch(index):
    x = np.array([0.5, -1], np.float32)
    (got,) = check(COND_INDEX, np.int32(index), x, np.int32(7))
    want = {0: -x, 1: np.exp(x)}.get(index, np.full(2, 7, np.float32))
    np.testing.assert_allclose(got, want, rtol=1e-6)


COND_PRED = """HloModule m
t {
  x = (f32[2], s32[]) parameter(0)
  ROOT g = f32[2] get-tuple-element(x), index=0
}
f {
  x = f32[] parameter(0)
  ROOT b = f32[2] broadcast(x), dimensions={}
}
ENTRY e {
  p = pred[] parameter(0)
  a = f32[2] parameter(1)
  k = s32[] constant(3)
  tt = (f32[2], s32[]) tuple(a, k)
  s = f32[] parameter(2)
  ROOT r = f32[2] conditional(p, tt, s), true_computation=t, false_computation=f
}
"""


@pytest.mark.parametrize("pred", [True, False])
def test_conditional_pred(pred):
    a = np.array([1, 2], np.float32)
    (got,) = check(COND_PRED, np.bool_(pred), a, np.float32(-4))
    assert got.tolist() == ([1, 2] if pred else [-4, -4])


def test_call_and_fusion():
    text = ("HloModule m\n" + ADD +
            "inner {\n  a = s32[3] parameter(0)\n  ROOT n = s32[3] negate(a)\n}\n"
            "outer {\n  a = s32[3] parameter(0)\n  b = s32[3] parameter(1)\n"
            "  s = s32[3] add(a, b)\n  ROOT c = s32[3] call(s), to_apply=inner\n}\n"
            "fused {\n  a = s32[3] parameter(0)\n  ROOT m = s32[3] multiply(a, a)\n}\n"
            "ENTRY e {\n  x = s32[3] parameter(0)\n  y = s32[3] parameter(1)\n"
            "  c = s32[3] call(x, y), to_apply=outer\n"
            "  ROOT f = s32[3] fusion(c), kind=kLoop, calls=fused\n}\n")
    got = evaluate(parse(text), np.array([1, 2, 3], np.int32), np.array([10, -20, 0], np.int32))
    assert got.tolist() == [121, 324, 9]


# ---- map -------------------------------------------------------------------------------------

MAP = """HloModule m
f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  two = f32[] constant(2)
  m = f32[] multiply(a, two)
  ROOT s = f32[] subtract(m, b)
}
g {
  a = f32[] parameter(0)
  r = f32[1] reshape(a)
  n = f32[1] negate(r)
  ROOT s = f32[] reshape(n)
}
k {
  a = f32[] parameter(0)
  ROOT c = f32[] constant(5)
}
ENTRY e {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  u = f32[2,3] map(x, y), dimensions={0,1}, to_apply=f
  v = f32[2,3] map(x), dimensions={0,1}, to_apply=g
  w = f32[2,3] map(x), dimensions={0,1}, to_apply=k
  ROOT r = (f32[2,3], f32[2,3], f32[2,3]) tuple(u, v, w)
}
"""


def test_map_whole_array_and_per_element():
    m = parse(MAP)
    assert control.is_elementwise_computation(m.computation("f"))
    assert not control.is_elementwise_computation(m.computation("g"))  # the reshapes
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.full((2, 3), 0.5, np.float32)
    u, v, w = check(MAP, x, y)
    np.testing.assert_array_equal(u, 2 * x - y)
    np.testing.assert_array_equal(v, -x)
    np.testing.assert_array_equal(w, np.full((2, 3), 5, np.float32))


# ---- sort ------------------------------------------------------------------------------------

# JAX's float comparator: NaN -> canonical NaN, -0.0 -> 0.0, then TOTALORDER less-than.
JAX_LT = """cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  PARAMS
  qnan = f32[] constant(nan)
  zero = f32[] constant(0)
  an = pred[] compare(a, a), direction=NE
  az = pred[] compare(a, zero), direction=EQ
  a1 = f32[] select(az, zero, a)
  a2 = f32[] select(an, qnan, a1)
  bn = pred[] compare(b, b), direction=NE
  bz = pred[] compare(b, zero), direction=EQ
  b1 = f32[] select(bz, zero, b)
  b2 = f32[] select(bn, qnan, b1)
  ROOT lt = pred[] compare(a2, b2), direction=LT, type=TOTALORDER
}
"""


def sort_module(comparator: str, shapes: list[str], dim: int, stable: bool = True) -> str:
    params = "".join(f"  p{i} = {s} parameter({i})\n" for i, s in enumerate(shapes))
    out = shapes[0] if len(shapes) == 1 else "(" + ", ".join(shapes) + ")"
    ops = ", ".join(f"p{i}" for i in range(len(shapes)))
    return (f"HloModule m\n{comparator}ENTRY e {{\n{params}"
            f"  ROOT s = {out} sort({ops}), dimensions={{{dim}}}, is_stable={str(stable).lower()},"
            f" to_apply=cmp\n}}\n")


SPECIAL = np.array([3, np.nan, -0.0, 0.0, -np.inf, 1, -np.nan, np.inf, 3, -2, 0.0, -0.0],
                   np.float32)


@pytest.mark.parametrize("dim", [0, 1])
def test_sort_jax_float_comparator_with_index_operand(dim):
    rng = np.random.default_rng(0)
    x = rng.choice(SPECIAL, size=(12, 12)).astype(np.float32)
    idx = np.broadcast_to(np.arange(12, dtype=np.int32).reshape((-1, 1) if dim == 0 else (1, -1)),
                          (12, 12)).copy()
    comparator = JAX_LT.replace("PARAMS", "c = s32[] parameter(2)\n  d = s32[] parameter(3)")
    text = sort_module(comparator, ["f32[12,12]", "s32[12,12]"], dim)
    values, order = check(text, x, idx)
    # After canonicalization NaN sorts last and -0.0 ties with 0.0; ties keep their order.
    keys = np.where(np.isnan(x), np.float32(np.nan), np.where(x == 0, np.float32(0), x))
    np.testing.assert_array_equal(order, np.argsort(keys, axis=dim, kind="stable"))


def _descending_by_second_then_first(n_extra: int = 0) -> str:
    extra = "".join(f"  e{i} = f32[] parameter({4 + i})\n" for i in range(n_extra))
    return ("cmp {\n  a0 = s32[] parameter(0)\n  b0 = s32[] parameter(1)\n"
            "  a1 = f32[] parameter(2)\n  b1 = f32[] parameter(3)\n" + extra +
            "  gt = pred[] compare(a1, b1), direction=GT\n"
            "  eq = pred[] compare(a1, b1), direction=EQ\n"
            "  lt0 = pred[] compare(a0, b0), direction=LT\n"
            "  tie = pred[] and(eq, lt0)\n  ROOT r = pred[] or(gt, tie)\n}\n")


@pytest.mark.parametrize("n", [2, 7, 64, 1000])
def test_sort_by_operand_one_descending_then_operand_zero(n):
    """An unusual comparator (lexicographic, second operand first): the general path."""
    rng = np.random.default_rng(n)
    a = rng.integers(-5, 5, size=(3, n)).astype(np.int32)
    b = rng.integers(0, 4, size=(3, n)).astype(np.float32)
    text = sort_module(_descending_by_second_then_first(), ["s32[3,N]".replace("N", str(n)),
                                                            f"f32[3,{n}]"], 1)
    sa, sb = check(text, a, b)
    order = np.lexsort((a, -b), axis=1)
    np.testing.assert_array_equal(sa, np.take_along_axis(a, order, 1))
    np.testing.assert_array_equal(sb, np.take_along_axis(b, order, 1))


@pytest.mark.parametrize("comparator,key", [
    ("  ROOT r = pred[] compare(a, b), direction=LT\n", lambda x: x),
    ("  ROOT r = pred[] compare(a, b), direction=GT\n", lambda x: -x.astype(np.int64)),
    ("  ROOT r = pred[] compare(b, a), direction=LT\n", lambda x: -x.astype(np.int64)),
    ("  ROOT r = pred[] compare(b, a), direction=GT\n", lambda x: x),
    ("  ROOT r = pred[] compare(a, b), direction=LT, type=SIGNED\n", lambda x: x),
])
@pytest.mark.parametrize("force_general", [False, True])
def test_sort_simple_comparators_fast_and_general_paths(comparator, key, force_general,
                                                        monkeypatch):
    if force_general:
        monkeypatch.setattr(control, "_argsort_fast", lambda comp, rows: None)
    rng = np.random.default_rng(5)
    x = rng.integers(-128, 128, size=(4, 300)).astype(np.int8)
    y = np.broadcast_to(np.arange(300, dtype=np.int32), (4, 300)).copy()
    cmp = ("cmp {\n  a = s8[] parameter(0)\n  b = s8[] parameter(1)\n"
           "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n" + comparator + "}\n")
    text = sort_module(cmp, ["s8[4,300]", "s32[4,300]"], 1)
    sx, sy = check(text, x, y)
    np.testing.assert_array_equal(sy, np.argsort(key(x), axis=1, kind="stable"))


@pytest.mark.parametrize("force_general", [False, True])
def test_sort_float_totalorder_and_unstable(force_general, monkeypatch):
    if force_general:
        monkeypatch.setattr(control, "_argsort_fast", lambda comp, rows: None)
    x = np.array([3, -np.nan, 1, -0.0, np.inf, 0.0, -np.inf, np.nan, -5], np.float32)
    cmp = ("cmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
           "  ROOT r = pred[] compare(a, b), direction=GT, type=TOTALORDER\n}\n")
    (got,) = check(sort_module(cmp, ["f32[9]"], 0, stable=False), x)  # keys are distinct
    assert np.isnan(got[0]) and not np.signbit(got[0]) and np.isnan(got[-1]) and np.signbit(got[-1])
    assert got[1:-1].tolist() == [np.inf, 3, 1, 0, 0, -5, -np.inf]
    assert not np.signbit(got[4]) and np.signbit(got[5])


@pytest.mark.parametrize("shape", ["f32[0]", "f32[1]", "f32[0,5]", "f32[3,1]", "f32[]"])
def test_sort_degenerate_shapes(shape):
    dims = [int(d) for d in shape[4:-1].split(",") if d]
    if not dims:
        text = sort_module(JAX_LT.replace("PARAMS", ""), [shape], 0)
        with pytest.raises(EvaluationError, match="dimensions"):
            evaluate(parse(text), np.float32(1))
        return
    x = np.arange(int(np.prod(dims)), dtype=np.float32)[::-1].reshape(dims).copy()
    (got,) = check(sort_module(JAX_LT.replace("PARAMS", ""), [shape], len(dims) - 1), x)
    assert got.shape == tuple(dims)


# ---- topk and custom-call --------------------------------------------------------------------

@pytest.mark.parametrize("largest", ["true", "false"])
@pytest.mark.parametrize("dt,k", [("f32", 5), ("s32", 3), ("f32", 0), ("bf16", 8)])
def test_topk(dt, k, largest):
    rng = np.random.default_rng(7)
    if dt == "s32":
        x = rng.integers(-3, 3, size=(3, 8)).astype(np.int32)
    else:
        x = rng.choice(SPECIAL, size=(3, 8)).astype(primitive_type(dt).np_dtype)
    text = (f"HloModule m\nENTRY e {{\n  x = {dt}[3,8] parameter(0)\n"
            f"  ROOT t = ({dt}[3,{k}], s32[3,{k}]) topk(x), k={k}, largest={largest}\n}}\n")
    values, indices = check(text, x)
    np.testing.assert_array_equal(np.take_along_axis(x, indices, 1).view(np.uint8),
                                  values.view(np.uint8))


def test_custom_call_is_an_evaluation_error_naming_the_target():
    text = ('HloModule m\nENTRY e {\n  x = f32[4,4] parameter(0)\n'
            '  ROOT c = f32[4,4] custom-call(x), custom_call_target="my_solver"\n}\n')
    with pytest.raises(EvaluationError, match=r"line 4:\d+: unsupported custom-call target "
                                              r"'my_solver'.*custom-call\(%x\)"):
        evaluate(parse(text), np.eye(4, dtype=np.float32))
