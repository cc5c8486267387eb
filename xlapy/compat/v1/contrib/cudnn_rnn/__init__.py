"""tf.contrib.cudnn_rnn: CudnnLSTM and CudnnGRU layers, and the cells they are
checkpoint-compatible with (CudnnCompatibleLSTMCell, CudnnCompatibleGRUCell).

There is no cuDNN here: the layers are stacks of the compatible cells run by dynamic_rnn
(uni-directional) or stack_bidirectional_dynamic_rnn (bidirectional), one While loop per
layer and direction, which XLA compiles. Their variables are the canonical per-layer,
per-direction weights under the names TF 1.15 saves a cuDNN layer's opaque parameters as:

    cudnn_lstm/rnn/multi_rnn_cell/cell_<i>/cudnn_compatible_lstm_cell/{kernel,bias}
    cudnn_lstm/stack_bidirectional_rnn/cell_<i>/bidirectional_rnn/{fw,bw}/
        cudnn_compatible_lstm_cell/{kernel,bias}
    cudnn_gru/.../cudnn_compatible_gru_cell/{gates/kernel, gates/bias,
        candidate/input_projection/kernel, .../bias, candidate/hidden_projection/kernel,
        .../bias}

so a checkpoint TF wrote from a cuDNN layer restores into them. LSTM kernels are [input +
units, 4 units], gates i, j (cuDNN's c), f, o, forget bias 0; cuDNN's two biases per gate
appear summed, as in TF's checkpoints. Each gate's input and recurrent weights are drawn
separately from kernel_initializer (default Glorot uniform), as cuDNN's canonical
matrices are, and bias_initializer (default zeros) fills both of cuDNN's biases.

Called on inputs [time, batch, input] (time_major=True, the default) the layer returns
(outputs [time, batch, num_dirs * units], states): (h, c) for the LSTM, (h,) for the GRU,
each [num_layers * num_dirs, batch, units] (layer-major, forward before backward).
dropout is applied between layers when called with training=True (not after the last, as
cuDNN), with TF's random stream, not cuDNN's. input_mode "linear_input" only.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.array_ops import concat, stack, unstack
from xlapy.compat.v1.ops.manip_ops import split
from xlapy.compat.v1.ops.math_ops import add, matmul, multiply, subtract
from xlapy.compat.v1.ops.nn_ops import bias_add, dropout, sigmoid, tanh
from xlapy.compat.v1.ops.rnn_cell import (LSTMCell, LSTMStateTuple, MultiRNNCell, RNNCell,
                                          _Wrapper)
from xlapy.compat.v1.ops.rnn_ops import dynamic_rnn
from xlapy.compat.v1.contrib.rnn.stacked_rnn import stack_bidirectional_dynamic_rnn
from xlapy.compat.v1.variables import (VariableScope, constant_initializer,
                                       glorot_uniform_initializer, get_variable,
                                       variable_scope, zeros_initializer)

CUDNN_RNN_UNIDIRECTION = "unidirectional"
CUDNN_RNN_BIDIRECTION = "bidirectional"
CUDNN_LSTM = "lstm"
CUDNN_GRU = "gru"
CUDNN_RNN_RELU = "rnn_relu"
CUDNN_RNN_TANH = "rnn_tanh"
CUDNN_INPUT_LINEAR_MODE = "linear_input"
CUDNN_INPUT_SKIP_MODE = "skip_input"
CUDNN_INPUT_AUTO_MODE = "auto_select"


def _gatewise(init, n_in, n_units, n_gates):
    """An initializer of a [n_in + n_units, n_gates * n_units] kernel drawing each gate's
    input block [n_in, units] and recurrent block [units, units] on its own."""
    def make(shape, dtype=None, partition_info=None):
        cols = [concat([init([n_in, n_units], dtype), init([n_units, n_units], dtype)], 0)
                for _ in range(n_gates)]
        return concat(cols, 1)
    return make


def _twice(init):
    """cuDNN's input and recurrent biases of a gate, summed (TF's canonical bias)."""
    return lambda shape, dtype=None, partition_info=None: add(init(shape, dtype),
                                                              init(shape, dtype))


class CudnnCompatibleLSTMCell(LSTMCell):
    """The LSTM cuDNN computes: LSTMBlockCell with forget_bias 0, no peepholes or clipping;
    scope "cudnn_compatible_lstm_cell"."""

    def __init__(self, num_units, reuse=None):
        super().__init__(num_units, forget_bias=0.0, reuse=reuse,
                         name="cudnn_compatible_lstm_cell")
        self._kernel_init = self._bias_init = None

    def build(self, input_depth, dtype):
        n = self._num_units
        self._v_kernel = get_variable("kernel", [input_depth + n, 4 * n], dtype=dtype,
                                      initializer=self._kernel_init)
        self._v_bias = get_variable("bias", [4 * n], dtype=dtype,
                                    initializer=self._bias_init or zeros_initializer())

    variables = property(lambda self: [self._v_kernel, self._v_bias] if self._built else [])


class CudnnCompatibleGRUCell(RNNCell):
    """The GRU cuDNN computes: h' = (1 - u) c + u h with c = tanh(W x + b_w + r (R h +
    b_r)), the reset gate applied after the recurrent projection (unlike GRUCell)."""

    def __init__(self, num_units, reuse=None, kernel_initializer=None):
        super().__init__(reuse, name="cudnn_compatible_gru_cell")
        self._num_units = int(num_units)
        self._kernel_initializer = kernel_initializer
        self._gate_kernel_init = self._bias_init = self._gate_bias_init = None

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, input_depth, dtype):
        n, k = self._num_units, self._kernel_initializer
        bias = self._bias_init
        with variable_scope("gates"):
            self._v_gate_kernel = get_variable("kernel", [input_depth + n, 2 * n],
                                               dtype=dtype,
                                               initializer=self._gate_kernel_init or k)
            self._v_gate_bias = get_variable("bias", [2 * n], dtype=dtype,
                                             initializer=self._gate_bias_init or bias or
                                             constant_initializer(1.0))
        with variable_scope("candidate"):
            with variable_scope("input_projection"):
                self._v_cand_in_kernel = get_variable("kernel", [input_depth, n],
                                                      dtype=dtype, initializer=k)
            with variable_scope("hidden_projection"):
                self._v_cand_h_kernel = get_variable("kernel", [n, n], dtype=dtype,
                                                     initializer=k)
            with variable_scope("input_projection"):
                self._v_cand_in_bias = get_variable(
                    "bias", [n], dtype=dtype, initializer=bias or zeros_initializer())
            with variable_scope("hidden_projection"):
                self._v_cand_h_bias = get_variable(
                    "bias", [n], dtype=dtype, initializer=bias or zeros_initializer())

    @property
    def variables(self):
        if not self._built:
            return []
        return [self._v_gate_kernel, self._v_gate_bias, self._v_cand_in_kernel,
                self._v_cand_h_kernel, self._v_cand_in_bias, self._v_cand_h_bias]

    def call(self, inputs, state):
        gates = sigmoid(bias_add(matmul(concat([inputs, state], 1), self._v_gate_kernel),
                                 self._v_gate_bias))
        r, u = split(gates, 2, axis=1)
        cand = bias_add(matmul(inputs, self._v_cand_in_kernel), self._v_cand_in_bias)
        cand = add(cand, multiply(r, bias_add(matmul(state, self._v_cand_h_kernel),
                                              self._v_cand_h_bias)))
        cand = tanh(cand)
        one = tensor(np.ones((), u.dtype.np))
        new_h = add(multiply(subtract(one, u), cand), multiply(u, state))
        return new_h, new_h


class _InterLayerDropout(_Wrapper):
    """Dropout on a layer's outputs while the owning layer is called with training=True."""

    def __init__(self, cell, owner):
        super().__init__(cell)
        self._owner = owner

    def _wrap(self, inputs, state, scope):
        out, new_state = self._cell(inputs, state, scope=scope)
        if self._owner._dropout_now:
            out = dropout(out, rate=self._owner._dropout, seed=self._owner._seed)
        return out, new_state


class _CudnnRNN:
    _rnn_mode = None
    _num_states = 1

    def __init__(self, num_layers, num_units, input_mode=CUDNN_INPUT_LINEAR_MODE,
                 direction=CUDNN_RNN_UNIDIRECTION, dropout=0.0, seed=None,
                 dtype=dtypes.float32, kernel_initializer=None, bias_initializer=None,
                 name=None):
        dt = dtypes.as_dtype(dtype)
        if dt not in (dtypes.float16, dtypes.float32, dtypes.float64):
            raise InvalidArgumentError(f"Only support float16, float32, float64, provided "
                                       f"{dt.name}")
        if direction not in (CUDNN_RNN_UNIDIRECTION, CUDNN_RNN_BIDIRECTION):
            raise InvalidArgumentError(f"Invalid direction: {direction}, expecting "
                                       f"{CUDNN_RNN_UNIDIRECTION} or {CUDNN_RNN_BIDIRECTION}")
        if input_mode not in (CUDNN_INPUT_LINEAR_MODE, CUDNN_INPUT_SKIP_MODE,
                              CUDNN_INPUT_AUTO_MODE):
            raise InvalidArgumentError(
                f"Invalid input mode: {input_mode}, expect one of {CUDNN_INPUT_LINEAR_MODE}, "
                f"{CUDNN_INPUT_SKIP_MODE}, {CUDNN_INPUT_AUTO_MODE}")
        if input_mode != CUDNN_INPUT_LINEAR_MODE:
            raise InvalidArgumentError(f"input_mode {input_mode!r} is not supported here: "
                                       f"only {CUDNN_INPUT_LINEAR_MODE!r}")
        if int(num_layers) < 1 or int(num_units) < 1:
            raise InvalidArgumentError("num_layers and num_units must be positive, got "
                                       f"{num_layers} and {num_units}")
        self._num_layers, self._num_units = int(num_layers), int(num_units)
        self._input_mode, self._direction = input_mode, direction
        self._dropout, self._seed = float(dropout), seed
        self._plain_dtype = dt
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer
        self._name = name
        self._scope_name = None
        self._cells = None
        self._dropout_now = False
        self.built = False

    num_layers = property(lambda self: self._num_layers)
    num_units = property(lambda self: self._num_units)
    input_mode = property(lambda self: self._input_mode)
    direction = property(lambda self: self._direction)
    rnn_mode = property(lambda self: self._rnn_mode)
    num_dirs = property(lambda self: 1 if self._direction == CUDNN_RNN_UNIDIRECTION else 2)
    dtype = property(lambda self: self._plain_dtype)

    def state_shape(self, batch_size):
        shape = [self.num_layers * self.num_dirs, batch_size, self.num_units]
        return (shape,) * self._num_states if self._num_states > 1 else (shape,)

    @property
    def variables(self):
        if self._cells is None:
            return []
        return [v for layer in self._cells for cell in layer for v in cell.variables]

    trainable_variables = trainable_weights = weights = variables

    def _new_cell(self, input_depth):
        raise NotImplementedError

    def _make_cells(self, input_depth):
        cells = []
        for i in range(self._num_layers):
            depth = input_depth if i == 0 else self.num_dirs * self._num_units
            cells.append([self._new_cell(depth) for _ in range(self.num_dirs)])
        return cells

    def _split_states(self, initial_state):
        """Per layer and direction, the cells' initial states (None: zeros)."""
        if initial_state is None:
            return None
        parts = list(initial_state) if isinstance(initial_state, (list, tuple)) else \
            [initial_state]
        if len(parts) != self._num_states:
            raise InvalidArgumentError(f"initial_state must be a tuple of "
                                       f"{self._num_states} tensor(s), got {len(parts)}")
        ld = self.num_layers * self.num_dirs
        per = []
        for p in parts:
            p = tensor(p)
            if p.shape.ndims is not None and p.shape.ndims != 3:
                raise InvalidArgumentError(f"initial_state tensors must have shape "
                                           f"[num_layers * num_dirs, batch, num_units], got "
                                           f"{p.shape}")
            d0 = p.shape.dims[0] if p.shape.dims else None
            if d0 is not None and d0 != ld:
                raise InvalidArgumentError(f"initial_state's first dimension must be "
                                           f"num_layers * num_dirs = {ld}, got {d0}")
            per.append(unstack(p, num=ld))
        if self._num_states == 2:  # (h, c) -> LSTMStateTuple(c, h)
            return [LSTMStateTuple(per[1][k], per[0][k]) for k in range(ld)]
        return list(per[0])

    def __call__(self, inputs, initial_state=None, sequence_lengths=None, time_major=True,
                 training=True):
        x = tensor(inputs)
        if x.shape.ndims is not None and x.shape.ndims != 3:
            raise InvalidArgumentError(f"Inputs must have rank 3 ([time, batch, input] or "
                                       f"[batch, time, input]), got {x.shape}")
        if x.shape.dims is None or x.shape.dims[-1] is None:
            raise InvalidArgumentError(f"The last dimension of the inputs to a cuDNN layer "
                                       f"must be known, got {x.shape}")
        if x.dtype != self._plain_dtype:
            raise InvalidArgumentError(f"Inputs of dtype {x.dtype.name} to a layer of dtype "
                                       f"{self._plain_dtype.name}")
        if self._scope_name is None:
            ctx = variable_scope(self._name, default_name="cudnn_" + self._rnn_mode)
        else:
            ctx = variable_scope(VariableScope(self._scope_name))
        with ctx as vs:
            self._scope_name = vs.name
            if self._cells is None:
                self._cells = self._make_cells(int(x.shape.dims[-1]))
                self._wrapped = [[_InterLayerDropout(c, self) if i < self._num_layers - 1
                                  else c for c in layer]
                                 for i, layer in enumerate(self._cells)]
                self._multi = MultiRNNCell([layer[0] for layer in self._wrapped]) \
                    if self.num_dirs == 1 else None
            self.built = True
            self._dropout_now = bool(training) and self._dropout > 0
            states = self._split_states(initial_state)
            dt = x.dtype
            try:
                if self.num_dirs == 1:
                    out, st = dynamic_rnn(self._multi, x, sequence_length=sequence_lengths,
                                          initial_state=tuple(states) if states else None,
                                          dtype=dt, time_major=time_major, scope="rnn")
                    finals = list(st)
                else:
                    fw = [layer[0] for layer in self._wrapped]
                    bw = [layer[1] for layer in self._wrapped]
                    out, sfw, sbw = stack_bidirectional_dynamic_rnn(
                        fw, bw, x,
                        initial_states_fw=states[0::2] if states else None,
                        initial_states_bw=states[1::2] if states else None,
                        dtype=dt, sequence_length=sequence_lengths, time_major=time_major)
                    finals = [s for pair in zip(sfw, sbw) for s in pair]
            finally:
                self._dropout_now = False
        if self._num_states == 2:
            return out, (stack([s.h for s in finals]), stack([s.c for s in finals]))
        return out, (stack(finals),)

    def _init_kernel(self, n_in, n_gates):
        k = self._kernel_initializer or glorot_uniform_initializer()
        return _gatewise(k, n_in, self._num_units, n_gates)


class CudnnLSTM(_CudnnRNN):
    _rnn_mode = CUDNN_LSTM
    _num_states = 2

    def _new_cell(self, input_depth):
        cell = CudnnCompatibleLSTMCell(self._num_units)
        cell._kernel_init = self._init_kernel(input_depth, 4)
        cell._bias_init = _twice(self._bias_initializer or zeros_initializer())
        return cell


class CudnnGRU(_CudnnRNN):
    _rnn_mode = CUDNN_GRU
    _num_states = 1

    def _new_cell(self, input_depth):
        cell = CudnnCompatibleGRUCell(self._num_units,
                                      kernel_initializer=self._kernel_initializer or
                                      glorot_uniform_initializer())
        cell._gate_kernel_init = self._init_kernel(input_depth, 2)
        cell._bias_init = self._bias_initializer or zeros_initializer()
        cell._gate_bias_init = _twice(cell._bias_init)
        return cell


__all__ = ["CUDNN_GRU", "CUDNN_INPUT_AUTO_MODE", "CUDNN_INPUT_LINEAR_MODE",
           "CUDNN_INPUT_SKIP_MODE", "CUDNN_LSTM", "CUDNN_RNN_BIDIRECTION", "CUDNN_RNN_RELU",
           "CUDNN_RNN_TANH", "CUDNN_RNN_UNIDIRECTION", "CudnnCompatibleGRUCell",
           "CudnnCompatibleLSTMCell", "CudnnGRU", "CudnnLSTM"]
