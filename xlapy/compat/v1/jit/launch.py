"""Compile-and-run of a cluster (TF's _XlaCompile + _XlaRun, here one step).

At run time the step gathers the cluster's inputs and the current values of the variables
it reads, looks up a compiled program for their shapes and dtypes (and the values of its
compile-time-constant inputs), compiles one on a miss, runs it, and stores its outputs and
the updated variables. Random ops inside a cluster (dropout's mask) are drawn on the host
with the executor's kernel and generator and passed in as arguments (HostRandom), so a
training step with dropout stays one cluster and draws the executor's numbers.

Compiling = tracing the cluster with the xlapy frontend: a Python function evaluates the
cluster's ops in order with their lowering rules (xlapy.numpy) on traced values, threading
variable values through reads and updates. Ops whose inputs are all known at trace time
(shapes of traced values, constants) are evaluated with their NumPy kernels instead: that
is how shape computations (Shape, BroadcastGradientArgs, Size ...) become constants of the
program. The trace is lowered to HLO (xlapy.frontend.lowering) and compiled by the cpu
backend, so the whole compiler pipeline (simplification, fusion, LLVM) applies.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pathlib
import time

import numpy as np

from xlapy.compat.v1.errors import (FailedPreconditionError, InvalidArgumentError, OpError)
from xlapy.compat.v1.jit.flags import LAZY_THRESHOLD
from xlapy.compat.v1.op_registry import get_op_def, kernel_attrs
from xlapy.config import enable_x64
from xlapy.gc_control import collector_paused
from xlapy.frontend.core import ShapedArray, Tracer

log = logging.getLogger("xlapy.compat.v1.jit")


def _variables_read_first(cluster) -> list:
    """The cluster's variables whose value is read before (or without) being assigned."""
    written: set = set()
    read: list = []
    for op in cluster.ops:
        d = get_op_def(op.type)
        for i, t in enumerate(op.inputs):
            if t.op.type != "VariableV2":
                continue
            reads = i not in d.ref_inputs or d.ref_reads
            if reads and t.op not in written and t.op not in read:
                read.append(t.op)
        for i in d.ref_inputs:
            written.add(op.inputs[i].op)
    return [v for v in cluster.variables if v in read]


class HostRandom:
    """The random ops of a cluster: their values are drawn on the host with the executor's
    kernel and generator (so compiled and executor runs draw the same numbers) and passed
    to the compiled program as arguments. Their inputs (shapes, ...) must be known when the
    cluster is traced, except for an op whose def has extra["host_split"] = (draw, finish):
    draw(rng, **attrs) makes the random values without reading the inputs, and the program
    computes the outputs as finish(xlapy.numpy, *inputs, drawn, **attrs) (the candidate
    samplers: their true classes are data). `probe`: the first trace, which only records
    the ops and the shapes of their values; afterwards `values` (traced arguments) stand
    for them, in order."""

    def __init__(self):
        self.probe = True
        self.ops: list = []      # (op, op def, concrete inputs, attrs, number of values)
        self.avals: list = []
        self.values: list = []

    def value(self, op, d, ins, attrs):
        split = d.extra.get("host_split")
        if split is None and any(isinstance(x, Tracer) for x in ins):
            from xlapy.errors import LoweringError
            raise LoweringError(f"random op {op.name}: its inputs (the shape) must be known "
                                "when the cluster compiles")
        if self.probe:
            rng = np.random.default_rng(0)
            sample = split[0](rng, **attrs) if split else d.kernel(np, rng, *ins, **attrs)
            samples = sample if isinstance(sample, tuple) else (sample,)
            self.ops.append((op, d, None if split else [np.asarray(x) for x in ins], attrs,
                             len(samples)))
            self.avals.extend(ShapedArray(np.shape(v), np.asarray(v).dtype) for v in samples)
        else:
            k = len(self.values)
            n = self.ops[self.seen][4]
            self.seen += 1
            sample = tuple(self.args[k:k + n])
            self.values.extend(sample)
            if n == 1 and not split:
                sample = sample[0]
        if split:
            import xlapy.numpy as xnp
            return split[1](xnp, *ins, tuple(sample), **attrs)
        return sample

    def draw(self, rng_for) -> list:
        vals = []
        for op, d, ins, attrs, _ in self.ops:
            split = d.extra.get("host_split")
            v = split[0](rng_for(op), **attrs) if split else \
                d.kernel(np, rng_for(op), *ins, **attrs)
            vals.extend(v if isinstance(v, tuple) else (v,))
        return vals


def trace_function(cluster, read_vars: list, const_values: dict, host_random=None):
    """The Python function the frontend traces: (dynamic inputs..., read variables...,
    host-drawn random values...) -> (outputs..., updated variables...)."""
    import xlapy.numpy as xnp
    dyn = [i for i in range(len(cluster.inputs)) if i not in const_values]
    steps = []
    for op in cluster.ops:
        d = get_op_def(op.type)
        steps.append((op, d, kernel_attrs(op)))

    def fn(*flat):
        env = {}
        for k, i in enumerate(dyn):
            env[cluster.inputs[i]] = flat[k]
        for i, v in const_values.items():
            env[cluster.inputs[i]] = v
        state = {v: flat[len(dyn) + j] for j, v in enumerate(read_vars)}
        if host_random is not None and not host_random.probe:
            host_random.args = list(flat[len(dyn) + len(read_vars):])
            host_random.values = []
            host_random.seen = 0
        for op, d, attrs in steps:
            ins = []
            for i, t in enumerate(op.inputs):
                if t.op.type == "VariableV2" and t not in env:
                    if t.op not in state:
                        if i in d.ref_inputs and not d.ref_reads:
                            ins.append(None)
                            continue
                        raise FailedPreconditionError(
                            f"Attempting to use uninitialized value {t.op.name}", op=op)
                    ins.append(state[t.op])
                else:
                    ins.append(env[t])
            if d.rng and host_random is not None:
                out = host_random.value(op, d, ins, attrs)
                if len(op.outputs) == 1:
                    env[op.outputs[0]] = out
                else:
                    for t, o in zip(op.outputs, out):
                        env[t] = o
                continue
            if d.ref_inputs:
                new = d.lowering(xnp, *ins, **attrs)
                for i, value in zip(d.ref_inputs, new):
                    state[op.inputs[i].op] = value
                out = new[0]
            elif not d.stateful and not any(isinstance(x, Tracer) for x in ins):
                out = d.kernel(np, *ins, **attrs)  # known at trace time: fold
            else:
                out = d.lowering(xnp, *ins, **attrs)
            if len(op.outputs) == 1:
                env[op.outputs[0]] = out
            else:
                for t, o in zip(op.outputs, out):
                    env[t] = o
        return tuple([env[t] for t in cluster.outputs] + [state[v] for v in cluster.writes])
    return fn


class CompiledCluster:
    """One cluster's compile cache and run method. `fallback()` builds executor steps for
    the cluster's ops, used when compilation fails and the cluster may fall back."""

    def __init__(self, cluster, store: dict, strict: bool, must_compile: bool, xla_flags: tuple,
                 fallback, debug_dir: str | None = None, rng_for=None, lazy: bool = False):
        self.cluster = cluster
        self.store = store
        self.strict = strict
        self.must_compile = must_compile
        self.xla_flags = xla_flags
        self._fallback_factory = fallback
        self._fallback = None
        self._executor_steps = None
        self.debug_dir = debug_dir
        self.read_vars = _variables_read_first(cluster)
        self.read_names = [v.name for v in self.read_vars]
        self.write_names = [v.name for v in cluster.writes]
        self.const_idx = sorted(cluster.const_inputs)
        self.dyn_idx = [i for i in range(len(cluster.inputs)) if i not in cluster.const_inputs]
        self.cache: dict = {}
        # lazy compilation (flags.LAZY_THRESHOLD): runs asked for per uncompiled signature
        self.lazy = lazy and not must_compile
        self.requests: dict = {}
        self.compiles = 0
        self.last_compile: tuple | None = None  # (start, end) seconds, of the current run
        self.modules = ModuleTexts()  # HLO text of each compiled signature
        self.n_out = len(cluster.outputs)
        self.one_result = self.n_out + len(cluster.writes) == 1  # the program returns no tuple
        self._last = None  # (key, entry) of the last compiled run, without constant inputs
        self.rng_for = rng_for  # op -> the session's generator of a random op
        self.has_random = any(get_op_def(op.type).rng for op in cluster.ops)

    # ---- running -----------------------------------------------------------------------------
    def run(self, args: list, out_slots: list, vals: list) -> None:
        """args: values of cluster.inputs in order."""
        if self._fallback is not None:
            self._run_fallback(vals)
            return
        store = self.store
        try:
            var_vals = [store[name] for name in self.read_names]
        except KeyError:
            missing = next(n for n in self.read_names if n not in store)
            raise FailedPreconditionError(f"Attempting to use uninitialized value {missing}\n"
                                          f"\t [[{self.cluster.name}]]") from None
        entry = None
        last = self._last
        if last is not None:  # (no constant inputs) the same signature as the last run?
            dyn = args
            for a, (shape, dtype) in zip(args + var_vals, last[0]):
                if a.shape != shape or a.dtype != dtype:
                    break
            else:
                entry = last[1]
        if entry is None:
            entry, key, dyn = self._lookup(args, var_vals)
        if entry is None and self.lazy:
            seen = self.requests[key] = self.requests.get(key, 0) + 1
            if seen < LAZY_THRESHOLD:  # not yet worth compiling: the executor runs it
                self._run_executor(vals)
                return
        if entry is None:
            entry = self._compile(key, args, dyn, var_vals)
            if entry is None:  # fell back
                self._run_fallback(vals)
                return
            if not self.const_idx:
                self._last = key, entry
        exe, extra, host_random = entry
        if host_random is not None:
            out = exe.run(*dyn, *var_vals, *host_random.draw(self.rng_for), *extra)
        else:
            out = exe.run(*dyn, *var_vals, *extra)
        if self.one_result:
            out = (out,)
        for slot, value in zip(out_slots, out):
            vals[slot] = value
        for name, value in zip(self.write_names, out[self.n_out:]):
            store[name] = value

    def _lookup(self, args: list, var_vals: list) -> tuple:
        """(the compiled entry or None, its key, the dynamic inputs) for these values."""
        dyn = [args[i] for i in self.dyn_idx] if self.const_idx else args
        key = tuple([(a.shape, a.dtype) for a in dyn] + [(v.shape, v.dtype) for v in var_vals])
        if self.const_idx:
            key += tuple(np.asarray(args[i]).tobytes() for i in self.const_idx)
        entry = self.cache.get(key)
        if entry is not None and not self.const_idx:
            self._last = key, entry
        return entry, key, dyn

    def _run_fallback(self, vals) -> None:
        with np.errstate(all="ignore"), enable_x64(True):  # (as the session's executor)
            for step in self._fallback:
                step(vals)

    def _run_executor(self, vals) -> None:
        """The cluster's ops on the executor, this once (lazy compilation)."""
        if self._executor_steps is None:
            self._executor_steps = self._fallback_factory()
        with np.errstate(all="ignore"), enable_x64(True):  # (as the session's executor)
            for step in self._executor_steps:
                step(vals)

    # ---- compiling ---------------------------------------------------------------------------
    def _compile(self, key, args, dyn, var_vals):
        # the first call imports the compiler and traces: no collections in its bursts
        with collector_paused():
            return self._trace_and_compile(key, args, dyn, var_vals)

    def _trace_and_compile(self, key, args, dyn, var_vals):
        from xlapy.backends.base import get_platform
        from xlapy.frontend.graph import make_graph
        from xlapy.frontend.lowering import lower_to_module
        t0 = time.perf_counter()
        consts = {i: np.asarray(args[i]) for i in self.const_idx}
        host_random = HostRandom() if self.has_random else None
        fn = trace_function(self.cluster, self.read_vars, consts, host_random)
        avals = [ShapedArray(np.shape(a), np.asarray(a).dtype) for a in dyn + var_vals]
        try:
            # TF keeps 64-bit types (tf.float64, int64 indices): trace with x64 on
            with _xla_flags(self.xla_flags), enable_x64(True):
                if host_random is not None:  # a first trace finds the random values' shapes
                    make_graph(fn, avals)
                    host_random.probe = False
                    avals = avals + host_random.avals
                graph, const_vals, _ = make_graph(fn, avals)
                module, extra_idx = lower_to_module(graph, const_vals, self.cluster.name)
                backend = "gpu" if "XLA_GPU" in self.cluster.device else "cpu"
                exe = get_platform(backend).compiler.compile(module)
        except OpError:
            raise
        except Exception as e:
            return self._compile_failed(e)
        extra = [np.asarray(const_vals[i]) for i in extra_idx]
        entry = (exe, extra, host_random)
        self.cache[key] = entry
        self.compiles += 1
        self.modules.append(module)
        if self.debug_dir:
            _write_debug(self.debug_dir, f"{self.cluster.name}.{self.compiles - 1}.hlo.txt",
                         self.modules[-1])
        self.last_compile = (t0, time.perf_counter())
        if os.environ.get("XLAPY_LOG_COMPILES", "") not in ("", "0"):
            log.warning("compiled %s (%d ops) for %s in %.1f ms", self.cluster.name,
                        len(self.cluster.ops), ", ".join(f"{a.dtype}{list(a.shape)}"
                                                         for a in avals),
                        1e3 * (self.last_compile[1] - t0))
        return entry

    def _compile_failed(self, e: Exception):
        msg = (f"XLA compilation of {self.cluster.name} ({len(self.cluster.ops)} ops: "
               f"{', '.join(o.name for o in self.cluster.ops[:8])}"
               f"{', ...' if len(self.cluster.ops) > 8 else ''}) failed: "
               f"{type(e).__name__}: {e}")
        if self.strict or self.must_compile:
            raise InvalidArgumentError(msg + ("" if self.must_compile else
                                              " (strict mode: --tf_xla_strict)")) from e
        log.warning("%s; running its ops in the executor instead", msg)
        self._fallback = self._fallback_factory()
        return None


class ModuleTexts:
    """The HLO text of each module a cluster compiled, a read-only sequence of str printed
    when first read: printing every constant in decimal took 16 ms CPU of each word2vec
    training step compile (examples/tf1/word2vec_basic.py), most runs never read it. (The
    compiler works on a copy: the module stays as it was lowered.)"""

    def __init__(self):
        self._items: list = []  # Module, replaced by its text once printed

    def append(self, module) -> None:
        self._items.append(module)

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self._items)))]
        item = self._items[i]
        if not isinstance(item, str):
            item = item.to_string()
            self._items[i if i >= 0 else len(self._items) + i] = item
        return item

    def __iter__(self):
        return (self[k] for k in range(len(self._items)))

    def __repr__(self) -> str:
        return f"ModuleTexts({len(self._items)} module(s))"


@contextlib.contextmanager
def _xla_flags(extra: tuple):
    """Add TF_XLA_FLAGS' --xla_* flags to XLAPY_FLAGS while compiling."""
    if not extra:
        yield
        return
    old = os.environ.get("XLAPY_FLAGS")
    from xlapy.flags import parse_flags
    merged = " ".join(filter(None, [old or "", *extra]))
    try:
        parse_flags(merged)
    except Exception as e:
        raise InvalidArgumentError(f"TF_XLA_FLAGS: {e}") from None
    os.environ["XLAPY_FLAGS"] = merged
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("XLAPY_FLAGS", None)
        else:
            os.environ["XLAPY_FLAGS"] = old


def _write_debug(directory: str, name: str, text: str) -> None:
    root = pathlib.Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(text)
