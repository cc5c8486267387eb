"""tf.keras.backend (TF 1.x graph mode): the session Keras runs its models in (one per graph,
made on first use unless set_session gave one), the learning phase and clear_session."""

from __future__ import annotations

from xlapy.compat.v1.framework import get_default_graph

_SESSIONS: dict = {}      # graph -> session
_PHASES: dict = {}        # graph -> learning-phase placeholder


def get_session():
    from xlapy.compat.v1.session import Session
    g = get_default_graph()
    s = _SESSIONS.get(g)
    if s is None:
        s = _SESSIONS[g] = Session(graph=g)
    return s


def set_session(session) -> None:
    _SESSIONS[session.graph] = session


def learning_phase():
    """A bool scalar, False unless fed: fit feeds True (dropout, batch norm)."""
    from xlapy.compat.v1.ops.placeholder_ops import placeholder_with_default
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
    reset_default_graph()


def epsilon() -> float:
    return 1e-7
