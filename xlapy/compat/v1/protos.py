"""The configuration and metadata protos of TF 1.x sessions, as small dataclasses.

    config = tf.ConfigProto()
    config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
    run_metadata = tf.RunMetadata()
    sess.run(fetches, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=run_metadata)
    run_metadata.step_stats.dev_stats[0].node_stats[0].node_name

Unknown field names raise TypeError, as protobuf constructors do.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class OptimizerOptions:
    # GlobalJitLevel
    DEFAULT = 0
    OFF = -1
    ON_1 = 1
    ON_2 = 2
    # Level
    L1 = 0
    L0 = -1

    do_common_subexpression_elimination: bool = False
    do_constant_folding: bool = False
    do_function_inlining: bool = False
    opt_level: int = 0
    global_jit_level: int = 0


@dataclass
class GraphOptions:
    optimizer_options: OptimizerOptions = field(default_factory=OptimizerOptions)
    enable_recv_scheduling: bool = False
    build_cost_model: int = 0
    infer_shapes: bool = False
    place_pruned_graph: bool = False
    enable_bfloat16_sendrecv: bool = False
    timeline_step: int = 0


@dataclass
class GPUOptions:
    allow_growth: bool = False
    per_process_gpu_memory_fraction: float = 0.0
    visible_device_list: str = ""


@dataclass
class ConfigProto:
    device_count: dict = field(default_factory=dict)
    intra_op_parallelism_threads: int = 0
    inter_op_parallelism_threads: int = 0
    use_per_session_threads: bool = False
    allow_soft_placement: bool = False
    log_device_placement: bool = False
    graph_options: GraphOptions = field(default_factory=GraphOptions)
    gpu_options: GPUOptions = field(default_factory=GPUOptions)
    operation_timeout_in_ms: int = 0


@dataclass
class RunOptions:
    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3

    trace_level: int = 0
    timeout_in_ms: int = 0
    output_partition_graphs: bool = False


@dataclass
class NodeExecStats:
    node_name: str = ""
    all_start_micros: int = 0
    op_start_rel_micros: int = 0
    op_end_rel_micros: int = 0
    all_end_rel_micros: int = 0
    timeline_label: str = ""
    scheduled_micros: int = 0
    thread_id: int = 0


@dataclass
class DeviceStepStats:
    device: str = ""
    node_stats: list = field(default_factory=list)


@dataclass
class StepStats:
    dev_stats: list = field(default_factory=list)

    def device(self, name: str) -> DeviceStepStats:
        for d in self.dev_stats:
            if d.device == name:
                return d
        d = DeviceStepStats(device=name)
        self.dev_stats.append(d)
        return d


@dataclass
class RunMetadata:
    step_stats: StepStats = field(default_factory=StepStats)
    partition_graphs: list = field(default_factory=list)
    cost_graph: object = None

    def Clear(self):
        self.step_stats = StepStats()
        self.partition_graphs = []
