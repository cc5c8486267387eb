"""tf.contrib.opt: AdamWOptimizer (Adam with decoupled weight decay),
LazyAdamOptimizer, and ScipyOptimizerInterface / ExternalOptimizerInterface (minimizing
with scipy.optimize, external_optimizer.py).

LazyAdamOptimizer is TF's Adam variant that, for a sparse gradient (tf.IndexedSlices),
updates the moment accumulators and the variable only at the rows the gradient touches.
For dense gradients TF's LazyAdam is Adam, and in xlapy every gradient is dense (the
gradient of a gather or embedding_lookup is an UnsortedSegmentSum over the whole table), so
LazyAdamOptimizer here is AdamOptimizer under the name "LazyAdam": rows an update does not
touch still see their moments decay and move with them, as with tf.train.AdamOptimizer.
"""

from xlapy.compat.v1.contrib.opt.external_optimizer import (ExternalOptimizerInterface,
                                                            ScipyOptimizerInterface)
from xlapy.compat.v1.train.ftrl import AdamWOptimizer
from xlapy.compat.v1.train.optimizers import AdamOptimizer


class LazyAdamOptimizer(AdamOptimizer):
    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="LazyAdam"):
        super().__init__(learning_rate, beta1, beta2, epsilon, use_locking, name)


__all__ = ["AdamWOptimizer", "ExternalOptimizerInterface", "LazyAdamOptimizer",
           "ScipyOptimizerInterface"]
