"""TF 1.x top-level math additions (segment reductions, special functions, edit distance,
...) and the functions tf.math / tf.linalg / tf.sparse / tf.sets take from here."""

from __future__ import annotations

__all__: list = []
