"""The builder: modules built from Python print, parse back, verify, and (where JAX is
installed) are accepted and computed correctly by XLA itself; invalid programs fail at the
offending call with a ShapeError."""

from __future__ import annotations

import re

import numpy as np
import pytest

from xlapy.errors import ShapeError, XlapyError
from xlapy.hlo import F32, OPCODES, PRED, S32, U8, Shape, parse
from xlapy.hlo.builder import Builder
from xlapy.hlo.ir import module_diff
from xlapy.hlo.verifier import verify


def arr(t, *dims):
    return Shape.array(t, dims)


def roundtrip(module):
    """Print, parse back, compare and verify; returns the text."""
    text = module.to_string()
    again = parse(text)
    assert module_diff(module, again) is None, module_diff(module, again)
    verify(again)
    return text


def run_with_xla(text: str, *args):
    """Compile `text` with XLA:CPU (through jaxlib's HLO parser) and run it."""
    pytest.importorskip("jax")
    import jax
    import jax.extend.backend
    import jaxlib._hlo as hlo
    from jax._src.lib import xla_client as xc
    comp = hlo.XlaComputation(hlo.hlo_module_from_text(text).as_serialized_hlo_module_proto())
    mlir = xc._xla.mlir.xla_computation_to_mlir_module(comp)
    backend = jax.extend.backend.get_backend("cpu")
    devices = xc._xla.DeviceList(tuple(backend.local_devices()[:1]))
    exe = backend.compile_and_load(str(mlir), devices, xc.CompileOptions())
    bufs = [jax.device_put(np.asarray(a), devices[0]) for a in args]
    out = exe.execute_sharded(bufs).disassemble_into_single_device_arrays()
    return [np.asarray(o[0]) for o in out]


_ALIASES = {"and": "and_", "or": "or_", "not": "not_", "while": "while_loop",
            "opt-barrier": "optimization_barrier"}


def test_every_opcode_can_be_built():
    """A method named for the opcode, or Builder.op for one whose shape is not declared."""
    missing = [op for op in OPCODES
               if not callable(getattr(Builder, _ALIASES.get(op, op.replace("-", "_")), None))
               and OPCODES[op].declared_shape]
    assert not missing, f"Builder lacks methods for {missing}"


def test_op_builds_an_opcode_from_its_operands_and_attributes():
    b = Builder("f")
    x = b.parameter(arr(F32, 2, 3, 3), "x")
    c = b.op("cholesky", x, lower=True)
    assert c.opcode == "cholesky" and c.shape == arr(F32, 2, 3, 3) and c.attrs == {"lower": True}
    assert b.op("add", x, x).shape == arr(F32, 2, 3, 3)
    with pytest.raises(XlapyError, match="unknown opcode 'frobnicate'"):
        b.op("frobnicate", x)
    with pytest.raises(XlapyError, match="must be declared; use Builder.reshape"):
        b.op("reshape", x)
    with pytest.raises(ShapeError, match="cholesky"):
        b.op("cholesky", b.parameter(arr(F32, 2, 3), "y"), lower=True)


def softmax_module():
    b = Builder("softmax")
    x = b.parameter(arr(F32, 4, 3), "x")
    with b.metadata(op_name="jit(softmax)/reduce_max"):
        m = b.reduce(x, b.constant(np.float32(-np.inf)), b.scalar_computation("maximum", F32), [1])
    e = b.exponential(b.subtract(x, b.broadcast(m, (4, 3), [0])))
    s = b.reduce(e, b.constant(0.0), b.scalar_computation("add", F32), [1])
    return b.build_module(b.divide(e, b.broadcast(s, (4, 3), [0])))


def test_softmax():
    module = softmax_module()
    text = roundtrip(module)
    assert [c.name for c in module.computations] == ["maximum_f32", "add_f32", "softmax"]
    assert module.entry is module.computations[-1]
    assert module.entry.root.shape == arr(F32, 4, 3)
    assert 'reduce(%x, %constant.1), dimensions={1}, to_apply=%maximum_f32, ' \
           'metadata={op_name="jit(softmax)/reduce_max"}' in text
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    (got,) = run_with_xla(text, x)
    want = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(got, want / want.sum(1, keepdims=True), rtol=1e-6)


def test_argmax_variadic_reduce():
    b = Builder("argmax")
    x = b.parameter(arr(F32, 5, 6), "x")
    r = b.subcomputation("argmax_reducer")
    v, i, w, j = (r.parameter(arr(t)) for t in (F32, S32, F32, S32))
    take_v = r.or_(r.compare(v, w, "GT"), r.and_(r.compare(v, w, "EQ"), r.compare(i, j, "LT")))
    reducer = r.build(r.tuple([r.select(take_v, v, w), r.select(take_v, i, j)]))
    out = b.reduce([x, b.iota(S32, (5, 6), 0)],
                   [b.constant(np.float32(-np.inf)), b.constant(0)], reducer, [0])
    assert out.shape == Shape.tuple([arr(F32, 6), arr(S32, 6)])
    module = b.build_module(b.get_tuple_element(out, 1))
    text = roundtrip(module)
    x_val = np.random.default_rng(1).standard_normal((5, 6)).astype(np.float32)
    (got,) = run_with_xla(text, x_val)
    np.testing.assert_array_equal(got, x_val.argmax(0))


def test_while_loop_sums():
    b = Builder("loop")
    x = b.parameter(arr(F32, 3), "x")
    state = Shape.tuple([arr(S32), arr(F32, 3)])
    c = b.subcomputation("cond")
    p = c.parameter(state, "state")
    cond = c.build(c.compare(c.get_tuple_element(p, 0), c.constant(4), "LT"))
    body = b.subcomputation("body")
    p = body.parameter(state, "state")
    i, acc = body.get_tuple_element(p, 0), body.get_tuple_element(p, 1)
    inc = body.add(acc, body.broadcast(body.convert(i, F32), (3,)))
    body_comp = body.build(body.tuple([body.add(i, body.constant(1)), inc]))
    loop = b.while_loop(cond, body_comp, b.tuple([b.constant(0), x]))
    module = b.build_module(b.get_tuple_element(loop, 1))
    assert [c.name for c in module.computations] == ["cond", "body", "loop"]
    text = roundtrip(module)
    (got,) = run_with_xla(text, np.array([1, 2, 3], np.float32))
    np.testing.assert_array_equal(got, np.array([7, 8, 9], np.float32))


def test_conditionals():
    b = Builder("cond")
    flag, k, x = (b.parameter(arr(PRED), "flag"), b.parameter(arr(S32), "k"),
                  b.parameter(arr(F32, 2), "x"))
    branches = []
    for name, op in (("neg", "negate"), ("exp", "exponential"), ("floor", "floor")):
        sb = b.subcomputation(name)
        branches.append(sb.build(getattr(sb, op)(sb.parameter(arr(F32, 2)))))
    by_pred = b.conditional(flag, branches[:2], [x, x])
    by_index = b.conditional(k, branches, [x, x, x])
    assert "true_computation" in by_pred.attrs and "branch_computations" in by_index.attrs
    module = b.build_module(b.tuple([by_pred, by_index]))
    text = roundtrip(module)
    xv = np.array([0.5, -1.5], np.float32)
    got = run_with_xla(text, np.bool_(False), np.int32(2), xv)
    np.testing.assert_allclose(got[0], np.exp(xv), rtol=1e-6)
    np.testing.assert_array_equal(got[1], np.floor(xv))


def test_kitchen_sink_matches_numpy_under_xla():
    rng = np.random.default_rng(2)
    b = Builder("sink")
    a = b.parameter(arr(F32, 4, 6), "a")
    w = b.parameter(arr(F32, 6, 5), "w")
    idx = b.parameter(arr(S32, 3, 1), "idx")
    add = b.scalar_computation("add", F32)
    outs = [
        b.dot_general(a, w, ((1,), (0,))),
        b.transpose(b.slice(a, [1, 0], [4, 6], [2, 3]), [1, 0]),
        b.pad(a, b.constant(np.float32(9)), [(1, 0, 1), (-1, 2)]),
        b.concatenate([a, b.reverse(a, [1])], 0),
        b.reduce_window(a, b.constant(np.float32(0)), add, (2, 3), (2, 3)),
        b.gather(a, idx, offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,),
                 index_vector_dim=1, slice_sizes=(1, 6)),
        b.scatter(a, idx, b.broadcast(b.constant(np.float32(1)), (3, 6)), add,
                  update_window_dims=(1,), inserted_window_dims=(0,),
                  scatter_dims_to_operand_dims=(0,), index_vector_dim=1),
        b.dynamic_slice(a, [b.constant(1), b.constant(2)], (2, 2)),
        b.bitcast_convert(a, U8),
        b.sort(a, _lt(b), 1),
        b.clamp(b.constant(np.float32(-0.5)), a, b.constant(np.float32(0.5))),
    ]
    module = b.build_module(b.tuple(outs))
    text = roundtrip(module)
    av = rng.standard_normal((4, 6)).astype(np.float32)
    wv = rng.standard_normal((6, 5)).astype(np.float32)
    iv = np.array([[3], [0], [3]], np.int32)
    got = run_with_xla(text, av, wv, iv)
    padded = np.full((8, 7), 9, np.float32)
    padded[1::2, :] = np.concatenate([av[:, 1:], np.full((4, 2), 9, np.float32)], 1)
    scattered = av.copy()
    np.add.at(scattered, iv[:, 0], 1)
    want = [av @ wv, av[1:4:2, 0:6:3].T, padded, np.concatenate([av, av[:, ::-1]]),
            av.reshape(2, 2, 2, 3).sum((1, 3)), av[iv[:, 0]], scattered, av[1:3, 2:4],
            av.view(np.uint8).reshape(4, 6, 4), np.sort(av, 1), np.clip(av, -0.5, 0.5)]
    for i, (g, e) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, err_msg=f"output {i}")


def _lt(b):
    sb = b.subcomputation("lt")
    x, y = sb.parameter(arr(F32)), sb.parameter(arr(F32))
    return sb.build(sb.compare(x, y, "LT"))


def test_convolution_and_select_and_scatter_shapes():
    b = Builder("conv")
    x = b.parameter(arr(F32, 1, 5, 5, 3), "x")
    k = b.parameter(arr(F32, 3, 3, 3, 8), "k")
    y = b.convolution(x, k, (2, 2), [(1, 1), (1, 1)], dimension_numbers="b01f_01io->b01f")
    assert y.shape == arr(F32, 1, 3, 3, 8)
    ge = b.subcomputation("ge")
    p, q = ge.parameter(arr(F32)), ge.parameter(arr(F32))
    ge = ge.build(ge.compare(p, q, "GE"))
    g = b.select_and_scatter(y, ge, (1, 2, 2, 1), (1, 1, 1, 1), None,
                             b.parameter(arr(F32, 1, 2, 2, 8), "src"), b.constant(np.float32(0)),
                             b.scalar_computation("add", F32))
    assert g.shape == y.shape
    text = roundtrip(b.build_module(b.tuple([y, g])))
    rng = np.random.default_rng(3)
    xv, kv = rng.standard_normal((1, 5, 5, 3), np.float32), rng.standard_normal((3, 3, 3, 8),
                                                                                  np.float32)
    sv = rng.standard_normal((1, 2, 2, 8), np.float32)
    got = run_with_xla(text, xv, kv, sv)
    from jax import lax
    want = lax.conv_general_dilated(xv, kv, (2, 2), [(1, 1), (1, 1)],
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))
    np.testing.assert_allclose(got[0], np.asarray(want), rtol=1e-5, atol=1e-5)
    assert got[1].shape == (1, 3, 3, 8) and np.isclose(got[1].sum(), sv.sum(), rtol=1e-5)


def test_invalid_programs_fail_at_the_call():
    b = Builder("bad")
    x = b.parameter(arr(F32, 4, 3), "x")
    y = b.parameter(arr(F32, 3, 4), "y")
    with pytest.raises(ShapeError, match=r"^add: .*f32\[4,3\] and f32\[3,4\]"):
        b.add(x, y)
    with pytest.raises(ShapeError, match=r"^dot: contracting dimension sizes do not match"):
        b.dot_general(x, x, ((1,), (0,)))
    with pytest.raises(ShapeError, match=r"^reshape: cannot reshape f32\[4,3\]"):
        b.reshape(x, (5,))
    with pytest.raises(XlapyError, match=r"operand 1 must be a value made by this builder"):
        b.add(x, np.ones((4, 3), np.float32))
    other = Builder("other").parameter(arr(F32, 4, 3), "z")
    with pytest.raises(XlapyError, match=r"operand 1 \(z\) belongs to other, not to the "
                                         r"computation bad"):
        b.add(x, other)
    assert [i.name for i in b._comp.instructions] == ["x", "y"]  # nothing half-made


def test_build_only_once():
    b = Builder("f")
    x = b.parameter(arr(F32), "x")
    b.build_module(b.negate(x))
    with pytest.raises(XlapyError, match="already built"):
        b.negate(x)
    with pytest.raises(XlapyError, match="already built"):
        b.build_module()


def test_names_and_metadata():
    b = Builder("f")
    x = b.parameter(arr(F32, 2), "x")
    a1 = b.add(x, x)
    with b.metadata(op_name="outer", source_line=3):
        a2 = b.add(a1, x)
        with b.metadata(op_name="inner"):
            n = b.negate(a2)
    assert (a1.name, a2.name, n.name) == ("add.1", "add.2", "negate.1")
    assert a1.metadata == {} and a2.metadata == {"op_name": "outer", "source_line": 3}
    assert n.metadata == {"op_name": "inner", "source_line": 3}
    text = roundtrip(b.build_module(n))
    assert re.search(r'%negate.1 = f32\[2\] negate\(%add.2\), metadata=\{op_name="inner" '
                     r'source_line=3\}', text)


def test_broadcast_in_dim_expands_size_one_dims():
    b = Builder("f")
    x = b.parameter(arr(F32, 1, 3), "x")
    y = b.broadcast_in_dim(x, (2, 4, 3), (1, 2))
    assert y.shape == arr(F32, 2, 4, 3)
    assert y.operands[0].opcode == "reshape" and y.attrs["dimensions"] == (2,)
    z = b.broadcast(b.constant(np.float32(1)), (2, 3))
    assert z.attrs["dimensions"] == () and z.shape == arr(F32, 2, 3)
    roundtrip(b.build_module(b.tuple([y, z])))


def test_constants():
    b = Builder("f")
    assert b.constant(1.5).shape == arr(F32)
    assert b.constant(7).shape == arr(S32)
    assert b.constant(True).shape == arr(PRED)
    assert b.constant([1, 2], "u8").shape == arr(U8, 2)
    t = b.constant((np.zeros((2, 2), np.float32), np.int32(3)))
    assert t.shape == Shape.tuple([arr(F32, 2, 2), arr(S32)])
    with pytest.raises(XlapyError, match="unsupported element type"):
        b.constant(np.array(["a"]))
    with pytest.raises(XlapyError, match="cannot convert 4294967296"):
        b.constant(2**32)
    with pytest.raises(XlapyError, match="cannot make a constant of type token"):
        b.constant(0, "token")
    text = roundtrip(b.build_module(t))
    assert "constant(({ {0, 0}, {0, 0} }, 3))" in text
