"""TF 1.x top-level framework utilities (tf.IndexedSlices, tf.is_tensor, tf.init_scope,
...) that scripts and library code use."""

from __future__ import annotations

__all__: list = []
