"""tf.contrib.compiler.jit.experimental_jit_scope: mark ops for XLA compilation.

    jit_scope = tf.contrib.compiler.jit.experimental_jit_scope
    with jit_scope():
        y = tf.matmul(x, w) + b          # these ops get _XlaCompile=True, _XlaScope=b"jit_scope_0"

The attributes follow TensorFlow's jit.py: `_XlaCompile` (bool), `_XlaScope` (bytes,
b"jit_scope_<n>") and `_XlaSeparateCompiledGradients` (bool). n counts the outermost scopes
entered in each graph (kept in the graph's "__xla_scope" collection); a scope nested in
another keeps the outer one's n. Ops in one scope are clustered together (ops of different
scopes are kept apart), without the minimum cluster size of auto-clustering. Compilation is
best effort: an op without an XLA lowering stays in the executor, and a cluster that fails
to compile falls back to it (unless --tf_xla_strict). compile_ops=False opts the scope's ops
out, also of auto-jit; compile_ops may be a callable(node_def) -> bool deciding per op.
Gradients of scoped ops get the same attributes; with separate_compiled_gradients=True
their scope is b"<scope>_grad_<gradients name scope>" (jit_scope_0_grad_gradients).
"""

from __future__ import annotations

import contextlib

from xlapy.compat.v1.framework import get_default_graph

_XLA_SCOPE_KEY = "__xla_scope"


class _XlaScope:
    """How many outermost jit scopes a graph has seen, and how deep the current one is."""

    def __init__(self, count: int, depth: int):
        self.count = count
        self.depth = depth


@contextlib.contextmanager
def experimental_jit_scope(compile_ops=True, separate_compiled_gradients=False):
    graph = get_default_graph()
    ref = graph.get_collection_ref(_XLA_SCOPE_KEY)
    if not ref:
        ref.append(_XlaScope(0, 0))
    state = ref[0]
    if state.depth == 0:
        state.count += 1
    scope_id = state.count - 1
    if callable(compile_ops):
        attrs = {"_XlaCompileFn": compile_ops}  # evaluated per op by Graph.create_op
    else:
        attrs = {"_XlaCompile": bool(compile_ops)}
    attrs["_XlaSeparateCompiledGradients"] = bool(separate_compiled_gradients)
    attrs["_XlaScope"] = f"jit_scope_{scope_id}".encode()
    state.depth += 1
    try:
        with graph._attr_scope(attrs):
            yield
    finally:
        state.depth -= 1
