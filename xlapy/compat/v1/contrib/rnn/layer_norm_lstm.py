"""tf.contrib.rnn.LayerNormBasicLSTMCell: the basic LSTM with layer normalization of each
gate and of the new cell state (Ba et al., 2016), and recurrent dropout on the candidate
(Semeniuta et al., 2016), as TF 1.15's contrib/rnn/python/ops/rnn_cell.py.

Variables (scope "layer_norm_basic_lstm_cell"): kernel [depth + units, 4 units] (and bias
when layer_norm=False), and gamma / beta [units] under input/, transform/, forget/,
output/ and state/, initialized to norm_gain and norm_shift.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.array_ops import concat
from xlapy.compat.v1.ops.math_ops import add, matmul, multiply, rsqrt
from xlapy.compat.v1.ops.nn_ops import bias_add, moments, sigmoid, tanh
from xlapy.compat.v1.ops.rnn_cell import LSTMStateTuple, RNNCell
from xlapy.compat.v1.variables import constant_initializer, get_variable, variable_scope

_NORMS = ("input", "transform", "forget", "output", "state")


def norm_variables(names, n: int, dtype, gain: float, shift: float) -> dict:
    """{name: (gamma, beta)}: a layer normalization's [n] scale and shift per name, each in
    a variable scope of that name (the LSTM cells' layer-norm variables, as TF names them)."""
    out = {}
    for name in names:
        with variable_scope(name):
            out[name] = (get_variable("gamma", [n], dtype=dtype,
                                      initializer=constant_initializer(gain)),
                         get_variable("beta", [n], dtype=dtype,
                                      initializer=constant_initializer(shift)))
    return out


class LayerNormBasicLSTMCell(RNNCell):
    def __init__(self, num_units, forget_bias=1.0, input_size=None, activation=tanh,
                 layer_norm=True, norm_gain=1.0, norm_shift=0.0, dropout_keep_prob=1.0,
                 dropout_prob_seed=None, reuse=None):
        super().__init__(reuse)
        self._num_units = int(num_units)
        self._activation = activation or tanh
        self._forget_bias = float(forget_bias)
        self._keep_prob = dropout_keep_prob
        self._seed = dropout_prob_seed
        self._layer_norm = layer_norm
        self._g, self._b = float(norm_gain), float(norm_shift)

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_units)

    output_size = property(lambda self: self._num_units)

    def build(self, input_depth, dtype):
        n = self._num_units
        self._v_kernel = get_variable("kernel", [input_depth + n, 4 * n], dtype=dtype)
        if not self._layer_norm:
            self._v_bias = get_variable("bias", [4 * n], dtype=dtype)
        self._norm_vars = norm_variables(_NORMS, n, dtype, self._g, self._b) \
            if self._layer_norm else {}

    @property
    def variables(self):
        out = [self._v_kernel] + ([] if self._layer_norm else [self._v_bias])
        for name in _NORMS if self._layer_norm else ():
            out += list(self._norm_vars[name])
        return out

    def _norm(self, x, name):
        """contrib.layers.layer_norm over the last axis, with this gate's gamma / beta."""
        gamma, beta = self._norm_vars[name]
        mean, variance = moments(x, [1], keep_dims=True)
        inv = multiply(rsqrt(add(variance, tensor(np.asarray(1e-12, x.dtype.np)))), gamma)
        return add(multiply(x, inv), beta - multiply(mean, inv))

    def call(self, inputs, state):
        from xlapy.compat.v1.ops.manip_ops import split
        from xlapy.compat.v1.ops.nn_ops import dropout
        c, h = state
        gates = matmul(concat([inputs, h], 1), self._v_kernel)
        if not self._layer_norm:
            gates = bias_add(gates, self._v_bias)
        i, j, f, o = split(gates, 4, axis=1)
        if self._layer_norm:
            i, j, f, o = (self._norm(v, k) for v, k in
                          zip((i, j, f, o), ("input", "transform", "forget", "output")))
        g = self._activation(j)
        if not isinstance(self._keep_prob, float) or self._keep_prob < 1:
            g = dropout(g, self._keep_prob, seed=self._seed)
        fb = tensor(np.asarray(self._forget_bias, f.dtype.np))
        new_c = add(multiply(c, sigmoid(add(f, fb))), multiply(sigmoid(i), g))
        if self._layer_norm:
            new_c = self._norm(new_c, "state")
        new_h = multiply(self._activation(new_c), sigmoid(o))
        return new_h, LSTMStateTuple(new_c, new_h)
