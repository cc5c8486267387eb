"""The collectives' reference semantics: N replicas (x P partitions) in one process.

    results = run_replicated(module, args_per_device, num_replicas, num_partitions=1)

runs one Evaluator per device on its own thread; device d is (replica d // P, partition
d % P). Each collective is a rendezvous: every device hands in its operands (matched by
program order, the n-th collective of every device meeting the n-th of the others), and
each computes its result from its group's values. A device that raises, or that does not
arrive within `timeout` seconds, makes the others fail with an EvaluationError naming it;
devices reaching different instructions (programs or shapes that differ) are named too.

Groups (XLA's CollectiveOpGroupMode): without channel_id the ids in replica_groups are
replica ids and each partition meets on its own (cross-replica); with channel_id and
use_global_device_ids=false each group of replicas meets together with every partition
(cross-replica-and-partition); with use_global_device_ids=true the ids are the flattened
ids replica * P + partition. all-to-all and collective-permute have no
use_global_device_ids: with a channel_id their ids are partition ids (cross-partition).
`{}` is one group of every replica (or partition, or device).

A plain Evaluator (no replicas given) is one replica of one partition: the collectives are
then what XLA computes with a single device.
"""

from __future__ import annotations

import threading

import numpy as np

from xlapy.errors import EvaluationError
from xlapy.hlo.evaluator.evaluator import Evaluator, eval_rule
from xlapy.hlo.evaluator.reduction import call_elementwise
from xlapy.hlo.reducers import simple_reducer


# the collectives with a use_global_device_ids field; for the others (all-to-all,
# collective-permute) a channel_id makes the ids partition ids
_HAVE_GLOBAL_IDS = ("all-reduce", "all-gather", "reduce-scatter")


class _Rendezvous:
    def __init__(self, devices: int, timeout: float):
        self.devices, self.timeout = devices, timeout
        self.cond = threading.Condition()
        self.slots: dict[int, dict] = {}
        self.reads: dict[int, int] = {}
        self.failed: str | None = None

    def fail(self, message: str) -> None:
        with self.cond:
            if self.failed is None:
                self.failed = message
            self.cond.notify_all()

    def exchange(self, device: int, seq: int, what: str, value) -> dict:
        """Every device's (what, value) at its seq-th collective."""
        with self.cond:
            if self.failed:
                raise EvaluationError(self.failed)
            slot = self.slots.setdefault(seq, {})
            slot[device] = (what, value)
            self.cond.notify_all()
            done = self.cond.wait_for(
                lambda: self.failed or len(slot) == self.devices, self.timeout)
            if self.failed:
                raise EvaluationError(self.failed)
            if not done:
                missing = sorted(set(range(self.devices)) - set(slot))
                msg = (f"{what}: device(s) {missing} did not reach this collective within "
                       f"{self.timeout:g} s")
                self.failed = msg
                self.cond.notify_all()
                raise EvaluationError(msg)
            self.reads[seq] = self.reads.get(seq, 0) + 1
            if self.reads[seq] == self.devices:
                del self.slots[seq], self.reads[seq]
        for d, (w, _) in sorted(slot.items()):
            if w != what:
                raise EvaluationError(f"device {device} is at {what} but device {d} is at "
                                      f"{w}: the replicas run different programs or shapes")
        return {d: v for d, (_, v) in slot.items()}


class ReplicaContext:
    """Which device an Evaluator runs as, and the rendezvous it meets the others at."""

    def __init__(self, replica: int = 0, partition: int = 0, num_replicas: int = 1,
                 num_partitions: int = 1, rendezvous: _Rendezvous | None = None):
        self.replica, self.partition = replica, partition
        self.num_replicas, self.num_partitions = num_replicas, num_partitions
        self.rendezvous = rendezvous
        self.seq = 0

    @property
    def device(self) -> int:
        return self.replica * self.num_partitions + self.partition

    @staticmethod
    def what(instr, value) -> str:
        """The instruction and operand shapes every device must agree on."""
        shapes = [np.shape(v) for v in (value if isinstance(value, list) else [value])]
        return f"{instr.opcode} {instr.name} ({', '.join(map(str, shapes))})"

    def exchange(self, instr, value) -> dict:
        what = self.what(instr, value)
        self.seq += 1
        if self.rendezvous is None:
            return {self.device: value}
        return self.rendezvous.exchange(self.device, self.seq, what, value)

    def _groups(self, instr, ids_name: str = "replica_groups"):
        rg = instr.attrs.get(ids_name)
        return [list(g) for g in rg.groups] if rg is not None and rg.groups else None

    def participants(self, instr) -> list[int]:
        """The devices of this device's group, in group order."""
        R, P = self.num_replicas, self.num_partitions
        groups = self._groups(instr)
        channel = "channel_id" in instr.attrs
        if instr.attrs.get("use_global_device_ids"):
            groups = groups or [list(range(R * P))]
            out = next((g for g in groups if self.device in g), None)
            self._check(instr, groups, R * P, "device", self.device, out)
            return out
        if channel and instr.opcode not in _HAVE_GLOBAL_IDS:  # cross-partition
            groups = groups or [list(range(P))]
            mine = next((g for g in groups if self.partition in g), None)
            self._check(instr, groups, P, "partition", self.partition, mine)
            return [self.replica * P + p for p in mine]
        groups = groups or [list(range(R))]
        mine = next((g for g in groups if self.replica in g), None)
        self._check(instr, groups, R, "replica", self.replica, mine)
        if channel:  # cross-replica-and-partition
            return [r * P + p for r in mine for p in range(P)]
        return [r * P + self.partition for r in mine]

    def _check(self, instr, groups, n, what, me, mine) -> None:
        bad = sorted(i for g in groups for i in g if i >= n)
        if bad:
            raise EvaluationError(f"{instr.where()}{instr.name}: {what} id(s) {bad} in its "
                                  f"groups, but there are {n} {what}s")
        if mine is None:
            raise EvaluationError(f"{instr.where()}{instr.name}: {what} {me} is in "
                                  f"none of its replica_groups")


def _context(ev) -> ReplicaContext:
    ctx = getattr(ev, "replica", None)
    if ctx is None:
        ctx = ev.replica = ReplicaContext()
    return ctx


def _split(x: np.ndarray, d: int, k: int) -> list[np.ndarray]:
    return np.split(x, k, axis=d)


def _reduce(ev, instr, arrays: list[np.ndarray]) -> np.ndarray:
    comp = instr.attrs["to_apply"]
    acc = arrays[0]
    for x in arrays[1:]:
        acc = call_elementwise(ev, comp, [acc, x])[0]
    return np.asarray(acc, dtype=arrays[0].dtype)


def _pack(instr, values: list):
    return tuple(values) if instr.shape.is_tuple else values[0]


@eval_rule("all-reduce")
def all_reduce(ev, instr, operands):
    ctx = _context(ev)
    group = ctx.participants(instr)
    native = getattr(ctx.rendezvous, "allreduce", None)  # a runtime reducing buffers itself
    if native is not None and len(group) == ctx.num_replicas * ctx.num_partitions:
        kind = simple_reducer(instr.attrs["to_apply"])
        outs = native(ctx.seq + 1, ctx.what(instr, operands), operands, kind)
        if outs is not None:
            ctx.seq += 1
            return _pack(instr, outs)
    got = ctx.exchange(instr, operands)
    return _pack(instr, [_reduce(ev, instr, [got[d][i] for d in group])
                         for i in range(len(operands))])


@eval_rule("all-gather")
def all_gather(ev, instr, operands):
    ctx = _context(ev)
    group = ctx.participants(instr)
    got = ctx.exchange(instr, operands)
    d = instr.attrs["dimensions"][0]
    return _pack(instr, [np.concatenate([got[g][i] for g in group], axis=d)
                         for i in range(len(operands))])


@eval_rule("reduce-scatter")
def reduce_scatter(ev, instr, operands):
    ctx = _context(ev)
    group = ctx.participants(instr)
    got = ctx.exchange(instr, operands)
    d, me = instr.attrs["dimensions"][0], group.index(ctx.device)
    return _pack(instr, [_split(_reduce(ev, instr, [got[g][i] for g in group]), d,
                                len(group))[me] for i in range(len(operands))])


@eval_rule("all-to-all")
def all_to_all(ev, instr, operands):
    ctx = _context(ev)
    group = ctx.participants(instr)
    got = ctx.exchange(instr, operands)
    me, k = group.index(ctx.device), len(group)
    if "dimensions" in instr.attrs:
        d = instr.attrs["dimensions"][0]
        if operands[0].shape[d] % k:
            raise EvaluationError(f"{instr.where()}{instr.name}: dimension {d} of "
                                  f"{operands[0].shape} is not divisible by {k} devices")
        return np.concatenate([_split(got[g][0], d, k)[me] for g in group], axis=d)
    if len(operands) != k:
        raise EvaluationError(f"{instr.where()}{instr.name}: {len(operands)} operands for a "
                              f"group of {k}")
    return tuple(got[g][me] for g in group)


@eval_rule("collective-permute")
def collective_permute(ev, instr, operands):
    ctx = _context(ev)
    got = ctx.exchange(instr, operands[0])
    P = ctx.num_partitions
    by_partition = "channel_id" in instr.attrs
    n = P if by_partition else ctx.num_replicas
    me = ctx.partition if by_partition else ctx.replica
    pairs = instr.attrs["source_target_pairs"].groups
    bad = sorted(i for p in pairs for i in p if i >= n)
    if bad:
        raise EvaluationError(f"{instr.where()}{instr.name}: id(s) {bad} in "
                              f"source_target_pairs, but there are {n}")
    src = next((s for s, t in pairs if t == me), None)
    if src is None:
        return np.zeros_like(operands[0])
    dev = (ctx.replica * P + src) if by_partition else (src * P + ctx.partition)
    return np.array(got[dev], copy=True)


@eval_rule("replica-id")
def replica_id(ev, instr, operands):
    return np.uint32(_context(ev).replica)


@eval_rule("partition-id")
def partition_id(ev, instr, operands):
    return np.uint32(_context(ev).partition)


def run_replicated(module, args_per_device: list, num_replicas: int,
                   num_partitions: int = 1, timeout: float = 60.0) -> list:
    """Evaluate `module` as num_replicas x num_partitions devices (threads of this process);
    args_per_device[d] is device d's argument list. Returns each device's result."""
    n = num_replicas * num_partitions
    if len(args_per_device) != n:
        raise EvaluationError(f"run_replicated: {len(args_per_device)} argument lists for "
                              f"{num_replicas} replica(s) x {num_partitions} partition(s)")
    rdv = _Rendezvous(n, timeout)
    results: list = [None] * n
    errors: list = [None] * n

    def run(d: int) -> None:
        ev = Evaluator()
        ev.replica = ReplicaContext(d // num_partitions, d % num_partitions, num_replicas,
                                    num_partitions, rdv)
        try:
            with np.errstate(all="ignore"):
                results[d] = ev.evaluate(module, list(args_per_device[d]))
        except BaseException as e:  # reported to the others, re-raised below
            errors[d] = e
            rdv.fail(f"device {d} (replica {d // num_partitions}) failed: "
                     f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=run, args=(d,), daemon=True) for d in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if any(e is not None for e in errors):
        cause = next((e for e in errors if e is not None and str(e) != rdv.failed),
                     next(e for e in errors if e is not None))
        raise EvaluationError(rdv.failed or str(cause)) from cause
    return results
