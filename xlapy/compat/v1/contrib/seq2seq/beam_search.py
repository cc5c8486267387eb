"""tf.contrib.seq2seq.tile_batch (of TF's beam_search_decoder.py): every batch entry
repeated multiplier times, as beam search needs its memory and initial state."""

from __future__ import annotations

from xlapy.compat.v1 import nest
from xlapy.compat.v1.errors import InvalidArgumentError


def _tile_one(t, multiplier):
    import xlapy.compat.v1 as tf
    t = tf.convert_to_tensor(t, name="t")
    if t.shape.ndims is None:
        raise InvalidArgumentError("t must have statically known rank")
    if t.shape.ndims == 0:
        raise InvalidArgumentError("tile_batch needs tensors of rank >= 1 (a batch axis)")
    tiling = [1, multiplier] + [1] * (t.shape.ndims - 1)
    tiled = tf.tile(tf.expand_dims(t, 1), tiling)
    rest = tf.shape(t)[1:]
    out = tf.reshape(tiled, tf.concat([[-1], rest], 0))
    b = t.shape.dims[0]
    out.set_shape([None if b is None else b * multiplier] + t.shape.as_list()[1:])
    return out


def tile_batch(t, multiplier, name=None):
    """t (a nested structure of [batch, ...] tensors) as [batch * multiplier, ...]: entry b
    repeated multiplier times at rows b * multiplier ... (b + 1) * multiplier - 1."""
    import xlapy.compat.v1 as tf
    with tf.name_scope(name or "tile_batch"):
        return nest.map_structure(lambda x: _tile_one(x, int(multiplier)), t)
