"""tf.contrib.rnn.LSTMBlockFusedCell and the convolutional LSTMs (ConvLSTMCell,
Conv1DLSTMCell, Conv2DLSTMCell, Conv3DLSTMCell), as TF 1.15's contrib/rnn.

LSTMBlockFusedCell runs a whole time-major sequence: called on inputs [time, batch, input]
(or a list of [batch, input]) it returns (outputs [time, batch, units], LSTMStateTuple(c,
h)). Its variables, in scope "lstm_fused_cell", are LSTMBlockCell's (kernel [input + units,
4 units], bias [4 units] zeros, w_i_diag / w_f_diag / w_o_diag with use_peephole), gates i,
j, f, o as LSTMCell's. Here the sequence is one While loop over the block cell's step
(dynamic_rnn), which XLA compiles into one fused loop; with sequence_length the outputs
past a sequence's length are zeros and the final state is the one at its length (the
initial state for length 0), as TF's.

ConvLSTMCell (Shi et al., 2015): the gates are one "SAME" convolution of [inputs, h] with
`kernel` (kernel_shape + [input channels + output channels, 4 output channels]) plus
`biases`, the LSTM of i, j, f, o over feature maps; state LSTMStateTuple(c, h) shaped
input_shape[:-1] + [channels]. With skip_connection the output (and so h) is the LSTM
output concatenated with the inputs, and the state's h has output_channels + input
channels (TF 1.15 declared output_channels there, which its own dynamic_rnn could not
run).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import Tensor, get_default_graph
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.array_ops import concat, stack, unstack, zeros
from xlapy.compat.v1.ops.manip_ops import split
from xlapy.compat.v1.ops.math_ops import add, multiply
from xlapy.compat.v1.ops.nn_ops import sigmoid, tanh
from xlapy.compat.v1.ops.rnn_cell import LSTMCell, LSTMStateTuple, RNNCell
from xlapy.compat.v1.ops.rnn_ops import dynamic_rnn
from xlapy.compat.v1.tensor_shape import TensorShape
from xlapy.compat.v1.variables import (VariableScope, constant_initializer, get_variable,
                                       variable_scope, zeros_initializer)


class _PresetLSTM(LSTMCell):
    """One step of the fused cell: an LSTMCell over the fused cell's variables."""

    def __init__(self, owner):
        super().__init__(owner._num_units, use_peepholes=owner._use_peephole,
                         cell_clip=owner._cell_clip, forget_bias=owner._forget_bias)
        self._owner = owner

    def build(self, input_depth, dtype):
        v = self._owner._vars
        self._v_kernel, self._v_bias = v["kernel"], v["bias"]
        if self._use_peepholes:
            self._v_w_i_diag, self._v_w_f_diag, self._v_w_o_diag = (
                v["w_i_diag"], v["w_f_diag"], v["w_o_diag"])


class LSTMBlockFusedCell:
    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False,
                 reuse=None, dtype=None, name="lstm_fused_cell"):
        self._num_units = int(num_units)
        self._forget_bias = float(forget_bias)
        self._cell_clip = None if cell_clip is None or cell_clip < 0 else float(cell_clip)
        self._use_peephole = use_peephole
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        self._name = name
        self._scope_name = None
        self._vars: dict = {}

    num_units = property(lambda self: self._num_units)

    @property
    def variables(self):
        keys = ["kernel", "bias"] + (["w_i_diag", "w_f_diag", "w_o_diag"]
                                     if self._use_peephole else [])
        return [self._vars[k] for k in keys if k in self._vars]

    trainable_variables = weights = variables

    def _build(self, input_size, dtype):
        n = self._num_units
        self._vars["kernel"] = get_variable("kernel", [input_size + n, 4 * n], dtype=dtype)
        self._vars["bias"] = get_variable("bias", [4 * n], dtype=dtype,
                                          initializer=constant_initializer(0.0))
        if self._use_peephole:
            for k in ("w_i_diag", "w_f_diag", "w_o_diag"):
                self._vars[k] = get_variable(k, [n], dtype=dtype)

    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None,
                 scope=None):
        is_list = isinstance(inputs, (list, tuple))
        x = stack(list(inputs)) if is_list else tensor(inputs)
        if x.shape.ndims is not None and x.shape.ndims != 3:
            raise InvalidArgumentError(f"Shape {x.shape} must have rank 3")
        if x.shape.dims is None or x.shape.dims[2] is None:
            raise InvalidArgumentError(f"Expecting inputs_shape[2] to be set: {x.shape}")
        if initial_state is None:
            if dtype is None and self._dtype is None:
                raise InvalidArgumentError("Either initial_state or dtype needs to be "
                                           "specified")
        dt = dtypes.as_dtype(dtype or self._dtype or x.dtype) if initial_state is None \
            else tensor(initial_state[0]).dtype
        if scope is not None:
            ctx = variable_scope(scope)
        elif self._scope_name is None:
            ctx = variable_scope(None, default_name=self._name)
        else:
            ctx = variable_scope(VariableScope(self._scope_name))
        with ctx as vs:
            self._scope_name = self._scope_name or vs.name
            if not self._vars:
                self._build(int(x.shape.dims[2]), dt)
            if initial_state is not None:
                initial_state = LSTMStateTuple(tensor(initial_state[0]),
                                               tensor(initial_state[1]))
            outputs, state = dynamic_rnn(_PresetLSTM(self), x, sequence_length=sequence_length,
                                         initial_state=initial_state, dtype=dt,
                                         time_major=True, scope="fused")
        if is_list:
            outputs = unstack(outputs, num=len(inputs))
        return outputs, state


def _zeros_of(shape, batch_size, dtype):
    dims = [int(d) for d in shape]
    if isinstance(batch_size, Tensor):
        from xlapy.compat.v1.ops.array_ops import fill  # (only for a tensor batch size)
        from xlapy.compat.v1.ops.math_ops import cast  # (likewise)
        bs = batch_size if batch_size.dtype == dtypes.int32 else cast(batch_size,
                                                                      dtypes.int32)
        return fill(stack([bs] + [tensor(np.int32(d)) for d in dims]),
                    tensor(np.zeros((), dtypes.as_dtype(dtype).np)))
    return zeros([int(batch_size)] + dims, dtype)


class ConvLSTMCell(RNNCell):
    def __init__(self, conv_ndims, input_shape, output_channels, kernel_shape, use_bias=True,
                 skip_connection=False, forget_bias=1.0, initializers=None,
                 name="conv_lstm_cell"):
        super().__init__(name=name)
        if conv_ndims != len(input_shape) - 1:
            raise InvalidArgumentError(f"Invalid input_shape {input_shape} for conv_ndims="
                                       f"{conv_ndims}.")
        if len(kernel_shape) != conv_ndims:
            raise InvalidArgumentError(f"kernel_shape {list(kernel_shape)} must have "
                                       f"{conv_ndims} dimensions")
        self._conv_ndims = int(conv_ndims)
        self._input_shape = [int(d) for d in input_shape]
        self._output_channels = int(output_channels)
        self._kernel_shape = [int(k) for k in kernel_shape]
        self._use_bias = use_bias
        self._forget_bias = float(forget_bias)
        self._skip_connection = skip_connection
        self._initializers = initializers
        total = self._output_channels + (self._input_shape[-1] if skip_connection else 0)
        self._cell_shape = TensorShape(self._input_shape[:-1] + [self._output_channels])
        self._output_shape = TensorShape(self._input_shape[:-1] + [total])

    state_size = property(lambda self: LSTMStateTuple(self._cell_shape, self._output_shape))
    output_size = property(lambda self: self._output_shape)

    @property
    def variables(self):
        if not self._built:
            return []
        return [self._v_kernel] + ([self._v_biases] if self._use_bias else [])

    def zero_state(self, batch_size, dtype):
        with get_default_graph().name_scope(type(self).__name__ + "ZeroState"):
            return LSTMStateTuple(_zeros_of(self._cell_shape, batch_size, dtype),
                                  _zeros_of(self._output_shape, batch_size, dtype))

    def _call_scoped(self, inputs, state):
        from xlapy.compat.v1.ops import conv_ops  # (the convolution of the gates)
        cell, hidden = state
        rank = self._conv_ndims + 2
        if inputs.shape.ndims != rank:
            raise InvalidArgumentError(f"Conv Linear expects {rank}-D inputs, got "
                                       f"{inputs.shape}")
        args = [inputs, tensor(hidden)]
        depth = sum(int(a.shape.dims[-1]) for a in args)
        n = 4 * self._output_channels
        if not self._built:
            self._v_kernel = get_variable("kernel", self._kernel_shape + [depth, n],
                                          dtype=inputs.dtype)
            if self._use_bias:
                self._v_biases = get_variable("biases", [n], dtype=inputs.dtype,
                                              initializer=zeros_initializer())
            self._built = True
        x = concat(args, rank - 1)
        if self._conv_ndims == 1:
            res = conv_ops.conv1d(x, self._v_kernel, 1, "SAME")
        elif self._conv_ndims == 2:
            res = conv_ops.conv2d(x, self._v_kernel, [1] * rank, "SAME")
        else:
            res = conv_ops.conv3d(x, self._v_kernel, [1] * rank, "SAME")
        if self._use_bias:
            res = add(res, self._v_biases)
        i, j, f, o = split(res, 4, axis=rank - 1)
        fb = tensor(np.asarray(self._forget_bias, f.dtype.np))
        new_cell = add(multiply(sigmoid(add(f, fb)), cell), multiply(sigmoid(i), tanh(j)))
        output = multiply(tanh(new_cell), sigmoid(o))
        if self._skip_connection:
            output = concat([output, inputs], rank - 1)
        return output, LSTMStateTuple(new_cell, output)


class Conv1DLSTMCell(ConvLSTMCell):
    def __init__(self, name="conv_1d_lstm_cell", **kwargs):
        super().__init__(conv_ndims=1, name=name, **kwargs)


class Conv2DLSTMCell(ConvLSTMCell):
    def __init__(self, name="conv_2d_lstm_cell", **kwargs):
        super().__init__(conv_ndims=2, name=name, **kwargs)


class Conv3DLSTMCell(ConvLSTMCell):
    def __init__(self, name="conv_3d_lstm_cell", **kwargs):
        super().__init__(conv_ndims=3, name=name, **kwargs)
