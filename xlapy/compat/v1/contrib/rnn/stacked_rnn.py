"""tf.contrib.rnn.stack_bidirectional_rnn / stack_bidirectional_dynamic_rnn: layers of
bidirectional RNNs, each layer's input the concatenated forward and backward outputs of
the layer below (TF 1.15's contrib/rnn/python/ops/rnn.py). Layer i's variables live in
<scope>/cell_i/ (scope "stack_bidirectional_rnn" by default)."""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.ops.rnn_ops import bidirectional_dynamic_rnn, static_bidirectional_rnn
from xlapy.compat.v1.variables import variable_scope


def _check(cells_fw, cells_bw, initial_states_fw, initial_states_bw):
    if not cells_fw:
        raise InvalidArgumentError("Must specify at least one fw cell for BidirectionalRNN.")
    if not cells_bw:
        raise InvalidArgumentError("Must specify at least one bw cell for BidirectionalRNN.")
    if not isinstance(cells_fw, list):
        raise InvalidArgumentError("cells_fw must be a list of RNNCells (one per layer).")
    if not isinstance(cells_bw, list):
        raise InvalidArgumentError("cells_bw must be a list of RNNCells (one per layer).")
    if len(cells_fw) != len(cells_bw):
        raise InvalidArgumentError("Forward and Backward cells must have the same depth.")
    for what, states in (("fw", initial_states_fw), ("bw", initial_states_bw)):
        if states is not None and (not isinstance(states, list) or
                                   len(states) != len(cells_fw)):
            raise InvalidArgumentError(f"initial_states_{what} must be a list of state "
                                       "tensors (one per layer).")


def stack_bidirectional_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None,
                            initial_states_bw=None, dtype=None, sequence_length=None,
                            scope=None):
    """(outputs: a list over time of [batch, fw + bw units], states_fw, states_bw: tuples of
    each layer's final states)."""
    _check(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    states_fw, states_bw = [], []
    prev = inputs
    with variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with variable_scope(f"cell_{i}") as cell_scope:
                prev, st_fw, st_bw = static_bidirectional_rnn(
                    cell_fw, cell_bw, prev,
                    initial_state_fw=initial_states_fw[i] if initial_states_fw else None,
                    initial_state_bw=initial_states_bw[i] if initial_states_bw else None,
                    sequence_length=sequence_length, dtype=dtype, scope=cell_scope)
            states_fw.append(st_fw)
            states_bw.append(st_bw)
    return prev, tuple(states_fw), tuple(states_bw)


def stack_bidirectional_dynamic_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None,
                                    initial_states_bw=None, dtype=None,
                                    sequence_length=None, parallel_iterations=None,
                                    time_major=False, scope=None, swap_memory=False):
    """(outputs [batch, time, fw + bw units] (or time-major), states_fw, states_bw)."""
    from xlapy.compat.v1.ops.array_ops import concat
    _check(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    states_fw, states_bw = [], []
    prev = inputs
    with variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with variable_scope(f"cell_{i}"):
                outputs, (st_fw, st_bw) = bidirectional_dynamic_rnn(
                    cell_fw, cell_bw, prev,
                    initial_state_fw=initial_states_fw[i] if initial_states_fw else None,
                    initial_state_bw=initial_states_bw[i] if initial_states_bw else None,
                    sequence_length=sequence_length, dtype=dtype, time_major=time_major)
                prev = concat(list(outputs), 2)
            states_fw.append(st_fw)
            states_bw.append(st_bw)
    return prev, tuple(states_fw), tuple(states_bw)
