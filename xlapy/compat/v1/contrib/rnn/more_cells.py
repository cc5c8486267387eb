"""More of tf.contrib.rnn (TF 1.15's contrib/rnn/python/ops/rnn_cell.py and
core_rnn_cell.py), composed of the graph ops so XLA lowering and gradients come with them:

- OutputProjectionWrapper / InputProjectionWrapper: a linear map (variables "kernel" and
  "bias", zeros) on the cell's output / input, in the wrapper's scope
  ("output_projection_wrapper", "input_projection_wrapper"); the wrapped cell's variables
  live below it ("rnn/output_projection_wrapper/basic_lstm_cell/kernel").
- AttentionCellWrapper (Bahdanau-style attention over the last attn_length outputs; state
  (cell state, attns, attn_states)): variables kernel / bias (the input projection),
  attention/{attn_w, attn_v, kernel, bias}, attn_output_projection/{kernel, bias}.
- HighwayWrapper: inputs * carry + outputs * transform, carry = sigmoid(x carry_w +
  carry_b) (variables carry_w, carry_b, and transform_w, transform_b when the gates are not
  coupled), made in the scope the wrapper is called in, as TF's.
- UGRNNCell (kernel [depth + units, 2 units], bias), IndRNNCell (kernel_w, kernel_u [1,
  units] uniform in [-1, 1], bias; relu by default), CoupledInputForgetGateLSTMCell (W_0..,
  B, W_F_diag, W_O_diag, W_P_0.., optional layer normalization), NASCell (kernel,
  recurrent_kernel, bias, projection_weights).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import nest
from xlapy.compat.v1.contrib.rnn.layer_norm_lstm import norm_variables
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.array_ops import concat, expand_dims, reshape
from xlapy.compat.v1.ops.clip_ops import clip_by_value
from xlapy.compat.v1.ops.index_ops import slice_
from xlapy.compat.v1.ops.manip_ops import split
from xlapy.compat.v1.ops.math_ops import add, matmul, multiply, reduce_sum, subtract
from xlapy.compat.v1.ops.nn_ops import bias_add, relu, sigmoid, softmax, tanh
from xlapy.compat.v1.ops.rnn_cell import LSTMStateTuple, RNNCell, _depth
from xlapy.compat.v1.variables import (constant_initializer, get_variable,
                                       random_uniform_initializer, variable_scope,
                                       zeros_initializer)


def _check_cell(cell):
    if not (isinstance(cell, RNNCell) or (hasattr(cell, "state_size") and
                                          hasattr(cell, "output_size") and callable(cell))):
        raise InvalidTypeError(f"The parameter cell is not RNNCell: {cell!r}")


def _one(x):
    return tensor(np.ones((), x.dtype.np))


class _Linear:
    """TF's rnn_cell_impl._Linear: concat(args, 1) @ kernel + bias, its variables made in
    the current variable scope on the first call and kept."""

    def __init__(self, output_size, initializer=None):
        self._n = int(output_size)
        self._init = initializer
        self.kernel = self.bias = None

    def __call__(self, args):
        args = args if isinstance(args, (list, tuple)) else [args]
        x = args[0] if len(args) == 1 else concat(list(args), 1)
        if self.kernel is None:
            depth = sum(_depth(a) for a in args)
            self.kernel = get_variable("kernel", [depth, self._n], dtype=x.dtype,
                                       initializer=self._init)
            self.bias = get_variable("bias", [self._n], dtype=x.dtype,
                                     initializer=zeros_initializer())
        return bias_add(matmul(x, self.kernel), self.bias)

    @property
    def variables(self):
        return [] if self.kernel is None else [self.kernel, self.bias]


class _CellWrapper(RNNCell):
    """A wrapper with a scope of its own; the wrapped cell's variables live below it."""

    def __init__(self, cell, reuse=None):
        _check_cell(cell)
        super().__init__(reuse)
        self._cell = cell

    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._cell.output_size)

    def zero_state(self, batch_size, dtype):
        with get_default_graph().name_scope(type(self).__name__ + "ZeroState"):
            return self._cell.zero_state(batch_size, dtype)


class OutputProjectionWrapper(_CellWrapper):
    def __init__(self, cell, output_size, activation=None, reuse=None):
        super().__init__(cell, reuse)
        if output_size < 1:
            raise InvalidArgumentError(f"Parameter output_size must be > 0: {output_size}.")
        self._output_size = int(output_size)
        self._activation = activation
        self._linear = _Linear(output_size)

    output_size = property(lambda self: self._output_size)

    def _call_scoped(self, inputs, state):
        out, new_state = self._cell(inputs, state)
        projected = self._linear(tensor(out))
        if self._activation is not None:
            projected = self._activation(projected)
        return projected, new_state

    @property
    def variables(self):
        return list(self._cell.variables) + self._linear.variables


class InputProjectionWrapper(_CellWrapper):
    def __init__(self, cell, num_proj, activation=None, input_size=None, reuse=None):
        super().__init__(cell, reuse)
        self._linear = _Linear(num_proj)
        self._activation = activation

    def _call_scoped(self, inputs, state):
        projected = self._linear(inputs)
        if self._activation is not None:
            projected = self._activation(projected)
        return self._cell(projected, state)

    @property
    def variables(self):
        return self._linear.variables + list(self._cell.variables)


class AttentionCellWrapper(_CellWrapper):
    """Attention over the last attn_length outputs (Bahdanau et al.; Vinyals et al.'s
    "Grammar as a foreign language"). State: (cell state, attns [batch, attn_size],
    attn_states [batch, attn_length * attn_size]), concatenated when state_is_tuple is
    False (then the cell's state must be one tensor)."""

    def __init__(self, cell, attn_length, attn_size=None, attn_vec_size=None,
                 input_size=None, state_is_tuple=True, reuse=None):
        super().__init__(cell, reuse)
        if nest.is_sequence(cell.state_size) and not state_is_tuple:
            raise InvalidArgumentError("Cell returns tuple of states, but the flag "
                                       f"state_is_tuple is not set. State size is: "
                                       f"{cell.state_size}")
        if attn_length <= 0:
            raise InvalidArgumentError("attn_length should be greater than zero, got "
                                       f"{attn_length}")
        self._attn_length = int(attn_length)
        self._attn_size = int(attn_size if attn_size is not None else cell.output_size)
        self._attn_vec_size = int(attn_vec_size if attn_vec_size is not None
                                  else self._attn_size)
        self._input_size = input_size
        self._state_is_tuple = state_is_tuple
        self._linear1 = self._linear2 = self._linear3 = None
        self._attn_w = self._attn_v = None

    @property
    def state_size(self):
        size = (self._cell.state_size, self._attn_size, self._attn_size * self._attn_length)
        return size if self._state_is_tuple else sum(size)

    output_size = property(lambda self: self._attn_size)

    def zero_state(self, batch_size, dtype):
        return RNNCell.zero_state(self, batch_size, dtype)

    def _call_scoped(self, inputs, state):
        n_cell, a = self._cell.state_size, self._attn_size
        if self._state_is_tuple:
            state, attns, attn_states = state
        else:
            states = state
            state = slice_(states, [0, 0], [-1, n_cell])
            attns = slice_(states, [0, n_cell], [-1, a])
            attn_states = slice_(states, [0, n_cell + a], [-1, a * self._attn_length])
        attn_states = reshape(attn_states, [-1, self._attn_length, a])
        input_size = self._input_size if self._input_size is not None else _depth(inputs)
        if self._linear1 is None:
            self._linear1 = _Linear(input_size)
        inputs = self._linear1([inputs, attns])
        cell_output, new_state = self._cell(inputs, state)
        new_state_cat = concat(nest.flatten(new_state), 1) if self._state_is_tuple \
            else new_state
        new_attns, new_attn_states = self._attention(new_state_cat, attn_states)
        with variable_scope("attn_output_projection"):
            if self._linear2 is None:
                self._linear2 = _Linear(a)
            output = self._linear2([cell_output, new_attns])
        new_attn_states = concat([new_attn_states, expand_dims(output, 1)], 1)
        new_attn_states = reshape(new_attn_states, [-1, self._attn_length * a])
        new_state = (new_state, new_attns, new_attn_states)
        if not self._state_is_tuple:
            new_state = concat(list(new_state), 1)
        return output, new_state

    def _attention(self, query, attn_states):
        a, n, v_size = self._attn_size, self._attn_length, self._attn_vec_size
        with variable_scope("attention"):
            if self._attn_w is None:
                self._attn_w = get_variable("attn_w", [1, 1, a, v_size], dtype=query.dtype)
                self._attn_v = get_variable("attn_v", [v_size], dtype=query.dtype)
            # the 1x1 convolution of TF's cell, as a matmul of the attention states
            features = reshape(matmul(reshape(attn_states, [-1, a]),
                                      reshape(self._attn_w, [a, v_size])), [-1, n, v_size])
            if self._linear3 is None:
                self._linear3 = _Linear(v_size)
            y = reshape(self._linear3(query), [-1, 1, v_size])
            s = reduce_sum(multiply(self._attn_v, tanh(add(features, y))), [2])
            weights = softmax(s)
            d = reduce_sum(multiply(expand_dims(weights, 2), attn_states), [1])
            new_attns = reshape(d, [-1, a])
            new_attn_states = slice_(attn_states, [0, 1, 0], [-1, -1, -1])
            return new_attns, new_attn_states

    @property
    def variables(self):
        own = [] if self._linear1 is None else self._linear1.variables
        if self._attn_w is not None:
            own += [self._attn_w, self._attn_v] + self._linear3.variables + \
                self._linear2.variables
        return own + list(self._cell.variables)


class HighwayWrapper(RNNCell):
    """outputs = inputs * carry + cell_outputs * transform (Srivastava et al.); the cell's
    output must match its input's shape."""

    def __init__(self, cell, couple_carry_transform_gates=True, carry_bias_init=1.0):
        _check_cell(cell)
        super().__init__()
        self._cell = cell
        self._couple = couple_carry_transform_gates
        self._carry_bias_init = float(carry_bias_init)
        self._vars: dict = {}

    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._cell.output_size)

    def zero_state(self, batch_size, dtype):
        with get_default_graph().name_scope(type(self).__name__ + "ZeroState"):
            return self._cell.zero_state(batch_size, dtype)

    def _highway(self, k, inp, out):
        inp, out = tensor(inp), tensor(out)
        if inp.shape.ndims != 2:
            raise InvalidArgumentError(f"HighwayWrapper: inputs must have rank 2, got "
                                       f"{inp.shape}")
        if not inp.shape.is_compatible_with(out.shape):
            raise InvalidArgumentError(f"Shapes {inp.shape} and {out.shape} are incompatible")
        n = _depth(inp)
        if k not in self._vars:
            v = [get_variable("carry_w", [n, n], dtype=inp.dtype),
                 get_variable("carry_b", [n], dtype=inp.dtype,
                              initializer=constant_initializer(self._carry_bias_init))]
            if not self._couple:
                v += [get_variable("transform_w", [n, n], dtype=inp.dtype),
                      get_variable("transform_b", [n], dtype=inp.dtype,
                                   initializer=constant_initializer(-self._carry_bias_init))]
            self._vars[k] = v
        v = self._vars[k]
        carry = sigmoid(bias_add(matmul(inp, v[0]), v[1]))
        transform = subtract(_one(carry), carry) if self._couple else \
            sigmoid(bias_add(matmul(inp, v[2]), v[3]))
        return add(multiply(inp, carry), multiply(out, transform))

    def __call__(self, inputs, state, scope=None):
        outputs, new_state = self._cell(inputs, state, scope=scope)
        nest.assert_same_structure(inputs, outputs)
        flat = [self._highway(k, i, o) for k, (i, o) in
                enumerate(zip(nest.flatten(inputs), nest.flatten(outputs)))]
        return nest.pack_sequence_as(outputs, flat), new_state

    @property
    def variables(self):
        return list(self._cell.variables) + [v for k in sorted(self._vars)
                                             for v in self._vars[k]]


class UGRNNCell(RNNCell):
    """The update-gate RNN of Collins et al. (2016): g = sigmoid(Wg [x, h] + bg +
    forget_bias), c = activation(Wc [x, h] + bc), h' = g h + (1 - g) c."""

    def __init__(self, num_units, initializer=None, forget_bias=1.0, activation=tanh,
                 reuse=None):
        super().__init__(reuse)
        self._num_units = int(num_units)
        self._initializer = initializer
        self._forget_bias = float(forget_bias)
        self._activation = activation or tanh

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, input_depth, dtype):
        n = self._num_units
        self._v_kernel = get_variable("kernel", [input_depth + n, 2 * n], dtype=dtype,
                                      initializer=self._initializer)
        self._v_bias = get_variable("bias", [2 * n], dtype=dtype,
                                    initializer=zeros_initializer())

    variables = property(lambda self: [self._v_kernel, self._v_bias] if self._built else [])

    def call(self, inputs, state):
        m = bias_add(matmul(concat([inputs, state], 1), self._v_kernel), self._v_bias)
        g_act, c_act = split(m, 2, axis=1)
        c = self._activation(c_act)
        g = sigmoid(add(g_act, tensor(np.asarray(self._forget_bias, g_act.dtype.np))))
        new_state = add(multiply(g, state), multiply(subtract(_one(g), g), c))
        return new_state, new_state


class IndRNNCell(RNNCell):
    """Independently recurrent network (Li et al., 2018): h' = act(W x + u * h + b), u a
    [1, units] vector."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None):
        super().__init__(reuse, name, dtype)
        self._num_units = int(num_units)
        self._activation = activation or relu

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, input_depth, dtype):
        n = self._num_units
        self._v_kernel_w = get_variable("kernel_w", [input_depth, n], dtype=dtype)
        self._v_kernel_u = get_variable("kernel_u", [1, n], dtype=dtype,
                                        initializer=random_uniform_initializer(-1, 1))
        self._v_bias = get_variable("bias", [n], dtype=dtype, initializer=zeros_initializer())

    variables = property(lambda self: [self._v_kernel_w, self._v_kernel_u, self._v_bias]
                         if self._built else [])

    def call(self, inputs, state):
        x = add(matmul(inputs, self._v_kernel_w), multiply(state, self._v_kernel_u))
        out = self._activation(bias_add(x, self._v_bias))
        return out, out


def _concat_variable(name, shape, dtype, num_shards, initializer=None):
    """TF's _get_concat_variable: `num_shards` variables name_0, name_1, ... split along
    the first dimension (the first ones a row longer), concatenated."""
    if num_shards > shape[0]:
        raise InvalidArgumentError(f"Too many shards: shape={shape}, num_shards={num_shards}")
    unit = shape[0] // num_shards
    extra = shape[0] - unit * num_shards
    shards = [get_variable(f"{name}_{i}", [unit + (1 if i < extra else 0)] + list(shape[1:]),
                           dtype=dtype, initializer=initializer) for i in range(num_shards)]
    return shards


class CoupledInputForgetGateLSTMCell(RNNCell):
    """LSTM whose input gate is 1 - forget gate (Greff et al., "LSTM: A Search Space
    Odyssey"); optional peepholes, projection and layer normalization."""

    def __init__(self, num_units, use_peepholes=False, initializer=None, num_proj=None,
                 proj_clip=None, num_unit_shards=1, num_proj_shards=1, forget_bias=1.0,
                 state_is_tuple=True, activation=tanh, reuse=None, layer_norm=False,
                 norm_gain=1.0, norm_shift=0.0):
        super().__init__(reuse)
        self._num_units = int(num_units)
        self._use_peepholes = use_peepholes
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._unit_shards, self._proj_shards = int(num_unit_shards), int(num_proj_shards)
        self._forget_bias = float(forget_bias)
        self._state_is_tuple = state_is_tuple
        self._activation = activation or tanh
        self._layer_norm = layer_norm
        self._g, self._b = float(norm_gain), float(norm_shift)
        self._shards: dict = {}

    @property
    def state_size(self):
        h = self._num_proj or self._num_units
        return LSTMStateTuple(self._num_units, h) if self._state_is_tuple else \
            self._num_units + h

    output_size = property(lambda self: self._num_proj or self._num_units)

    def build(self, input_depth, dtype):
        n, p = self._num_units, self._num_proj or self._num_units
        self._shards["W"] = _concat_variable("W", [input_depth + p, 3 * n], dtype,
                                             self._unit_shards, self._initializer)
        self._v_B = get_variable("B", [3 * n], dtype=dtype, initializer=zeros_initializer())
        if self._layer_norm:
            self._norm_vars = norm_variables(("transform", "forget", "output", "state"), n,
                                             dtype, self._g, self._b)
        if self._use_peepholes:
            self._v_W_F_diag = get_variable("W_F_diag", [n], dtype=dtype,
                                            initializer=self._initializer)
            self._v_W_O_diag = get_variable("W_O_diag", [n], dtype=dtype,
                                            initializer=self._initializer)
        if self._num_proj is not None:
            self._shards["W_P"] = _concat_variable("W_P", [n, self._num_proj], dtype,
                                                   self._proj_shards, self._initializer)

    def _w(self, name):
        shards = self._shards[name]
        return shards[0] if len(shards) == 1 else concat(shards, 0)

    def _norm(self, x, name):
        """contrib.layers.layer_norm over the last axis (epsilon 1e-12)."""
        from xlapy.compat.v1.ops.math_ops import rsqrt  # (only for layer_norm=True)
        from xlapy.compat.v1.ops.nn_ops import moments  # (likewise)
        gamma, beta = self._norm_vars[name]
        mean, variance = moments(x, [1], keep_dims=True)
        inv = multiply(rsqrt(add(variance, tensor(np.asarray(1e-12, x.dtype.np)))), gamma)
        return add(multiply(x, inv), subtract(beta, multiply(mean, inv)))

    def call(self, inputs, state):
        n, p = self._num_units, self._num_proj or self._num_units
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = slice_(state, [0, 0], [-1, n])
            m_prev = slice_(state, [0, n], [-1, p])
        m = matmul(concat([inputs, m_prev], 1), self._w("W"))
        if not self._layer_norm:
            m = bias_add(m, self._v_B)
        j, f, o = split(m, 3, axis=1)
        if self._layer_norm:
            j, f, o = (self._norm(j, "transform"), self._norm(f, "forget"),
                       self._norm(o, "output"))
        fb = tensor(np.asarray(self._forget_bias, f.dtype.np))
        if self._use_peepholes:
            f_act = sigmoid(add(add(f, fb), multiply(self._v_W_F_diag, c_prev)))
        else:
            f_act = sigmoid(add(f, fb))
        c = add(multiply(f_act, c_prev), multiply(subtract(_one(f_act), f_act),
                                                  self._activation(j)))
        if self._layer_norm:
            c = self._norm(c, "state")
        if self._use_peepholes:
            h = multiply(sigmoid(add(o, multiply(self._v_W_O_diag, c))), self._activation(c))
        else:
            h = multiply(sigmoid(o), self._activation(c))
        if self._num_proj is not None:
            h = matmul(h, self._w("W_P"))
            if self._proj_clip is not None:
                h = clip_by_value(h, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, h) if self._state_is_tuple else concat([c, h], 1)
        return h, new_state

    @property
    def variables(self):
        out = list(self._shards.get("W", [])) + [self._v_B] if self._built else []
        if self._built and self._layer_norm:
            out += [v for k in ("transform", "forget", "output", "state")
                    for v in self._norm_vars[k]]
        if self._built and self._use_peepholes:
            out += [self._v_W_F_diag, self._v_W_O_diag]
        return out + list(self._shards.get("W_P", []))


class NASCell(RNNCell):
    """The recurrent cell found by Neural Architecture Search (Zoph & Le, 2017): eight
    branches of the input and the previous output combined through a fixed tree."""

    _NAS_BASE = 8

    def __init__(self, num_units, num_proj=None, use_biases=False, reuse=None):
        super().__init__(reuse)
        self._num_units = int(num_units)
        self._num_proj = num_proj
        self._use_biases = use_biases

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_proj or self._num_units)

    output_size = property(lambda self: self._num_proj or self._num_units)

    def build(self, input_depth, dtype):
        n, p, k = self._num_units, self._num_proj or self._num_units, self._NAS_BASE
        self._v_recurrent_kernel = get_variable("recurrent_kernel", [p, k * n], dtype=dtype)
        self._v_kernel = get_variable("kernel", [input_depth, k * n], dtype=dtype)
        if self._use_biases:
            self._v_bias = get_variable("bias", [k * n], dtype=dtype,
                                        initializer=zeros_initializer())
        if self._num_proj is not None:
            self._v_projection_weights = get_variable("projection_weights",
                                                      [n, self._num_proj], dtype=dtype)

    @property
    def variables(self):
        if not self._built:
            return []
        return [self._v_recurrent_kernel, self._v_kernel] + (
            [self._v_bias] if self._use_biases else []) + (
            [self._v_projection_weights] if self._num_proj is not None else [])

    def call(self, inputs, state):
        c_prev, m_prev = state
        mm = matmul(m_prev, self._v_recurrent_kernel)
        im = matmul(inputs, self._v_kernel)
        if self._use_biases:
            mm = bias_add(mm, self._v_bias)
        m, x = split(mm, self._NAS_BASE, axis=1), split(im, self._NAS_BASE, axis=1)
        l1 = [sigmoid(add(x[0], m[0])), relu(add(x[1], m[1])), sigmoid(add(x[2], m[2])),
              relu(multiply(x[3], m[3])), tanh(add(x[4], m[4])), sigmoid(add(x[5], m[5])),
              tanh(add(x[6], m[6])), sigmoid(add(x[7], m[7]))]
        l2_0 = tanh(multiply(l1[0], l1[1]))
        l2_1 = tanh(add(l1[2], l1[3]))
        l2_2 = tanh(multiply(l1[4], l1[5]))
        l2_3 = sigmoid(add(l1[6], l1[7]))
        l2_0 = tanh(add(l2_0, c_prev))
        new_c = multiply(l2_0, l2_1)
        l3_1 = tanh(add(l2_2, l2_3))
        new_m = tanh(multiply(new_c, l3_1))
        if self._num_proj is not None:
            new_m = matmul(new_m, self._v_projection_weights)
        return new_m, LSTMStateTuple(new_c, new_m)
