"""tf.nn.rnn_cell (tf.contrib.rnn): BasicRNNCell, BasicLSTMCell, LSTMCell, GRUCell,
MultiRNNCell, DropoutWrapper, ResidualWrapper, LSTMStateTuple.

A cell creates its variables on its first call, under a variable scope named after it
(TF's layer naming: "basic_lstm_cell", then "basic_lstm_cell_1", ... within the enclosing
scope), so a cell used by dynamic_rnn owns "rnn/basic_lstm_cell/kernel" and
"rnn/basic_lstm_cell/bias", and later calls reuse them. Called inside a loop body
(dynamic_rnn), the variables are still created in the outermost graph. The arithmetic is
TF 1.x's: one matmul of [inputs, h] with the gate kernel, gates i, j, f, o in that order,
forget_bias added to f.
"""

from __future__ import annotations

import collections
import numpy as np

from xlapy.compat.v1 import dtypes, nest
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import Tensor, get_default_graph
from xlapy.compat.v1.ops._common import snake_case, tensor
from xlapy.compat.v1.ops.array_ops import concat, zeros
from xlapy.compat.v1.ops.math_ops import add, matmul, multiply, subtract
from xlapy.compat.v1.ops.nn_ops import bias_add, sigmoid, tanh
from xlapy.compat.v1.variables import (constant_initializer, get_variable, variable_scope,
                                       zeros_initializer)


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """(c, h): the LSTM's cell state and output."""

    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise InvalidArgumentError(f"Inconsistent internal state: {c.dtype.name} vs "
                                       f"{h.dtype.name}")
        return c.dtype


def _depth(x) -> int:
    d = x.shape.dims[-1] if x.shape.dims else None
    if d is None:
        raise InvalidArgumentError(f"the last dimension of the inputs to an RNN cell must be "
                                   f"known, got shape {x.shape}")
    return int(d)


class RNNCell:
    """Base class: subclasses define state_size, output_size, build(input_depth) and
    call(inputs, state)."""

    def __init__(self, reuse=None, name=None, dtype=None):
        self._name = name
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        self._built = False
        self._scope_name = None

    @property
    def state_size(self):
        raise NotImplementedError

    @property
    def output_size(self):
        raise NotImplementedError

    def build(self, input_depth: int, dtype):
        pass

    def call(self, inputs, state):
        raise NotImplementedError

    def __call__(self, inputs, state, scope=None):
        inputs = tensor(inputs)
        if scope is not None:
            name = scope.name if hasattr(scope, "name") else scope
            with variable_scope(name):
                return self._call_scoped(inputs, state)
        base = self._name or snake_case(type(self).__name__)
        if self._scope_name is None:
            with variable_scope(None, default_name=base) as vs:
                self._scope_name = vs.name
                return self._call_scoped(inputs, state)
        from xlapy.compat.v1.variables import VariableScope
        with variable_scope(VariableScope(self._scope_name)):
            return self._call_scoped(inputs, state)

    def _call_scoped(self, inputs, state):
        if not self._built:
            self.build(_depth(inputs), self._dtype or inputs.dtype)
            self._built = True
        return self.call(inputs, state)

    def zero_state(self, batch_size, dtype):
        """Zeros of [batch_size, size] for each component of state_size."""
        with get_default_graph().name_scope(type(self).__name__ + "ZeroState"):
            def z(size):
                dims = [size] if isinstance(size, int) else list(size)
                if isinstance(batch_size, Tensor):
                    from xlapy.compat.v1.ops.array_ops import fill, stack
                    from xlapy.compat.v1.ops.math_ops import cast
                    bs = batch_size if batch_size.dtype == dtypes.int32 else \
                        cast(batch_size, dtypes.int32)
                    return fill(stack([bs] + [tensor(np.int32(d)) for d in dims]),
                                tensor(np.zeros((), dtypes.as_dtype(dtype).np)))
                return zeros([int(batch_size)] + dims, dtype)
            return nest.map_structure(z, self.state_size) if nest.is_sequence(
                self.state_size) else z(self.state_size)

    @property
    def trainable_variables(self):
        return [v for v in self.variables]

    @property
    def variables(self):
        return [v for k, v in sorted(self.__dict__.items()) if k.startswith("_v_")]

    weights = variables


def _act(activation):
    return tanh if activation is None else activation


class BasicRNNCell(RNNCell):
    """output = new_state = activation(W [inputs, state] + b)."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None):
        super().__init__(reuse, name, dtype)
        self._num_units = int(num_units)
        self._activation = _act(activation)

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, input_depth, dtype):
        self._v_kernel = get_variable("kernel", [input_depth + self._num_units,
                                                 self._num_units], dtype=dtype)
        self._v_bias = get_variable("bias", [self._num_units], dtype=dtype,
                                    initializer=zeros_initializer())

    def call(self, inputs, state):
        out = self._activation(bias_add(matmul(concat([inputs, state], 1), self._v_kernel),
                                        self._v_bias))
        return out, out


class BasicLSTMCell(RNNCell):
    """The LSTM of Zaremba et al. (no peepholes, no projection); forget_bias is added to
    the forget gate."""

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None,
                 reuse=None, name=None, dtype=None):
        super().__init__(reuse, name, dtype)
        self._num_units = int(num_units)
        self._forget_bias = float(forget_bias)
        self._state_is_tuple = state_is_tuple
        self._activation = _act(activation)

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    output_size = property(lambda self: self._num_units)

    def build(self, input_depth, dtype):
        n = self._num_units
        self._v_kernel = get_variable("kernel", [input_depth + n, 4 * n], dtype=dtype)
        self._v_bias = get_variable("bias", [4 * n], dtype=dtype,
                                    initializer=zeros_initializer())

    def call(self, inputs, state):
        from xlapy.compat.v1.ops.manip_ops import split
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = split(state, 2, axis=1)
        gates = bias_add(matmul(concat([inputs, h], 1), self._v_kernel), self._v_bias)
        i, j, f, o = split(gates, 4, axis=1)
        fb = tensor(np.asarray(self._forget_bias, f.dtype.np))
        new_c = add(multiply(c, sigmoid(add(f, fb))), multiply(sigmoid(i), self._activation(j)))
        new_h = multiply(self._activation(new_c), sigmoid(o))
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple else \
            concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(RNNCell):
    """LSTM with optional peepholes, cell clipping and an output projection."""

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None,
                 num_proj=None, proj_clip=None, num_unit_shards=None, num_proj_shards=None,
                 forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None):
        super().__init__(reuse, name, dtype)
        self._num_units = int(num_units)
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = float(forget_bias)
        self._state_is_tuple = state_is_tuple
        self._activation = _act(activation)

    @property
    def state_size(self):
        h = self._num_proj or self._num_units
        return LSTMStateTuple(self._num_units, h) if self._state_is_tuple else \
            self._num_units + h

    output_size = property(lambda self: self._num_proj or self._num_units)

    def build(self, input_depth, dtype):
        n = self._num_units
        h = self._num_proj or n
        self._v_kernel = get_variable("kernel", [input_depth + h, 4 * n], dtype=dtype,
                                      initializer=self._initializer)
        self._v_bias = get_variable("bias", [4 * n], dtype=dtype,
                                    initializer=zeros_initializer())
        if self._use_peepholes:
            self._v_w_f_diag = get_variable("w_f_diag", [n], dtype=dtype,
                                            initializer=self._initializer)
            self._v_w_i_diag = get_variable("w_i_diag", [n], dtype=dtype,
                                            initializer=self._initializer)
            self._v_w_o_diag = get_variable("w_o_diag", [n], dtype=dtype,
                                            initializer=self._initializer)
        if self._num_proj is not None:
            with variable_scope("projection"):
                self._v_proj_kernel = get_variable("kernel", [n, self._num_proj], dtype=dtype,
                                                   initializer=self._initializer)

    def call(self, inputs, state):
        from xlapy.compat.v1.ops.clip_ops import clip_by_value
        from xlapy.compat.v1.ops.manip_ops import split
        n = self._num_units
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            from xlapy.compat.v1.ops.index_ops import slice_
            c_prev = slice_(state, [0, 0], [-1, n])
            m_prev = slice_(state, [0, n], [-1, self._num_proj or n])
        gates = bias_add(matmul(concat([inputs, m_prev], 1), self._v_kernel), self._v_bias)
        i, j, f, o = split(gates, 4, axis=1)
        fb = tensor(np.asarray(self._forget_bias, f.dtype.np))
        act = self._activation
        if self._use_peepholes:
            c = add(multiply(sigmoid(add(add(f, fb), multiply(self._v_w_f_diag, c_prev))),
                             c_prev),
                    multiply(sigmoid(add(i, multiply(self._v_w_i_diag, c_prev))), act(j)))
        else:
            c = add(multiply(sigmoid(add(f, fb)), c_prev), multiply(sigmoid(i), act(j)))
        if self._cell_clip is not None:
            c = clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = multiply(sigmoid(add(o, multiply(self._v_w_o_diag, c))), act(c))
        else:
            m = multiply(sigmoid(o), act(c))
        if self._num_proj is not None:
            m = matmul(m, self._v_proj_kernel)
            if self._proj_clip is not None:
                m = clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else concat([c, m], 1)
        return m, new_state


class GRUCell(RNNCell):
    """Gated recurrent unit (Cho et al.): reset and update gates, then the candidate."""

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None):
        super().__init__(reuse, name, dtype)
        self._num_units = int(num_units)
        self._activation = _act(activation)
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, input_depth, dtype):
        n = self._num_units
        with variable_scope("gates"):
            self._v_gate_kernel = get_variable("kernel", [input_depth + n, 2 * n], dtype=dtype,
                                               initializer=self._kernel_initializer)
            self._v_gate_bias = get_variable(
                "bias", [2 * n], dtype=dtype,
                initializer=self._bias_initializer or constant_initializer(1.0, dtype=dtype))
        with variable_scope("candidate"):
            self._v_candidate_kernel = get_variable("kernel", [input_depth + n, n],
                                                    dtype=dtype,
                                                    initializer=self._kernel_initializer)
            self._v_candidate_bias = get_variable(
                "bias", [n], dtype=dtype,
                initializer=self._bias_initializer or zeros_initializer())

    def call(self, inputs, state):
        from xlapy.compat.v1.ops.manip_ops import split
        gates = sigmoid(bias_add(matmul(concat([inputs, state], 1), self._v_gate_kernel),
                                 self._v_gate_bias))
        r, u = split(gates, 2, axis=1)
        cand = self._activation(bias_add(matmul(concat([inputs, multiply(r, state)], 1),
                                                self._v_candidate_kernel),
                                         self._v_candidate_bias))
        one = tensor(np.ones((), u.dtype.np))
        new_h = add(multiply(u, state), multiply(subtract(one, u), cand))
        return new_h, new_h


class MultiRNNCell(RNNCell):
    """Cells stacked: each one's output is the next one's input."""

    def __init__(self, cells, state_is_tuple=True):
        super().__init__(name="multi_rnn_cell")
        if not cells:
            raise InvalidArgumentError("Must specify at least one cell for MultiRNNCell.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple

    @property
    def state_size(self):
        sizes = tuple(c.state_size for c in self._cells)
        return sizes if self._state_is_tuple else sum(sizes)

    output_size = property(lambda self: self._cells[-1].output_size)

    def _call_scoped(self, inputs, state):
        out = inputs
        new_states = []
        if not self._state_is_tuple:
            raise InvalidArgumentError("MultiRNNCell(state_is_tuple=False) is not supported")
        if len(state) != len(self._cells):
            raise InvalidArgumentError(f"Expected state to be a tuple of length "
                                       f"{len(self._cells)}, but received: {state}")
        for k, (cell, s) in enumerate(zip(self._cells, state)):
            with variable_scope(f"cell_{k}"):
                out, ns = cell(out, s)
            new_states.append(ns)
        return out, tuple(new_states)

    @property
    def variables(self):
        return [v for c in self._cells for v in c.variables]


class _Wrapper(RNNCell):
    def __init__(self, cell):
        super().__init__()
        self._cell = cell

    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._cell.output_size)

    def __call__(self, inputs, state, scope=None):
        return self._wrap(tensor(inputs), state, scope)

    def zero_state(self, batch_size, dtype):
        return self._cell.zero_state(batch_size, dtype)

    @property
    def variables(self):
        return self._cell.variables


class DropoutWrapper(_Wrapper):
    """Dropout on the cell's inputs, outputs and state (keep probabilities); with
    variational_recurrent=True the same mask is used at every time step (a [1, size] mask
    drawn once, as TF's)."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None):
        super().__init__(cell)
        self._keep = {"input": input_keep_prob, "output": output_keep_prob,
                      "state": state_keep_prob}
        self._variational = variational_recurrent
        self._seed = seed
        self._masks: dict = {}
        if variational_recurrent:
            if dtype is None:
                raise InvalidArgumentError("When variational_recurrent=True, dtype must be "
                                           "provided")
            self._dtype = dtypes.as_dtype(dtype)
            sizes = {"input": input_size, "output": cell.output_size,
                     "state": cell.state_size}
            for k, size in sizes.items():
                if self._active(k) and size is not None:
                    self._masks[k] = nest.map_structure(
                        lambda sz, k=k: self._mask(k, sz), size) if nest.is_sequence(
                        size) else self._mask(k, size)
            if self._active("input") and input_size is None:
                raise InvalidArgumentError("When variational_recurrent=True and "
                                           "input_keep_prob < 1.0, input_size must be provided")

    def _active(self, kind):
        p = self._keep[kind]
        return isinstance(p, Tensor) or float(p) < 1.0

    def _mask(self, kind, size):
        """A [1, size] 0/1 keep mask, drawn once in the outermost graph."""
        from xlapy.compat.v1.ops.functional import in_root_graph
        from xlapy.compat.v1.ops.math_ops import floor
        from xlapy.compat.v1.ops.random_ops import random_uniform
        p = self._keep[kind]
        with in_root_graph():
            kp = tensor(p, dtype=self._dtype) if not isinstance(p, Tensor) else p
            return floor(add(kp, random_uniform([1, int(size)], dtype=self._dtype,
                                                seed=self._seed)))

    def _apply(self, kind, values):
        from xlapy.compat.v1.ops.nn_ops import dropout
        if not self._active(kind):
            return values
        p = self._keep[kind]
        if not self._variational:
            return nest.map_structure(lambda v: dropout(v, keep_prob=p, seed=self._seed),
                                      values) if nest.is_sequence(values) else \
                dropout(values, keep_prob=p, seed=self._seed)
        from xlapy.compat.v1.ops.math_ops import truediv
        masks = self._masks[kind]

        def apply(v, mask):
            kp = tensor(p, dtype=v.dtype) if not isinstance(p, Tensor) else p
            return multiply(truediv(v, kp), mask)
        return nest.map_structure(apply, values, masks) if nest.is_sequence(values) else \
            apply(values, masks)

    def _wrap(self, inputs, state, scope):
        inputs = self._apply("input", inputs)
        out, new_state = self._cell(inputs, state, scope=scope)
        new_state = self._apply("state", new_state)
        out = self._apply("output", out)
        return out, new_state


class ResidualWrapper(_Wrapper):
    """output = input + cell output (the shapes must match)."""

    def __init__(self, cell, residual_fn=None):
        super().__init__(cell)
        self._fn = residual_fn

    def _wrap(self, inputs, state, scope):
        out, new_state = self._cell(inputs, state, scope=scope)
        res = self._fn(inputs, out) if self._fn else nest.map_structure(add, inputs, out) \
            if nest.is_sequence(inputs) else add(inputs, out)
        return res, new_state


class DeviceWrapper(_Wrapper):
    def __init__(self, cell, device):
        super().__init__(cell)
        self._device = device

    def _wrap(self, inputs, state, scope):
        with get_default_graph().device(self._device):
            return self._cell(inputs, state, scope=scope)
