"""tf.nn.raw_rnn: an RNN whose inputs, state and emitted outputs a Python loop_fn decides at
every step, as one While (control_flow_ops.build_while).

TF's contract: loop_fn(time, cell_output, cell_state, loop_state) -> (finished,
next_input, next_cell_state, emit_output, next_loop_state), called once at time 0 with
cell_output, cell_state and loop_state None (giving the initial input, the initial state
and, as emit_output, the structure of what is emitted, None meaning the cell's output),
then after every cell step. The loop runs while some batch entry is not finished; entries
that are finished emit zeros and keep their state. Returns (emit_ta, final_state,
final_loop_state), emit_ta a TensorArray of one element per step run.

xlapy's TensorArrays have a fixed size and XLA needs a loop's stacked outputs sized at
compile time: with no bound, the cluster holding the loop falls back to the executor (as a
tf.while_loop's gradient without maximum_iterations does). The xlapy extension
maximum_iterations= bounds it (a constant), so it compiles.
"""

from __future__ import annotations

from xlapy.compat.v1 import nest
from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.framework import convert_to_tensor
from xlapy.compat.v1.variables import variable_scope


def _tf():
    import xlapy.compat.v1 as tf
    return tf


def _select_rows(finished, cur, new):
    """where(finished[batch], cur, new) for a [batch, ...] tensor."""
    tf = _tf()
    mask = finished
    for _ in range((new.shape.ndims or 1) - 1):
        mask = tf.expand_dims(mask, -1)
    if new.shape.ndims:
        mask = tf.logical_and(mask, tf.ones_like(new, dtype=tf.bool))
    return tf.where(mask, cur, new)


def raw_rnn(cell, loop_fn, parallel_iterations=None, swap_memory=False, scope=None,
            maximum_iterations=None):
    """(emit_ta, final_state, final_loop_state): see the module doc."""
    from xlapy.compat.v1.ops import tensor_array_ops as tas
    from xlapy.compat.v1.ops.control_flow_ops import build_while
    from xlapy.compat.v1.ops.rnn_ops import _check_cell
    tf = _tf()
    _check_cell(cell, "cell")
    if not callable(loop_fn):
        raise InvalidTypeError("loop_fn must be a callable")
    with variable_scope(scope or "rnn"):
        time0 = tf.constant(0, tf.int32)
        finished, next_input, state, emit_struct, loop_state = loop_fn(time0, None, None, None)
        finished = convert_to_tensor(finished)
        if finished.dtype != tf.bool:
            raise InvalidArgumentError(f"loop_fn must return a bool `finished`, got "
                                       f"{finished.dtype.name}")
        if state is None:
            raise InvalidArgumentError("loop_fn at time 0 must return the initial cell state")
        flat_in = [convert_to_tensor(x) for x in nest.flatten(next_input)]
        flat_state = [convert_to_tensor(s) for s in nest.flatten(state)]
        ls_leaves = nest.flatten(loop_state) if loop_state is not None else []
        ls_flat = tas.loop_carried(ls_leaves)
        n_in, n_st = len(flat_in), len(flat_state)
        struct = {}

        def body(t, carry, _rows):
            done, c = carry[0], carry[1:]
            x = nest.pack_sequence_as(next_input, c[:n_in])
            st = nest.pack_sequence_as(state, c[n_in:n_in + n_st])
            ls = None if loop_state is None else nest.pack_sequence_as(
                loop_state, tas.rewrap(ls_leaves, c[n_in + n_st:]))
            out, cell_state = cell(x, st)
            fin, nx, nst, emit, nls = loop_fn(t + 1, out, cell_state, ls)
            if emit is None:
                emit = out
            if emit_struct is not None:
                nest.assert_same_structure(emit_struct, emit, check_types=False)
            flat_emit = [convert_to_tensor(e) for e in nest.flatten(emit)]
            struct["emit"] = emit
            flat_emit = [_select_rows(done, tf.zeros_like(e), e) for e in flat_emit]
            nest.assert_same_structure(state, nst, check_types=False)
            new_st = [_select_rows(done, o, convert_to_tensor(n))
                      for o, n in zip(c[n_in:n_in + n_st], nest.flatten(nst))]
            for o, n in zip(c[n_in:n_in + n_st], new_st):
                n.set_shape(o.shape)
            if (loop_state is None) != (nls is None):
                raise InvalidArgumentError("loop_fn must return a next_loop_state exactly "
                                           "when its initial loop_state is not None")
            new_ls = [] if nls is None else tas.loop_carried(nest.flatten(nls))
            new_done = tf.logical_or(done, convert_to_tensor(fin))
            return [new_done, *nest.flatten(nx), *new_st, *new_ls], flat_emit

        def cond(t, carry):
            return tf.logical_not(tf.reduce_all(carry[0]))

        n, final, ys = build_while([finished, *flat_in, *flat_state, *ls_flat], [],
                                   maximum_iterations, body, cond, name="while")
        emitted = []
        for y in ys:
            y = y if maximum_iterations is None else tf.gather(y, tf.range(n))
            ta = tas.TensorArray(y.dtype, size=n, element_shape=y.shape[1:])
            emitted.append(ta.unstack(y))
        emit_ta = nest.pack_sequence_as(struct["emit"], emitted)
        final_state = nest.pack_sequence_as(state, final[1 + n_in:1 + n_in + n_st])
        final_ls = None if loop_state is None else nest.pack_sequence_as(
            loop_state, tas.rewrap(ls_leaves, final[1 + n_in + n_st:], known_shape=True))
        return emit_ta, final_state, final_ls
