"""TF 1.x's "Premade Estimators" tutorial (premade_estimator.py): a DNNClassifier with two
hidden layers of 10 units classifies iris flowers from their four measurements, module
name `tensorflow` replaced by `xlapy.compat.v1`.

    .venv/bin/python examples/tf1/premade_estimator.py              # the executor
    .venv/bin/python examples/tf1/premade_estimator.py --xla        # session-level XLA
    .venv/bin/python examples/tf1/premade_estimator.py --compare    # both

The tutorial downloads iris_training.csv (120 flowers) and iris_test.csv (30); here the
same 150 flowers come from mlxtend's copy of the dataset (installed by make), split 120/30
by a fixed permutation. Training: tf.data input functions (shuffle, repeat, batch 100),
--train_steps steps of Adagrad (the DNNClassifier default); then evaluate on the test set
and predict the tutorial's three example flowers (expected: Setosa, Versicolor,
Virginica).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time

import numpy as np
from _common import load_tf, session_config

tf = load_tf()   # xlapy.compat.v1 (or TensorFlow's, see _common.py)

CSV_COLUMN_NAMES = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth", "Species"]
SPECIES = ["Setosa", "Versicolor", "Virginica"]
# the tutorial's examples to predict, and their species
PREDICT_X = {"SepalLength": [5.1, 5.9, 6.9], "SepalWidth": [3.3, 3.0, 3.1],
             "PetalLength": [1.7, 4.2, 5.4], "PetalWidth": [0.5, 1.5, 2.1]}
EXPECTED = ["Setosa", "Versicolor", "Virginica"]

FLAGS = None


def load_data(seed: int = 0):
    """(train_x, train_y), (test_x, test_y): dicts of feature columns and int labels."""
    from mlxtend.data import iris_data
    x, y = iris_data()
    order = np.random.default_rng(seed).permutation(len(y))
    x, y = x[order].astype(np.float32), y[order].astype(np.int64)

    def as_dict(rows):
        return {name: rows[:, i] for i, name in enumerate(CSV_COLUMN_NAMES[:4])}
    return (as_dict(x[:120]), y[:120]), (as_dict(x[120:]), y[120:])


def train_input_fn(features, labels, batch_size):
    dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))
    return dataset.shuffle(1000, seed=1).repeat().batch(batch_size)


def eval_input_fn(features, labels, batch_size):
    inputs = dict(features) if labels is None else (dict(features), labels)
    return tf.data.Dataset.from_tensor_slices(inputs).batch(batch_size)


def run(xla: bool) -> dict:
    (train_x, train_y), (test_x, test_y) = load_data()
    columns = [tf.feature_column.numeric_column(key=key) for key in train_x]
    config = tf.estimator.RunConfig(tf_random_seed=FLAGS.seed,
                                    session_config=session_config(tf, xla))
    classifier = tf.estimator.DNNClassifier(
        feature_columns=columns, hidden_units=[10, 10], n_classes=3,
        model_dir=tempfile.mkdtemp(prefix="premade_estimator_"), config=config)
    start = time.perf_counter()
    classifier.train(input_fn=lambda: train_input_fn(train_x, train_y, FLAGS.batch_size),
                     steps=FLAGS.train_steps)
    seconds = time.perf_counter() - start
    result = classifier.evaluate(input_fn=lambda: eval_input_fn(test_x, test_y,
                                                                FLAGS.batch_size))
    predictions = list(classifier.predict(
        input_fn=lambda: eval_input_fn(PREDICT_X, None, FLAGS.batch_size)))
    predicted = [SPECIES[int(p["class_ids"][0])] for p in predictions]
    probability = [float(p["probabilities"][p["class_ids"][0]]) for p in predictions]
    return {"accuracy": float(result["accuracy"]), "average_loss": float(result["average_loss"]),
            "predicted": predicted, "probability": probability, "train_seconds": seconds}


def main(argv) -> int:
    global FLAGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", default=100, type=int, help="batch size")
    parser.add_argument("--train_steps", default=1000, type=int,
                        help="number of training steps")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--xla", action="store_true", help="Turn XLA JIT compilation on")
    parser.add_argument("--compare", action="store_true", help="Train without and with XLA")
    FLAGS = parser.parse_args(argv)
    modes = [False, True] if FLAGS.compare else [FLAGS.xla]
    for xla in modes:
        r = run(xla)
        print(f"[{'XLA' if xla else 'no XLA'}] trained {FLAGS.train_steps} steps in "
              f"{r['train_seconds']:.2f} s; test set accuracy: {r['accuracy']:0.3f}")
        for got, p, want in zip(r["predicted"], r["probability"], EXPECTED):
            print(f'  prediction is "{got}" ({100 * p:.1f}%), expected "{want}"')
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
