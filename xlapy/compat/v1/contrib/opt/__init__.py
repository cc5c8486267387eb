"""tf.contrib.opt: AdamWOptimizer (Adam with decoupled weight decay)."""

from xlapy.compat.v1.train.ftrl import AdamWOptimizer

__all__ = ["AdamWOptimizer"]
