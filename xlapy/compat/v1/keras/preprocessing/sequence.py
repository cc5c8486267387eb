"""tf.keras.preprocessing.sequence: pad_sequences, make_sampling_table, skipgrams and
TimeseriesGenerator, as keras_preprocessing 1.1."""

from __future__ import annotations

import random

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre",
                  value=0.0):
    """A [len(sequences), maxlen] array: each sequence truncated to maxlen (dropping its
    start with truncating='pre', its end with 'post') and padded with `value` before
    ('pre') or after ('post'). maxlen defaults to the longest sequence."""
    if not hasattr(sequences, "__len__"):
        raise InvalidArgumentError("`sequences` must be iterable.")
    if padding not in ("pre", "post"):
        raise InvalidArgumentError(f'Padding type "{padding}" not understood')
    if truncating not in ("pre", "post"):
        raise InvalidArgumentError(f'Truncating type "{truncating}" not understood')
    lengths, sample_shape, found = [], (), False
    for x in sequences:
        try:
            lengths.append(len(x))
        except TypeError:
            raise InvalidArgumentError(f"`sequences` must be a list of iterables. Found "
                                       f"non-iterable: {x}") from None
        if not found and len(x):
            sample_shape, found = np.asarray(x).shape[1:], True
    if maxlen is None:
        maxlen = int(np.max(lengths)) if lengths else 0
    is_str = np.issubdtype(dtype, np.str_)
    if isinstance(value, str) and dtype is not object and not is_str:
        raise InvalidArgumentError(f"`dtype` {dtype} is not compatible with `value`'s type: "
                                   f"{type(value)}\nYou should set `dtype=object` for "
                                   f"variable length strings.")
    out = np.full((len(sequences), maxlen) + tuple(sample_shape), value, dtype=dtype)
    for i, s in enumerate(sequences):
        if not len(s) or maxlen == 0:
            continue
        trunc = np.asarray(s[-maxlen:] if truncating == "pre" else s[:maxlen], dtype=dtype)
        if trunc.shape[1:] != tuple(sample_shape):
            raise InvalidArgumentError(f"Shape of sample {trunc.shape[1:]} of sequence at "
                                       f"position {i} is different from expected shape "
                                       f"{sample_shape}")
        if padding == "post":
            out[i, :len(trunc)] = trunc
        else:
            out[i, -len(trunc):] = trunc
    return out


def make_sampling_table(size, sampling_factor=1e-5):
    """The probability of keeping word rank i (Zipf's law estimate, word2vec's formula)."""
    gamma = 0.577
    rank = np.arange(size)
    rank[0] = 1
    inv_fq = rank * (np.log(rank) + gamma) + 0.5 - 1.0 / (12.0 * rank)
    f = sampling_factor * inv_fq
    return np.minimum(1.0, f / np.sqrt(f))


def skipgrams(sequence, vocabulary_size, window_size=4, negative_samples=1.0, shuffle=True,
              categorical=False, sampling_table=None, seed=None):
    """(couples, labels): [word, context] pairs within window_size labelled 1, and
    negative_samples times as many [word, random word] pairs labelled 0 (index 0 is
    skipped as padding), as keras_preprocessing."""
    couples, labels = [], []
    for i, wi in enumerate(sequence):
        if not wi:
            continue
        if sampling_table is not None and sampling_table[wi] < random.random():
            continue
        for j in range(max(0, i - window_size), min(len(sequence), i + window_size + 1)):
            if j != i and sequence[j]:
                couples.append([wi, sequence[j]])
                labels.append([0, 1] if categorical else 1)
    if negative_samples > 0:
        n = int(len(labels) * negative_samples)
        words = [c[0] for c in couples]
        random.shuffle(words)
        couples += [[words[i % len(words)], random.randint(1, vocabulary_size - 1)]
                    for i in range(n)]
        labels += [[1, 0] if categorical else 0] * n
    if shuffle:
        if seed is None:
            seed = random.randint(0, int(10e6))
        random.seed(seed)
        random.shuffle(couples)
        random.seed(seed)
        random.shuffle(labels)
    return couples, labels
