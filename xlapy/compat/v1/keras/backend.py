"""tf.keras.backend (TF 1.x graph mode): the session Keras runs its models in (one per graph,
made on first use unless set_session gave one), the learning phase and clear_session;
the tensor functions (K.mean, K.dot, K.function, ...) are in keras/backend_ops.py."""

from __future__ import annotations

import builtins

from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.keras.backend_ops import *  # noqa: F403
from xlapy.compat.v1.keras.backend_ops import __all__ as _ops_all  # noqa: F401

_SESSIONS: dict = {}      # graph -> session
_PHASES: dict = {}        # graph -> learning-phase placeholder
_KNOWN_INITIALIZED: dict = {}   # session -> ids of variables known to hold values
_CALLS: dict = {}         # graph -> [(Keras layer, its output tensors)] in call order


def get_session():
    """The Keras session of the default graph, with the graph's variables that hold no value
    yet initialized (as TF 1.x Keras' get_session does)."""
    from xlapy.compat.v1.variables import global_variables
    s = _raw_session()
    _initialize(s, global_variables())
    return s


def _raw_session():
    from xlapy.compat.v1.session import Session
    g = get_default_graph()
    s = _SESSIONS.get(g)
    if s is None:
        s = _SESSIONS[g] = Session(graph=g)
    return s


def set_session(session) -> None:
    _SESSIONS[session.graph] = session


_FIXED_PHASE: list = [None]


def set_learning_phase(value) -> None:
    """0 (test) or 1 (train) from now on: learning_phase() returns that int, which layers
    then use as a Python constant (and fit no longer feeds)."""
    if value not in (0, 1):
        from xlapy.compat.v1.errors import InvalidArgumentError
        raise InvalidArgumentError("Expected learning phase to be 0 or 1.")
    _FIXED_PHASE[0] = int(value)


def learning_phase():
    """A bool scalar, False unless fed: fit feeds True (dropout, batch norm). After
    set_learning_phase(v): the int v."""
    from xlapy.compat.v1.ops.placeholder_ops import placeholder_with_default
    if _FIXED_PHASE[0] is not None:
        return _FIXED_PHASE[0]
    g = get_default_graph()
    p = _PHASES.get(g)
    if p is None:
        with g.name_scope(None):
            p = _PHASES[g] = placeholder_with_default(False, [], name="keras_learning_phase")
    return p


def clear_session() -> None:
    """Forget the sessions and start a new default graph (as TF 1.x's did)."""
    from xlapy.compat.v1.framework import reset_default_graph
    for s in _SESSIONS.values():
        s.close()
    _SESSIONS.clear()
    _PHASES.clear()
    _KNOWN_INITIALIZED.clear()
    _CALLS.clear()
    _FIXED_PHASE[0] = None
    reset_default_graph()


def get_graph():
    return get_default_graph()


def manual_variable_initialization(value) -> None:
    pass


def _session_with(variables):
    """The Keras session, with those of `variables` that hold no value yet initialized
    (as TF 1.x Keras' get_session initializes the variables it finds uninitialized)."""
    s = _raw_session()
    _initialize(s, variables)
    return s


def _initialize(s, variables):
    from xlapy.compat.v1.misc_api import report_uninitialized_variables
    from xlapy.compat.v1.variables import variables_initializer
    done = _KNOWN_INITIALIZED.setdefault(s, set())
    variables = [v for v in variables if hasattr(v, "initializer") and id(v) not in done]
    if variables:
        with s.graph.as_default():
            names = {n.decode() if isinstance(n, bytes) else n
                     for n in s.run(report_uninitialized_variables(variables))}
            todo = [v for v in variables if v.op.name in names]
            if todo:
                s.run(variables_initializer(todo))
        done.update(id(v) for v in variables)


def get_value(x):
    """The value of a variable (or tensor) in the Keras session."""
    return _session_with([x]).run(x)


def batch_get_value(xs) -> list:
    xs = list(xs)
    return list(_session_with(xs).run(xs)) if xs else []


def set_value(x, value) -> None:
    """Load `value` into the variable x (no new ops for repeated loads)."""
    import numpy as np
    s = _session_with([x])
    x.load(np.asarray(value, x.dtype.as_numpy_dtype), s)


def batch_set_value(tuples) -> None:
    for x, v in tuples:
        set_value(x, v)


def _record_call(layer, outputs) -> None:
    outs = [o for o in (outputs if isinstance(outputs, (list, tuple)) else [outputs])
            if hasattr(o, "op")]
    if outs:
        _CALLS.setdefault(outs[0].graph, []).append((layer, outs))


def _layers_between(inputs, outputs) -> list:
    """The Keras layers whose outputs the `outputs` depend on (not past `inputs`), in the
    order they were called."""
    stop = {id(t) for t in (inputs if isinstance(inputs, (list, tuple)) else [inputs])}
    todo = list(outputs if isinstance(outputs, (list, tuple)) else [outputs])
    seen: set = set()
    while todo:
        t = todo.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        if id(t) not in stop:
            todo.extend(t.op.inputs)
    layers: list = []
    for layer, outs in _CALLS.get(_graph_of(outputs), []):
        if builtins.any(id(o) in seen for o in outs) and \
                not builtins.any(layer is x for x in layers):
            layers.append(layer)
    return layers


def _graph_of(outputs):
    return (outputs[0] if isinstance(outputs, (list, tuple)) else outputs).graph
