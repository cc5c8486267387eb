"""tf.estimator.inputs.numpy_input_fn: an input_fn over NumPy arrays (a dict of features, or
one array), batched, shuffled and repeated as TF's was, through tf.data."""

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
