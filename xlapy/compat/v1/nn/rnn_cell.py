"""tf.nn.rnn_cell: the RNN cells (also tf.contrib.rnn)."""

from xlapy.compat.v1.ops.rnn_cell import (BasicLSTMCell, BasicRNNCell, DeviceWrapper,
                                          DropoutWrapper, GRUCell, LSTMCell, LSTMStateTuple,
                                          MultiRNNCell, ResidualWrapper, RNNCell)

__all__ = ["BasicLSTMCell", "BasicRNNCell", "DeviceWrapper", "DropoutWrapper", "GRUCell",
           "LSTMCell", "LSTMStateTuple", "MultiRNNCell", "ResidualWrapper", "RNNCell"]
