"""tf.keras.preprocessing.text: text_to_word_sequence, one_hot, hashing_trick and the
Tokenizer, as keras_preprocessing 1.1 (TF 1.15): index 0 is never a word, indices go by
decreasing count (ties in first-seen order), an oov_token takes index 1."""

from __future__ import annotations

import json
from collections import OrderedDict, defaultdict

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError

FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'


def text_to_word_sequence(text, filters=FILTERS, lower=True, split=" "):
    if lower:
        text = text.lower()
    text = text.translate(str.maketrans({c: split for c in filters}))
    return [w for w in text.split(split) if w]


def hashing_trick(text, n, hash_function=None, filters=FILTERS, lower=True, split=" "):
    """Each word's hash mod (n - 1) + 1 (0 is kept for padding). hash_function: Python's
    hash (varies between runs unless PYTHONHASHSEED is set), 'md5', or a function."""
    if hash_function is None:
        hash_function = hash
    elif hash_function == "md5":
        from hashlib import md5
        hash_function = lambda w: int(md5(w.encode()).hexdigest(), 16)
    return [hash_function(w) % (n - 1) + 1
            for w in text_to_word_sequence(text, filters=filters, lower=lower, split=split)]


def one_hot(text, n, filters=FILTERS, lower=True, split=" "):
    return hashing_trick(text, n, hash_function=hash, filters=filters, lower=lower,
                         split=split)


class Tokenizer:
    """Words (or characters with char_level=True) to indices by frequency. num_words keeps
    the indices below num_words when converting (word_index still holds every word)."""

    def __init__(self, num_words=None, filters=FILTERS, lower=True, split=" ",
                 char_level=False, oov_token=None, document_count=0, **kwargs):
        if kwargs:
            raise InvalidArgumentError(f"Unrecognized keyword arguments: {sorted(kwargs)}")
        self.word_counts: OrderedDict = OrderedDict()
        self.word_docs: dict = defaultdict(int)
        self.filters, self.split, self.lower = filters, split, lower
        self.num_words = num_words
        self.document_count = document_count
        self.char_level = char_level
        self.oov_token = oov_token
        self.index_docs: dict = defaultdict(int)
        self.word_index: dict = {}
        self.index_word: dict = {}

    def _seq(self, text):
        if self.char_level or isinstance(text, list):
            if self.lower:
                text = [t.lower() for t in text] if isinstance(text, list) else text.lower()
            return text
        return text_to_word_sequence(text, self.filters, self.lower, self.split)

    def fit_on_texts(self, texts):
        for text in texts:
            self.document_count += 1
            seq = self._seq(text)
            for w in seq:
                self.word_counts[w] = self.word_counts.get(w, 0) + 1
            for w in set(seq):
                self.word_docs[w] += 1
        wcounts = sorted(self.word_counts.items(), key=lambda x: x[1], reverse=True)
        vocab = ([] if self.oov_token is None else [self.oov_token]) + [w for w, _ in wcounts]
        self.word_index = dict(zip(vocab, range(1, len(vocab) + 1)))
        self.index_word = {c: w for w, c in self.word_index.items()}
        for w, c in list(self.word_docs.items()):
            self.index_docs[self.word_index[w]] = c

    def fit_on_sequences(self, sequences):
        self.document_count += len(sequences)
        for seq in sequences:
            for i in set(seq):
                self.index_docs[i] += 1

    def texts_to_sequences_generator(self, texts):
        num_words = self.num_words
        oov = self.word_index.get(self.oov_token)
        for text in texts:
            vect = []
            for w in self._seq(text):
                i = self.word_index.get(w)
                if i is not None:
                    if num_words and i >= num_words:
                        if oov is not None:
                            vect.append(oov)
                    else:
                        vect.append(i)
                elif self.oov_token is not None:
                    vect.append(oov)
            yield vect

    def texts_to_sequences(self, texts):
        return list(self.texts_to_sequences_generator(texts))

    def sequences_to_texts_generator(self, sequences):
        num_words = self.num_words
        oov = self.word_index.get(self.oov_token)
        for seq in sequences:
            vect = []
            for num in seq:
                word = self.index_word.get(num)
                if word is not None:
                    if num_words and num >= num_words:
                        if oov is not None:
                            vect.append(self.index_word[oov])
                    else:
                        vect.append(word)
                elif self.oov_token is not None:
                    vect.append(self.index_word[oov])
            yield " ".join(vect)

    def sequences_to_texts(self, sequences):
        return list(self.sequences_to_texts_generator(sequences))

    def texts_to_matrix(self, texts, mode="binary"):
        return self.sequences_to_matrix(self.texts_to_sequences(texts), mode=mode)

    def sequences_to_matrix(self, sequences, mode="binary"):
        """[len(sequences), num_words] float64: mode 'binary' (1 where present), 'count',
        'freq' (count / length) or 'tfidf' ((1 + log count) * log(1 + docs / (1 +
        docs with the word)))."""
        if mode not in ("binary", "count", "freq", "tfidf"):
            raise InvalidArgumentError(f"Unknown vectorization mode: {mode}")
        if not self.num_words:
            if not self.word_index:
                raise InvalidArgumentError("Specify a dimension (`num_words` argument), or fit "
                                           "on some text data first.")
            num_words = len(self.word_index) + 1
        else:
            num_words = self.num_words
        if mode == "tfidf" and not self.document_count:
            raise InvalidArgumentError("Fit the Tokenizer on some data before using tfidf "
                                       "mode.")
        x = np.zeros((len(sequences), num_words))
        for i, seq in enumerate(sequences):
            if not seq:
                continue
            counts: dict = defaultdict(int)
            for j in seq:
                if j < num_words:
                    counts[j] += 1
            for j, c in counts.items():
                if mode == "count":
                    x[i][j] = c
                elif mode == "freq":
                    x[i][j] = c / len(seq)
                elif mode == "binary":
                    x[i][j] = 1
                else:
                    idf = np.log(1 + self.document_count / (1 + self.index_docs.get(j, 0)))
                    x[i][j] = (1 + np.log(c)) * idf
        return x

    def get_config(self):
        return {"num_words": self.num_words, "filters": self.filters, "lower": self.lower,
                "split": self.split, "char_level": self.char_level,
                "oov_token": self.oov_token, "document_count": self.document_count,
                "word_counts": json.dumps(self.word_counts),
                "word_docs": json.dumps(self.word_docs),
                "index_docs": json.dumps(self.index_docs),
                "index_word": json.dumps(self.index_word),
                "word_index": json.dumps(self.word_index)}

    def to_json(self, **kwargs):
        return json.dumps({"class_name": "Tokenizer", "config": self.get_config()}, **kwargs)


def tokenizer_from_json(json_string):
    config = dict(json.loads(json_string)["config"])
    parsed = {k: json.loads(config.pop(k)) for k in ("word_counts", "word_docs", "index_docs",
                                                     "word_index", "index_word")}
    t = Tokenizer(**config)
    t.word_counts = OrderedDict(parsed["word_counts"])
    t.word_docs = defaultdict(int, parsed["word_docs"])
    t.index_docs = defaultdict(int, {int(k): v for k, v in parsed["index_docs"].items()})
    t.index_word = {int(k): v for k, v in parsed["index_word"].items()}
    t.word_index = parsed["word_index"]
    return t
