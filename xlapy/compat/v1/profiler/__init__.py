"""tf.profiler (TF 1.15's graph profiler): FLOPs, parameters, execution time and memory of
a graph, by name scope, by op type or along the dataflow.

    import xlapy.compat.v1 as tf
    flops = tf.profiler.profile(graph, run_meta=tf.RunMetadata(), cmd='op',
                                options=tf.profiler.ProfileOptionBuilder.float_operation())
    print(flops.total_float_ops)

Modules:
  model_analyzer  profile, advise, Profiler
  option_builder  ProfileOptionBuilder (the option dicts)
  options         option checking, the report's options and doc blocks
  flops           FLOP counts per op type (TF 1.15's rules)
  logger          the op log (FLOPs, trainable variables), write_op_log
  graph_node      a profile node: static facts and traced executions
  stats           the profile and its reports
  tree_views      the scope and graph views
  op_view         the op view
  display         displayed nodes, number formats, report lines
  advisor         advise's checkers
  protos          GraphNodeProto, MultiGraphNodeProto, AdviceProto, OpLogProto
"""

from __future__ import annotations

from xlapy.compat.v1.profiler.logger import write_op_log
from xlapy.compat.v1.profiler.model_analyzer import Profiler, advise, profile
from xlapy.compat.v1.profiler.option_builder import ProfileOptionBuilder
from xlapy.compat.v1.profiler.protos import (AdviceProto, GraphNodeProto, MultiGraphNodeProto,
                                             OpLogProto)

__all__ = ["AdviceProto", "GraphNodeProto", "MultiGraphNodeProto", "OpLogProto",
           "ProfileOptionBuilder", "Profiler", "advise", "profile", "write_op_log"]
