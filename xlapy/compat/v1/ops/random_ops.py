"""Random ops. They run in the executor only (no XLA lowering: their values must not depend
on whether a cluster was compiled), each with its own NumPy generator seeded TF-style from
the graph seed (tf.set_random_seed) and the op seed."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.framework import Tensor, get_default_graph
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import ints, make, partial_shape_value, tensor

DEFAULT_GRAPH_SEED = 87654321


def _infer(op):
    return [(op.get_attr("dtype"), partial_shape_value(op.inputs[0]))]


@register_op("RandomStandardNormal", infer=_infer, attrs=("dtype",), rng=True, lowering=None)
def _normal(m, rng, shape, dtype):
    return rng.standard_normal(ints(shape)).astype(dtype.np)


@register_op("TruncatedNormal", infer=_infer, attrs=("dtype",), rng=True, lowering=None)
def _truncated(m, rng, shape, dtype):
    out = rng.standard_normal(ints(shape))
    bad = np.abs(out) > 2
    while bad.any():  # redraw values more than two standard deviations out
        out[bad] = rng.standard_normal(int(bad.sum()))
        bad = np.abs(out) > 2
    return out.astype(dtype.np)


@register_op("RandomUniform", infer=_infer, attrs=("dtype",), rng=True, lowering=None)
def _uniform(m, rng, shape, dtype):
    return rng.random(ints(shape)).astype(dtype.np)


not_differentiable("RandomStandardNormal", "TruncatedNormal", "RandomUniform")


def get_seed(op_seed):
    """(seed, seed2) as TF computes them; (None, None) means nondeterministic."""
    g = get_default_graph()
    if g.seed is not None:
        return g.seed, (op_seed if op_seed is not None else g.version)
    if op_seed is not None:
        return DEFAULT_GRAPH_SEED, op_seed
    return None, None


def set_random_seed(seed):
    get_default_graph().seed = seed


def _shape_tensor(shape):
    if isinstance(shape, Tensor):
        return shape
    return tensor(np.asarray([int(d) for d in shape], np.int32))


def _random(op_type, shape, dtype, seed, name):
    dtype = dtypes.as_dtype(dtype)
    s1, s2 = get_seed(seed)
    return make(op_type, [_shape_tensor(shape)], {"dtype": dtype, "seed": s1, "seed2": s2},
                name=name)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    from xlapy.compat.v1.ops.math_ops import add, multiply
    g = get_default_graph()
    with g.name_scope(name or "random_normal") as scope:
        r = _random("RandomStandardNormal", shape, dtype, seed, "RandomStandardNormal")
        return add(multiply(r, tensor(stddev, dtype)), tensor(mean, dtype), name=scope)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    from xlapy.compat.v1.ops.math_ops import add, multiply
    g = get_default_graph()
    with g.name_scope(name or "truncated_normal") as scope:
        r = _random("TruncatedNormal", shape, dtype, seed, "TruncatedNormal")
        return add(multiply(r, tensor(stddev, dtype)), tensor(mean, dtype), name=scope)


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    from xlapy.compat.v1.ops.math_ops import add, multiply
    dtype = dtypes.as_dtype(dtype)
    if maxval is None:
        maxval = 1
    g = get_default_graph()
    with g.name_scope(name or "random_uniform") as scope:
        r = _random("RandomUniform", shape, dtype, seed, "RandomUniform")
        lo, hi = tensor(minval, dtype), tensor(maxval, dtype)
        from xlapy.compat.v1.ops.math_ops import subtract
        return add(multiply(r, subtract(hi, lo)), lo, name=scope)
