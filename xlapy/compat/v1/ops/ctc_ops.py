"""tf.nn.ctc_loss, ctc_greedy_decoder, ctc_beam_search_decoder (TF 1.x's CTC; the blank is
the last class, num_classes - 1).

ctc_loss is composed of ordinary graph ops, so XLA compiles it and its gradient is the
gradient of those ops: the labels become the extended sequence l' (a blank before, between
and after the labels, [batch, 2U+1]), the log-softmax of the inputs is gathered at l'
([time, batch, 2U+1]), and one While over time runs the log-space forward recursion of
Graves et al. (TF's ctc_loss_calculator):

    alpha_t(s) = y_t(l'_s) + lse(alpha_{t-1}(s)    [l'_s blank, or ctc_merge_repeated],
                                 alpha_{t-1}(s-1),
                                 alpha_{t-1}(s-2)  [l'_s not blank, and l'_s != l'_{s-2}
                                                    unless not ctc_merge_repeated])

starting from alpha_{-1} = (0, -inf, ...); steps past a sequence's length keep alpha. The
loss is -lse(alpha_T(2L), alpha_T(2L-1)). "-inf" is a large finite negative (-1e30), so
the log-sum-exps and their gradients stay finite; the gradient w.r.t. the inputs is the
While gradient (backwards in time), which equals TF's softmax - posterior. A label sequence
too long for its input (no alignment) gives a loss of +inf, or 0 (and a zero gradient)
with ignore_longer_outputs_than_inputs.

The decoders have outputs of data-dependent sizes: they are executor ops with NumPy kernels.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import make_op, tensor
from xlapy.compat.v1.tensor_shape import TensorShape

_NEG = -1e30


def _tf():
    import xlapy.compat.v1 as tf
    return tf


def _dim(x, i):
    d = x.shape.dims[i] if x.shape.dims is not None else None
    return d if d is not None else _tf().shape(x)[i]


def _lse(parts, tf):
    """log(sum(exp(parts))) elementwise, stable, with a finite gradient everywhere."""
    m = parts[0]
    for p in parts[1:]:
        m = tf.maximum(m, p)
    m = tf.stop_gradient(m)
    return m + tf.log(tf.add_n([tf.exp(p - m) for p in parts]))


def _collapse_repeated(dense, lens, tf):
    """Labels with runs of a repeated label collapsed to one ([batch, U], new lengths)."""
    u = _dim(dense, 1)
    pos_ids = tf.range(u)
    valid = tf.less(pos_ids[None, :], lens[:, None])
    prev = tf.concat([tf.fill(tf.stack([_dim(dense, 0), 1]), -1), dense[:, :-1]], 1)
    keep = tf.logical_and(valid, tf.not_equal(dense, prev))
    new_pos = tf.cumsum(tf.cast(keep, tf.int32), axis=1) - 1
    hit = tf.logical_and(keep[:, :, None], tf.equal(new_pos[:, :, None], pos_ids[None, None, :]))
    out = tf.reduce_sum(tf.where(hit, tf.tile(dense[:, :, None], tf.stack([1, 1, u])),
                                 tf.zeros_like(hit, dtype=tf.int32)), axis=1)
    return out, tf.reduce_sum(tf.cast(keep, tf.int32), axis=1)


def _labels_dense(labels, batch, tf):
    """(labels [batch, U] int32, lengths [batch] int32) of a SparseTensor of labels."""
    vals = tf.cast(labels.values, tf.int32)
    dense = tf.sparse_to_dense(labels.indices, labels.dense_shape, vals, 0)
    rows = tf.cast(labels.indices[:, 0], tf.int32)
    lens = tf.unsorted_segment_sum(tf.ones_like(vals), rows, batch)
    return dense, lens


def ctc_loss(labels, inputs=None, sequence_length=None, preprocess_collapse_repeated=False,
             ctc_merge_repeated=True, ignore_longer_outputs_than_inputs=False,
             time_major=True, logits=None):
    """The negative log-probability of each label sequence ([batch]) under the CTC model
    of the logits `inputs` ([max_time, batch, num_classes], or batch-major)."""
    from xlapy.compat.v1.ops.control_flow_ops import build_while
    from xlapy.compat.v1.sparse_tensor import SparseTensor
    tf = _tf()
    if not isinstance(labels, SparseTensor):
        raise InvalidTypeError("Expected labels (first argument) to be a SparseTensor")
    if inputs is None:
        inputs = logits
    if sequence_length is None:
        raise InvalidArgumentError("ctc_loss needs sequence_length")
    with tf.get_default_graph().name_scope("CTCLoss"):
        x = tensor(inputs)
        if x.shape.ndims not in (None, 3):
            raise InvalidArgumentError(f"inputs must be 3-D [max_time, batch, num_classes], "
                                       f"got shape {x.shape}")
        if not x.dtype.is_floating:
            raise InvalidTypeError(f"ctc_loss inputs must be float, got {x.dtype.name}")
        if not time_major:
            x = tf.transpose(x, [1, 0, 2])
        dt = x.dtype
        steps, batch, classes = _dim(x, 0), _dim(x, 1), _dim(x, 2)
        seq = tf.cast(tensor(sequence_length), tf.int32)
        lp = tf.nn.log_softmax(x)                                   # [T, B, C]
        blank = classes - 1
        dense, lens = _labels_dense(labels, batch, tf)
        if preprocess_collapse_repeated:
            dense, lens = _collapse_repeated(dense, lens, tf)
        # the extended labels l' [B, S = 2U + 1]: blank, l1, blank, l2, ..., blank
        blanks = tf.fill(tf.shape(dense), blank)
        ext = tf.reshape(tf.stack([blanks, dense], 2), tf.stack([batch, -1]))
        ext = tf.concat([ext, tf.fill(tf.stack([batch, 1]), blank)], 1)
        s_len = _dim(ext, 1)
        is_blank = tf.equal(ext, blank)
        prev2 = tf.concat([tf.fill(tf.stack([batch, 2]), -1), ext[:, :-2]], 1)
        skip_ok = tf.logical_not(is_blank)
        if ctc_merge_repeated:
            skip_ok = tf.logical_and(skip_ok, tf.not_equal(ext, prev2))
        stay_ok = is_blank if not ctc_merge_repeated else tf.ones_like(is_blank)
        # y_t(l'_s) for every t: [T, B, S]
        onehot = tf.one_hot(ext, classes, dtype=dt)                 # [B, S, C]
        lpe = tf.matmul(tf.transpose(lp, [1, 0, 2]), onehot, transpose_b=True)
        lpe = tf.transpose(lpe, [1, 0, 2])
        neg = tf.constant(np.asarray(_NEG, dt.np))
        neg_bs = tf.fill(tf.shape(ext), neg)
        alpha0 = tf.concat([tf.zeros(tf.stack([batch, 1]), dt), neg_bs[:, 1:]], 1)

        def body(t, carry, rows):
            alpha, y = carry[0], rows[0]
            a1 = tf.concat([neg_bs[:, :1], alpha[:, :-1]], 1)
            a2 = tf.concat([neg_bs[:, :2], alpha[:, :-2]], 1)
            new = y + _lse([tf.where(stay_ok, alpha, neg_bs), a1,
                            tf.where(skip_ok, a2, neg_bs)], tf)
            active = tf.less(t, seq)[:, None]
            new = tf.where(tf.tile(active, tf.stack([1, s_len])), new, alpha)
            new.set_shape(alpha.shape)
            return [new], []

        _, (alpha,), _ = build_while([alpha0], [lpe], steps, body, name="ctc_forward")
        pos = tf.range(s_len)[None, :]
        last = tf.logical_or(tf.equal(pos, 2 * lens[:, None]),
                             tf.equal(pos, 2 * lens[:, None] - 1))
        ends = tf.where(last, alpha, neg_bs)
        top = tf.stop_gradient(tf.reduce_max(ends, axis=1, keepdims=True))
        loss = -(top[:, 0] + tf.log(tf.reduce_sum(tf.exp(ends - top), axis=1)))
        impossible = tf.greater(loss, tf.constant(np.asarray(-_NEG / 10, dt.np)))
        fill = tf.zeros_like(loss) if ignore_longer_outputs_than_inputs else \
            tf.fill(tf.shape(loss), tf.constant(np.asarray(np.inf, dt.np)))
        return tf.where(impossible, fill, loss)


# ---- decoders (executor ops) ------------------------------------------------------------------

def _check_decoder_inputs(op):
    x, seq = op.inputs
    if x.shape.ndims not in (None, 3):
        raise InvalidArgumentError(f"inputs is not a 3-Tensor: {x.shape}")
    if seq.dtype != dtypes.int32:
        raise InvalidTypeError(f"sequence_length must be int32, got {seq.dtype.name}")
    return x


def _sparse_specs():
    return [(dtypes.int64, TensorShape([None, 2])), (dtypes.int64, TensorShape([None])),
            (dtypes.int64, TensorShape([2]))]


def _greedy_infer(op):
    x = _check_decoder_inputs(op)
    b = x.shape.dims[1] if x.shape.ndims == 3 else None
    return _sparse_specs() + [(x.dtype, TensorShape([b, 1]))]


def _to_sparse(m, seqs: list):
    idx = [(b, i) for b, s in enumerate(seqs) for i in range(len(s))]
    vals = [v for s in seqs for v in s]
    width = max((len(s) for s in seqs), default=0)
    return (np.asarray(idx, np.int64).reshape(-1, 2), np.asarray(vals, np.int64),
            np.asarray([len(seqs), width], np.int64))


@register_op("CTCGreedyDecoder", infer=_greedy_infer, attrs=("merge_repeated",), lowering=None)
def _greedy(m, x, seq, merge_repeated=True):
    """Best path: the most likely class at each step, repeats merged, blanks removed."""
    x = np.asarray(x)
    steps, batch, classes = x.shape
    blank = classes - 1
    seqs, logp = [], np.zeros((batch, 1), x.dtype)
    for b in range(batch):
        out, prev = [], -1
        n = int(seq[b])
        if not 0 <= n <= steps:
            raise InvalidArgumentError(f"sequence_length({b}) = {n} is not in [0, {steps}]")
        for t in range(n):
            k = int(np.argmax(x[t, b]))
            logp[b, 0] -= x[t, b, k]
            if k != blank and not (merge_repeated and k == prev):
                out.append(k)
            prev = k
        seqs.append(out)
    return (*_to_sparse(m, seqs), logp)


def _beam_infer(op):
    x = _check_decoder_inputs(op)
    b = x.shape.dims[1] if x.shape.ndims == 3 else None
    k = op.get_attr("top_paths")
    return _sparse_specs() * k + [(x.dtype, TensorShape([b, k]))]


def _logsumexp2(a, b):
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    m = max(a, b)
    return m + np.log(np.exp(a - m) + np.exp(b - m))


def _add(beams: dict, prefix, pb, pl):
    ob, ol = beams.get(prefix, (-np.inf, -np.inf))
    beams[prefix] = (_logsumexp2(ob, pb), _logsumexp2(ol, pl))


def _beam_one(lp: np.ndarray, beam_width: int):
    """Prefix beam search over log-probabilities lp [T, C] (blank = C-1): the beams as
    {prefix: (log P ending in blank, log P ending in its last label)}."""
    blank = lp.shape[1] - 1
    beams = {(): (0.0, -np.inf)}
    for t in range(lp.shape[0]):
        nxt: dict = {}
        for prefix, (pb, pl) in beams.items():
            total = _logsumexp2(pb, pl)
            _add(nxt, prefix, total + lp[t, blank], -np.inf)
            if prefix:
                _add(nxt, prefix, -np.inf, pl + lp[t, prefix[-1]])
            for c in range(blank):
                prev = pb if prefix and prefix[-1] == c else total
                _add(nxt, prefix + (c,), -np.inf, prev + lp[t, c])
        ranked = sorted(nxt.items(), key=lambda kv: -_logsumexp2(*kv[1]))
        beams = dict(ranked[:beam_width])
    return sorted(((p, _logsumexp2(*v)) for p, v in beams.items()), key=lambda pv: -pv[1])


@register_op("CTCBeamSearchDecoder", infer=_beam_infer,
             attrs=("beam_width", "top_paths", "merge_repeated"), lowering=None)
def _beam(m, x, seq, beam_width=100, top_paths=1, merge_repeated=True):
    """Prefix beam search on the log-softmax of the inputs; merge_repeated then merges
    repeated labels within a beam's label sequence, as TF's decoder does."""
    dt = np.asarray(x).dtype
    x = np.asarray(x, np.float64)
    steps, batch, classes = x.shape
    lp = x - x.max(-1, keepdims=True)
    lp = lp - np.log(np.exp(lp).sum(-1, keepdims=True))
    paths = [[] for _ in range(top_paths)]
    logp = np.full((batch, top_paths), -np.inf)
    for b in range(batch):
        n = int(seq[b])
        if not 0 <= n <= steps:
            raise InvalidArgumentError(f"sequence_length({b}) = {n} is not in [0, {steps}]")
        ranked = _beam_one(lp[:n, b], beam_width)
        if len(ranked) < top_paths:
            raise InvalidArgumentError(f"the beam search found {len(ranked)} paths for batch "
                                       f"{b}, fewer than top_paths = {top_paths}")
        for k in range(top_paths):
            prefix, score = ranked[k]
            out = [c for i, c in enumerate(prefix)
                   if not (merge_repeated and i and prefix[i - 1] == c)]
            paths[k].append(out)
            logp[b, k] = score
    res = []
    for k in range(top_paths):
        res.extend(_to_sparse(m, paths[k]))
    return (*res, logp.astype(dt))


not_differentiable("CTCGreedyDecoder", "CTCBeamSearchDecoder")


def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True):
    """([SparseTensor of the decoded classes], neg_sum_logits [batch, 1])."""
    from xlapy.compat.v1.sparse_tensor import SparseTensor
    op = make_op("CTCGreedyDecoder", [tensor(inputs), tensor(sequence_length, dtypes.int32)],
                 {"merge_repeated": bool(merge_repeated)}, name="CTCGreedyDecoder")
    o = op.outputs
    return [SparseTensor(o[0], o[1], o[2])], o[3]


def ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1,
                            merge_repeated=True):
    """([top_paths SparseTensors, best first], log_probabilities [batch, top_paths])."""
    from xlapy.compat.v1.sparse_tensor import SparseTensor
    if top_paths < 1 or top_paths > beam_width:
        raise InvalidArgumentError(f"top_paths must be in [1, beam_width = {beam_width}], "
                                   f"got {top_paths}")
    op = make_op("CTCBeamSearchDecoder",
                 [tensor(inputs), tensor(sequence_length, dtypes.int32)],
                 {"beam_width": int(beam_width), "top_paths": int(top_paths),
                  "merge_repeated": bool(merge_repeated)}, name="CTCBeamSearchDecoder")
    o = op.outputs
    return ([SparseTensor(o[3 * k], o[3 * k + 1], o[3 * k + 2]) for k in range(top_paths)],
            o[-1])
