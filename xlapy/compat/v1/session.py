"""Session: runs (parts of) a graph, holding the variables' values between runs.

Session.run(fetches, feed_dict):
  1. flatten the fetches (Tensors, Operations, Variables, names, nested in lists, tuples,
     namedtuples and dicts) and resolve the feed keys;
  2. look up the execution plan for (fetches, fed tensors, jit settings), or build one:
     prune the graph to the ops the fetches need (fed tensors cut their producers), order
     them topologically, and, when XLA is on for any of them, run the three clustering
     passes (jit/mark_for_compilation.py, jit/encapsulate.py, jit/build_xla_ops.py): each
     cluster becomes one compile-and-run step (jit/launch.py);
  3. check the feeds (dtype, shape against the placeholder's partial shape), run the
     plan's steps, and return the fetched values in the fetches' structure (None for
     Operations).
Without XLA every op is one step running its NumPy kernel (the executor).
A run repeated with the same fetch elements (Tensors, Operations, a plain list or tuple of
them), feed keys (Tensors, in the same order) and jit settings takes a prepared run
(_prepared_run): steps 1 and 2 are skipped, each feed is still checked.

With RunOptions(trace_level=FULL_TRACE) each step's start and end are recorded in
run_metadata.step_stats, per device: one bar per op in the executor, one per compiled
cluster (plus one for its compilation, when the step had to compile).
"""

from __future__ import annotations

import logging
import os
from functools import partial

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import (FailedPreconditionError, InvalidArgumentError,
                                    InvalidTypeError, SessionClosedError)
from xlapy.compat.v1.framework import (Graph, Operation, Tensor, get_default_graph,
                                       gpu_present, is_gpu_device, is_xla_device)
from xlapy.compat.v1.jit.build_xla_ops import XlaLaunch, build_xla_ops
from xlapy.compat.v1.jit.encapsulate import encapsulate
from xlapy.compat.v1.jit.flags import lazy_compilation, tf_xla_flags
from xlapy.compat.v1.jit.launch import CompiledCluster
from xlapy.compat.v1.jit.mark_for_compilation import mark_for_compilation
from xlapy.compat.v1.op_registry import get_op_def, kernel_attrs
from xlapy.compat.v1.protos import ConfigProto
from xlapy.compat.v1.session_plan import Plan, _label
from xlapy.config import enable_x64

log = logging.getLogger("xlapy.compat.v1.jit")

CPU_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


def _check_gpu_placement(ops, soft: bool) -> None:
    """Ops placed on a GPU need one; without, TF refuses the placement unless soft placement
    lets them run on the CPU (they then do, clustered as on XLA_CPU)."""
    if soft:
        return
    for op in ops:
        if is_gpu_device(op.device) and not gpu_present():
            raise InvalidArgumentError(
                f"Cannot assign a device for operation {op.name}: Could not satisfy explicit "
                f"device specification '{op.device}' because no devices matching that "
                "specification are registered in this process (no GPU: xlapy's gpu backend "
                "needs an NVIDIA GPU and pip install 'xlapy[gpu]'); available devices: "
                f"{CPU_DEVICE}, {CPU_DEVICE.replace('CPU', 'XLA_CPU')}. Set "
                "ConfigProto(allow_soft_placement=True) to run it on the CPU.", op=op)
_NO_STEP = ("VariableV2", "Placeholder")

_default_session_stack: list = []


def get_default_session():
    return _default_session_stack[-1] if _default_session_stack else None


def _session_for(session, graph):
    s = session if session is not None else get_default_session()
    if s is None:
        raise InvalidArgumentError("Cannot evaluate tensor using `eval()` / `run()`: No default "
                                   "session is registered. Use `with sess.as_default()` or "
                                   "pass an explicit session to `eval(session=sess)`")
    if s.graph is not graph:
        raise InvalidArgumentError("Cannot use the given session to evaluate tensor: the "
                                   "tensor's graph is different from the session's graph.")
    return s


# ---- fetches ---------------------------------------------------------------------------------

def _flatten_fetches(fetches, graph, out: list):
    """Append the fetch elements to `out`; return a function rebuilding the structure from
    the list of fetched values."""
    if fetches is None:
        raise InvalidTypeError(f"Fetch argument None has invalid type {type(None)}")
    if getattr(fetches, "_is_sparse_tensor", False):  # a SparseTensorValue of its 3 values
        from xlapy.compat.v1.sparse_tensor import SparseTensorValue
        subs = [_flatten_fetches(t, graph, out) for t in fetches._components()]
        return lambda vals: SparseTensorValue(*[s(vals) for s in subs])
    if getattr(fetches, "_is_indexed_slices", False):  # an IndexedSlicesValue
        from xlapy.compat.v1.ops.misc_framework import (  # (ops import the session's modules)
            IndexedSlicesValue)
        parts = [fetches.values, fetches.indices, fetches.dense_shape]
        subs = [None if t is None else _flatten_fetches(t, graph, out) for t in parts]
        return lambda vals: IndexedSlicesValue(*[None if s is None else s(vals) for s in subs])
    if isinstance(fetches, dict):
        keys = list(fetches)
        subs = [_flatten_fetches(fetches[k], graph, out) for k in keys]
        kind = type(fetches)
        return lambda vals: kind((k, s(vals)) for k, s in zip(keys, subs))
    if isinstance(fetches, (list, tuple)):
        subs = [_flatten_fetches(f, graph, out) for f in fetches]
        if isinstance(fetches, tuple) and hasattr(fetches, "_fields"):
            kind = type(fetches)
            return lambda vals: kind(*[s(vals) for s in subs])
        kind = type(fetches)
        return lambda vals: kind([s(vals) for s in subs])
    try:
        el = graph.as_graph_element(fetches, allow_tensor=True, allow_operation=True)
    except InvalidTypeError:
        raise InvalidTypeError(f"Fetch argument {fetches!r} has invalid type "
                               f"{type(fetches)}, must be a string or Tensor. (Can not convert "
                               f"a {type(fetches).__name__} into a Tensor or Operation.)") \
            from None
    except InvalidArgumentError as e:
        raise InvalidArgumentError(f"Fetch argument {fetches!r} cannot be interpreted as a "
                                   f"Tensor. ({e})") from None
    i = len(out)
    out.append(el)
    return lambda vals: vals[i]


# ---- Session -----------------------------------------------------------------------------------

class Session:
    """A TF 1.x session on xlapy's runtime (executor plus XLA clusters)."""

    def __init__(self, target: str = "", graph: Graph | None = None, config=None):
        if target:
            raise InvalidArgumentError(f"distributed targets are not supported ('{target}')")
        self._graph = graph if graph is not None else get_default_graph()
        self._partial_runs: dict = {}
        self._config = config if config is not None else ConfigProto()
        self._vars: dict[str, np.ndarray] = {}
        self._rngs: dict = {}
        self._plans: dict = {}
        self._fast: dict = {}   # run()'s own arguments -> a prepared run (_prepared_run)
        self._closed = False
        self._default_ctx = []
        self._cluster_ids = 0

    graph = property(lambda self: self._graph)
    graph_def = property(lambda self: self._graph.as_graph_def())
    sess_str = property(lambda self: "")

    # ---- context management -------------------------------------------------------------------
    def __enter__(self):
        _default_session_stack.append(self)
        ctx = self._graph.as_default()
        ctx.__enter__()
        self._default_ctx.append(ctx)
        return self

    def __exit__(self, *exc):
        ctx = self._default_ctx.pop()
        ctx.__exit__(*exc)
        _default_session_stack.remove(self)
        self.close()
        return False

    def as_default(self):
        sess = self

        class _Ctx:
            def __enter__(self_):
                _default_session_stack.append(sess)
                return sess

            def __exit__(self_, *exc):
                _default_session_stack.remove(sess)
                return False
        return _Ctx()

    def close(self) -> None:
        from xlapy.compat.v1.ops.queue_ops import close_all
        close_all(self)  # (threads waiting on its queues end)
        self._closed = True
        self._vars.clear()
        self._plans.clear()
        self._fast.clear()

    def list_devices(self):
        devices = [CPU_DEVICE, CPU_DEVICE.replace("CPU", "XLA_CPU")]
        if gpu_present():
            devices.append(CPU_DEVICE.replace("CPU", "XLA_GPU"))
        return devices

    # ---- run ------------------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self._closed:
            raise SessionClosedError("Attempted to use a closed Session.")
        # A loop's run(fetches, {tensor: array, ...}) with the same fetch elements, feed
        # keys (in order) and jit settings: its prepared run skips resolving the fetches and
        # feeds and looking up the plan (about 5 us a step, _prepared_run)
        fast_key = None
        if options is None:
            fast_key = _fast_key(fetches, feed_dict)
            if fast_key is not None:
                fast_key = (fast_key, os.environ.get("TF_XLA_FLAGS", ""),
                            self._config.graph_options.optimizer_options.global_jit_level)
                prepared = self._fast.get(fast_key)
                if prepared is not None:
                    return prepared(feed_dict)
        if isinstance(fetches, (Tensor, Operation)):
            elements, rebuild = [fetches], None
            if fetches.graph is not self._graph:
                raise InvalidArgumentError(f"Fetch argument {fetches!r} cannot be interpreted "
                                           f"as a Tensor. ({fetches} is not an element of "
                                           "this graph.)")
        else:
            elements = []
            rebuild = _flatten_fetches(fetches, self._graph, elements)
        feeds = self._resolve_feeds(feed_dict)
        plan = self._plan(elements, feeds)
        if fast_key is not None and all(type(k) is Tensor for k in feed_dict or ()):
            self._fast[fast_key] = _prepared_run(
                self, plan, None if rebuild is None else type(fetches))
        vals = list(plan.template)
        for (t, slot, dt, dims), value in zip(plan.feeds, feeds.values()):
            vals[slot] = _check_feed(t, value, dt, dims)
        tracing = options is not None and getattr(options, "trace_level", 0) > 0
        # TF keeps 64-bit types: kernels that use xlapy's frontend eagerly (gradients by
        # vjp) and cluster compiles run with jax_enable_x64 on; a plan of compiled clusters
        # only turns it on where a cluster traces, compiles or runs its ops on the executor
        # (launch.py), not around every native call (about 2 us a step)
        if plan.compiled_only and not tracing:
            plan.execute(vals)
        else:
            with enable_x64(True):
                plan.execute(vals, run_metadata.step_stats if tracing and run_metadata
                             else None)
        out = [self._fetch_value(f, vals) for f in plan.fetch]
        if rebuild is None:
            return out[0]
        return rebuild(out)

    def _fetch_value(self, f, vals):
        if f is None:
            return None
        if isinstance(f, tuple):
            name = f[1]
            if name not in self._vars:
                raise FailedPreconditionError(f"Attempting to use uninitialized value {name}")
            return self._vars[name].copy()
        v = vals[f]
        if isinstance(v, np.ndarray):
            if v.ndim == 0:
                return v[()]
            if not v.flags.writeable:
                return v.copy()
        return v

    def _resolve_feeds(self, feed_dict) -> dict:
        if not feed_dict:
            return {}
        feeds = {}
        for k, v in feed_dict.items():
            if getattr(k, "_is_sparse_tensor", False):
                self._resolve_sparse_feed(k, v, feeds)
                continue
            if isinstance(k, Tensor):
                t = k
                if t.graph is not self._graph:
                    raise InvalidArgumentError(f"Cannot interpret feed_dict key as Tensor: "
                                               f"Tensor {t.name} is not an element of this "
                                               "graph.")
            else:
                try:
                    t = self._graph.as_graph_element(k, allow_tensor=True,
                                                     allow_operation=False)
                except (InvalidArgumentError, InvalidTypeError) as e:
                    raise InvalidTypeError(f"Cannot interpret feed_dict key as Tensor: {e}") \
                        from None
            if isinstance(v, (Tensor, Operation)):
                raise InvalidTypeError(f"The value of a feed cannot be a tf.Tensor object "
                                       f"(feeding {t.name}). Acceptable feed values include "
                                       "Python scalars, strings, lists, numpy ndarrays.")
            feeds[t] = v
        return feeds

    def _resolve_sparse_feed(self, k, v, feeds: dict) -> None:
        """A SparseTensor key (a sparse_placeholder) is fed a SparseTensorValue or an
        (indices, values, dense_shape) sequence: each of its three tensors is fed."""
        if k.graph is not self._graph:
            raise InvalidArgumentError(f"Cannot interpret feed_dict key as SparseTensor: {k} "
                                       "is not an element of this graph.")
        if isinstance(v, (Tensor, Operation)) or getattr(v, "_is_sparse_tensor", False):
            raise InvalidTypeError("The value of a feed cannot be a tf.Tensor object (feeding "
                                   f"a SparseTensor with {v!r}). Feed it a "
                                   "tf.SparseTensorValue or an (indices, values, dense_shape) "
                                   "tuple.")
        if isinstance(v, dict) or not hasattr(v, "__len__") or len(v) != 3 or \
                isinstance(v, (str, bytes, np.ndarray)):
            raise InvalidTypeError(f"The value fed for a SparseTensor must be a "
                                   "tf.SparseTensorValue or an (indices, values, dense_shape) "
                                   f"tuple, got {type(v).__name__}")
        for t, part in zip(k._components(), v):
            feeds[t] = part

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        feed_list = list(feed_list or [])

        def call(*values, options=None, run_metadata=None):
            return self.run(fetches, dict(zip(feed_list, values)), options, run_metadata)
        return call

    def _load_variable(self, var, value) -> None:
        arr = _check_feed(var._ref(), value, var.dtype.np, var.shape.dims)
        self._vars[var.op.name] = np.array(arr)

    # ---- plans ---------------------------------------------------------------------------------
    def _jit_settings(self):
        fl = tf_xla_flags()
        level = fl.auto_jit if fl.auto_jit != 0 else \
            self._config.graph_options.optimizer_options.global_jit_level
        return level > 0, fl

    def _plan(self, elements: list, feeds: dict) -> Plan:
        auto, fl = self._jit_settings()
        key = (tuple(map(id, elements)), tuple(map(id, feeds)), auto, fl)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._build_plan(elements, list(feeds), auto, fl)
            self._plans[key] = plan
        return plan

    def partial_run_setup(self, fetches, feeds=None):
        """A handle for partial_run: the fetches and feeds a sequence of partial_run calls
        may use."""
        allowed_f: list = []
        _flatten_fetches(fetches, self._graph, allowed_f)
        handle = f"xlapy-partial-run-{len(self._partial_runs)}"
        self._partial_runs[handle] = {
            "fetches": {id(e) for e in allowed_f}, "feeds": {},
            "feedable": {id(self._graph.as_graph_element(t)) for t in (feeds or [])}}
        return handle

    def partial_run(self, handle, fetches, feed_dict=None):
        """Runs fetches, feeding feed_dict and everything fed or fetched by the handle's
        earlier calls (so an op of the graph runs at most once per handle, as in TF)."""
        state = self._partial_runs.get(handle)
        if state is None:
            raise InvalidArgumentError(f"Must run 'partial_run_setup' before performing "
                                       f"partial runs: unknown handle {handle!r}")
        new_feeds = {self._graph.as_graph_element(k): v for k, v in (feed_dict or {}).items()}
        for t in new_feeds:
            if id(t) not in state["feedable"]:
                raise InvalidArgumentError(f"Input to feed {t.name} was not specified in "
                                           "partial_run_setup.")
            if any(t is u for u in state["feeds"]):
                raise InvalidArgumentError(f"Input {t.name} already fed.")
        elements: list = []
        _flatten_fetches(fetches, self._graph, elements)
        for e in elements:
            if id(e) not in state["fetches"]:
                raise InvalidArgumentError(f"Fetch {getattr(e, 'name', e)} was not specified "
                                           "in partial_run_setup.")
        state["feeds"].update(new_feeds)
        tensors = [e for e in elements if isinstance(e, Tensor) and e not in state["feeds"]]
        out, values = self.run([fetches, tensors], feed_dict=dict(state["feeds"]))
        state["feeds"].update(zip(tensors, values))   # fed to the later calls
        return out

    def cluster_summary(self, fetches, feed_dict=None) -> str:
        """xlapy extension: the clustering of the plan that run(fetches, feed_dict) uses."""
        elements: list = []
        _flatten_fetches(fetches, self._graph, elements)
        return self._plan(elements, self._resolve_feeds(feed_dict)).summary

    def _build_plan(self, elements, fed_list, auto, fl) -> Plan:
        fed = set(fed_list)
        plan = Plan()
        fetch_tensors = [e for e in elements if isinstance(e, Tensor)]
        needed: set = set()
        stack = [t.op for t in fetch_tensors if t not in fed]
        stack += [e for e in elements if isinstance(e, Operation)]
        while stack:
            op = stack.pop()
            if op in needed:
                continue
            needed.add(op)
            stack.extend(t.op for t in op.inputs if t not in fed)
            # a control dependency on an op whose outputs are all fed is met (TF's: the
            # fed op does not run; tf.metrics.mean(placeholder) depends on its input's op)
            stack.extend(c for c in op.control_inputs
                         if not c.outputs or not all(t in fed for t in c.outputs))
        for op in sorted(needed, key=lambda o: o._id):
            if op.type == "Placeholder":
                t = op.outputs[0]
                raise InvalidArgumentError(
                    f"You must feed a value for placeholder tensor '{op.name}' with dtype "
                    f"{t.dtype.name} and shape {t.shape.tf_str()}\n\t [[{_label(op)}]]", op=op)
        ops = _topological([o for o in needed if o.type not in _NO_STEP])
        opset = set(ops)

        def preds_of(op):
            ps = [t.op for t in op.inputs if t not in fed and t.op in opset]
            ps += [c for c in op.control_inputs if c in opset]
            return ps
        preds = {op: preds_of(op) for op in ops}

        _check_gpu_placement(ops, self._config.allow_soft_placement)
        # XLA clustering
        clusters = []
        requested = auto or any(op._attrs.get("_XlaCompile") or is_xla_device(op.device)
                                for op in ops)
        if requested:
            fed_ops = {t.op for t in fed}
            plan.clustering = mark_for_compilation(
                ops, preds, auto, fed_ops, fl.min_cluster_size, fl.max_cluster_size, fl.strict,
                self._config.allow_soft_placement)
            fetched = set(fetch_tensors)
            for group in plan.clustering.clusters:
                name = f"cluster_{self._cluster_ids}"
                self._cluster_ids += 1
                clusters.append(encapsulate(name, group, opset, fed, fetched))
            plan.summary = plan.clustering.summary([c.name for c in clusters])
            if fl.clustering_debug:
                log.warning("%s", plan.summary)
        else:
            plan.summary = ("XLA clustering: off (no global_jit_level, --tf_xla_auto_jit, "
                            "jit_scope or XLA device for these ops)")

        # slots
        slot: dict = {}

        def new_slot(value=None):
            plan.template.append(value)
            return len(plan.template) - 1
        for t in fed_list:
            slot[t] = new_slot()
            plan.feeds.append((t, slot[t], t.dtype.np, t.shape.dims))
        for op in ops:
            for t in op.outputs:
                if t not in fed:
                    slot[t] = new_slot(op.get_attr("value") if op.type == "Const" else None)

        # pass 3: clusters become _XlaLaunch nodes, in a topological order with the rest
        for node in build_xla_ops(ops, preds, clusters):
            if isinstance(node, XlaLaunch):
                c = node.cluster
                must = any(is_xla_device(o.device) for o in c.ops)
                cc = CompiledCluster(
                    c, self._vars, fl.strict, must, fl.xla_flags,
                    partial(self._fallback_steps, c, slot, fed),
                    os.environ.get("TF_DUMP_GRAPH_PREFIX") if fl.clustering_debug else None,
                    rng_for=self._rng_for, lazy=lazy_compilation(fl))
                plan.clusters.append(cc)
                step = _cluster_step(cc, [slot[t] for t in c.inputs],
                                     [slot[t] for t in c.outputs])
                plan.steps.append(step)
                plan.meta[step] = (c.name, node.label(), c.device, cc)
            elif node.type != "Const":  # a Const's value is in the template
                step = self._make_step(node, slot, fed)
                plan.steps.append(step)
                plan.meta[step] = (node.name, _label(node), node.device or CPU_DEVICE, None)

        plan.compiled_only = all(plan.meta[s][3] is not None for s in plan.steps)
        for e in elements:
            if isinstance(e, Operation):
                plan.fetch.append(None)
            elif e in fed:
                plan.fetch.append(slot[e])
            elif e.op.type == "VariableV2":
                plan.fetch.append(("var", e.op.name))
            else:
                plan.fetch.append(slot[e])
        return plan

    def _fallback_steps(self, cluster, slot, fed) -> list:
        steps = []
        for op in cluster.ops:
            if op.type == "Const":
                steps.append(partial(_write_const, slot[op.outputs[0]], op.get_attr("value")))
            else:
                steps.append(self._make_step(op, slot, fed))
        return steps

    # ---- executor steps --------------------------------------------------------------------------
    def _make_step(self, op, slot, fed):
        """A function(vals) running `op`'s NumPy kernel on the slot values."""
        d = get_op_def(op.type)
        store = self._vars
        outs = [slot.get(t) for t in op.outputs]
        if op.type == "NoOp":
            return _noop
        getters = []
        has_var = False
        for t in op.inputs:
            if t not in fed and t.op.type == "VariableV2":
                getters.append(t.op.name)
                has_var = True
            else:
                getters.append(slot[t])
        if op.type == "IsVariableInitialized":
            name = op.inputs[0].op.name
            o = outs[0]

            def step(vals):
                vals[o] = np.asarray(name in store)
            return step
        if "executor" in d.extra:  # ops calling functions (While, If) run them here
            return _functional_step(op, d.extra["executor"](self, op), getters, outs, store)
        fn = partial(d.kernel, np, **kernel_attrs(op))
        if d.rng:
            fn = partial(d.kernel, np, self._rng_for(op), **kernel_attrs(op))
        if d.ref_inputs:
            return self._ref_step(op, d, fn, getters, outs)
        if has_var:
            def read(vals, g):
                if isinstance(g, int):
                    return vals[g]
                try:
                    return store[g]
                except KeyError:
                    raise FailedPreconditionError(f"Attempting to use uninitialized value {g}"
                                                  f"\n\t [[{_label(op)}]]", op=op) from None
            gs = getters
            if len(outs) == 1:
                o = outs[0]

                def step(vals):
                    vals[o] = fn(*[read(vals, g) for g in gs])
            else:
                def step(vals):
                    for s, v in zip(outs, fn(*[read(vals, g) for g in gs])):
                        vals[s] = v
            return step
        if len(outs) == 1:
            o = outs[0]
            if len(getters) == 1:
                a = getters[0]

                def step(vals):
                    vals[o] = fn(vals[a])
            elif len(getters) == 2:
                a, b = getters

                def step(vals):
                    vals[o] = fn(vals[a], vals[b])
            else:
                gs = getters

                def step(vals):
                    vals[o] = fn(*[vals[g] for g in gs])
            return step

        def step(vals):
            res = fn(*[vals[g] for g in getters])
            for s, v in zip(outs, res):
                if s is not None:
                    vals[s] = v
        return step

    def _ref_step(self, op, d, fn, getters, outs):
        store = self._vars
        refs = {i: op.inputs[i].op.name for i in d.ref_inputs}
        reads = d.ref_reads
        copy = op.type == "Assign"
        o = outs[0]
        label = _label(op)

        def step(vals):
            args = []
            for i, g in enumerate(getters):
                if isinstance(g, int):
                    args.append(vals[g])
                elif g in store:
                    args.append(store[g])
                elif i in refs and not reads:
                    args.append(None)
                else:
                    raise FailedPreconditionError(f"Attempting to use uninitialized value {g}"
                                                  f"\n\t [[{label}]]", op=op)
            new = fn(*args)
            for i, value in zip(d.ref_inputs, new):
                store[refs[i]] = np.array(value) if copy else value
            vals[o] = store[refs[d.ref_inputs[0]]]
        return step

    def _rng_for(self, op):
        rng = self._rngs.get(op)
        if rng is None:
            s1, s2 = op._attrs.get("seed"), op._attrs.get("seed2")
            rng = np.random.default_rng(None if s1 is None else [int(s1), int(s2)])
            self._rngs[op] = rng
        return rng


class InteractiveSession(Session):
    """A Session that installs itself as the default session (for Tensor.eval())."""

    def __init__(self, target: str = "", graph=None, config=None):
        super().__init__(target, graph, config)
        _default_session_stack.append(self)

    def close(self) -> None:
        if self in _default_session_stack:
            _default_session_stack.remove(self)
        super().close()


# ---- helpers -------------------------------------------------------------------------------------

def _noop(vals):
    return None


def _functional_step(op, run, getters, outs, store):
    def step(vals):
        args = []
        for g in getters:
            if isinstance(g, int):
                args.append(vals[g])
            elif g in store:
                args.append(store[g])
            else:
                raise FailedPreconditionError(f"Attempting to use uninitialized value {g}"
                                              f"\n\t [[{_label(op)}]]", op=op)
        for s, v in zip(outs, run(*args)):
            if s is not None:
                vals[s] = v
    return step


def _write_const(s, value, vals):
    vals[s] = value


def _fast_key(fetches, feed_dict):
    """The part of run()'s key that its arguments give, when they can have a prepared run:
    one Tensor or Operation, or a plain list or tuple of them, fed a dict (or nothing)."""
    t = type(fetches)
    if t is Tensor or t is Operation:
        key = fetches
    elif t is list or t is tuple:
        for f in fetches:
            if type(f) is not Tensor and type(f) is not Operation:
                return None
        key = (t, *fetches)
    else:
        return None
    if feed_dict is None:
        return key, ()
    if type(feed_dict) is not dict:
        return None
    return key, tuple(feed_dict)


def _prepared_run(sess, plan: Plan, container):
    """run() for one (fetches, feed keys, jit settings), its plan found: each feed is
    checked as `_check_feed` does, except that an ndarray of the tensor's dtype and of the
    shape last accepted for it is taken as it is (what _check_feed would do with it)."""
    feeds = [(slot, dt, t, dims) for t, slot, dt, dims in plan.feeds]
    # (string feeds always go through _check_feed, which encodes str as bytes)
    slots_dtypes = [(slot, None if dt.kind == "O" else dt) for slot, dt, _, _ in feeds]
    shapes = [None] * len(feeds)
    template, fetch, fetch_value = plan.template, plan.fetch, sess._fetch_value
    single = fetch[0] if container is None else None
    ndarray = np.ndarray

    def run(feed_dict):
        if sess._closed:
            raise SessionClosedError("Attempted to use a closed Session.")
        vals = list(template)
        if feeds:
            k = 0
            other = None
            for v, (slot, dt) in zip(feed_dict.values(), slots_dtypes):
                if type(v) is ndarray and v.dtype == dt and v.shape == shapes[k]:
                    vals[slot] = v
                elif other is None:
                    other = [k]
                else:
                    other.append(k)
                k += 1
            if other is not None:  # checked as run() checks them: the types first
                values = list(feed_dict.values())
                for k in other:
                    if isinstance(values[k], (Tensor, Operation)):
                        raise InvalidTypeError(
                            f"The value of a feed cannot be a tf.Tensor object (feeding "
                            f"{feeds[k][2].name}). Acceptable feed values include Python "
                            "scalars, strings, lists, numpy ndarrays.")
                for k in other:
                    slot, dt, t, dims = feeds[k]
                    a = vals[slot] = _check_feed(t, values[k], dt, dims)
                    shapes[k] = a.shape
        if plan.compiled_only:
            plan.execute(vals)
        else:
            with enable_x64(True):
                plan.execute(vals)
        if container is None:
            return None if single is None else fetch_value(single, vals)
        return container([fetch_value(f, vals) for f in fetch])
    return run


def _cluster_step(cc, in_slots, out_slots):
    def step(vals):
        cc.run([vals[i] for i in in_slots], out_slots, vals)
    return step


def _topological(ops: list) -> list:
    """Creation order is topological unless control inputs were added later; check it."""
    ops = sorted(ops, key=lambda o: o._id)
    ok = all(t.op._id < op._id for op in ops for t in op.inputs) and \
        all(c._id < op._id for op in ops for c in op.control_inputs)
    if ok:
        return ops
    opset, done, out = set(ops), set(), []
    for root in ops:
        stack = [(root, False)]
        while stack:
            op, expanded = stack.pop()
            if op in done:
                continue
            if expanded:
                done.add(op)
                out.append(op)
                continue
            stack.append((op, True))
            for p in list(op.control_inputs) + [t.op for t in op.inputs]:
                if p in opset and p not in done:
                    stack.append((p, False))
    return out


def _check_feed(t: Tensor, value, dt: np.dtype, dims) -> np.ndarray:
    """The fed value as an array of the tensor's dtype, or a clear error."""
    if dt.kind == "O":  # tf.string: str (encoded as UTF-8) or bytes
        from xlapy.compat.v1.framework import _string_array
        try:
            value = _string_array(value)
        except (InvalidTypeError, ValueError, TypeError) as e:
            raise InvalidArgumentError(f"Cannot feed the value fed for {t.name} to a string "
                                       f"tensor: {e}") from None
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as e:
        raise InvalidArgumentError(f"Cannot convert the value fed for {t.name} to an array: "
                                   f"{e}") from None
    if arr.dtype != dt:
        ok = arr.dtype.kind in "biuf" and (
            np.can_cast(arr.dtype, dt, "same_kind") or (
                arr.dtype.kind in "iu" and dt.kind in "iu" and not isinstance(value, np.ndarray)))
        if arr.dtype.kind == "b" and dt.kind != "b":
            ok = False
        if not ok:
            raise InvalidArgumentError(
                f"Cannot feed value of dtype {arr.dtype} for Tensor '{t.name}', which has "
                f"dtype {dtypes.as_dtype(dt).name}" + (
                    " (a float value cannot be fed to an integer tensor without losing "
                    "information; cast it first)" if arr.dtype.kind == "f" else ""))
        arr = arr.astype(dt)
    if dims is not None:
        shp = arr.shape
        if len(shp) != len(dims) or any(d is not None and d != s for d, s in zip(dims, shp)):
            want = "(" + ", ".join("?" if d is None else str(d) for d in dims) + \
                ("," if len(dims) == 1 else "") + ")"
            raise InvalidArgumentError(f"Cannot feed value of shape {shp} for Tensor "
                                       f"'{t.name}', which has shape '{want}'")
    return arr
