"""tf.keras.layers.CuDNNLSTM / CuDNNGRU (TF 1.x) computed without CuDNN: the LSTM / GRU
recurrences with CuDNN's conventions, so weights trained with the CuDNN layers load:
sigmoid gates (not hard_sigmoid), tanh, and two biases (input and recurrent) in one
vector - LSTM bias [8 * units] (the sum of the halves is the effective bias; its forget
gate ones are in the recurrent half, as Keras' unit_forget_bias), GRU bias [6 * units]
with reset_after=True semantics (the recurrent bias inside the reset gate's product)."""

from __future__ import annotations

from xlapy.compat.v1.keras.recurrent import GRU, LSTM
from xlapy.compat.v1.variables import Initializer


class _CuDNNLSTMBias(Initializer):
    def __init__(self, base, units, unit_forget_bias):
        super().__init__()
        self.base, self.units, self.ufb = base, units, unit_forget_bias

    def __call__(self, shape, dtype=None, partition_info=None):
        from xlapy.compat.v1.ops.array_ops import concat, ones
        n, dt = self.units, dtype or self.dtype
        if not self.ufb:
            return self.base([8 * n], dt)
        return concat([self.base([5 * n], dt), ones([n], dt), self.base([2 * n], dt)], 0)


def _cudnn_kwargs(kwargs):
    for k in ("activation", "recurrent_activation", "dropout", "recurrent_dropout",
              "implementation", "reset_after", "use_bias", "unroll"):
        if k in kwargs:
            from xlapy.compat.v1.errors import InvalidArgumentError
            raise InvalidArgumentError(f"Keyword argument not understood: {k!r} (CuDNN "
                                       f"layers have fixed activations and biases)")
    return kwargs


class CuDNNLSTM(LSTM):
    def __init__(self, units, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, **kwargs):
        super().__init__(units, activation="tanh", recurrent_activation="sigmoid",
                         kernel_initializer=kernel_initializer,
                         recurrent_initializer=recurrent_initializer,
                         bias_initializer=bias_initializer, unit_forget_bias=unit_forget_bias,
                         return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful,
                         **_cudnn_kwargs(kwargs))
        self._config = {k: v for k, v in self._config.items()
                        if k not in ("activation", "recurrent_activation", "use_bias",
                                     "dropout", "recurrent_dropout", "reset_after")}

    def _bias_shape(self):
        return [8 * self.units]

    def _bias_init(self):
        return _CuDNNLSTMBias(self.bias_initializer, self.units, self.unit_forget_bias)

    def build(self, input_shape):
        super().build(input_shape)
        n = 4 * self.units
        self._cudnn_bias = self.bias
        self.bias = self.bias[:n] + self.bias[n:]


class CuDNNGRU(GRU):
    def __init__(self, units, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, **kwargs):
        super().__init__(units, activation="tanh", recurrent_activation="sigmoid",
                         reset_after=True, kernel_initializer=kernel_initializer,
                         recurrent_initializer=recurrent_initializer,
                         bias_initializer=bias_initializer,
                         return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful,
                         **_cudnn_kwargs(kwargs))
        self._config = {k: v for k, v in self._config.items()
                        if k not in ("activation", "recurrent_activation", "use_bias",
                                     "dropout", "recurrent_dropout", "reset_after",
                                     "unit_forget_bias")}

    def _bias_shape(self):
        return [6 * self.units]

    def build(self, input_shape):
        from xlapy.compat.v1.ops.array_ops import reshape
        super().build(input_shape)
        self._cudnn_bias = self.bias
        self.bias = reshape(self.bias, [2, 3 * self.units])
