"""tf.queue: TF 1.15's queue classes under their own namespace (the same classes as tf.*)."""

from xlapy.compat.v1.ops.queue_more import PaddingFIFOQueue, PriorityQueue
from xlapy.compat.v1.ops.queue_ops import FIFOQueue, QueueBase, RandomShuffleQueue

__all__ = ["FIFOQueue", "PaddingFIFOQueue", "PriorityQueue", "QueueBase", "RandomShuffleQueue"]
