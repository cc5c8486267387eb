"""Chrome trace (chrome://tracing, Perfetto) from a run's step stats, as TF's timeline.py.

    run_metadata = tf.RunMetadata()
    sess.run(train_op, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=run_metadata)
    tl = timeline.Timeline(run_metadata.step_stats)
    open("timeline.ctf.json", "w").write(tl.generate_chrome_trace_format())

Each device is a process ("<device> Compute"), each executor thread a track; each op (or
compiled cluster) one complete event ("ph": "X") named after its op type, with its node
name, type and inputs in "args". Timestamps are microseconds from the step's first event.
"""

from __future__ import annotations

import json
import re

_LABEL = re.compile(r"(.*) = (.*)\((.*)\)")


class Timeline:
    def __init__(self, step_stats, graph=None):
        self._step_stats = step_stats
        self._graph = graph

    def _events(self) -> list:
        events = []
        stats = [(d.device, n) for d in self._step_stats.dev_stats for n in d.node_stats]
        t0 = min((n.all_start_micros for _, n in stats), default=0)
        pids: dict = {}
        tids: dict = {}
        for dev in self._step_stats.dev_stats:
            pid = pids.setdefault(dev.device, len(pids))
            events.append({"name": "process_name", "ph": "M", "pid": pid,
                           "args": {"name": f"{dev.device} Compute"}})
            events.append({"name": "process_sort_index", "ph": "M", "pid": pid,
                           "args": {"sort_index": pid}})
        for device, n in stats:
            pid = pids[device]
            tid = tids.setdefault((pid, n.thread_id), len([k for k in tids if k[0] == pid]))
            m = _LABEL.fullmatch(n.timeline_label or "")
            if m:
                name, op, inputs = m.group(1), m.group(2), m.group(3)
                inputs = [i.strip() for i in inputs.split(",") if i.strip()]
            else:
                name, op, inputs = n.node_name, n.node_name, []
            args = {"name": name, "op": op}
            for i, inp in enumerate(inputs):
                args[f"input{i}"] = inp
            events.append({"ph": "X", "cat": "Op", "name": op, "pid": pid, "tid": tid,
                           "ts": n.all_start_micros - t0,
                           "dur": max(n.all_end_rel_micros, 1), "args": args})
        for (pid, _thread), tid in tids.items():
            events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                           "args": {"name": f"executor thread {tid}"}})
        return events

    def generate_chrome_trace_format(self, show_dataflow: bool = True,
                                     show_memory: bool = False) -> str:
        """The trace as a JSON string. (Dataflow arrows and memory tracks are not drawn.)"""
        return json.dumps({"traceEvents": self._events(), "displayTimeUnit": "ms"}, indent=None)
