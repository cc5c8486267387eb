"""tf.GradientTape in graph mode (TF 1.15 supports it in graphs too): a tape records the
ops made inside its `with` block, and tape.gradient differentiates through those ops only,
with tf.gradients.

    with tf.GradientTape() as tape:
        tape.watch(x)                  # a tensor; trainable variables read inside are
        y = x * x + w * x              # watched by themselves (watch_accessed_variables)
    dx, dw = tape.gradient(y, [x, w])

An op made outside the tape (before it, or inside tape.stop_recording()) passes no
gradient back: a source reached only through such ops gets None, as a tape that did not
see the op would give. A source that is not watched gets None too. A non-persistent tape
answers one gradient (or jacobian) call; gradient() called inside the block of a
non-persistent tape ends the recording.
"""

from __future__ import annotations

import contextlib

import numpy as np

from xlapy.compat.v1 import nest
from xlapy.compat.v1.framework import (GraphKeys, Tensor, convert_to_tensor,
                                       get_default_graph)
from xlapy.compat.v1.gradients import UnconnectedGradients, gradients

__all__ = ["GradientTape"]


def _is_variable(x) -> bool:
    return hasattr(x, "_ref") and hasattr(x, "_snapshot")


class GradientTape:
    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = bool(persistent)
        self._watch_accessed = bool(watch_accessed_variables)
        self._graph = None
        self._spans: list = []      # [start, end) ranges of graph._ops recorded
        self._start = None          # where the open span began, while recording
        self._watched: dict = {}    # id -> watched Tensor or Variable, in watch order
        self._spent = False

    # ---- recording ---------------------------------------------------------------------------
    def __enter__(self):
        if self._start is not None:
            raise ValueError("Tape is still recording, This can happen if you try to "
                             "re-enter an already-active tape.")
        graph = get_default_graph()
        if self._graph is not None and graph is not self._graph:
            raise ValueError("GradientTape: the tape was entered in another graph; a tape "
                             "records the ops of one graph")
        self._graph = graph
        self._push()
        return self

    def __exit__(self, *exc):
        if self._start is not None:
            self._pop()
        return False

    def _push(self) -> None:
        self._start = len(self._graph._ops)

    def _pop(self) -> None:
        self._spans.append((self._start, len(self._graph._ops)))
        self._start = None

    @contextlib.contextmanager
    def stop_recording(self):
        """Ops made inside this block are not recorded."""
        if self._start is None:
            raise ValueError("Tape must be recording.")
        self._pop()
        try:
            yield
        finally:
            self._push()

    def reset(self) -> None:
        """Forget everything recorded and watched (recording goes on inside the block)."""
        recording = self._start is not None
        self._spans.clear()
        self._watched.clear()
        self._spent = False
        if recording:
            self._push()

    def watch(self, tensor) -> None:
        """Watch tensors or variables (a nested structure of them)."""
        for t in nest.flatten(tensor):
            if not (isinstance(t, Tensor) or _is_variable(t)):
                raise ValueError(f"Passed in object of type {type(t)}, not tf.Tensor")
            self._watched[id(t)] = t

    def _recorded_ops(self) -> list:
        if self._graph is None:
            return []
        ops = self._graph._ops
        spans = list(self._spans)
        if self._start is not None:
            spans.append((self._start, len(ops)))
        return [op for a, b in spans for op in ops[a:b]]

    def _all_variables(self) -> list:
        g = self._graph
        seen, out = set(), []
        for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES):
            for v in g.get_collection(key):
                if _is_variable(v) and id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)
        return out

    def watched_variables(self) -> tuple:
        """The variables this tape watches: those watch() named, and (with
        watch_accessed_variables) the trainable ones read by recorded ops."""
        out = [v for v in self._watched.values() if _is_variable(v)]
        if self._watch_accessed and self._graph is not None:
            recorded = self._recorded_ops()
            by_tensor = {}
            for v in self._all_variables():
                if v.trainable and id(v) not in self._watched:
                    by_tensor[id(v._snapshot)] = v
                    by_tensor[id(v._ref())] = v
            accessed = {}
            for op in recorded:
                for t in op.inputs:
                    v = by_tensor.get(id(t))
                    # (a variable's own initializer and read op do not access it)
                    if v is not None and op is not v.initializer and op is not \
                            v._snapshot.op:
                        accessed.setdefault(id(v), v)
            out.extend(accessed.values())
        return tuple(out)

    # ---- gradients ---------------------------------------------------------------------------
    def _use(self, what: str) -> None:
        if self._spent:
            raise RuntimeError(f"GradientTape.{what} can only be called once on "
                               "non-persistent tapes.")
        if self._graph is None:
            raise ValueError("GradientTape: nothing was recorded (use the tape as a `with` "
                             "block)")
        if not self._persistent:
            if self._start is not None:
                self._pop()  # a non-persistent tape stops recording here, as TF's
            self._spent = True

    def _differentiate(self, targets, sources, grad_ys, unconnected):
        """tf.gradients of the flat targets for the flat sources through recorded ops."""
        watched_vars = self.watched_variables()
        watched = {id(x) for x in watched_vars} | {
            id(t) for t in self._watched.values() if isinstance(t, Tensor)}
        live = [s for s in sources if id(s) in watched]
        result = {}
        if live:
            recorded = {id(op) for op in self._recorded_ops()}
            recorded.update(id(v._snapshot.op) for v in watched_vars)  # the variables' reads
            stops, seen = [], set()
            stack = [t.op for t in targets]
            while stack:
                op = stack.pop()
                if id(op) in seen:
                    continue
                seen.add(id(op))
                if id(op) not in recorded and op.outputs:
                    stops.append(op.outputs[0])
                stack.extend(t.op for t in op.inputs)
            grads = gradients(targets, live, grad_ys=grad_ys, stop_gradients=stops or None,
                              unconnected_gradients=unconnected)
            result = {id(s): g for s, g in zip(live, grads)}
        out = []
        for s in sources:
            g = result.get(id(s))
            if g is None and unconnected is UnconnectedGradients.ZERO:
                from xlapy.compat.v1.ops.array_ops import zeros_like  # (ops import gradients)
                g = zeros_like(s)
            out.append(g)
        return out

    @staticmethod
    def _check_sources(flat_sources):
        for s in flat_sources:
            if not (isinstance(s, Tensor) or _is_variable(s)):
                raise ValueError(f"GradientTape.gradient: a source is {s!r} of type "
                                 f"{type(s).__name__}, not a tf.Tensor or tf.Variable")

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """The gradients of target (a tensor or a nested structure of them, summed) with
        respect to sources, shaped as sources; None for a source not watched or not
        connected (zeros with unconnected_gradients=ZERO)."""
        unconnected = UnconnectedGradients(unconnected_gradients)
        self._use("gradient")
        flat_targets = [convert_to_tensor(t) for t in nest.flatten(target)]
        flat_sources = nest.flatten(sources)
        self._check_sources(flat_sources)
        grad_ys = None
        if output_gradients is not None:
            grad_ys = nest.flatten(output_gradients)
            if len(grad_ys) != len(flat_targets):
                raise ValueError(f"output_gradients has {len(grad_ys)} entries for "
                                 f"{len(flat_targets)} targets")
        grads = self._differentiate(flat_targets, flat_sources, grad_ys, unconnected)
        return nest.pack_sequence_as(sources, grads)

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """d target[i...] / d source[j...] for each source: shape target.shape +
        source.shape. The target's shape must be known when the graph is built."""
        from xlapy.compat.v1.ops.array_ops import reshape, stack  # (ops import gradients)
        unconnected = UnconnectedGradients(unconnected_gradients)
        self._use("jacobian")
        target = convert_to_tensor(target)
        if not target.shape.is_fully_defined():
            raise ValueError(f"GradientTape.jacobian: the target's shape must be fully "
                             f"defined in graph mode, got {target.shape}")
        flat_sources = nest.flatten(sources)
        self._check_sources(flat_sources)
        dims = target.shape.as_list()
        n = int(np.prod(dims))
        rows = []
        for i in range(n):
            seed = np.zeros(n, target.dtype.np)
            seed[i] = 1
            rows.append(self._differentiate([target], flat_sources,
                                            [seed.reshape(dims)], unconnected))
        out = []
        for k, s in enumerate(flat_sources):
            col = [r[k] for r in rows]
            if all(g is None for g in col):
                out.append(None)
                continue
            zeros = None
            if any(g is None for g in col):
                from xlapy.compat.v1.ops.array_ops import zeros_like  # (as above)
                zeros = zeros_like(s)
            j = stack([zeros if g is None else g for g in col])
            out.append(reshape(j, dims + convert_to_tensor(s).shape.as_list()))
        return nest.pack_sequence_as(sources, out)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """d target[b, i...] / d source[b, j...] for batches b that do not interact:
        shape [batch] + target.shape[1:] + source.shape[1:] (those parts known)."""
        from xlapy.compat.v1.ops.array_ops import reshape, stack, zeros_like  # (as above)
        unconnected = UnconnectedGradients(unconnected_gradients)
        self._use("batch_jacobian")
        target = convert_to_tensor(target)
        src = source if _is_variable(source) else convert_to_tensor(source)
        self._check_sources([src])
        tdims = target.shape.as_list()
        sdims = convert_to_tensor(src).shape.as_list()
        if target.shape.ndims is None or target.shape.ndims < 1 or None in tdims[1:]:
            raise ValueError(f"GradientTape.batch_jacobian: the target's shape past the "
                             f"batch axis must be known, got {target.shape}")
        if len(sdims) < 1 or None in sdims[1:]:
            raise ValueError(f"GradientTape.batch_jacobian: the source's shape past the "
                             f"batch axis must be known, got {sdims}")
        inner = tdims[1:]
        n = int(np.prod(inner))
        rows = []
        for i in range(n):
            seed = np.zeros(n, target.dtype.np)
            seed[i] = 1
            grad_y = zeros_like(target) + seed.reshape([1] + inner)
            g = self._differentiate([target], [source], [grad_y], unconnected)[0]
            rows.append(g)
        if all(g is None for g in rows):
            return None
        rows = [zeros_like(src) if g is None else g for g in rows]
        j = stack(rows, axis=1)  # [batch, n, source dims...]
        return reshape(j, [-1] + inner + sdims[1:])
