"""tf.contrib.rnn: the RNN cells of tf.nn.rnn_cell (and the block cells as the cells they
compute), LayerNormBasicLSTMCell, static_rnn, static_bidirectional_rnn and the stacked
bidirectional RNNs; the projection, attention and highway wrappers, UGRNNCell, IndRNNCell,
CoupledInputForgetGateLSTMCell, NASCell (more_cells.py), LSTMBlockFusedCell and the
convolutional LSTMs (fused_conv.py)."""

from xlapy.compat.v1.ops.rnn_cell import (BasicLSTMCell, BasicRNNCell, DeviceWrapper,
                                          DropoutWrapper, GRUCell, LSTMCell, LSTMStateTuple,
                                          MultiRNNCell, ResidualWrapper, RNNCell)
from xlapy.compat.v1.ops.rnn_ops import (bidirectional_dynamic_rnn, static_bidirectional_rnn,
                                         static_rnn)
from xlapy.compat.v1.contrib.rnn.block_cells import GRUBlockCell, GRUBlockCellV2, LSTMBlockCell
from xlapy.compat.v1.contrib.rnn.layer_norm_lstm import LayerNormBasicLSTMCell
from xlapy.compat.v1.contrib.rnn.more_cells import (AttentionCellWrapper,
                                                    CoupledInputForgetGateLSTMCell,
                                                    HighwayWrapper, IndRNNCell,
                                                    InputProjectionWrapper, NASCell,
                                                    OutputProjectionWrapper, UGRNNCell)
from xlapy.compat.v1.contrib.rnn.fused_conv import (Conv1DLSTMCell, Conv2DLSTMCell,
                                                    Conv3DLSTMCell, ConvLSTMCell,
                                                    LSTMBlockFusedCell)
from xlapy.compat.v1.contrib.rnn.stacked_rnn import (stack_bidirectional_dynamic_rnn,
                                                     stack_bidirectional_rnn)

__all__ = ["AttentionCellWrapper", "Conv1DLSTMCell", "Conv2DLSTMCell", "Conv3DLSTMCell",
           "ConvLSTMCell", "CoupledInputForgetGateLSTMCell", "HighwayWrapper", "IndRNNCell",
           "InputProjectionWrapper", "LSTMBlockFusedCell", "NASCell",
           "OutputProjectionWrapper", "UGRNNCell",
           "BasicLSTMCell", "BasicRNNCell", "DeviceWrapper", "DropoutWrapper", "GRUBlockCell",
           "GRUBlockCellV2", "GRUCell", "LSTMBlockCell", "LayerNormBasicLSTMCell",
           "LSTMCell", "LSTMStateTuple", "MultiRNNCell", "ResidualWrapper", "RNNCell",
           "bidirectional_dynamic_rnn", "stack_bidirectional_dynamic_rnn",
           "stack_bidirectional_rnn", "static_bidirectional_rnn", "static_rnn"]
