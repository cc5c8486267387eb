"""tf.contrib.compiler.jit.experimental_jit_scope: mark ops for XLA compilation.

    jit_scope = tf.contrib.compiler.jit.experimental_jit_scope
    with jit_scope():
        y = tf.matmul(x, w) + b          # these ops get _XlaCompile=True, _XlaScope="jit_scope_0"

Ops in one scope are clustered together (ops of different scopes are kept apart), without
the minimum cluster size of auto-clustering. Compilation is best effort: an op without an
XLA lowering stays in the executor, and a cluster that fails to compile falls back to it
(unless --tf_xla_strict). compile_ops=False opts the scope's ops out, also of auto-jit;
compile_ops may be a callable(node_def) -> bool deciding per op. Gradients of scoped ops
get the same attributes (separate_compiled_gradients=True puts them in their own scope).
"""

from __future__ import annotations

import contextlib
import itertools

from xlapy.compat.v1.framework import get_default_graph

_scope_ids = itertools.count()


@contextlib.contextmanager
def experimental_jit_scope(compile_ops=True, separate_compiled_gradients=False):
    graph = get_default_graph()
    if callable(compile_ops):
        attrs = {"_XlaCompileFn": compile_ops}
    else:
        attrs = {"_XlaCompile": bool(compile_ops)}
    attrs["_XlaScope"] = f"jit_scope_{next(_scope_ids)}"
    attrs["_XlaSeparateCompiledGradients"] = bool(separate_compiled_gradients)
    with graph._attr_scope(attrs):
        yield
