"""tf.estimator.inputs.numpy_input_fn: an input_fn over NumPy arrays (a dict of features, or
one array), batched, shuffled and repeated as TF's was, through tf.data; pandas_input_fn: the
same over a pandas DataFrame's columns (pandas is optional: without it pandas_input_fn
raises)."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None,
                   queue_capacity=1000, num_threads=1):
    if shuffle is None or not isinstance(shuffle, bool):
        raise InvalidTypeError(f"shuffle must be provided and explicitly set as boolean "
                               f"(it is recommended to set it as True for training); got "
                               f"{shuffle!r}")
    features = x if isinstance(x, dict) else None
    arrays = dict(features) if features is not None else {"__x": x}
    arrays = {k: np.asarray(v) for k, v in arrays.items()}
    n = {len(v) for v in arrays.values()}
    if y is not None:
        y_arrays = {k: np.asarray(v) for k, v in y.items()} if isinstance(y, dict) \
            else {"__y": np.asarray(y)}
        n |= {len(v) for v in y_arrays.values()}
    if len(n) != 1:
        raise InvalidArgumentError(f"numpy_input_fn: x and y must have the same length, got "
                                   f"lengths {sorted(n)}")
    length = n.pop()

    def input_fn():
        from xlapy.compat.v1.data.dataset import Dataset
        xs = arrays if features is not None else arrays["__x"]
        if y is None:
            ds = Dataset.from_tensor_slices(xs)
        else:
            ys = y_arrays if isinstance(y, dict) else y_arrays["__y"]
            ds = Dataset.from_tensor_slices((xs, ys))
        if shuffle:
            ds = ds.shuffle(max(int(queue_capacity), 1) if length > queue_capacity
                            else length)
        ds = ds.repeat(num_epochs).batch(int(batch_size))
        return ds.make_one_shot_iterator().get_next()
    return input_fn


class _PandasNotInstalledError(ImportError, TypeError):
    """pandas_input_fn called where pandas cannot be imported (TF raised TypeError; this is
    an ImportError as well)."""


def pandas_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None,
                    queue_capacity=1000, num_threads=1, target_column="target"):
    """An input_fn over the columns of DataFrame x (features keyed by column name) and the
    Series (or DataFrame) y, which must have x's index; returns features, or (features,
    target): target y's values, or a dict by y's column names for a DataFrame y."""
    try:
        import pandas as pd  # (optional dependency: only this function needs it)
    except ImportError as e:
        raise _PandasNotInstalledError("pandas_input_fn should not be called without pandas "
                                      "installed (import pandas failed)") from e
    if not isinstance(shuffle, bool):
        raise InvalidTypeError(f"shuffle must be provided and explicitly set as boolean "
                               f"(it is recommended to set it as True for training); got "
                               f"{shuffle!r}")
    if not isinstance(target_column, str):
        raise InvalidTypeError("target_column must be a string type")
    if not isinstance(x, pd.DataFrame):
        raise InvalidTypeError(f"pandas_input_fn: x must be a pandas DataFrame, got "
                               f"{type(x).__name__}")
    features = {c: x[c].to_numpy() for c in x.columns}
    target = None
    if y is not None:
        if not isinstance(y, (pd.Series, pd.DataFrame)):
            raise InvalidTypeError(f"pandas_input_fn: y must be a pandas Series or DataFrame, "
                                   f"got {type(y).__name__}")
        if target_column in x.columns:
            raise InvalidArgumentError(f"Cannot use name {target_column} for target column: "
                                       f"DataFrame already has a column with that name: "
                                       f"{list(x.columns)}")
        if not np.array_equal(np.asarray(x.index), np.asarray(y.index)):
            raise InvalidArgumentError(f"Index for x and y are mismatched.\nIndex for x: "
                                       f"{list(x.index)}\nIndex for y: {list(y.index)}")
        target = ({c: y[c].to_numpy() for c in y.columns} if isinstance(y, pd.DataFrame)
                  else y.to_numpy())
    if queue_capacity is None:
        queue_capacity = 4 * len(x) if shuffle else len(x)
    return numpy_input_fn(features, target, batch_size=batch_size, num_epochs=num_epochs,
                          shuffle=shuffle, queue_capacity=queue_capacity,
                          num_threads=num_threads)
