"""tf.profiler.profile, tf.profiler.advise and tf.profiler.Profiler.

    flops = tf.profiler.profile(graph, run_meta=tf.RunMetadata(), cmd='op',
                                options=tf.profiler.ProfileOptionBuilder.float_operation())
    flops.total_float_ops
    params = tf.profiler.profile(graph, options=tf.profiler.ProfileOptionBuilder
                                 .trainable_variables_parameter())
    params.total_parameters

profile() returns a GraphNodeProto for cmd 'scope' and 'graph', a MultiGraphNodeProto for
'op' and 'code'; the report goes where the options' output says (stdout by default).
A run_meta of a run with RunOptions(trace_level=FULL_TRACE) adds execution times (step 0).

Profiler keeps one profile across steps: add_step(step, run_meta) adds a traced run;
profile_name_scope / profile_graph / profile_operations / profile_python show the views
(options' step -1 averages the steps), advise() runs the checkers.
"""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.profiler.advisor import ALL_ADVICE, run_checkers
from xlapy.compat.v1.profiler.logger import check_graph, merge_default_with_oplog
from xlapy.compat.v1.profiler.option_builder import ProfileOptionBuilder
from xlapy.compat.v1.profiler.options import COMMANDS, build_options
from xlapy.compat.v1.profiler.stats import ProfileStats, has_step_stats

_DEFAULT_PROFILE_OPTIONS = 0
_DEFAULT_ADVISE_OPTIONS = 0


def _check_run_meta(run_meta) -> None:
    if run_meta is not None and not hasattr(run_meta, "step_stats"):
        raise TypeError(f"run_meta must be a tf.RunMetadata, got {type(run_meta).__name__}")


def profile(graph=None, run_meta=None, op_log=None, cmd="scope",
            options=_DEFAULT_PROFILE_OPTIONS):
    """Profiles `graph` (default: the default graph) in the view `cmd`; see the module
    doc."""
    if graph is None:
        graph = get_default_graph()
    check_graph(graph)
    if cmd not in COMMANDS:
        raise InvalidArgumentError(f"unknown cmd: {cmd!r}; one of: scope, graph, op, code")
    if isinstance(options, int) and not isinstance(options, bool) \
            and options == _DEFAULT_PROFILE_OPTIONS:
        options = ProfileOptionBuilder.trainable_variables_parameter()
    opts = build_options(options)
    _check_run_meta(run_meta)
    log = merge_default_with_oplog(graph, op_log, run_meta, add_trace=cmd == "code")
    return ProfileStats(graph, run_meta, log).show(cmd, opts)


def advise(graph=None, run_meta=None, options=_DEFAULT_ADVISE_OPTIONS):
    """Runs the checkers named in `options` (default: all) on the profile of `graph` and
    `run_meta`; prints and returns their reports (AdviceProto)."""
    if graph is None:
        graph = get_default_graph()
    check_graph(graph)
    if isinstance(options, int) and not isinstance(options, bool) \
            and options == _DEFAULT_ADVISE_OPTIONS:
        options = dict(ALL_ADVICE)
    _check_run_meta(run_meta)
    log = merge_default_with_oplog(graph, None, run_meta, add_trace=True)
    return run_checkers(ProfileStats(graph, run_meta, log), options)


class Profiler:
    """A profile of a graph built up over several traced steps (see the module doc)."""

    def __init__(self, graph=None, op_log=None):
        if graph is None:
            graph = get_default_graph()
        self._graph = check_graph(graph)
        self._coverage = 0.0
        self._stats = ProfileStats(graph, None, merge_default_with_oplog(graph, op_log))

    def add_step(self, step, run_meta):
        """Adds the statistics of a traced run as step `step` (an int id; adding a step
        id again adds its runs to that step)."""
        if isinstance(step, bool) or not hasattr(step, "__index__"):
            raise TypeError(f"step must be an integer, got {step!r}")
        _check_run_meta(run_meta)
        if not has_step_stats(run_meta):
            raise InvalidArgumentError(
                "run_meta has no step statistics: pass the RunMetadata of a Session.run "
                "made with options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)")
        log = merge_default_with_oplog(self._graph, run_meta=run_meta)
        self._stats.add_graph(self._graph)  # ops added to the graph since
        self._stats.add_run_meta(step.__index__(), run_meta)
        self._stats.add_op_log(log)
        self._coverage = self._stats.run_coverage()

    def profile_python(self, options):
        """The 'code' view (empty: xlapy records no Python call stacks of ops)."""
        return self._stats.show("code", build_options(options))

    def profile_operations(self, options):
        """The 'op' view: statistics per op type (MultiGraphNodeProto)."""
        return self._stats.show("op", build_options(options))

    def profile_name_scope(self, options):
        """The 'scope' view: graph nodes by name scope (GraphNodeProto)."""
        return self._stats.show("scope", build_options(options))

    def profile_graph(self, options):
        """The 'graph' view: graph nodes under their consumers (GraphNodeProto)."""
        return self._stats.show("graph", build_options(options))

    def advise(self, options=ALL_ADVICE):
        """Runs the checkers named in `options` on the steps added so far."""
        return run_checkers(self._stats, options)
