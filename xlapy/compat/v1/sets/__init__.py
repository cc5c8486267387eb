"""tf.sets: set operations on the last dimension of dense or sparse tensors."""

from __future__ import annotations
