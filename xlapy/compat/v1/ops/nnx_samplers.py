"""tf.nn.fixed_unigram_candidate_sampler and tf.nn.learned_unigram_candidate_sampler.

Both return (sampled_candidates int64 [num_sampled], true_expected_count float32 like
true_classes, sampled_expected_count float32 [num_sampled]). Classes are drawn by inverse
CDF from a weight per class, P(c) = w_c / sum(w); with unique=True draws are repeated until
num_sampled distinct classes came out. Expected counts are TF's: p * num_sampled when the
number of draws equals num_sampled (always so without unique), else the probability of
appearing in that many draws, 1 - (1 - p)^draws.

  fixed    the weights are `unigrams` (or the last field of each line of the CSV-like
           vocab_file, read when the graph is built) raised to `distortion`, after
           num_reserved_ids classes of weight 0; with num_shards > 1 only the classes c with
           c % num_shards == shard are kept, and the sampled values index that list. The
           number of weights kept must be range_max.
  learned  every class of [0, range_max) starts with weight 1 and gains 1 each time it is
           one of the true classes of a run (after that run's draw); the weights live in
           the session, as TF's op keeps them in its kernel (not in checkpoints).

They draw with the op's generator (seeded like every random op; values differ from TF's
Philox stream) and run in the executor (no XLA lowering).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InternalError, InvalidArgumentError
from xlapy.compat.v1.op_registry import get_op_def, not_differentiable, register_op
from xlapy.compat.v1.ops._common import make_op, tensor
from xlapy.compat.v1.ops.math_ops import cast
from xlapy.compat.v1.ops.random_ops import get_seed
from xlapy.compat.v1.tensor_shape import TensorShape

_ATTRS = ("num_true", "num_sampled", "unique", "range_max")


def _infer(op):
    t = op.inputs[0]
    if t.shape.ndims not in (None, 2):
        raise InvalidArgumentError(f"true_classes must be a matrix, got {t.shape.tf_str()} "
                                   f"for '{op.name}' (op: '{op.type}')")
    nt = op.get_attr("num_true")
    if t.shape.ndims == 2 and t.shape.dims[1] not in (None, nt):
        raise InvalidArgumentError(f"true_classes must have num_true columns, expected: "
                                   f"{t.shape.dims[1]} was: {nt}")
    ns = op.get_attr("num_sampled")
    return [(dtypes.int64, TensorShape([ns])), (dtypes.float32, t.shape),
            (dtypes.float32, TensorShape([ns]))]


def expected_count(p, tries, num_sampled):
    p = np.asarray(p, np.float64)
    if tries == num_sampled:
        return (p * num_sampled).astype(np.float32)
    return (-np.expm1(tries * np.log1p(-np.minimum(p, 1.0 - 1e-12)))).astype(np.float32)


def sample(rng, weights, true_classes, num_sampled, unique):
    """(sampled, true expected counts, sampled expected counts) from class weights."""
    w = np.asarray(weights, np.float64)
    total = w.sum()
    cdf = np.cumsum(w)

    def draw(k):
        return np.minimum(np.searchsorted(cdf, rng.random(k) * total, side="right"),
                          len(w) - 1)
    if unique:
        if np.count_nonzero(w) < num_sampled:
            raise InvalidArgumentError(f"the sampler has {np.count_nonzero(w)} classes of "
                                       f"nonzero weight for {num_sampled} unique samples")
        seen, out, tries = set(), [], 0
        while len(out) < num_sampled:
            for v in draw(num_sampled - len(out)):
                tries += 1
                if int(v) not in seen:
                    seen.add(int(v))
                    out.append(int(v))
                    if len(out) == num_sampled:
                        break
        sampled = np.asarray(out, np.int64)
    else:
        sampled, tries = draw(num_sampled).astype(np.int64), num_sampled
    probs = w / total
    tc = np.asarray(true_classes, np.int64)
    inside = (tc >= 0) & (tc < len(w))
    p_true = np.where(inside, probs[np.clip(tc, 0, len(w) - 1)], 0.0)
    return (sampled, expected_count(p_true, tries, num_sampled),
            expected_count(probs[sampled], tries, num_sampled))


# ---- fixed -----------------------------------------------------------------------------------

@register_op("FixedUnigramCandidateSampler", infer=_infer,
             attrs=_ATTRS + ("weights",), rng=True, lowering=None)
def _fixed(m, rng, true_classes, num_true=1, num_sampled=1, unique=True, range_max=1,
           weights=()):
    return sample(rng, weights, true_classes, num_sampled, unique)


def _read_vocab(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                out.append(float(line.split(",")[-1]))
    return out


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                    vocab_file="", distortion=1.0, num_reserved_ids=0,
                                    num_shards=1, shard=0, unigrams=(), seed=None, name=None):
    """Samples classes from a fixed unigram distribution (see the module doc)."""
    if vocab_file and len(unigrams):
        raise InvalidArgumentError("Only one of vocab_file and unigrams may be given")
    if not vocab_file and not len(unigrams):
        raise InvalidArgumentError("Must provide either vocab_file or unigrams")
    if num_shards < 1 or not 0 <= shard < num_shards:
        raise InvalidArgumentError(f"shard must be in [0, num_shards), got shard={shard}, "
                                   f"num_shards={num_shards}")
    base = _read_vocab(vocab_file) if vocab_file else [float(u) for u in unigrams]
    if any(u < 0 for u in base):
        raise InvalidArgumentError("unigram weights must be non-negative")
    full = [0.0] * int(num_reserved_ids) + [u ** float(distortion) for u in base]
    weights = tuple(w for c, w in enumerate(full) if c % num_shards == shard)
    if len(weights) != int(range_max):
        raise InvalidArgumentError(f"range_max ({range_max}) must be the number of classes "
                                   f"of the shard ({len(weights)}: {num_reserved_ids} reserved "
                                   f"ids and {len(base)} unigrams over {num_shards} shards)")
    if sum(weights) <= 0:
        raise InvalidArgumentError("the unigram weights sum to zero")
    return _sampler("FixedUnigramCandidateSampler", true_classes, num_true, num_sampled,
                    unique, range_max, seed, name, weights=weights)


# ---- learned ---------------------------------------------------------------------------------

@register_op("LearnedUnigramCandidateSampler", infer=_infer, attrs=_ATTRS, rng=True,
             lowering=None)
def _learned(m, rng, true_classes, **attrs):
    """Never called: the executor runs the op with extra["executor"] (its weights live in
    the session)."""
    raise InternalError("LearnedUnigramCandidateSampler runs through its executor hook")


def _learned_executor(session, op):
    """Runs the op on the session's weights for it (they grow with the true classes)."""
    num_sampled, unique = op.get_attr("num_sampled"), op.get_attr("unique")
    n = op.get_attr("range_max")
    rng = session._rng_for(op)
    if not hasattr(session, "_xlapy_unigram_counts"):
        session._xlapy_unigram_counts = {}
    counts = session._xlapy_unigram_counts

    def run(true_classes):
        w = counts.get(op)
        if w is None:
            w = counts[op] = np.ones(n, np.float64)
        tc = np.asarray(true_classes, np.int64)
        if tc.size and (tc.min() < 0 or tc.max() >= n):
            raise InvalidArgumentError(f"true_classes must be in [0, {n}), got values in "
                                       f"[{tc.min()}, {tc.max()}]\n\t [[{op.name}]]")
        out = sample(rng, w, tc, num_sampled, unique)
        np.add.at(w, tc.reshape(-1), 1.0)
        return list(out)
    return run


get_op_def("LearnedUnigramCandidateSampler").extra.update(executor=_learned_executor,
                                                          host_random=False)
get_op_def("FixedUnigramCandidateSampler").extra["host_random"] = False
not_differentiable("FixedUnigramCandidateSampler", "LearnedUnigramCandidateSampler")


def _sampler(op_type, true_classes, num_true, num_sampled, unique, range_max, seed, name,
             **extra):
    tc = tensor(true_classes)
    if tc.dtype != dtypes.int64:
        tc = cast(tc, dtypes.int64)
    if int(num_sampled) < 1 or int(range_max) < 1:
        raise InvalidArgumentError(f"num_sampled and range_max must be positive, got "
                                   f"{num_sampled} and {range_max}")
    if unique and int(num_sampled) > int(range_max):
        raise InvalidArgumentError(f"Sampler's range is too small: {range_max} classes for "
                                   f"{num_sampled} unique samples")
    s1, s2 = get_seed(seed)
    op = make_op(op_type, [tc], {"num_true": int(num_true), "num_sampled": int(num_sampled),
                                 "unique": bool(unique), "range_max": int(range_max),
                                 "seed": s1, "seed2": s2, **extra},
                 name=name or op_type)
    return tuple(op.outputs)


def learned_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                      seed=None, name=None):
    """Samples classes from the unigram distribution of the true classes seen so far."""
    return _sampler("LearnedUnigramCandidateSampler", true_classes, num_true, num_sampled,
                    unique, range_max, seed, name)
