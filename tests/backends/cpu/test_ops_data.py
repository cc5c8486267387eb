"""cpu backend vs the interpreter, data movement and indexing: broadcast, reshape,
transpose, slice, concatenate, pad, reverse, iota, copy, bitcast, constant, tuple,
get-tuple-element, opt-barrier, after-all, dynamic-slice, dynamic-update-slice, gather.

Results must match bit for bit, NaN payloads included (nothing here computes). Every op
runs on every element type (`test_data_ops_every_type`, one module per type); the
variants that exercise layouts, zero-size dimensions, strides and out-of-range starts run
in float32 and in the types whose storage is unusual (pred: i8 in memory, i1 in registers;
bf16: i16 bits; f16).
"""

from __future__ import annotations


import numpy as np
import pytest


import xlapy_tests_cpu_optable as O


class Case:
    """A module under construction with its arguments (ModuleText plus the arrays)."""

    def __init__(self, name: str, t: str, seed: int):
        self.m = O.ModuleText(name=name)
        self.t = t
        self.args = []
        self.rng = np.random.default_rng(seed)

    def param(self, dims, layout=None, t=None, value=None):
        t = t or self.t
        if value is None:
            value = O.values(t, dims, self.rng, offset=len(self.args) * 3)
        self.args.append(np.asarray(value, O.DTYPE[t]))
        return self.m.param(O.ShapeCase("", tuple(dims), layout).text(t))

    def op(self, dims, expr, label, layout=None, t=None):
        shape = O.ShapeCase("", tuple(dims), layout).text(t or self.t)
        return self.m.op(shape, expr, f"{label} -> {shape}")

    def run(self, cpu_check):
        got, want = cpu_check.run(self.m.text(), *self.args)
        O.compare_outputs(got, want, self.m.labels, O.BITS)


def _basic_ops(c: Case):
    """Every data op once, on small shapes of the case's type."""
    t = c.t
    x = c.param((3, 5))
    c.op((4, 3, 5), f"broadcast({x}), dimensions={{1,2}}", "broadcast")
    s = c.param(())
    c.op((2, 3), f"broadcast({s}), dimensions={{}}", "broadcast scalar")
    c.op((5, 3), f"reshape({x})", "reshape")
    c.op((5, 3), f"transpose({x}), dimensions={{1,0}}", "transpose")
    c.op((2, 2), f"slice({x}), slice={{[0:3:2], [1:5:3]}}", "slice strided")
    c.op((3, 5), f"reverse({x}), dimensions={{0,1}}", "reverse")
    c.op((3, 5), f"copy({x})", "copy to another layout", layout=(0, 1))
    y, z = c.param((2, 5)), c.param((1, 5))
    c.op((6, 5), f"concatenate({x}, {y}, {z}), dimensions={{0}}", "concatenate")
    c.op((4, 9), f"pad({x}, {s}), padding=1_0_0x-1_1_1", "pad")
    if t != "pred":
        c.op((4, 5), "iota(), iota_dimension=1", "iota")
    c.op((2, 2), f"dynamic-slice({x}, {c.param((), t='s32', value=2)}, "
                 f"{c.param((), t='s32', value=-4)}), dynamic_slice_sizes={{2,2}}",
         "dynamic-slice")
    c.op((3, 5), f"dynamic-update-slice({x}, {c.param((2, 2))}, {c.param((), t='u8', value=9)}, "
                 f"{c.param((), t='u8', value=1)})", "dynamic-update-slice")
    idx = c.param((4,), t="s32", value=np.array([2, 0, 7, -1]))
    c.op((4, 5), f"gather({x}, {idx}), offset_dims={{1}}, collapsed_slice_dims={{0}}, "
                 f"start_index_map={{0}}, index_vector_dim=1, slice_sizes={{1,5}}", "gather")
    # a fusion of several of them (the cpu pipeline fuses these into one kernel)
    r = c.m.op(O.ShapeCase("", (5, 3)).text(t), f"transpose({x}), dimensions={{1,0}}")
    rr = c.m.op(O.ShapeCase("", (5, 3)).text(t), f"reverse({r}), dimensions={{0}}")
    c.op((4, 3), f"slice({rr}), slice={{[1:5], [0:3]}}", "fused transpose/reverse/slice")


def _constants(c: Case):
    t = c.t
    vals = O.specials(t)
    vals = vals[[0, 1, 14, 16, 17, 5]] if t in O.FLOATS else np.resize(vals, 6)  # NaN, -0, inf
    v = c.m.op(f"{t}[]", f"constant({O.literal(vals[-1])})")
    c.m.output(v, f"{t}[]", f"constant scalar {t}")
    lit = "{{" + ", ".join(O.literal(a) for a in vals[:3]) + "}, {" + \
        ", ".join(O.literal(a) for a in vals[3:6]) + "}}"
    for layout in (None, (0, 1)):
        shape = O.ShapeCase("", (2, 3), layout).text(t)
        k = c.m.op(shape, f"constant({lit})")
        c.m.output(k, shape, f"constant {shape}")
        # a constant used inside a kernel (read through the elemental emitter)
        c.op((3, 2), f"transpose({k}), dimensions={{1,0}}", f"transpose(constant {shape})")


@pytest.mark.parametrize("t", O.TYPES)
def test_data_ops_every_type(cpu_check, t):
    c = Case(f"data_{t}", t, O.TYPES.index(t))
    _basic_ops(c)
    _constants(c)
    c.run(cpu_check)


# ---- layouts, zero-size dimensions, strides (f32 and the unusual storage types) ---------------

@pytest.mark.parametrize("t", ["f32", "pred", "bf16"])
def test_data_ops_layouts_and_edges(cpu_check, t):
    c = Case(f"data_edges_{t}", t, 40 + O.TYPES.index(t))
    a = c.param((3, 17), (0, 1))                       # column-major operand
    b3 = c.param((2, 3, 5), (1, 2, 0))
    e = c.param((0, 5))
    v = c.param((37,))
    # copy between layouts, both directions and 3-D
    c.op((3, 17), f"copy({a})", "copy {0,1} -> {1,0}")
    c.op((2, 3, 5), f"copy({b3})", "copy {1,2,0} -> {0,2,1}", layout=(0, 2, 1))
    c.op((0, 5), f"copy({e})", "copy zero-size", layout=(0, 1))
    # broadcast into a non-default layout, of a zero-size operand, of a 1-D into dim 0
    c.op((37, 4), f"broadcast({v}), dimensions={{0}}", "broadcast dim 0", layout=(0, 1))
    c.op((2, 0, 5), f"broadcast({e}), dimensions={{1,2}}", "broadcast zero-size")
    # reshape across layouts and with zero-size
    c.op((17, 3), f"reshape({a})", "reshape {0,1} operand")
    c.op((6, 5), f"reshape({b3})", "reshape 3-D {1,2,0}", layout=(0, 1))
    c.op((5, 0), f"reshape({e})", "reshape zero-size")
    c.op((30,), f"reshape({b3})", "reshape to 1-D")
    # transpose of non-default layouts; a transpose that is a physical no-op
    c.op((17, 3), f"transpose({a}), dimensions={{1,0}}", "transpose {0,1}")
    c.op((5, 2, 3), f"transpose({b3}), dimensions={{2,0,1}}", "transpose 3-D",
         layout=(2, 0, 1))
    c.op((17, 3), f"transpose({a}), dimensions={{1,0}}", "transpose to {0,1}", layout=(0, 1))
    # slices: strides that do not divide, a zero-size result, a slice of a layout
    c.op((9,), f"slice({v}), slice={{[3:37:4]}}", "slice stride 4")
    c.op((0,), f"slice({v}), slice={{[5:5]}}", "slice empty")
    c.op((2, 5), f"slice({a}), slice={{[1:3], [2:17:3]}}", "slice of {0,1}")
    c.op((1, 2, 2), f"slice({b3}), slice={{[1:2], [0:3:2], [1:5:3]}}", "slice 3-D")
    # concatenate: 3 operands along a non-minor dim, with a zero-size operand, 1-D
    p1, p2 = c.param((2, 1, 5), (1, 2, 0)), c.param((2, 4, 5))
    c.op((2, 8, 5), f"concatenate({b3}, {p1}, {p2}), dimensions={{1}}",
         "concatenate 3 operands dim 1")
    z = c.param((2, 0, 5))
    c.op((2, 4, 5), f"concatenate({z}, {p1}, {b3}, {z}), dimensions={{1}}",
         "concatenate with zero-size operands", layout=(0, 1, 2))
    c.op((74,), f"concatenate({v}, {v}), dimensions={{0}}", "concatenate 1-D twice")
    # pad: negative low/high, interior, on a layout; pad of zero-size; pad to empty
    s = c.param(())
    c.op((5, 44), f"pad({a}, {s}), padding=2_0_0x-3_-2_2", "pad negative + interior")
    c.op((3, 26), f"pad({e}, {s}), padding=1_2_0x2_3_4", "pad zero-size operand")
    c.op((73,), f"pad({v}, {s}), padding=-1_1_1", "pad interior 1-D")
    c.op((2, 3, 0), f"pad({b3}, {s}), padding=0_0_0x0_0_0x-3_-2_0", "pad to empty")
    c.op((1, 3, 11), f"pad({b3}, {s}), padding=-1_0_0x0_0_0x-1_-1_2", "pad 3-D",
         layout=(1, 2, 0))
    # reverse several dims, of a layout
    c.op((2, 3, 5), f"reverse({b3}), dimensions={{0,2}}", "reverse dims 0,2")
    c.op((3, 17), f"reverse({a}), dimensions={{1}}", "reverse {0,1}", layout=(0, 1))
    if t == "pred":  # iota is not defined for pred
        c.run(cpu_check)
        return
    # iota on each dimension, with layouts and zero-size
    c.op((3, 4, 5), "iota(), iota_dimension=0", "iota dim 0", layout=(0, 1, 2))
    c.op((3, 4, 5), "iota(), iota_dimension=2", "iota dim 2")
    c.op((0, 4), "iota(), iota_dimension=1", "iota zero-size")
    c.op((37,), "iota(), iota_dimension=0", "iota 1-D")
    c.run(cpu_check)


def test_iota_every_type_and_length(cpu_check):
    """iota wraps (s8 past 127, u8 past 255) and rounds (f16/bf16 past 2^11/2^8) as the
    interpreter does."""
    c = Case("iota", "f32", 3)
    for t in O.TYPES[1:]:  # not pred
        c.op((300,), "iota(), iota_dimension=0", f"iota {t}", t=t)
        c.op((2, 70), "iota(), iota_dimension=1", f"iota 2-D {t}", t=t, layout=(0, 1))
    c.run(cpu_check)


def test_bitcast_with_layouts(cpu_check):
    """bitcast reinterprets the physical order: results as outputs (aliases) and feeding a
    kernel (the elemental bitcast)."""
    c = Case("bitcast", "f32", 5)
    a = c.param((3, 17), (0, 1))
    b3 = c.param((2, 3, 5), (1, 2, 0))
    d = c.param((4, 6))
    one = c.m.op("f32[]", "constant(1)")
    for src, dims, layout in ((a, (17, 3), None), (a, (51,), None), (b3, (2, 15), None),
                              (b3, (10, 3), None), (d, (6, 4), (0, 1)), (d, (2, 2, 6), None)):
        shape = O.ShapeCase("", dims, layout).text("f32")
        bc = c.m.op(shape, f"bitcast({src})")
        c.m.output(bc, shape, f"bitcast {src} -> {shape}")
        ones = c.m.op(shape, f"broadcast({one}), dimensions={{}}")
        c.op(dims, f"add({bc}, {ones})", f"add(bitcast {src}, 1)", layout=layout)
    c.run(cpu_check)


def test_tuples_opt_barrier_after_all(cpu_check):
    """Nested tuple parameters and results, get-tuple-element chains, opt-barrier of a
    tuple holding a token from after-all."""
    rng = np.random.default_rng(9)
    x = O.values("f32", (3,), rng)
    n = np.array(-7, np.int32)
    p = np.array([True, False])
    bf = O.values("bf16", (2, 2), rng)
    text = """HloModule tuples

ENTRY main {
  t = ((f32[3], s32[]), pred[2], bf16[2,2]{0,1}) parameter(0)
  inner = (f32[3], s32[]) get-tuple-element(t), index=0
  x = f32[3] get-tuple-element(inner), index=0
  n = s32[] get-tuple-element(inner), index=1
  p = pred[2] get-tuple-element(t), index=1
  bf = bf16[2,2]{0,1} get-tuple-element(t), index=2
  tok = token[] after-all()
  tok2 = token[] after-all(tok, tok)
  state = (f32[3], s32[], token[]) tuple(x, n, tok2)
  barrier = (f32[3], s32[], token[]) opt-barrier(state)
  bx = f32[3] get-tuple-element(barrier), index=0
  bn = s32[] get-tuple-element(barrier), index=1
  neg = s32[] negate(bn)
  pair = (s32[], f32[3]) tuple(neg, bx)
  left = (pred[2], (s32[], f32[3])) tuple(p, pair)
  nested = ((pred[2], (s32[], f32[3])), bf16[2,2]{0,1}) tuple(left, bf)
  ROOT out = (((pred[2], (s32[], f32[3])), bf16[2,2]{0,1}), f32[3], (f32[3], s32[]))
      tuple(nested, x, inner)
}
"""
    arg = ((x, n), p, bf)
    got, want = cpu_check.run(text, arg)
    assert len(got) == len(want) == 7
    O.compare_outputs(got, want, [f"leaf {k}" for k in range(7)], O.BITS)


# ---- dynamic-slice / dynamic-update-slice / gather: index types and clamping ------------------

_INDEX_VALUES = {  # start values per index type: in range, negative, past the end, extremes
    "s8": (1, -1, 100, -128), "s16": (0, -300, 4, 32767), "s32": (3, -2147483648, 7, 2),
    "s64": (-1, 2, -9223372036854775808, 9223372036854775807),
    "u8": (255, 1, 0, 200), "u16": (2, 65535, 3, 0), "u32": (4294967295, 0, 1, 2147483648),
    "u64": (1, 18446744073709551615, 9223372036854775808, 3),
}


@pytest.mark.parametrize("t", ["f32", "pred", "bf16", "s64"])
def test_dynamic_slice_update_and_gather(cpu_check, t):
    c = Case(f"indexing_{t}", t, 70 + O.TYPES.index(t))
    a = c.param((5, 7))
    lay = c.param((5, 7), (0, 1))
    upd = c.param((2, 3))
    upd_lay = c.param((2, 3), (0, 1))
    for k, (it, vals) in enumerate(_INDEX_VALUES.items()):
        starts = [c.param((), t=it, value=v) for v in vals]
        i, j = starts[0], starts[1]
        src = a if k % 2 == 0 else lay
        c.op((2, 3), f"dynamic-slice({src}, {i}, {j}), dynamic_slice_sizes={{2,3}}",
             f"dynamic-slice starts {it}{vals[:2]}", layout=(0, 1) if k % 3 == 0 else None)
        c.op((5, 7), f"dynamic-update-slice({src}, {upd if k % 2 else upd_lay}, {starts[2]}, "
                     f"{starts[3]})", f"dynamic-update-slice starts {it}{vals[2:]}")
    # full-size slice (every start clamps to 0) and a zero-size update (operand unchanged)
    s0 = c.param((), t="s32", value=3)
    c.op((5, 7), f"dynamic-slice({a}, {s0}, {s0}), dynamic_slice_sizes={{5,7}}",
         "dynamic-slice full size")
    zu = c.param((0, 3))
    c.op((5, 7), f"dynamic-update-slice({a}, {zu}, {s0}, {s0})", "dynamic-update-slice empty")
    # 1-D, odd size
    v = c.param((37,))
    c.op((10,), f"dynamic-slice({v}, {c.param((), t='s32', value=30)}), "
                f"dynamic_slice_sizes={{10}}", "dynamic-slice 1-D clamped")
    # gathers
    idx = c.param((6,), t="s32", value=np.array([0, 4, -1, 5, 2, 2147483647]))
    c.op((6, 7), f"gather({a}, {idx}), offset_dims={{1}}, collapsed_slice_dims={{0}}, "
                 "start_index_map={0}, index_vector_dim=1, slice_sizes={1,7}", "gather take rows")
    c.op((5, 6), f"gather({lay}, {idx}), offset_dims={{0}}, collapsed_slice_dims={{1}}, "
                 "start_index_map={1}, index_vector_dim=1, slice_sizes={5,1}",
         "gather take columns of {0,1}", layout=(0, 1))
    along = c.param((5, 3, 1), t="u8", value=np.array([0, 6, 255, 3, 2, 9, 1, 1, 1, 4, 5, 6, 7,
                                                       0, 2]).reshape(5, 3, 1))
    c.op((5, 3), f"gather({a}, {along}), offset_dims={{}}, collapsed_slice_dims={{1}}, "
                 "start_index_map={1}, operand_batching_dims={0}, "
                 "start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1}",
         "gather take_along_axis")
    starts = c.param((5, 1), t="s64", value=np.array([[0], [7], [-3], [2], [4]]))
    c.op((5, 4), f"gather({a}, {starts}), offset_dims={{1}}, collapsed_slice_dims={{}}, "
                 "start_index_map={1}, operand_batching_dims={0}, "
                 "start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,4}",
         "gather batched dynamic-slice")
    pts = c.param((4, 2), t="u32", value=np.array([[0, 0], [4, 6], [1, 4294967295], [9, 2]]))
    c.op((4, 2, 3), f"gather({a}, {pts}), offset_dims={{1,2}}, collapsed_slice_dims={{}}, "
                    "start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3}",
         "gather 2-D windows")
    c.op((4, 2, 3), f"gather({a}, {pts}), offset_dims={{2}}, collapsed_slice_dims={{0}}, "
                    "start_index_map={0}, index_vector_dim=2, slice_sizes={1,3}",
         "gather implicit index vector")
    e = c.param((0,), t="s32", value=np.zeros(0))
    c.op((0, 7), f"gather({a}, {e}), offset_dims={{1}}, collapsed_slice_dims={{0}}, "
                 "start_index_map={0}, index_vector_dim=1, slice_sizes={1,7}",
         "gather no indices")
    c.run(cpu_check)


_CHAINS = """HloModule data_chains

ENTRY main {
  x = f32[4,6] parameter(0)
  y = bf16[4,3]{0,1} parameter(1)
  k = s32[] parameter(2)
  ix = s32[5] parameter(3)
  nx = f32[4,6] negate(x)
  yc = f32[4,3] convert(y)
  two = f32[] constant(2)
  tb = f32[4,2] broadcast(two), dimensions={}
  cat = f32[4,11] concatenate(nx, yc, tb), dimensions={1}
  z = f32[] constant(-0)
  pd = f32[6,22]{0,1} pad(cat, z), padding=1_1_0x-1_2_1
  rv = f32[6,22] reverse(pd), dimensions={0,1}
  sl = f32[3,7] slice(rv), slice={[0:6:2], [1:22:3]}
  one = s32[] constant(1)
  k1 = s32[] add(k, one)
  sq = f32[4,6] multiply(x, x)
  ds = f32[2,3] dynamic-slice(sq, k1, k), dynamic_slice_sizes={2,3}
  up = f32[2,3] abs(ds)
  dus = f32[4,6]{0,1} dynamic-update-slice(nx, up, k, k1)
  ixm = s32[5] multiply(ix, ix)
  g = f32[5,6] gather(sq, ixm), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,6}
  tr = f32[6,5] transpose(g), dimensions={1,0}
  rs = f32[30] reshape(tr)
  bc = f32[2,30] broadcast(rs), dimensions={1}
  ROOT out = (f32[3,7], f32[4,6]{0,1}, f32[2,30]) tuple(sl, dus, bc)
}
"""  # noqa: E501 (HLO text: one instruction a line)


@pytest.mark.parametrize("k", [0, 2, -5, 100])
def test_fused_data_chains(cpu_check, k):
    """Data movement of computed values (what fusion feeds the elemental rules): concatenate,
    pad, reverse, slice, dynamic-slice/-update-slice with computed starts, gather with
    computed indices, transpose, reshape, broadcast."""
    rng = np.random.default_rng(23)
    x = O.values("f32", (4, 6), rng)
    y = O.values("bf16", (4, 3), rng, 5)
    ix = np.array([0, 1, -1, 2, 3], np.int32)
    got, want = cpu_check.run(_CHAINS, x, y, np.array(k, np.int32), ix)
    O.compare_outputs(got, want, ["pad/reverse/slice", "dynamic-update-slice", "gather"],
                      O.EXACT)
