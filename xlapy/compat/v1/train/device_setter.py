"""tf.train.ClusterSpec and tf.train.replica_device_setter.

ClusterSpec maps job names to their tasks' network addresses (a list: task i at index i,
or a dict {task index: address} for sparse jobs). replica_device_setter returns TF's
device function: variable ops (ps_ops) go to ps_device with the task chosen by ps_strategy
(round robin over the ps tasks by default), every other op to worker_device, each merged
with the op's own device (the op's fields win). With no ps tasks it returns None (places
nothing).

xlapy runs one process: the device strings name jobs and tasks as TF's, for code that
reads them, but graph.device() takes device names only (canonical_device ignores job and
task and needs a device type), so such a function is not accepted by tf.device here.
"""

from __future__ import annotations

import re

from xlapy.compat.v1.errors import InvalidArgumentError

PS_OPS = ("Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable",
          "MutableHashTableV2", "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2",
          "MutableDenseHashTable", "MutableDenseHashTableV2", "VarHandleOp")


class ClusterSpec:
    """A cluster: job name -> {task index: "host:port"}."""

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            self._jobs = {j: dict(t) for j, t in cluster._jobs.items()}
            return
        if not isinstance(cluster, dict):
            raise TypeError("`cluster` must be a dictionary mapping one or more job names to "
                            "lists of network addresses, or a `ClusterSpec`")
        self._jobs = {}
        for job, tasks in cluster.items():
            if not isinstance(job, str):
                raise TypeError(f"Job name must be a string, got {job!r}")
            if isinstance(tasks, (list, tuple)):
                self._jobs[job] = {i: str(a) for i, a in enumerate(tasks)}
            elif isinstance(tasks, dict):
                out = {}
                for i, a in tasks.items():
                    if not isinstance(i, int) or isinstance(i, bool):
                        raise TypeError(f"Task index must be an integer, got {i!r}")
                    out[i] = str(a)
                self._jobs[job] = out
            else:
                raise TypeError(f"The tasks for job {job!r} must be a list or a dictionary "
                                f"from integers to strings, got {tasks!r}")

    def __bool__(self):
        return bool(self._jobs)

    __nonzero__ = __bool__

    def __eq__(self, other):
        try:
            return self._jobs == ClusterSpec(other)._jobs
        except TypeError:
            return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __repr__(self):
        return f"ClusterSpec({self.as_dict()!r})"

    __str__ = __repr__

    def as_dict(self):
        """job -> list of addresses (dense task indices 0..n-1) or {index: address}."""
        out = {}
        for job, tasks in self._jobs.items():
            idx = sorted(tasks)
            if idx == list(range(len(idx))):
                out[job] = [tasks[i] for i in idx]
            else:
                out[job] = {i: tasks[i] for i in idx}
        return out

    @property
    def jobs(self):
        return sorted(self._jobs)

    def _job(self, job_name):
        try:
            return self._jobs[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    def num_tasks(self, job_name):
        return len(self._job(job_name))

    def task_indices(self, job_name):
        return sorted(self._job(job_name))

    def task_address(self, job_name, task_index):
        tasks = self._job(job_name)
        try:
            return tasks[task_index]
        except KeyError:
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r}") \
                from None

    def job_tasks(self, job_name):
        """The addresses of the job's tasks by index, None for missing indices."""
        tasks = self._job(job_name)
        if not tasks:
            return []
        return [tasks.get(i) for i in range(max(tasks) + 1)]


# ---- device strings --------------------------------------------------------------------------

_FIELD = re.compile(r"/(job|replica|task|device|cpu|gpu|CPU|GPU):([^/]*)")


def _parse(spec: str) -> dict:
    """A device string's parts: job, replica, task, device (TYPE:index)."""
    out: dict = {}
    spec = spec or ""
    pos = 0
    for m in _FIELD.finditer(spec):
        if m.start() != pos:
            break
        pos = m.end()
        key, a = m.group(1), m.group(2)
        if key == "job":
            out["job"] = a
        elif key in ("replica", "task"):
            out[key] = int(a)
        elif key == "device":
            kind, _, index = a.partition(":")
            out["device"] = f"{kind.upper()}:{index or '*'}"
        else:
            out["device"] = f"{key.upper()}:{a}"
    if pos != len(spec):
        raise InvalidArgumentError(f"Could not parse device specification {spec!r}")
    return out


def _string(parts: dict) -> str:
    s = ""
    for k in ("job", "replica", "task"):
        if k in parts:
            s += f"/{k}:{parts[k]}"
    if "device" in parts:
        s += f"/device:{parts['device']}"
    return s


class _RoundRobin:
    def __init__(self, num_tasks):
        self._n = num_tasks
        self._next = 0

    def __call__(self, op):
        task = self._next
        self._next = (self._next + 1) % self._n
        return task


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker",
                          merge_devices=True, cluster=None, ps_ops=None, ps_strategy=None):
    """TF's device function placing variables on the ps tasks (see the module doc)."""
    if cluster is not None:
        spec = cluster.as_dict() if isinstance(cluster, ClusterSpec) else \
            ClusterSpec(cluster).as_dict()
        ps_job = _parse(ps_device).get("job")
        if ps_job not in spec or spec[ps_job] is None:
            return None
        ps_tasks = len(spec[ps_job])
    if ps_tasks == 0:
        return None
    ops = tuple(PS_OPS if ps_ops is None else ps_ops)
    if ps_strategy is None:
        ps_strategy = _RoundRobin(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    ps_parts, worker_parts = _parse(ps_device), _parse(worker_device)

    def device_function(op):
        current = _parse(getattr(op, "device", "") or "")
        if ps_device and op.type in ops:
            parts = dict(ps_parts)
            if parts.get("job") and (not current.get("job") or
                                     current.get("job") == parts.get("job")):
                parts["task"] = ps_strategy(op)
            parts.update(current)
            return _string(parts)
        parts = dict(worker_parts)
        parts.update(current)
        return _string(parts)
    return device_function
