"""tf.profiler.advise's checkers: each looks at the profile and reports in plain text.

  AcceleratorUtilizationChecker  per GPU: the share of the last traced step's span during
                                 which ops ran on it
  OperationChecker               layouts and ops known to be slow (NHWC on a GPU, unfused
                                 batch normalization)
  ExpensiveOperationChecker      the op types and top-level graph nodes that took the most
                                 time (needs a traced run)
  JobChecker                     TF's internal checker: no reports

The reports are printed ("<checker>:" then its reports) and returned in an AdviceProto.
"""

from __future__ import annotations

import sys

from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.profiler.display import format_time
from xlapy.compat.v1.profiler.options import Options
from xlapy.compat.v1.profiler.protos import AdviceProto

CHECKERS = ("AcceleratorUtilizationChecker", "OperationChecker", "ExpensiveOperationChecker",
            "JobChecker")
ALL_ADVICE = {"ExpensiveOperationChecker": {}, "AcceleratorUtilizationChecker": {},
              "JobChecker": {}, "OperationChecker": {}}


def _accelerator_utilization(stats) -> list:
    per_device: dict = {}  # device -> [start, end, busy micros]
    for node in stats.nodes.values():
        if not node.execs or "gpu" not in node.canonical_device:
            continue
        ex = node.execs[max(node.execs)]
        d = per_device.setdefault(node.canonical_device, [0, 0, 0])
        if ex.all_start:
            d[0] = min(d[0], ex.all_start) if d[0] else ex.all_start
        d[1] = max(d[1], ex.latest_end)
        d[2] += ex.accelerator_micros()
    reports = []
    for dev, (start, end, busy) in sorted(per_device.items()):
        if end - start <= 0:
            continue
        u = busy / (end - start)
        reports.append(f"device: {dev} {'utilization' if u >= 0.5 else 'low utilization'}: "
                       f"{u:.2f}")
    return reports


def _operations(stats) -> list:
    batch_norm = fused = nhwc_on_gpu = False
    for node in stats.nodes.values():
        batch_norm |= "BatchNorm" in node.name
        fused |= any(t.startswith("FusedBatchNorm") for t in node.op_types)
        if node.attrs.get("data_format") in ("NHWC", b"NHWC") and \
                "gpu" in node.canonical_device:
            nhwc_on_gpu = True
    reports = []
    if batch_norm and not fused:
        reports.append("Found unfused batch normalization ops: the fused kernel "
                       "(FusedBatchNorm, fused=True) is usually faster.")
    if nhwc_on_gpu:
        reports.append("Found ops in the NHWC data_format on a GPU: NCHW is usually faster "
                       "there.")
    return reports


def _view_options(**kw) -> Options:
    o = Options(account_type_regexes=[".*"], start_name_regexes=[".*"],
                show_name_regexes=[".*"], order_by="micros", output_type="none")
    for k, v in kw.items():
        setattr(o, k, v)
    return o


def _expensive_operations(stats) -> list:
    name = "ExpensiveOperationChecker"
    reports = []
    if not stats.steps:
        sys.stderr.write(f"Missing RunMetadata info. Skip the op view of {name}\n")
    else:
        root = stats.show("op", _view_options(max_depth=3, min_micros=1,
                                              select=frozenset({"micros", "occurrence"})))
        lines, node = [], root
        for i in range(3):
            if not node.children:
                break
            node = node.children[0]
            share = 100.0 * node.exec_micros / (root.total_exec_micros + 1e-10)
            lines.append(f"top {i + 1} operation type: {node.name}, "
                         f"cpu: {format_time(node.cpu_exec_micros)}, "
                         f"accelerator: {format_time(node.accelerator_exec_micros)}, "
                         f"total: {format_time(node.exec_micros)} ({share:.2f}%)")
        if lines:
            reports.append("\n".join(lines))
    root = stats.show("scope", _view_options(max_depth=100, min_micros=100,
                                             select=frozenset({"micros"})))
    lines = [f"top {i + 1} graph node: {c.name}, cpu: {format_time(c.cpu_exec_micros)}, "
             f"accelerator: {format_time(c.accelerator_exec_micros)}, "
             f"total: {format_time(c.exec_micros)}" for i, c in enumerate(root.children[:3])]
    if lines:
        reports.append("\n".join(lines))
    sys.stderr.write(f"Missing op_log (code traces) for {name}\n")
    return reports


_RUN = {"AcceleratorUtilizationChecker": _accelerator_utilization,
        "OperationChecker": _operations, "ExpensiveOperationChecker": _expensive_operations}


def run_checkers(stats, options) -> AdviceProto:
    if not isinstance(options, dict):
        raise TypeError(f"advise options must be a dict of checker name -> options (e.g. "
                        f"tf.profiler.ALL_ADVICE), got {type(options).__name__}")
    for k in options:
        if k not in CHECKERS:
            raise InvalidArgumentError(f"Unknown checker {k!r}; one of: {', '.join(CHECKERS)}")
    ret = AdviceProto()
    for name in CHECKERS:
        if name in options and name in _RUN:
            ret.checkers[name].reports.extend(_RUN[name](stats))
    for name in sorted(ret.checkers):
        sys.stdout.write(f"\n{name}:\n")
        for r in ret.checkers[name].reports:
            sys.stdout.write(r + "\n")
    sys.stdout.flush()
    return ret
