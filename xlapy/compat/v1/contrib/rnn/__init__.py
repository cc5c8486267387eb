"""tf.contrib.rnn: the RNN cells of tf.nn.rnn_cell, static_rnn and
static_bidirectional_rnn."""

from xlapy.compat.v1.ops.rnn_cell import (BasicLSTMCell, BasicRNNCell, DeviceWrapper,
                                          DropoutWrapper, GRUCell, LSTMCell, LSTMStateTuple,
                                          MultiRNNCell, ResidualWrapper, RNNCell)
from xlapy.compat.v1.ops.rnn_ops import (bidirectional_dynamic_rnn, static_bidirectional_rnn,
                                         static_rnn)

__all__ = ["BasicLSTMCell", "BasicRNNCell", "DeviceWrapper", "DropoutWrapper", "GRUCell",
           "LSTMCell", "LSTMStateTuple", "MultiRNNCell", "ResidualWrapper", "RNNCell",
           "bidirectional_dynamic_rnn", "static_bidirectional_rnn", "static_rnn"]
