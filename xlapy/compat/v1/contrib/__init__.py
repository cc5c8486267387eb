"""tf.contrib: contrib.compiler.jit (experimental_jit_scope), contrib.rnn, contrib.layers
(regularizers, conv2d, batch_norm, pooling, dropout), contrib.framework."""

from xlapy.compat.v1.contrib import compiler
from xlapy.compat.v1.contrib import framework
from xlapy.compat.v1.contrib import layers
from xlapy.compat.v1.contrib import opt
from xlapy.compat.v1.contrib import rnn
from xlapy.compat.v1.contrib import slim
