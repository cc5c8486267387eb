"""tf.contrib.learn.datasets.base: the Dataset / Datasets namedtuples and the CSV loaders
of the TF 1.x tutorials (load_csv_with_header for tf.contrib.learn's iris quickstart).

load_csv_with_header reads TF's CSV layout: a header row whose first two fields are the
number of samples and of features (the rest, e.g. class names, is ignored), then one row
per sample holding the features and, at target_column (default the last), the target;
load_csv_without_header reads the rows alone. Both return Dataset(data, target) as NumPy
arrays of features_dtype [n, features] and target_dtype [n]. Nothing is downloaded:
maybe_download returns the file when it is already in the work directory.
"""

from __future__ import annotations

import collections
import csv
import os

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, NotFoundError

Dataset = collections.namedtuple("Dataset", ["data", "target"])
Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


def _rows(filename):
    try:
        with open(filename, newline="") as f:
            return [row for row in csv.reader(f) if row]
    except OSError as e:
        raise NotFoundError(f"{filename}: {e.strerror or e}") from None


def _as(values, dtype, filename, line, what):
    try:
        return np.asarray(values, dtype=dtype)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{filename}, line {line}: the {what} {values!r} is not "
                                   f"a valid {np.dtype(dtype).name}") from None


def _pop_target(row, target_column, filename, line):
    try:
        return row.pop(target_column)
    except IndexError:
        raise InvalidArgumentError(f"{filename}, line {line}: no column {target_column} in a "
                                   f"row of {len(row)} fields") from None


def load_csv_with_header(filename, target_dtype, features_dtype, target_column=-1):
    """Dataset(data [n_samples, n_features], target [n_samples]) of a CSV file whose header
    row starts with n_samples, n_features."""
    rows = _rows(filename)
    if not rows:
        raise InvalidArgumentError(f"{filename} is empty: expected a header row "
                                   "'n_samples,n_features,...'")
    header = rows[0]
    try:
        n_samples, n_features = int(header[0]), int(header[1])
    except (IndexError, ValueError):
        raise InvalidArgumentError(f"{filename}: the header row must start with the number "
                                   f"of samples and of features, got {header!r}") from None
    if len(rows) - 1 > n_samples:
        raise InvalidArgumentError(f"{filename}: the header says {n_samples} samples but "
                                   f"there are {len(rows) - 1} rows")
    data = np.zeros((n_samples, n_features), dtype=features_dtype)
    target = np.zeros((n_samples,), dtype=target_dtype)
    for i, row in enumerate(rows[1:]):
        line = i + 2
        target[i] = _as(_pop_target(row, target_column, filename, line), target_dtype,
                        filename, line, "target")
        if len(row) != n_features:
            raise InvalidArgumentError(f"{filename}, line {line}: {len(row)} features, the "
                                       f"header says {n_features}")
        data[i] = _as(row, features_dtype, filename, line, "features")
    return Dataset(data=data, target=target)


def load_csv_without_header(filename, target_dtype, features_dtype, target_column=-1):
    """Dataset(data, target) of a CSV file of samples only (no header row)."""
    data, target = [], []
    for i, row in enumerate(_rows(filename)):
        target.append(_pop_target(row, target_column, filename, i + 1))
        data.append(_as(row, features_dtype, filename, i + 1, "features"))
    if len({len(r) for r in data}) > 1:
        raise InvalidArgumentError(f"{filename}: the rows have different numbers of fields")
    return Dataset(data=np.array(data, dtype=features_dtype),
                   target=_as(target, target_dtype, filename, "*", "targets"))


def load_iris(data_path=None):
    from xlapy.compat.v1.contrib.learn import datasets  # (the package imports this module)
    return datasets.load_iris(data_path)


def load_boston(data_path=None):
    from xlapy.compat.v1.contrib.learn import datasets  # (the package imports this module)
    return datasets.load_boston(data_path)


def maybe_download(filename, work_directory, source_url):
    """work_directory/filename when it is there; nothing is downloaded."""
    path = os.path.join(work_directory, filename)
    if not os.path.exists(path):
        raise NotFoundError(f"{path} is not on this machine and xlapy downloads nothing "
                            f"(its source: {source_url}); put the file there")
    return path


__all__ = ["Dataset", "Datasets", "load_boston", "load_csv_with_header",
           "load_csv_without_header", "load_iris", "maybe_download"]
