"""Skip-gram word2vec with noise-contrastive estimation: xlapy's version of TF 1.x's
word2vec_basic.py tutorial (module name `tensorflow` replaced by `xlapy.compat.v1`), on a
small corpus that this script writes itself (no download).

    .venv/bin/python examples/tf1/word2vec_basic.py              # the executor
    .venv/bin/python examples/tf1/word2vec_basic.py --xla        # session-level XLA (ON_1)
    .venv/bin/python examples/tf1/word2vec_basic.py --compare    # both, then the speedup

The corpus: --sentences sentences drawn (seeded) from a handful of templates over word
classes ("the brown dog eats the bread near the river", "three cows sleep in the barn",
...). Words of one class fill the same slots, so they share contexts, and skip-gram should
place them near each other. The model is the tutorial's: an embedding matrix looked up by
the centre word, tf.nn.nce_loss against the context word with --num_sampled negative
samples from the log-uniform sampler (the vocabulary is sorted by frequency, as the sampler
assumes), plain SGD (1.0). Every --eval_every steps the nearest neighbours (cosine) of a few
words are printed; at the end the share of each word's --top_k neighbours that belong to
its own class (a random embedding gives about 1/6).
"""

from __future__ import annotations

import argparse
import collections
import sys

import numpy as np
from _common import add_mode_flags, load_tf, run_modes, session_config, train

tf = load_tf()   # xlapy.compat.v1 (or TensorFlow's, see _common.py)

FLAGS = None

# word classes: each template slot draws from one
CLASSES = {
    "animal": ["dog", "cat", "cow", "horse", "sheep", "goat", "mouse", "duck"],
    "food": ["bread", "fish", "apple", "grass", "cheese", "corn", "seeds", "milk"],
    "colour": ["red", "green", "blue", "black", "white", "brown", "grey", "yellow"],
    "place": ["river", "barn", "field", "forest", "garden", "house", "hill", "road"],
    "number": ["two", "three", "four", "five", "six", "seven", "eight", "nine"],
    "eats": ["eats", "likes", "wants", "finds", "steals", "smells"],
    "moves": ["sleeps", "runs", "walks", "sits", "waits", "hides"],
}
TEMPLATES = [
    "the {colour} {animal} {eats} the {food}",
    "the {animal} {eats} the {food} near the {place}",
    "a {animal} {moves} in the {place}",
    "{number} {animal} {moves} by the {place}",
    "the {colour} {food} is in the {place}",
    "{number} {colour} {animal} {eats} {number} {food}",
]


def make_corpus(sentences: int, seed: int) -> list[str]:
    """The word sequence of `sentences` sentences drawn from TEMPLATES."""
    rng = np.random.default_rng(seed)
    words = []
    for _ in range(sentences):
        t = TEMPLATES[rng.integers(len(TEMPLATES))]
        fields = t.split()
        for f in fields:
            if f.startswith("{"):
                options = CLASSES[f[1:-1]]
                words.append(options[rng.integers(len(options))])
            else:
                words.append(f)
    return words


def build_dataset(words):
    """(ids of the words, word -> id, id -> word); ids sorted by frequency, most common 0."""
    count = collections.Counter(words).most_common()
    dictionary = {w: i for i, (w, _) in enumerate(count)}
    data = np.array([dictionary[w] for w in words], np.int32)
    return data, dictionary, {i: w for w, i in dictionary.items()}


class BatchGenerator:
    """The tutorial's generate_batch: for each centre word, num_skips of its context words
    within skip_window, walking through the corpus (wrapping at its end)."""

    def __init__(self, data, batch_size, num_skips, skip_window, seed):
        assert batch_size % num_skips == 0 and num_skips <= 2 * skip_window
        self.data, self.index = data, 0
        self.batch_size, self.num_skips, self.skip_window = batch_size, num_skips, skip_window
        self.rng = np.random.default_rng(seed)

    def next(self):
        span = 2 * self.skip_window + 1
        batch = np.empty(self.batch_size, np.int32)
        labels = np.empty((self.batch_size, 1), np.int32)
        n = len(self.data)
        for i in range(self.batch_size // self.num_skips):
            window = self.data[(self.index + np.arange(span)) % n]
            context = [w for w in range(span) if w != self.skip_window]
            picks = self.rng.choice(context, self.num_skips, replace=False)
            for j, w in enumerate(picks):
                batch[i * self.num_skips + j] = window[self.skip_window]
                labels[i * self.num_skips + j, 0] = window[w]
            self.index = (self.index + 1) % n
        return batch, labels


def class_agreement(similarity: np.ndarray, valid_ids, reverse, top_k: int) -> float:
    """Share of each valid word's top_k neighbours (itself excluded) of its own class."""
    cls = {w: c for c, ws in CLASSES.items() for w in ws}
    hits = total = 0
    for row, i in zip(similarity, valid_ids):
        nearest = [j for j in (-row).argsort() if j != i][:top_k]
        hits += sum(cls.get(reverse[j]) == cls[reverse[i]] for j in nearest)
        total += top_k
    return hits / total


def run_training(xla: bool) -> dict:
    """Train; return the class agreement, the losses, times and the cluster summary."""
    words = make_corpus(FLAGS.sentences, FLAGS.seed)
    data, dictionary, reverse = build_dataset(words)
    vocabulary_size = len(dictionary)
    print(f"corpus: {len(words)} words, vocabulary {vocabulary_size}")
    batches = BatchGenerator(data, FLAGS.batch_size, FLAGS.num_skips, FLAGS.skip_window,
                             FLAGS.seed)
    # the words whose neighbours are shown and scored: every class word
    valid_words = [w for ws in CLASSES.values() for w in ws]
    valid_ids = np.array([dictionary[w] for w in valid_words], np.int32)

    with tf.Graph().as_default():
        tf.set_random_seed(FLAGS.seed)
        train_inputs = tf.placeholder(tf.int32, shape=[FLAGS.batch_size])
        train_labels = tf.placeholder(tf.int32, shape=[FLAGS.batch_size, 1])
        valid_dataset = tf.constant(valid_ids, dtype=tf.int32)
        with tf.name_scope("embeddings"):
            embeddings = tf.Variable(tf.random_uniform([vocabulary_size, FLAGS.embedding_size],
                                                       -1.0, 1.0))
            embed = tf.nn.embedding_lookup(embeddings, train_inputs)
        with tf.name_scope("weights"):
            nce_weights = tf.Variable(tf.truncated_normal(
                [vocabulary_size, FLAGS.embedding_size],
                stddev=1.0 / np.sqrt(FLAGS.embedding_size)))
        with tf.name_scope("biases"):
            nce_biases = tf.Variable(tf.zeros([vocabulary_size]))
        with tf.name_scope("loss"):
            loss = tf.reduce_mean(tf.nn.nce_loss(weights=nce_weights, biases=nce_biases,
                                                 labels=train_labels, inputs=embed,
                                                 num_sampled=FLAGS.num_sampled,
                                                 num_classes=vocabulary_size))
        with tf.name_scope("optimizer"):
            optimizer = tf.train.GradientDescentOptimizer(FLAGS.learning_rate).minimize(loss)
        norm = tf.sqrt(tf.reduce_sum(tf.square(embeddings), 1, keepdims=True))
        normalized_embeddings = embeddings / norm
        valid_embeddings = tf.nn.embedding_lookup(normalized_embeddings, valid_dataset)
        similarity = tf.matmul(valid_embeddings, normalized_embeddings, transpose_b=True)
        init = tf.global_variables_initializer()

        with tf.Session(config=session_config(tf, xla)) as sess:
            sess.run(init)
            losses = []

            def next_feed(step):
                batch_inputs, batch_labels = batches.next()
                return {train_inputs: batch_inputs, train_labels: batch_labels}

            def report(step, feed, loss, seconds):
                losses.append(float(loss))
                if (step + 1) % FLAGS.eval_every == 0:
                    print(f"Average loss at step {step + 1}: "
                          f"{np.mean(losses[-FLAGS.eval_every:]):.4f}")
                    sim = sess.run(similarity)
                    for k in range(0, len(valid_words), 8):
                        nearest = [reverse[j] for j in (-sim[k]).argsort()[1:6]]
                        print(f"  Nearest to {valid_words[k]}: {', '.join(nearest)}")

            r = train(sess, [optimizer, loss], FLAGS.steps, next_feed, report)
            sim = sess.run(similarity)
            r["agreement"] = class_agreement(sim, valid_ids, reverse, FLAGS.top_k)
            print(f"class agreement of the top {FLAGS.top_k} neighbours: {r['agreement']:.3f}")
    return r


def main(_):
    return run_modes(FLAGS, run_training, lambda r: f"class agreement {r['agreement']:.3f}")


def parse_flags(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--sentences", type=int, default=20000, help="Corpus size")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--batch_size", type=int, default=128)
    parser.add_argument("--embedding_size", type=int, default=32)
    parser.add_argument("--skip_window", type=int, default=1)
    parser.add_argument("--num_skips", type=int, default=2)
    parser.add_argument("--num_sampled", type=int, default=16, help="Negative samples")
    parser.add_argument("--learning_rate", type=float, default=1.0)
    parser.add_argument("--eval_every", type=int, default=1000)
    parser.add_argument("--top_k", type=int, default=3)
    add_mode_flags(parser)
    return parser.parse_known_args(argv)


if __name__ == "__main__":
    FLAGS, unparsed = parse_flags(sys.argv[1:])
    tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
