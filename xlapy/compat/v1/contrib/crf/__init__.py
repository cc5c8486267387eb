"""tf.contrib.crf: the linear-chain conditional random field of TF 1.x (crf.py), as
BiLSTM-CRF taggers use it.

    log_likelihood, trans = tf.contrib.crf.crf_log_likelihood(logits, tags, lengths)
    loss = tf.reduce_mean(-log_likelihood)
    decoded, best_score = tf.contrib.crf.crf_decode(logits, trans, lengths)

The forward algorithm (crf_log_norm) and Viterbi decoding (crf_decode) run the TF cells
(CrfForwardRnnCell, CrfDecodeForwardRnnCell, CrfDecodeBackwardRnnCell) through dynamic_rnn,
one While op over time, so a training step and its gradient compile into one XLA cluster.
viterbi_decode is TF's NumPy function, for decoding outside the graph.
"""

from xlapy.compat.v1.contrib.crf.crf_ops import (CrfDecodeBackwardRnnCell,
                                                 CrfDecodeForwardRnnCell, CrfForwardRnnCell,
                                                 crf_binary_score, crf_decode,
                                                 crf_log_likelihood, crf_log_norm,
                                                 crf_multitag_sequence_score,
                                                 crf_sequence_score, crf_unary_score,
                                                 viterbi_decode)

__all__ = ["CrfDecodeBackwardRnnCell", "CrfDecodeForwardRnnCell", "CrfForwardRnnCell",
           "crf_binary_score", "crf_decode", "crf_log_likelihood", "crf_log_norm",
           "crf_multitag_sequence_score", "crf_sequence_score", "crf_unary_score",
           "viterbi_decode"]
