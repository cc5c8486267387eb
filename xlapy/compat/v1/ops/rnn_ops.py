"""tf.nn.dynamic_rnn, static_rnn, bidirectional_dynamic_rnn, static_bidirectional_rnn.

dynamic_rnn is one While op over time (control_flow_ops.build_while): the time-major
inputs are its sliced inputs, the cell state its loop carry, the outputs its stacked
outputs, and maximum_iterations the number of time steps (a shape, so a compile-time
constant), so the whole recurrence is one HLO while loop inside the training step's
cluster, and its gradient the While gradient (another while loop, backwards in time).
With sequence_length, a sequence's steps past its length output zeros and carry its state
through unchanged, as TF does; the returned state is each sequence's state at its length.
static_rnn unrolls the cell in Python over a list of inputs, as TF 1.x does.
"""

from __future__ import annotations

from xlapy.compat.v1 import dtypes, nest
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import Tensor, convert_to_tensor
from xlapy.compat.v1.ops.array_ops import expand_dims, shape, transpose, zeros_like
from xlapy.compat.v1.ops.control_flow_ops import build_while
from xlapy.compat.v1.ops.index_ops import where
from xlapy.compat.v1.ops.math_ops import cast, greater_equal
from xlapy.compat.v1.ops.rnn_cell import RNNCell
from xlapy.compat.v1.tensor_shape import TensorShape
from xlapy.compat.v1.variables import variable_scope


def _check_cell(cell, what):
    if not isinstance(cell, RNNCell) and not (hasattr(cell, "state_size") and callable(cell)):
        raise InvalidTypeError(f"{what} must be an instance of RNNCell, got {cell!r}")


def _swap_batch_time(x: Tensor) -> Tensor:
    r = x.shape.ndims
    if r is None:
        raise InvalidArgumentError(f"dynamic_rnn needs the rank of its inputs, {x.name} has "
                                   "unknown rank")
    if r < 2:
        raise InvalidArgumentError(f"Expected input tensor {x.name} to have rank at least 2")
    return transpose(x, [1, 0] + list(range(2, r)))


def _batch_size(flat: list, time_major: bool):
    for x in flat:
        d = x.shape.dims[1 if time_major else 0] if x.shape.dims else None
        if d is not None:
            return d
    return shape(flat[0])[1 if time_major else 0]


def _copy_through(finished, new, old):
    """where(finished[batch], old, new) for a [batch, ...] tensor."""
    mask = finished
    for _ in range((new.shape.ndims or 2) - 1):
        mask = expand_dims(mask, -1)
    return where(mask, old, new)


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory=False, time_major=False, scope=None):
    """(outputs [batch, time, ...] (or time-major), final state)."""
    _check_cell(cell, "cell")
    with variable_scope(scope or "rnn"):
        flat_in = [convert_to_tensor(x) for x in nest.flatten(inputs)]
        if not flat_in:
            raise InvalidArgumentError("inputs must not be empty")
        batch = _batch_size(flat_in, time_major)
        tm = flat_in if time_major else [_swap_batch_time(x) for x in flat_in]
        steps = tm[0].shape.dims[0] if tm[0].shape.dims and tm[0].shape.dims[0] is not None \
            else shape(tm[0])[0]
        if initial_state is not None:
            state = initial_state
        else:
            if dtype is None:
                raise InvalidArgumentError("If there is no initial_state, you must give a "
                                           "dtype.")
            state = cell.zero_state(batch, dtype)
        flat_state = [convert_to_tensor(s) for s in nest.flatten(state)]
        seq = None
        if sequence_length is not None:
            seq = convert_to_tensor(sequence_length)
            if seq.shape.ndims not in (None, 1):
                raise InvalidArgumentError(f"sequence_length must be a vector of length "
                                           f"batch_size, but saw shape: {seq.shape}")
            if seq.dtype != dtypes.int32:
                seq = cast(seq, dtypes.int32)
        struct = {}

        def body(t, carry, rows):
            x_t = nest.pack_sequence_as(inputs, rows)
            st = nest.pack_sequence_as(state, carry)
            out, new_st = cell(x_t, st)
            flat_out = [convert_to_tensor(o) for o in nest.flatten(out)]
            flat_new = [convert_to_tensor(s) for s in nest.flatten(new_st)]
            struct["out"] = out
            if seq is not None:
                done = greater_equal(t, seq)
                flat_out = [_copy_through(done, o, zeros_like(o)) for o in flat_out]
                flat_new = [_copy_through(done, n, c) for n, c in zip(flat_new, carry)]
            return flat_new, flat_out

        _, final, ys = build_while(flat_state, tm, steps, body, name="while")
        outs = ys if time_major else [_swap_batch_time(y) for y in ys]
        for o in outs:
            dims = o.shape.dims
            if dims is not None and len(dims) >= 2:
                b_ax, t_ax = (1, 0) if time_major else (0, 1)
                d = list(dims)
                if d[b_ax] is None and isinstance(batch, int):
                    d[b_ax] = batch
                if d[t_ax] is None and isinstance(steps, int):
                    d[t_ax] = steps
                o.set_shape(TensorShape(d))
        return (nest.pack_sequence_as(struct["out"], outs),
                nest.pack_sequence_as(state, final))


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None,
               scope=None):
    """The cell unrolled over the list `inputs` ([batch, depth] each)."""
    _check_cell(cell, "cell")
    if not isinstance(inputs, (list, tuple)):
        raise InvalidTypeError("inputs must be a sequence")
    if not inputs:
        raise InvalidArgumentError("inputs must not be empty")
    with variable_scope(scope or "rnn"):
        first = [convert_to_tensor(x) for x in nest.flatten(inputs[0])]
        batch = _batch_size(first, False)
        if initial_state is not None:
            state = initial_state
        else:
            if dtype is None:
                raise InvalidArgumentError("If no initial_state is provided, dtype must be "
                                           "specified")
            state = cell.zero_state(batch, dtype)
        seq = None
        if sequence_length is not None:
            seq = cast(convert_to_tensor(sequence_length), dtypes.int32)
        outputs = []
        for t, x in enumerate(inputs):
            out, new_state = cell(x, state)
            if seq is not None:
                done = greater_equal(convert_to_tensor(t), seq)
                out = nest.map_structure(
                    lambda o, d=done: _copy_through(d, o, zeros_like(o)), out)
                new_state = nest.map_structure(lambda n, c, d=done: _copy_through(d, n, c),
                                               new_state, state)
            outputs.append(out)
            state = new_state
        return outputs, state


def _reverse_time(x, seq, time_major):
    from xlapy.compat.v1.ops.manip_ops import reverse, reverse_sequence
    t_ax, b_ax = (0, 1) if time_major else (1, 0)
    if seq is None:
        return reverse(x, [t_ax])
    return reverse_sequence(x, seq, seq_axis=t_ax, batch_axis=b_ax)


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None,
                              initial_state_fw=None, initial_state_bw=None, dtype=None,
                              parallel_iterations=None, swap_memory=False, time_major=False,
                              scope=None):
    """((outputs_fw, outputs_bw), (state_fw, state_bw)): the backward RNN reads each
    sequence reversed (within its length) and its outputs are reversed back."""
    _check_cell(cell_fw, "cell_fw")
    _check_cell(cell_bw, "cell_bw")
    with variable_scope(scope or "bidirectional_rnn"):
        out_fw, st_fw = dynamic_rnn(cell_fw, inputs, sequence_length, initial_state_fw, dtype,
                                    time_major=time_major, scope="fw")
        seq = None if sequence_length is None else convert_to_tensor(sequence_length)
        rev_in = nest.map_structure(lambda x: _reverse_time(convert_to_tensor(x), seq,
                                                            time_major), inputs) \
            if nest.is_sequence(inputs) else _reverse_time(convert_to_tensor(inputs), seq,
                                                           time_major)
        out_bw, st_bw = dynamic_rnn(cell_bw, rev_in, sequence_length, initial_state_bw, dtype,
                                    time_major=time_major, scope="bw")
        out_bw = nest.map_structure(lambda y: _reverse_time(y, seq, time_major), out_bw) \
            if nest.is_sequence(out_bw) else _reverse_time(out_bw, seq, time_major)
        return (out_fw, out_bw), (st_fw, st_bw)


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None,
                             initial_state_bw=None, dtype=None, sequence_length=None,
                             scope=None):
    """(outputs (fw and bw concatenated per step), state_fw, state_bw)."""
    from xlapy.compat.v1.ops.array_ops import concat, stack, unstack
    with variable_scope(scope or "bidirectional_rnn"):
        out_fw, st_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype, sequence_length,
                                   scope="fw")
        x = stack([convert_to_tensor(i) for i in inputs])
        seq = None if sequence_length is None else convert_to_tensor(sequence_length)
        rev = unstack(_reverse_time(x, seq, True))
        out_bw, st_bw = static_rnn(cell_bw, rev, initial_state_bw, dtype, sequence_length,
                                   scope="bw")
        out_bw = unstack(_reverse_time(stack(out_bw), seq, True))
        return [concat([f, b], 1) for f, b in zip(out_fw, out_bw)], st_fw, st_bw
