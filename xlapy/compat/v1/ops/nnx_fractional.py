"""tf.nn.fractional_max_pool and tf.nn.fractional_avg_pool (Graham, "Fractional
Max-Pooling", 2014), with their gradients.

Each pools an NHWC tensor over rows and columns by a ratio >= 1: the output has
floor(in / ratio) rows (columns), and the pooling regions are given by a cumulative
sequence 0 = a_0 < a_1 < ... < a_out = in whose steps are floor(in / out) or one more:
  - when out divides in, every step is in / out;
  - pseudo_random=False: a random permutation of the steps (in % out of them one longer);
  - pseudo_random=True: a_i = ceil(alpha * (i + u)) - 1 for 0 < i < out (alpha = in / out)
    with u uniform in [0, u_max), u_max the largest value keeping every step within
    [floor(alpha), floor(alpha) + 1] (the paper's rule, 0-based).
Row r pools input rows a_r .. a_{r+1} - 1, and also a_{r+1} when overlapping (clamped to
the last row). The same sequences serve the whole batch; they are returned as int64
outputs (row_pooling_sequence, col_pooling_sequence).

The sequences are drawn with the op's generator (seeded from seed / seed2 as TF's v1
functions take them: both 0 means nondeterministic, the graph seed plays no part); with
deterministic=True every run of the op uses the same sequences (a generator re-seeded
from seed / seed2 at each run; if both are 0 they are chosen once when the op is built).
Values differ from TF's Philox stream, the rule is the same.

The ops run in the executor (no XLA lowering: the regions are data). The gradient of
FractionalMaxPool (FractionalMaxPoolGrad) routes each output's gradient to the first input
element, in row-major order within its region, equal to the output; that of
FractionalAvgPool (FractionalAvgPoolGrad) spreads it evenly over the region. Both sum the
contributions of overlapping regions.
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError, UnimplementedError
from xlapy.compat.v1.op_registry import (get_op_def, not_differentiable, register_gradient,
                                         register_op)
from xlapy.compat.v1.ops._common import ints, make, make_op, partial_shape_value, tensor
from xlapy.compat.v1.ops.array_ops import _shape_of
from xlapy.compat.v1.tensor_shape import TensorShape

_ATTRS = ("pooling_ratio", "pseudo_random", "overlapping", "deterministic", "seed", "seed2")
_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)


def _out_size(n, ratio):
    return None if n is None else int(math.floor(n / ratio))


def _infer(op):
    x = op.inputs[0]
    if x.dtype not in _TYPES:
        raise InvalidTypeError(f"{op.type}: value must be float32, float64, int32 or int64, "
                               f"got {x.dtype.name}")
    xs = x.shape
    if xs.ndims not in (None, 4):
        raise InvalidArgumentError(f"tensor_in must be 4-dimensional, got {xs.tf_str()} for "
                                   f"'{op.name}' (op: '{op.type}')")
    r = op.get_attr("pooling_ratio")
    dims = [None] * 4 if xs.ndims is None else [_out_size(d, q) for d, q in zip(xs.dims, r)]
    for d in dims:
        if d is not None and d <= 0:
            raise InvalidArgumentError(f"{op.type}: output_size must be positive, got "
                                       f"{dims} for input {xs.tf_str()}")
    seq = [TensorShape([None if d is None else d + 1]) for d in dims[1:3]]
    return [(x.dtype, TensorShape(dims)), (dtypes.int64, seq[0]), (dtypes.int64, seq[1])]


def pooling_sequence(rng, n_in: int, n_out: int, pseudo_random: bool) -> np.ndarray:
    """The cumulative sequence (n_out + 1 int64 entries, 0 first, n_in last)."""
    k = n_in // n_out
    if n_in % n_out == 0:
        steps = np.full(n_out, k, np.int64)
    elif pseudo_random:
        alpha = n_in / n_out
        u_max = min((k + 2) / alpha - 1, (n_in + 1 - k) / alpha - (n_out - 1))
        u = rng.random() * u_max
        inner = [int(math.ceil(alpha * (i + u))) - 1 for i in range(1, n_out)]
        return np.asarray([0] + inner + [n_in], np.int64)
    else:
        steps = np.full(n_out, k, np.int64)
        steps[:n_in % n_out] += 1
        rng.shuffle(steps)
    return np.concatenate([[0], np.cumsum(steps)]).astype(np.int64)


def _regions(seq, n_in, overlapping):
    """[(start, stop)] half-open ranges of each output row (column)."""
    seq = np.asarray(seq, np.int64)
    out = []
    for r in range(len(seq) - 1):
        stop = seq[r + 1] + 1 if overlapping else seq[r + 1]
        out.append((int(seq[r]), int(min(stop, n_in))))
    return out


def _sequences(rng, x, pooling_ratio, pseudo_random, deterministic, seed, seed2):
    if deterministic:
        rng = np.random.default_rng([int(seed or 0), int(seed2 or 0)])
    outs = [_out_size(n, q) for n, q in zip(x.shape[1:3], pooling_ratio[1:3])]
    if any(o <= 0 for o in outs):
        raise InvalidArgumentError(f"output_size must be positive, got {outs} for input "
                                   f"{list(x.shape)}")
    return [pooling_sequence(rng, n, o, pseudo_random) for n, o in zip(x.shape[1:3], outs)]


def _pool(reduce):
    def kernel(m, rng, x, pooling_ratio=(), pseudo_random=False, overlapping=False,
               deterministic=False, seed=None, seed2=None):
        rows, cols = _sequences(rng, x, pooling_ratio, pseudo_random, deterministic, seed,
                                seed2)
        rr, cc = _regions(rows, x.shape[1], overlapping), _regions(cols, x.shape[2],
                                                                   overlapping)
        out = np.empty((x.shape[0], len(rr), len(cc), x.shape[3]), x.dtype)
        for i, (r0, r1) in enumerate(rr):
            for j, (c0, c1) in enumerate(cc):
                out[:, i, j, :] = reduce(x[:, r0:r1, c0:c1, :])
        return out, rows, cols
    return kernel


def _mean(region):
    s = region.sum(axis=(1, 2))
    n = region.shape[1] * region.shape[2]
    if region.dtype.kind in "iu":
        return (np.abs(s) // n) * np.sign(s)  # C++'s truncating division
    return s / n


for _t, _red in (("FractionalMaxPool", lambda r: r.max(axis=(1, 2))),
                 ("FractionalAvgPool", _mean)):
    register_op(_t, infer=_infer, attrs=_ATTRS, rng=True, lowering=None)(_pool(_red))
    # the input is data the host draw would need: the op stays in the executor
    get_op_def(_t).extra["host_random"] = False


def _max_grad_infer(op):
    x = op.inputs[0]
    return [(x.dtype, x.shape)]


@register_op("FractionalMaxPoolGrad", infer=_max_grad_infer, attrs=("overlapping",),
             lowering=None)
def _max_pool_grad(m, x, out, g, rows, cols, overlapping=False):
    dx = np.zeros(x.shape, g.dtype)
    rr, cc = _regions(rows, x.shape[1], overlapping), _regions(cols, x.shape[2], overlapping)
    if len(rr) != out.shape[1] or len(cc) != out.shape[2]:
        raise InvalidArgumentError("FractionalMaxPoolGrad: the pooling sequences do not match "
                                   f"orig_output {list(out.shape)}")
    b, ch = np.meshgrid(np.arange(x.shape[0]), np.arange(x.shape[3]), indexing="ij")
    for i, (r0, r1) in enumerate(rr):
        for j, (c0, c1) in enumerate(cc):
            reg = x[:, r0:r1, c0:c1, :].reshape(x.shape[0], -1, x.shape[3])
            first = np.argmax(reg == out[:, i:i + 1, j, :], axis=1)  # [batch, channels]
            h, w = r0 + first // (c1 - c0), c0 + first % (c1 - c0)
            np.add.at(dx, (b, h, w, ch), g[:, i, j, :])
    return dx


def _avg_grad_infer(op):
    return [(op.inputs[1].dtype, partial_shape_value(op.inputs[0]))]


@register_op("FractionalAvgPoolGrad", infer=_avg_grad_infer, attrs=("overlapping",),
             lowering=None, const_inputs=(0,))
def _avg_pool_grad(m, in_shape, g, rows, cols, overlapping=False):
    shape = ints(in_shape)
    dx = np.zeros(shape, g.dtype)
    rr, cc = _regions(rows, shape[1], overlapping), _regions(cols, shape[2], overlapping)
    if len(rr) != g.shape[1] or len(cc) != g.shape[2]:
        raise InvalidArgumentError("FractionalAvgPoolGrad: the pooling sequences do not match "
                                   f"out_backprop {list(g.shape)}")
    for i, (r0, r1) in enumerate(rr):
        for j, (c0, c1) in enumerate(cc):
            n = (r1 - r0) * (c1 - c0)
            dx[:, r0:r1, c0:c1, :] += (g[:, i, j, :] / n)[:, None, None, :].astype(g.dtype)
    return dx


not_differentiable("FractionalMaxPoolGrad", "FractionalAvgPoolGrad")


@register_gradient("FractionalMaxPool")
def _fractional_max_pool_grad(op, g, g_rows=None, g_cols=None):
    if g is None:
        return [None]
    out, rows, cols = op.outputs
    return [make("FractionalMaxPoolGrad", [op.inputs[0], out, g, rows, cols],
                 {"overlapping": op.get_attr("overlapping")})]


@register_gradient("FractionalAvgPool")
def _fractional_avg_pool_grad(op, g, g_rows=None, g_cols=None):
    if g is None:
        return [None]
    _, rows, cols = op.outputs
    return [make("FractionalAvgPoolGrad", [_shape_of(op.inputs[0]), g, rows, cols],
                 {"overlapping": op.get_attr("overlapping")})]


def _fractional(op_type, value, pooling_ratio, pseudo_random, overlapping, deterministic,
                seed, seed2, name):
    x = tensor(value)
    r = [float(q) for q in pooling_ratio]
    if len(r) != 4:
        raise InvalidArgumentError(f"pooling_ratio field must specify 4 dimensions, got {r}")
    if r[0] != 1.0 or r[3] != 1.0:
        raise UnimplementedError("Fractional pooling is not yet supported on the batch nor "
                                 "channel dimension.")
    if any(q < 1.0 for q in r):
        raise InvalidArgumentError(f"pooling_ratio must be >= 1, got {r}")
    seed, seed2 = int(seed or 0), int(seed2 or 0)
    if deterministic and seed == 0 and seed2 == 0:
        # TF picks the seeds once per op when both are unset: the op's sequences stay fixed
        seed, seed2 = (int(v) for v in np.random.SeedSequence().generate_state(2))
    attrs = {"pooling_ratio": tuple(r), "pseudo_random": bool(pseudo_random),
             "overlapping": bool(overlapping), "deterministic": bool(deterministic),
             "seed": None if seed == 0 and seed2 == 0 else seed,
             "seed2": None if seed == 0 and seed2 == 0 else seed2}
    return tuple(make_op(op_type, [x], attrs, name=name).outputs)


def fractional_max_pool(value, pooling_ratio, pseudo_random=False, overlapping=False,
                        deterministic=False, seed=0, seed2=0, name=None):
    """(output, row_pooling_sequence, col_pooling_sequence): max over fractional regions."""
    return _fractional("FractionalMaxPool", value, pooling_ratio, pseudo_random, overlapping,
                       deterministic, seed, seed2, name)


def fractional_avg_pool(value, pooling_ratio, pseudo_random=False, overlapping=False,
                        deterministic=False, seed=0, seed2=0, name=None):
    """(output, row_pooling_sequence, col_pooling_sequence): mean over fractional regions."""
    return _fractional("FractionalAvgPool", value, pooling_ratio, pseudo_random, overlapping,
                       deterministic, seed, seed2, name)
