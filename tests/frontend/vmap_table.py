"""The vmap op table: cases that batch every primitive, checked by test_vmap_ops.py.

Each row (a `VCase`) is a function f(L, N, *args) written once against a lax-like namespace
L and a numpy-like module N, so the same code runs on xlapy (xlapy.lax with the indexing
and sorting primitives, xlapy.numpy) and on JAX (jax.lax, jax.numpy). `args` gives one
spec per argument: the shape of ONE member (a tuple, with a value kind) or a fixed NumPy
array; in_axes says which are batched and along which axis (None: shared by every member,
so the spec is the whole argument); out_axes where the results' batch axis goes.

test_vmap_ops.py runs every row three ways and compares:
  1. against a Python loop over the members (f on each member's slices, results stacked
     along out_axes) — xlapy's own eager semantics, so dtypes must match too;
  2. against jax.vmap of the same function on the same inputs (values, float32);
  3. eagerly and under jit (cpu backend), which must agree.
test_vmap_coverage.py checks that the rows together apply every primitive that has a
batching rule to batched values.
"""

from __future__ import annotations

import types
from dataclasses import dataclass

import numpy as np

N_BATCH = 3


@dataclass
class VCase:
    name: str
    fn: object                  # f(L, N, *args)
    args: list                  # per argument: (member shape, kind) or a NumPy array
    in_axes: object = 0
    out_axes: object = 0
    jax: bool = True            # compare with jax.vmap too
    rtol: float = 1e-5

    def __str__(self):
        return self.name


def xlapy_namespace():
    import xlapy as xp
    import xlapy.lax as xlax
    from xlapy.frontend.primitives import indexing, sorting
    ns = types.SimpleNamespace(**{k: getattr(xlax, k) for k in dir(xlax) if not k.startswith("_")})
    for k in ("gather", "scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max",
              "GatherDimensionNumbers", "ScatterDimensionNumbers"):
        setattr(ns, k, getattr(indexing, k))
    for k in ("sort", "cumsum", "cumprod", "cummax", "cummin"):
        setattr(ns, k, getattr(sorting, k))
    ns.grad, ns.vmap, ns.jit = xp.grad, xp.vmap, xp.jit
    ns.custom_jvp, ns.custom_vjp, ns.checkpoint = xp.custom_jvp, xp.custom_vjp, xp.checkpoint
    ns.pure_callback = xp.pure_callback
    return ns


def jax_namespace():
    import jax
    import jax.lax as jlax
    ns = types.SimpleNamespace(**{k: getattr(jlax, k) for k in dir(jlax) if not k.startswith("_")})
    ns.grad, ns.vmap, ns.jit = jax.grad, jax.vmap, jax.jit
    ns.custom_jvp, ns.custom_vjp, ns.checkpoint = jax.custom_jvp, jax.custom_vjp, jax.checkpoint
    ns.pure_callback = jax.pure_callback
    return ns


# ---- inputs ---------------------------------------------------------------------------------

def make_value(rng, shape, kind):
    if kind == "normal":
        return rng.standard_normal(shape).astype(np.float32)
    if kind == "pos":
        return rng.uniform(0.5, 2.0, shape).astype(np.float32)
    if kind == "unit":
        return rng.uniform(-0.9, 0.9, shape).astype(np.float32)
    if kind == "halves":
        return (rng.integers(-6, 7, shape) / 2).astype(np.float32)
    if kind == "int":
        return rng.integers(-20, 21, shape).astype(np.int32)
    if kind == "small":
        return rng.integers(0, 4, shape).astype(np.int32)
    if kind == "shift":
        return rng.integers(0, 40, shape).astype(np.int32)
    if kind == "bool":
        return rng.random(shape) < 0.5
    if kind == "distinct":     # distinct indices in [0, 4): a scatter's targets never collide
        return rng.permutation(4)[:int(np.prod(shape))].reshape(shape).astype(np.int32)
    raise ValueError(kind)


# ---- the table ---------------------------------------------------------------------------------

def F(shape=(2, 3), kind="normal"):
    return (tuple(shape), kind)


def IDX(*idx):
    return np.asarray(idx, np.int32)


ROWS: list[VCase] = []


def row(name, fn, args, **kw):
    ROWS.append(VCase(name, fn, args, **kw))


# elementwise unary
for _n, _k in [("neg", "normal"), ("abs", "normal"), ("sign", "halves"), ("floor", "normal"),
               ("ceil", "normal"), ("exp", "normal"), ("expm1", "normal"), ("log", "pos"),
               ("log1p", "pos"), ("logistic", "normal"), ("tanh", "normal"), ("sin", "normal"),
               ("cos", "normal"), ("tan", "unit"), ("sqrt", "pos"), ("rsqrt", "pos"),
               ("cbrt", "normal"), ("erf", "normal"), ("is_finite", "normal")]:
    row(_n, lambda L, N, x, _n=_n: getattr(L, _n)(x), [F((2, 3), _k)])
row("round_afz", lambda L, N, x: L.round(x, 0), [F((4,), "halves")])
row("round_even", lambda L, N, x: L.round(x, 1), [F((2, 4), "halves")], in_axes=1)
row("not", lambda L, N, x: L.bitwise_not(x), [F((5,), "int")])
row("not_bool", lambda L, N, x: L.bitwise_not(x), [F((5,), "bool")], in_axes=-1)
row("population_count", lambda L, N, x: L.population_count(x), [F((5,), "int")])
row("clz", lambda L, N, x: L.clz(x), [F((5,), "int")])

# elementwise binary: both batched, one batched, batch axes at different places
for _n, _k in [("add", "normal"), ("sub", "normal"), ("mul", "normal"), ("div", "pos"),
               ("rem", "pos"), ("pow", "pos"), ("max", "halves"), ("min", "halves"),
               ("atan2", "normal")]:
    row(_n, lambda L, N, x, y, _n=_n: getattr(L, _n)(x, y), [F((2, 3), _k), F((2, 3), _k)])
    row(f"{_n}_x_only", lambda L, N, x, y, _n=_n: getattr(L, _n)(x, y),
        [F((2, 3), _k), F((2, 3), _k)], in_axes=(1, None))
    row(f"{_n}_axes_0_2", lambda L, N, x, y, _n=_n: getattr(L, _n)(x, y),
        [F((2, 3), _k), F((2, 3), _k)], in_axes=(0, 2))
for _n in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    row(_n, lambda L, N, x, y, _n=_n: getattr(L, _n)(x, y), [F((4,), "int"), F((4,), "int")],
        in_axes=(None, 0))
for _n in ("shift_left", "shift_right_logical", "shift_right_arithmetic"):
    row(_n, lambda L, N, x, y, _n=_n: getattr(L, _n)(x, y), [F((4,), "int"), F((4,), "shift")],
        in_axes=(0, 1))
for _n in ("eq", "ne", "lt", "le", "gt", "ge"):
    row(_n, lambda L, N, x, y, _n=_n: getattr(L, _n)(x, y), [F((3,), "halves"),
                                                            F((3,), "halves")],
        in_axes=(0, None))
row("select", lambda L, N, p, x, y: L.select(p, x, y), [F((2, 3), "bool"), F(), F()],
    in_axes=(1, None, 0))
row("select_pred_only", lambda L, N, p, x, y: L.select(p, x, y), [F((2, 3), "bool"), F(), F()],
    in_axes=(0, None, None))
row("convert", lambda L, N, x: L.convert_element_type(x, np.int32), [F((2, 3), "halves")])
row("bitcast_convert", lambda L, N, x: L.bitcast_convert_type(x, np.uint32), [F((2, 3))])
row("clamp", lambda L, N, lo, x, hi: L.clamp(lo, x, hi), [F(), F(), F()],
    in_axes=(None, 0, 1))
row("stop_gradient", lambda L, N, x: L.stop_gradient(x) * 2, [F()], in_axes=1)

# shapes and reductions
row("broadcast_in_dim", lambda L, N, x: L.broadcast_in_dim(x, (2, 4, 3), (0, 2)), [F()],
    in_axes=1, out_axes=2)
row("reshape", lambda L, N, x: L.reshape(x, (3, 2)), [F()], in_axes=1)
row("transpose", lambda L, N, x: L.transpose(x, (2, 0, 1)), [F((2, 3, 4))], in_axes=2)
for _n in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"):
    row(_n, lambda L, N, x, _n=_n: getattr(L, _n)(x, (0, 2)), [F((2, 3, 4))], in_axes=1)
    row(f"{_n}_last", lambda L, N, x, _n=_n: getattr(L, _n)(x, (1,)), [F((2, 3))], in_axes=2)
row("reduce_and", lambda L, N, x: L.reduce_and(x, (1,)), [F((2, 3), "bool")], in_axes=0)
row("reduce_or", lambda L, N, x: L.reduce_or(x, (0,)), [F((2, 3), "bool")], in_axes=1)
row("argmax", lambda L, N, x: L.argmax(x, 1, np.int32), [F((2, 4), "halves")], in_axes=1)
row("argmin", lambda L, N, x: L.argmin(x, 0, np.int32), [F((2, 4), "halves")], in_axes=0)
row("slice", lambda L, N, x: L.slice(x, (0, 1), (2, 4), (1, 2)), [F((2, 4))], in_axes=1)
row("pad", lambda L, N, x: L.pad(x, np.float32(0.5), ((1, 0, 1), (-1, 2, 0))), [F((2, 4))],
    in_axes=1)
row("pad_batched_value", lambda L, N, x, v: L.pad(x, v, ((1, 2, 0), (0, 1, 1))),
    [F((2, 3)), F(())], in_axes=(None, 0))
row("pad_both_batched", lambda L, N, x, v: L.pad(x, v, ((1, -1, 1),)), [F((3,)), F(())],
    in_axes=(1, 0))
row("concatenate", lambda L, N, x, y: L.concatenate([x, y, x], 1), [F((2, 3)), F((2, 1))],
    in_axes=(None, 1))
row("rev", lambda L, N, x: L.rev(x, (0, 2)), [F((2, 3, 2))], in_axes=1)
row("iota_with_batched", lambda L, N, x: x + L.iota(np.float32, 4), [F((4,))])

# dot_general: batched on both sides, one side, matrix @ batched vector, batch dims
_MM = (((1,), (0,)), ((), ()))
row("dot_both", lambda L, N, x, y: L.dot_general(x, y, _MM), [F((2, 3)), F((3, 4))],
    in_axes=(0, 2))
row("dot_lhs", lambda L, N, x, y: L.dot_general(x, y, _MM), [F((2, 3)), F((3, 4))],
    in_axes=(1, None))
row("dot_rhs", lambda L, N, x, y: L.dot_general(x, y, _MM), [F((2, 3)), F((3, 4))],
    in_axes=(None, 1))
row("dot_matvec", lambda L, N, w, v: L.dot_general(w, v, _MM), [F((4, 3)), F((3,))],
    in_axes=(None, 0))
row("dot_vecmat", lambda L, N, v, w: L.dot_general(v, w, (((0,), (0,)), ((), ()))),
    [F((3,)), F((3, 4))],
    in_axes=(0, None))
row("dot_batch_dims", lambda L, N, x, y: L.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))),
    [F((2, 3, 4)), F((2, 4, 5))], in_axes=(1, None))
row("dot_batch_dims_both", lambda L, N, x, y: L.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))),
    [F((2, 3, 4)), F((2, 4, 5))], in_axes=(2, 0))
row("dot_outer", lambda L, N, x, y: L.dot_general(x, y, (((), ()), ((), ()))),
    [F((3,)), F((4,))], in_axes=(0, 0))

# gather / scatter (indices in bounds, so JAX's modes agree)
_GDN = dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))


def _gather(L, N, x, idx):
    return L.gather(x, idx, L.GatherDimensionNumbers(**_GDN), (1, 3), mode="clip")


row("gather_operand", _gather, [F((4, 3)), IDX([2], [0], [3])], in_axes=(1, None))
row("gather_indices", _gather, [F((4, 3)), ((2, 1), "small")], in_axes=(None, 1))
row("gather_both", _gather, [F((4, 3)), ((2, 1), "small")], in_axes=(0, 0))
_SDN = dict(update_window_dims=(1,), inserted_window_dims=(0,),
            scatter_dims_to_operand_dims=(0,))
for _n in ("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"):
    def _scatter(L, N, x, idx, u, _n=_n):
        return getattr(L, _n)(x, idx, u, L.ScatterDimensionNumbers(**_SDN), mode="clip")
    row(f"{_n}_operand", _scatter, [F((4, 3)), IDX([1], [3]), F((2, 3))], in_axes=(1, None, None))
    row(f"{_n}_updates", _scatter, [F((4, 3)), IDX([1], [3]), F((2, 3))], in_axes=(None, None, 0))
    row(f"{_n}_indices", _scatter, [F((4, 3)), ((2, 1), "distinct"), F((2, 3))],
        in_axes=(None, 1, None))
    row(f"{_n}_all", _scatter, [F((4, 3)), ((2, 1), "distinct"), F((2, 3))], in_axes=(0, 0, 1))

# dynamic_slice / dynamic_update_slice (starts out of range are clamped)
row("dynamic_slice_x", lambda L, N, x: L.dynamic_slice(x, (1, 5), (2, 2)), [F((3, 4))],
    in_axes=1)
row("dynamic_slice_starts", lambda L, N, x, i: L.dynamic_slice(x, (i, 1), (2, 2)),
    [F((3, 4)), ((), "int")], in_axes=(None, 0))
row("dynamic_slice_both", lambda L, N, x, i, j: L.dynamic_slice(x, (i, j), (2, 3)),
    [F((3, 4)), ((), "small"), ((), "int")], in_axes=(1, 0, None))
row("dynamic_update_slice_x", lambda L, N, x, u: L.dynamic_update_slice(x, u, (1, 3)),
    [F((3, 4)), F((2, 2))], in_axes=(1, None))
row("dynamic_update_slice_update", lambda L, N, x, u: L.dynamic_update_slice(x, u, (2, 0)),
    [F((3, 4)), F((2, 2))], in_axes=(None, 1))
row("dynamic_update_slice_starts", lambda L, N, x, u, i: L.dynamic_update_slice(x, u, (i, 1)),
    [F((3, 4)), F((2, 2)), ((), "int")], in_axes=(None, None, 0))
row("dynamic_update_slice_all", lambda L, N, x, u, i: L.dynamic_update_slice(x, u, (1, i)),
    [F((3, 4)), F((2, 2)), ((), "small")], in_axes=(0, 1, 0))

# convolutions: lhs / rhs / both batched, with feature and batch groups
_NCH = ("NCH", "OIH", "NCH")


def _conv(fgc=1, bgc=1, dn=_NCH, strides=(1,), padding=((1, 0),)):
    def f(L, N, x, k):
        return L.conv_general_dilated(x, k, strides, padding, dimension_numbers=dn,
                                      feature_group_count=fgc, batch_group_count=bgc)
    return f


row("conv_lhs", _conv(), [F((2, 3, 5)), F((4, 3, 2))], in_axes=(1, None))
row("conv_rhs", _conv(), [F((2, 3, 5)), F((4, 3, 2))], in_axes=(None, 3))
row("conv_both", _conv(), [F((2, 3, 5)), F((4, 3, 2))], in_axes=(0, 2))
row("conv_nhwc_lhs", _conv(dn=("NHWC", "HWIO", "NHWC"), strides=(2, 1),
                           padding=((0, 1), (1, 1))),
    [F((2, 5, 4, 3)), F((2, 2, 3, 4))], in_axes=(3, None))
row("conv_fgroups_lhs", _conv(fgc=2), [F((2, 4, 5)), F((6, 2, 2))], in_axes=(0, None))
row("conv_fgroups_rhs", _conv(fgc=2), [F((2, 4, 5)), F((6, 2, 2))], in_axes=(None, 1))
row("conv_fgroups_both", _conv(fgc=2), [F((2, 4, 5)), F((6, 2, 2))], in_axes=(2, 0))
row("conv_bgroups_lhs", _conv(bgc=2), [F((4, 3, 5)), F((6, 3, 2))], in_axes=(1, None))
row("conv_bgroups_rhs", _conv(bgc=2), [F((4, 3, 5)), F((6, 3, 2))], in_axes=(None, 0))
row("conv_bgroups_both", _conv(bgc=2), [F((4, 3, 5)), F((6, 3, 2))], in_axes=(0, 3))
_NHWC = dict(dn=("NHWC", "HWIO", "NHWC"), strides=(1, 2), padding=((1, 0), (0, 1)))
row("conv_nhwc_fgroups_rhs", _conv(fgc=2, **_NHWC), [F((2, 5, 4, 4)), F((2, 2, 2, 6))],
    in_axes=(None, 3))
row("conv_nhwc_bgroups_both", _conv(bgc=2, **_NHWC), [F((4, 5, 4, 3)), F((2, 2, 3, 6))],
    in_axes=(3, 2))

# windowed reductions; select_and_scatter_add comes from the gradient of max pooling
for _n, _op, _init in (("sum", "add", 0.0), ("max", "max", -np.inf), ("min", "min", np.inf)):
    row(f"reduce_window_{_n}",
        lambda L, N, x, _op=_op, _init=_init: L.reduce_window(
            x, np.float32(_init), getattr(L, _op), (2, 2), (1, 2), ((1, 0), (0, 1))),
        [F((3, 4), "halves")], in_axes=1)
row("select_and_scatter_add",
    lambda L, N, x: L.grad(lambda y: (L.reduce_window(y, np.float32(-np.inf), L.max, (2, 2),
                                                      (2, 1), "VALID") ** 2).sum())(x),
    [F((4, 3))], in_axes=2)

# sorting and cumulative reductions
row("sort", lambda L, N, x: L.sort(x, dimension=0), [F((4, 2), "halves")], in_axes=1)
row("sort_keys", lambda L, N, k, v: tuple(L.sort((k, v), dimension=1, num_keys=1)),
    [F((2, 5), "small"), F((2, 5))], in_axes=(None, 2))
for _n in ("cumsum", "cumprod", "cummax", "cummin"):
    row(_n, lambda L, N, x, _n=_n: getattr(L, _n)(x, axis=1), [F((2, 4), "halves")], in_axes=2)
    row(f"{_n}_reverse", lambda L, N, x, _n=_n: getattr(L, _n)(x, axis=0, reverse=True),
        [F((4,), "halves")], in_axes=0)

# control flow
row("while_batched_carry",
    lambda L, N, x: L.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2 + 1),
                                 (0, x))[1], [F((2,))])
row("while_batched_predicate",
    lambda L, N, x, n: L.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5),
                                    (np.int32(0), x))[1],
    [F((2,)), ((), "small")], in_axes=(None, 0))
row("while_carry_becomes_batched",
    lambda L, N, x: L.while_loop(lambda c: c[0] < 3,
                                 lambda c: (c[0] + 1, c[1] + x, c[2] * 2.0),
                                 (0, np.zeros(2, np.float32), np.ones(2, np.float32)))[1:],
    [F((2,))], in_axes=1)
row("fori_loop_batched_bound",
    lambda L, N, x, n: L.fori_loop(0, n, lambda i, c: c + x * i.astype(np.float32),
                                   np.zeros(2, np.float32)),
    [F((2,)), ((), "small")], in_axes=(0, 0))
row("scan_xs",
    lambda L, N, c0, xs: L.scan(lambda c, x: (c + x, c * x), c0, xs), [F((3,)), F((4, 3))],
    in_axes=(None, 2))
row("scan_init_and_const",
    lambda L, N, c0, w: L.scan(lambda c, x: (N.tanh(c * w + x), c.sum()), c0,
                               np.arange(4, dtype=np.float32), reverse=True),
    [F((3,)), F(())], in_axes=(0, 0))
row("cond_operand", lambda L, N, x: L.cond(True, lambda v: v * 2, lambda v: v - 1, x),
    [F((3,))], in_axes=0)
row("cond_batched_pred",
    lambda L, N, p, x: L.cond(p, lambda v: N.sin(v), lambda v: v * 3, x),
    [((), "bool"), F((3,))], in_axes=(0, None))
row("switch_batched_index",
    lambda L, N, i, x, y: L.switch(i, [lambda a, b: a + b, lambda a, b: a * b,
                                       lambda a, b: a - b], x, y),
    [((), "small"), F((2,)), F((2,))], in_axes=(0, 1, None))
row("cond_unbatched_pred_branch_const",
    lambda L, N, x, y: L.cond(False, lambda v: v * y, lambda v: v + 1.0, x),
    [F((2,)), F((2,))], in_axes=(None, 0))

# vmap of grad (per-example gradients) and nesting
row("grad_mlp_per_example",
    lambda L, N, w, b, x, y: L.grad(lambda w, b: ((N.tanh(x @ w + b) - y) ** 2).sum(),
                                    argnums=(0, 1))(w, b),
    [F((3, 4)), F((4,)), F((3,)), F((4,))], in_axes=(None, None, 0, 0))
row("grad_scan",
    lambda L, N, c0, xs: L.grad(lambda c: L.scan(lambda c, x: (N.sin(c) * x, c), c,
                                                 xs)[0].sum())(c0),
    [F((2,)), F((3, 2))], in_axes=(0, None))
row("grad_conv",
    lambda L, N, x, k: L.grad(lambda k: (_conv()(L, N, x, k) ** 2).sum())(k),
    [F((2, 3, 5)), F((4, 3, 2))], in_axes=(0, None))
row("grad_gather_dynamic_slice",
    lambda L, N, x, i: L.grad(lambda x: (L.dynamic_slice(x, (i,), (2,)) ** 2).sum())(x),
    [F((5,)), ((), "small")], in_axes=(0, 0))
row("grad_sort_cumsum",
    lambda L, N, x: L.grad(lambda x: (L.cumsum(L.sort(x)) * N.arange(4.0)).sum())(x),
    [F((4,))], in_axes=0)
row("vmap_of_vmap",
    lambda L, N, x, y: L.vmap(lambda a: L.dot_general(a, y, (((0,), (0,)), ((), ()))),
                              in_axes=1)(x),
    [F((2, 3)), F((2, 4))], in_axes=(2, None), out_axes=1)
row("vmap_of_vmap_both",
    lambda L, N, x, y: L.vmap(lambda a, b: (a * b).sum(), in_axes=(0, None))(x, y),
    [F((2, 3)), F((3,))], in_axes=(0, 0))
row("jit_inside_vmap", lambda L, N, x: L.jit(lambda v: N.cumsum(v) @ v)(x), [F((4,))])

# linear algebra: a batch of symmetric positive definite matrices (x x^T + 4 I)
# complex numbers and fft (lax.complex/real/imag/conj; the fft primitive through numpy.fft)
row("complex_parts", lambda L, N, x, y: (L.real(L.complex(x, y) * L.conj(L.complex(y, x))),
                                         L.imag(L.complex(x, y))), [F(), F()], in_axes=(0, None))
row("fft_rfft_irfft", lambda L, N, x: (N.abs(N.fft.fft(x)), N.fft.irfft(N.fft.rfft(x), 3)),
    [F((2, 3))], in_axes=1, rtol=1e-4)
row("fft2_batched_axis", lambda L, N, x: N.real(N.fft.ifft2(N.fft.fft2(x) * 2)), [F((2, 4))],
    in_axes=1, out_axes=2, rtol=1e-4)
row("cholesky",
    lambda L, N, x: L.linalg.cholesky(x @ N.swapaxes(x, -1, -2) + 4 * N.eye(3, dtype=x.dtype)),
    [F((3, 3))], in_axes=0, rtol=1e-4)
row("cholesky_batched_axis1",
    lambda L, N, x: L.linalg.cholesky(x @ N.swapaxes(x, -1, -2) + 4 * N.eye(3, dtype=x.dtype)),
    [F((2, 3, 3))], in_axes=1, rtol=1e-4)


# custom derivatives and checkpoint (frontend/batching/custom.py)
def _softplus(L, N):
    f = L.custom_jvp(lambda x: N.log1p(N.exp(x)))
    f.defjvps(lambda t, ans, x: t * 2.0 / (1 + N.exp(-x)))  # twice the true derivative
    return f


def _clip_grad(L, N):
    f = L.custom_vjp(lambda x, s: x * s)
    f.defvjp(lambda x, s: (x * s, (x, s)),
             lambda r, g: (N.clip(g * r[1], -0.5, 0.5), (g * r[0]).sum()))
    return f


row("custom_jvp", lambda L, N, x: _softplus(L, N)(x), [F((4,))])
row("grad_custom_jvp", lambda L, N, x: L.grad(lambda v: _softplus(L, N)(v).sum())(x),
    [F((4,))])
row("custom_vjp", lambda L, N, x, s: _clip_grad(L, N)(x, s), [F((4,)), F(())],
    in_axes=(0, None))
row("grad_custom_vjp",
    lambda L, N, x, s: L.grad(lambda x, s: (_clip_grad(L, N)(x, s) ** 2).sum(), (0, 1))(x, s),
    [F((4,)), F(())], in_axes=(0, None))
row("checkpoint", lambda L, N, x: L.checkpoint(lambda v: N.sin(N.sin(v)) * v)(x), [F((3,))])
row("grad_checkpoint",
    lambda L, N, x: L.grad(lambda v: L.checkpoint(lambda u: N.sin(u) * u)(v).sum())(x),
    [F((3,))])


# the LAPACK primitives (xlapy.lax.lapack) through numpy.linalg
row("linalg_solve",  # lu, triangular_solve
    lambda L, N, x, b: N.linalg.solve(x + 4 * N.eye(3, dtype=x.dtype), b),
    [F((2, 3, 3)), F((3, 2))], in_axes=(0, 1), rtol=1e-4)
row("linalg_eigvalsh",  # eigh
    lambda L, N, x: N.linalg.eigvalsh(x @ N.swapaxes(x, -1, -2)), [F((3, 3))], in_axes=0,
    rtol=1e-4)
row("linalg_qr",  # geqrf, householder_product
    lambda L, N, x: N.abs(N.linalg.qr(x)[1]), [F((2, 4, 3))], in_axes=1, rtol=1e-4)
row("linalg_svdvals",  # svd
    lambda L, N, x: N.linalg.svd(x, compute_uv=False), [F((2, 4, 3))], in_axes=0, rtol=1e-4)
row("linalg_eigvals",  # eig
    lambda L, N, x: N.sort(N.abs(N.linalg.eigvals(x))), [F((2, 4, 4))], in_axes=1, rtol=1e-4)


# host callbacks (xlapy.pure_callback): each vmap_method; the host function sees NumPy arrays
# (b is a scalar per member: batched, it leads and meets a's leading batch axis)
def _host_affine(a, b):
    return np.asarray(a * b.reshape(b.shape + (1,) * (a.ndim - b.ndim)) + 1, a.dtype)


for _method in ("sequential", "expand_dims", "broadcast_all"):
    row(f"pure_callback_{_method}",
        lambda L, N, x, c, m=_method: L.pure_callback(_host_affine, x, x, c, vmap_method=m) * 2,
        [F((2, 3)), F(())], in_axes=(1, None))
