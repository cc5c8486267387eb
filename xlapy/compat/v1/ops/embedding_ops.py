"""Embeddings and sampled losses: embedding_lookup (sharded params, partition_strategy,
max_norm), the log-uniform and uniform candidate samplers, nce_loss and
sampled_softmax_loss.

Sharded params are concatenated in shard order and looked up with one gather, each id
mapped to its row: "mod" puts id i in shard i % n at row i // n, "div" gives each shard a
contiguous range (the first `total % n` shards one row more), as TF's
partition_strategy. Gathers differentiate densely (see gather_ops).

The candidate samplers are random ops (seeded like every TF random op; in a compiled
cluster the classes are drawn on the host and the expected counts of the true classes are
computed in the program):
LogUniformCandidateSampler draws classes with P(c) = log((c + 2) / (c + 1)) / log(range + 1)
(Zipf-like, for vocabularies sorted by frequency), by TF's inverse-CDF rule
floor(exp(u * log(range + 1))) - 1; with unique=True it redraws until num_sampled distinct
classes came out, and the expected counts account for the number of draws made
(1 - (1 - p)^draws), as TF's samplers report them.
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor, get_default_graph
from xlapy.compat.v1.op_registry import get_op_def, not_differentiable, register_op
from xlapy.compat.v1.ops._common import make_op, tensor
from xlapy.compat.v1.ops.array_ops import (concat, expand_dims, ones_like, reshape, shape,
                                           stop_gradient, zeros_like)
from xlapy.compat.v1.ops.gather_ops import gather
from xlapy.compat.v1.ops.index_ops import where
from xlapy.compat.v1.ops.math_ops import (add, cast, equal, floordiv, floormod, log, matmul,
                                          maximum, multiply, reduce_any, reduce_sum,
                                          subtract, truediv)
from xlapy.compat.v1.tensor_shape import TensorShape

# ---- embedding_lookup ------------------------------------------------------------------------


def _shard_rows(p) -> object:
    d = p.shape.dims[0] if p.shape.dims else None
    return d if d is not None else shape(p)[0]


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True,
                     max_norm=None):
    """params[ids] for params given whole or as a list of shards."""
    if isinstance(params, (list, tuple)):
        shards = [tensor(p) for p in params]
    else:
        shards = [tensor(params)]
    if not shards:
        raise InvalidArgumentError("Need at least one param")
    if partition_strategy not in ("mod", "div"):
        raise InvalidArgumentError(f"Unrecognized partition strategy: {partition_strategy}")
    with get_default_graph().name_scope(name or "embedding_lookup"):
        ids = tensor(ids)
        n = len(shards)
        if n == 1:
            out = gather(shards[0], ids)
        else:
            table = concat(shards, 0)
            rows = [_shard_rows(p) for p in shards]
            total = sum(rows) if all(isinstance(r, int) for r in rows) else \
                reduce_sum(concat([reshape(r, [1]) if isinstance(r, Tensor) else
                                   tensor(np.asarray([r], np.int32)) for r in rows], 0))
            out = gather(table, _global_rows(ids, n, rows, total, partition_strategy))
        if max_norm is not None:
            from xlapy.compat.v1.ops.clip_ops import clip_by_norm
            r = out.shape.ndims
            ri = ids.shape.ndims
            if r is None or ri is None:
                raise InvalidArgumentError("embedding_lookup with max_norm needs known ranks")
            out = clip_by_norm(out, max_norm, axes=list(range(ri, r)))
        return out


def _i(v, like):
    return tensor(np.asarray(v, like.dtype.np)) if not isinstance(v, Tensor) else \
        (cast(v, like.dtype) if v.dtype != like.dtype else v)


def _global_rows(ids, n, rows, total, strategy):
    """The row of each id in the concatenation of the shards."""
    offsets = [0]
    for r in rows[:-1]:
        offsets.append(offsets[-1] + r if isinstance(r, int) and isinstance(offsets[-1], int)
                       else add(_i(offsets[-1], ids), _i(r, ids)))
    if strategy == "mod":
        shard = floormod(ids, _i(n, ids))
        row = floordiv(ids, _i(n, ids))
    else:
        tot = _i(total, ids)
        per = floordiv(tot, _i(n, ids))
        extras = floormod(tot, _i(n, ids))
        big = add(per, _i(1, ids))
        shard = maximum(floordiv(ids, big), floordiv(subtract(ids, extras), maximum(
            per, _i(1, ids))))
        from xlapy.compat.v1.ops.math_ops import less
        row = where(less(shard, extras), floormod(ids, big),
                    floormod(subtract(ids, extras), maximum(per, _i(1, ids))))
    off = gather(concat([reshape(_i(o, ids), [1]) for o in offsets], 0), shard)
    return add(off, row)


# ---- candidate samplers ----------------------------------------------------------------------

def _sampler_infer(op):
    ns = op.get_attr("num_sampled")
    t = op.inputs[0]
    return [(dtypes.int64, TensorShape([ns])), (dtypes.float32, t.shape),
            (dtypes.float32, TensorShape([ns]))]


def _log_uniform_p(c, range_max):
    c = np.asarray(c, np.float64)
    return (np.log(c + 2.0) - np.log(c + 1.0)) / math.log(range_max + 1.0)


def _sample(rng, kind, num_sampled, unique, range_max):
    def draw(k):
        u = rng.random(k)
        if kind == "log_uniform":
            v = np.floor(np.exp(u * math.log(range_max + 1.0))).astype(np.int64) - 1
        else:
            v = np.floor(u * range_max).astype(np.int64)
        return np.clip(v, 0, range_max - 1)
    if not unique:
        return draw(num_sampled), num_sampled
    if num_sampled > range_max:
        raise InvalidArgumentError(f"Sampler's range is too small: {range_max} classes for "
                                   f"{num_sampled} unique samples")
    seen, out, tries = set(), [], 0
    while len(out) < num_sampled:
        for v in draw(num_sampled - len(out)):
            tries += 1
            if v not in seen:
                seen.add(v)
                out.append(v)
                if len(out) == num_sampled:
                    break
    return np.asarray(out, np.int64), tries


def _expected(m, p, tries, num_sampled, unique):
    if unique:
        return -m.expm1(tries * m.log1p(-m.minimum(p, 1 - 1e-12)))
    return p * num_sampled


def _sampler_draw(kind):
    """The random part, which does not read the true classes: (sampled, the sampled
    classes' expected counts, the number of draws made)."""
    def draw(rng, num_true=1, num_sampled=1, unique=True, range_max=1):
        sampled, tries = _sample(rng, kind, num_sampled, unique, range_max)
        p = _log_uniform_p(sampled, range_max) if kind == "log_uniform" else \
            np.full(sampled.shape, 1.0 / range_max)
        samp_e = _expected(np, p, float(tries), num_sampled, unique).astype(np.float32)
        return sampled, samp_e, np.asarray(tries, np.float64)
    return draw


def _sampler_finish(kind):
    """The outputs from the drawn values and the true classes, with array module m (NumPy
    in the executor, xlapy.numpy in a compiled cluster): the true classes' expected counts
    are a function of the classes and the number of draws."""
    def finish(m, true_classes, drawn, num_true=1, num_sampled=1, unique=True, range_max=1):
        sampled, samp_e, tries = drawn
        c = m.asarray(true_classes).astype(np.float64)
        if kind == "log_uniform":
            p = (m.log(c + 2.0) - m.log(c + 1.0)) / math.log(range_max + 1.0)
        else:
            p = m.zeros_like(c) + 1.0 / range_max
        true_e = _expected(m, p, tries, num_sampled, unique).astype(np.float32)
        return sampled, true_e, samp_e
    return finish


def _sampler_kernel(kind):
    draw, finish = _sampler_draw(kind), _sampler_finish(kind)

    def kernel(m, rng, true_classes, **attrs):
        return finish(np, true_classes, draw(rng, **attrs), **attrs)
    return kernel


_SAMPLER_ATTRS = ("num_true", "num_sampled", "unique", "range_max")
for _t, _k in (("LogUniformCandidateSampler", "log_uniform"),
               ("UniformCandidateSampler", "uniform")):
    register_op(_t, infer=_sampler_infer, attrs=_SAMPLER_ATTRS, rng=True, lowering=None)(
        _sampler_kernel(_k))
    # compiled: the host draws the classes (jit/launch.HostRandom), the cluster computes
    # the true classes' expected counts, so the sampler joins its training step's cluster
    get_op_def(_t).extra["host_split"] = (_sampler_draw(_k), _sampler_finish(_k))
not_differentiable("LogUniformCandidateSampler", "UniformCandidateSampler")


def _sampler(op_type, true_classes, num_true, num_sampled, unique, range_max, seed, name):
    from xlapy.compat.v1.ops.random_ops import get_seed
    tc = tensor(true_classes)
    if tc.dtype != dtypes.int64:
        tc = cast(tc, dtypes.int64)
    s1, s2 = get_seed(seed)
    op = make_op(op_type, [tc], {"num_true": int(num_true), "num_sampled": int(num_sampled),
                                 "unique": bool(unique), "range_max": int(range_max),
                                 "seed": s1, "seed2": s2}, name=name)
    return tuple(op.outputs)


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                  seed=None, name=None):
    """(sampled_candidates, true_expected_count, sampled_expected_count)."""
    return _sampler("LogUniformCandidateSampler", true_classes, num_true, num_sampled, unique,
                    range_max, seed, name)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                              seed=None, name=None):
    return _sampler("UniformCandidateSampler", true_classes, num_true, num_sampled, unique,
                    range_max, seed, name)


# ---- sampled losses --------------------------------------------------------------------------

def _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                    sampled_values, subtract_log_q, remove_accidental_hits,
                    partition_strategy, seed):
    """(logits [batch, num_true + num_sampled], labels of the same shape): the true
    classes' logits, then the sampled classes', each minus log(expected count)."""
    inputs = tensor(inputs)
    labels = cast(tensor(labels), dtypes.int64)
    if labels.shape.ndims == 1:
        labels = expand_dims(labels, -1)
    labels_flat = reshape(labels, [-1])
    if sampled_values is None:
        sampled_values = log_uniform_candidate_sampler(labels, num_true, num_sampled, True,
                                                       num_classes, seed=seed)
    sampled, true_exp, samp_exp = (stop_gradient(tensor(s)) for s in sampled_values)
    sampled = cast(sampled, dtypes.int64)
    true_w = embedding_lookup(weights, labels_flat, partition_strategy)
    samp_w = embedding_lookup(weights, sampled, partition_strategy)
    true_b = embedding_lookup(biases, labels_flat, partition_strategy)
    samp_b = embedding_lookup(biases, sampled, partition_strategy)
    # true logits: each example's input dotted with each of its num_true classes
    dim = inputs.shape.dims[-1] if inputs.shape.dims else None
    tw = reshape(true_w, [-1, num_true, dim if dim is not None else -1])
    true_logits = add(reduce_sum(multiply(expand_dims(inputs, 1), tw), -1),
                      reshape(true_b, [-1, num_true]))
    samp_logits = add(matmul(inputs, samp_w, transpose_b=True), samp_b)
    if remove_accidental_hits:
        hit = reduce_any(equal(expand_dims(labels, 2), reshape(sampled, [1, 1, -1])), 1)
        lowest = tensor(np.asarray(np.finfo(samp_logits.dtype.np).min, samp_logits.dtype.np))
        samp_logits = add(samp_logits, where(hit, multiply(ones_like(samp_logits), lowest),
                                             zeros_like(samp_logits)))
    if subtract_log_q:
        true_logits = subtract(true_logits, log(cast(true_exp, true_logits.dtype)))
        samp_logits = subtract(samp_logits, log(cast(samp_exp, samp_logits.dtype)))
    logits = concat([true_logits, samp_logits], 1)
    labels_out = concat([truediv(ones_like(true_logits),
                                 tensor(np.asarray(num_true, true_logits.dtype.np))),
                         zeros_like(samp_logits)], 1)
    return logits, labels_out


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
             sampled_values=None, remove_accidental_hits=False, partition_strategy="mod",
             name="nce_loss", seed=None):
    """Noise-contrastive estimation: per example, the logistic losses of its true classes
    (label 1/num_true) and of the sampled classes (label 0), summed."""
    from xlapy.compat.v1.ops.nn_ops import sigmoid_cross_entropy_with_logits
    with get_default_graph().name_scope(name):
        logits, labels_ = _sampled_logits(weights, biases, labels, inputs, num_sampled,
                                          num_classes, num_true, sampled_values, True,
                                          remove_accidental_hits, partition_strategy, seed)
        losses = sigmoid_cross_entropy_with_logits(labels=labels_, logits=logits)
        return reduce_sum(losses, 1)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes,
                         num_true=1, sampled_values=None, remove_accidental_hits=True,
                         partition_strategy="mod", name="sampled_softmax_loss", seed=None):
    """Softmax cross entropy over the true classes and the sampled ones only."""
    from xlapy.compat.v1.ops.nn_ops import softmax_cross_entropy_with_logits
    with get_default_graph().name_scope(name):
        logits, labels_ = _sampled_logits(weights, biases, labels, inputs, num_sampled,
                                          num_classes, num_true, sampled_values, True,
                                          remove_accidental_hits, partition_strategy, seed)
        return softmax_cross_entropy_with_logits(labels=stop_gradient(labels_),
                                                 logits=logits)


# ---- embedding_lookup_sparse ------------------------------------------------------------------

def embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy="mod", name=None,
                            combiner=None, max_norm=None):
    """Per row of sp_ids (a SparseTensor [batch, ids], rows in order), the combination of
    its ids' embeddings weighted by sp_weights' values (or 1): "sum", "mean" (divided by
    the sum of weights) or "sqrtn" (by the root of the sum of squared weights). As TF's,
    the result has max(row) + 1 rows (SegmentSum, in the executor); the gather of the
    embeddings and its gradient (a segment sum into params) compile. TF first looks up
    the unique ids and gathers them back: the same rows, so one gather does it here."""
    from xlapy.compat.v1.ops.gather_ops import segment_sum
    from xlapy.compat.v1.ops.math_ops import pow as pow_, sqrt
    from xlapy.compat.v1.sparse_tensor import SparseTensor
    if combiner is None:
        combiner = "mean"
    if combiner not in ("mean", "sqrtn", "sum"):
        raise InvalidArgumentError("combiner must be one of 'mean', 'sqrtn' or 'sum'")
    if not isinstance(sp_ids, SparseTensor):
        raise InvalidTypeError("sp_ids must be SparseTensor")
    if sp_weights is not None:
        if not isinstance(sp_weights, SparseTensor):
            raise InvalidTypeError("sp_weights must be either None or SparseTensor")
        sp_weights.values.shape.assert_is_compatible_with(sp_ids.values.shape)
        sp_weights.indices.shape.assert_is_compatible_with(sp_ids.indices.shape)
    with get_default_graph().name_scope(name or "embedding_lookup_sparse"):
        segment_ids = cast(sp_ids.indices[:, 0], dtypes.int32)
        emb = embedding_lookup(params, sp_ids.values, partition_strategy, max_norm=max_norm)
        if sp_weights is not None:
            w = sp_weights.values
            if w.dtype != emb.dtype:
                w = cast(w, emb.dtype)
            er = emb.shape.ndims
            if er is None:
                raise InvalidArgumentError("embedding_lookup_sparse needs the rank of params")
            wb = w
            for _ in range(er - 1):
                wb = expand_dims(wb, -1)
            emb = multiply(emb, wb)
        else:
            w = cast(ones_like(segment_ids), emb.dtype)
        summed = segment_sum(emb, segment_ids)
        if combiner == "sum":
            return summed
        if combiner == "mean":
            denom = segment_sum(w, segment_ids)
        else:
            denom = sqrt(segment_sum(pow_(w, tensor(np.asarray(2, emb.dtype.np))), segment_ids))
        for _ in range((summed.shape.ndims or 2) - 1):
            denom = expand_dims(denom, -1)
        return truediv(summed, denom)
