"""XLA in the TF 1.x session: TF_XLA_FLAGS, the auto-clustering passes and compiled clusters.

  flags.py                  TF_XLA_FLAGS (--tf_xla_auto_jit, --tf_xla_min_cluster_size, ...)
  mark_for_compilation.py   which ops compile, merged into clusters without creating cycles
  encapsulate.py            each cluster as a function: inputs, outputs, variables
  build_xla_ops.py          each cluster replaced by one _XlaLaunch node, nodes ordered
  launch.py                 compile a cluster for the feed shapes (cached) and run it
"""
