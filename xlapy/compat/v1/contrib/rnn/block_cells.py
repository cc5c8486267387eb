"""tf.contrib.rnn's fused "block" cells, as the cells they compute: LSTMBlockCell is an
LSTMCell (forget bias, optional peepholes and cell clipping; scope "lstm_cell"),
GRUBlockCell / GRUBlockCellV2 a GRUCell (scope "gru_cell"). XLA fuses the cells' ops, so
no separate kernel is needed."""

from __future__ import annotations

from xlapy.compat.v1.ops.rnn_cell import GRUCell, LSTMCell


class LSTMBlockCell(LSTMCell):
    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False,
                 dtype=None, reuse=None, name="lstm_cell"):
        super().__init__(num_units, use_peepholes=use_peephole,
                         cell_clip=None if cell_clip is None or cell_clip < 0 else cell_clip,
                         forget_bias=forget_bias, reuse=reuse, name=name, dtype=dtype)


class GRUBlockCell(GRUCell):
    def __init__(self, num_units=None, cell_size=None, reuse=None, name="gru_cell"):
        super().__init__(num_units if num_units is not None else cell_size, reuse=reuse,
                         name=name)


GRUBlockCellV2 = GRUBlockCell
