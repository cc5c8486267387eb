"""tf.random.poisson and the stateless random ops (tf.random.stateless_uniform,
tf.random.stateless_normal).

RandomPoissonV2 draws Poisson(lam) samples shaped shape + lam.shape with the op's
generator (seeded like every random op); it has no gradient, as TF's.

The stateless ops are pure functions of (shape, seed): seed is a [2] int32/int64 tensor
and the same seed gives the same values, run after run and session after session. The
values come from NumPy's generator seeded with the two seed values (taken mod 2**64), so
they differ from TF's Philox stream; only their distribution and determinism match. They
run in the executor (no XLA lowering).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import ints, make, partial_shape_value, tensor
from xlapy.compat.v1.ops.math_ops import add, multiply
from xlapy.compat.v1.ops.random_ops import _shape_tensor, get_seed
from xlapy.compat.v1.tensor_shape import unknown_shape

_POISSON_TYPES = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)


# ---- poisson ---------------------------------------------------------------------------------

def _poisson_infer(op):
    shp, lam = op.inputs
    s = partial_shape_value(shp)
    dt = op.get_attr("dtype")
    if s.ndims is None or lam.shape.ndims is None:
        return [(dt, unknown_shape())]
    return [(dt, s.concatenate(lam.shape))]


@register_op("RandomPoissonV2", infer=_poisson_infer, attrs=("dtype",), rng=True,
             lowering=None)
def _poisson(m, rng, shape, rate, dtype=dtypes.float32):
    lam = np.asarray(rate, np.float64)
    if np.any(lam < 0) or np.any(np.isnan(lam)):
        raise InvalidArgumentError("random_poisson: lam must be non-negative")
    out_shape = list(ints(shape)) + list(lam.shape)
    return rng.poisson(np.broadcast_to(lam, out_shape)).astype(dtype.np)


not_differentiable("RandomPoissonV2")


def random_poisson(lam, shape, dtype=dtypes.float32, seed=None, name=None):
    """Samples of Poisson(lam), shaped shape + lam.shape."""
    dtype = dtypes.as_dtype(dtype)
    if dtype not in _POISSON_TYPES:
        raise InvalidArgumentError(f"random_poisson: dtype must be one of "
                                   f"{[d.name for d in _POISSON_TYPES]}, got {dtype.name}")
    lam = tensor(lam)
    if lam.dtype not in _POISSON_TYPES:
        lam = tensor(lam, dtypes.float32)
    s1, s2 = get_seed(seed)
    return make("RandomPoissonV2", [_shape_tensor(shape), lam],
                {"dtype": dtype, "seed": s1, "seed2": s2}, name=name or "random_poisson")


poisson = random_poisson


# ---- stateless -------------------------------------------------------------------------------

def _stateless_infer(op):
    seed = op.inputs[1]
    if seed.shape.ndims is not None and seed.shape.as_list() != [2]:
        raise InvalidArgumentError(f"seed must have shape [2], not {seed.shape.as_list()} "
                                   f"for '{op.name}' (op: '{op.type}')")
    dt = op.get_attr("dtype") if "dtype" in op._attrs else op.inputs[2].dtype
    return [(dt, partial_shape_value(op.inputs[0]))]


def _generator(seed):
    s = np.reshape(np.asarray(seed), [-1])
    if s.size != 2:
        raise InvalidArgumentError(f"seed must have shape [2], not {list(np.shape(seed))}")
    return np.random.default_rng([int(v) % 2 ** 64 for v in s])


@register_op("StatelessRandomUniform", infer=_stateless_infer, attrs=("dtype",),
             lowering=None, const_inputs=(0,))
def _stateless_uniform(m, shape, seed, dtype=dtypes.float32):
    return _generator(seed).random(ints(shape)).astype(dtype.np)


@register_op("StatelessRandomNormal", infer=_stateless_infer, attrs=("dtype",),
             lowering=None, const_inputs=(0,))
def _stateless_normal(m, shape, seed, dtype=dtypes.float32):
    return _generator(seed).standard_normal(ints(shape)).astype(dtype.np)


@register_op("StatelessRandomUniformInt", infer=_stateless_infer, lowering=None,
             const_inputs=(0,))
def _stateless_uniform_int(m, shape, seed, minval, maxval):
    lo, hi = int(minval), int(maxval)
    if lo >= hi:
        raise InvalidArgumentError(f"Need minval < maxval, got {lo} >= {hi}")
    dt = np.asarray(minval).dtype
    return _generator(seed).integers(lo, hi, ints(shape)).astype(dt)


not_differentiable("StatelessRandomUniform", "StatelessRandomNormal",
                   "StatelessRandomUniformInt")


def _seed_tensor(seed):
    s = tensor(seed) if hasattr(seed, "op") else tensor(np.asarray(seed, np.int64))
    if s.dtype not in (dtypes.int32, dtypes.int64):
        raise InvalidArgumentError(f"seed must be int32 or int64, got {s.dtype.name}")
    if s.shape.ndims is not None and s.shape.as_list() != [2]:
        raise InvalidArgumentError(f"seed must have shape [2], not {s.shape.as_list()}")
    return s


def stateless_random_uniform(shape, seed, minval=0, maxval=None, dtype=dtypes.float32,
                             name=None):
    """Uniform values in [minval, maxval), a deterministic function of seed ([2] ints)."""
    dtype = dtypes.as_dtype(dtype)
    with get_default_graph().name_scope(name or "stateless_random_uniform"):
        shp, s = _shape_tensor(shape), _seed_tensor(seed)
        if dtype.is_integer:
            if dtype not in (dtypes.int32, dtypes.int64):
                raise InvalidArgumentError(f"stateless_random_uniform: integer dtype must be "
                                           f"int32 or int64, got {dtype.name}")
            if maxval is None:
                raise InvalidArgumentError(f"Must specify maxval for integer dtype "
                                           f"{dtype.name}")
            return make("StatelessRandomUniformInt",
                        [shp, s, tensor(minval, dtype), tensor(maxval, dtype)])
        if not dtype.is_floating:
            raise InvalidArgumentError(f"stateless_random_uniform: invalid dtype {dtype.name}")
        u = make("StatelessRandomUniform", [shp, s], {"dtype": dtype})
        maxval = 1 if maxval is None else maxval
        lo, hi = tensor(minval, dtype), tensor(maxval, dtype)
        return add(multiply(u, hi - lo), lo)


def stateless_random_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32,
                            name=None):
    """Normal values, a deterministic function of seed ([2] ints)."""
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise InvalidArgumentError(f"stateless_random_normal: dtype must be floating, got "
                                   f"{dtype.name}")
    with get_default_graph().name_scope(name or "stateless_random_normal"):
        n = make("StatelessRandomNormal", [_shape_tensor(shape), _seed_tensor(seed)],
                 {"dtype": dtype})
        return add(multiply(n, tensor(stddev, dtype)), tensor(mean, dtype))
