"""Instruction fusion: intermediate arrays that never reach memory.

Algorithm (greedy, like XLA's InstructionFusion), per computation, consumers first:

  loop fusion      an operand (producer) is merged into its consumer's fused computation
                   when the producer is loop-fusible (elementwise, broadcast, reshape,
                   transpose, slice, concatenate, pad, iota, convert, bitcast-convert,
                   reverse, dynamic-slice, gather, bitcast, copy, small constants) and the
                   consumer can take it (loop-fusible ops, reduce, reduce-window, and
                   fusions of those). A consumer tries the producers it exposes right away,
                   latest in post order first, so a producer comes after the users it shares
                   the consumer with: a DAG whose values have several users (a hash's
                   rounds) fuses whole, each value once (_absorb);
  reduction-input  producers fuse into a reduce (the reduce becomes the fusion's root);
  multi-output     a reduce-rooted fusion that reads the result of another reduction with
                   the same output shape absorbs it as an extra output (softmax: row max and
                   row sum of exp(x - max) in one kernel; layernorm: mean and variance),
                   not column reductions (the dependent one needs finished sums);
  cost rule        a producer with several users is duplicated into each consumer if it is
                   cheap; an expensive one (transcendental, divide, inner loop) only when all
                   of its (at most MAX_DUPLICATES) users absorb it, so it is recomputed from
                   its inputs rather than written to memory; otherwise it stays a kernel.
  size rule        a producer with several users whose loop-fusible cone (itself and the
                   fusible producers above it) has more than MAX_DUPLICATED_INSTRUCTIONS
                   instructions is never duplicated: it becomes a kernel of its own, so a
                   large shared computation (a random hash) is emitted once, and compile
                   time stays linear in the program's size;
  branches         an expensive producer is not fused into a pad or concatenate, whose
                   per-element branch would keep the loop scalar;
  never fused      dot (BLAS gemm), convolution, sort, scatter, while, conditional, call,
                   custom-call, reductions as producers of non-reduction consumers (a
                   reduction recomputed per output element would multiply the work).

Every decision has a reason; `FusionPass(log=list)` collects (consumer, producer, decision,
reason) tuples, and the logger "xlapy.passes.fusion" reports them at DEBUG level.
Invariants: no cycles are created (producer-into-consumer fusion cannot create one: the
producer stays for its other users; multi-output fusion checks reachability); every
fusion's computation is verified; op_name metadata is kept
on the fused instructions, and the fusion instruction takes its root's.
"""

from __future__ import annotations

import heapq
import logging

from xlapy.hlo.ir import Computation, Instruction, Module
from xlapy.hlo.opcodes import (CONTROL_FLOW, ELEMENTWISE, EXPENSIVE, LOOP_FUSIBLE, NO_KERNEL,
                                REDUCTIONS)
from xlapy.hlo.shapes import Shape

log = logging.getLogger("xlapy.passes.fusion")

# LOOP_FUSIBLE (fusion="loop"), REDUCTIONS (fusion="input") and EXPENSIVE come from the
# opcode table (xlapy/hlo/opcodes.py), imported above.
MAX_FUSED_INSTRUCTIONS = 1000
MAX_FUSED_CONSTANT_ELEMENTS = 1
MAX_DUPLICATES = 3
# A producer with users outside the consumer is duplicated (recomputed in each consumer)
# only if what fusing it would pull in, its loop-fusible cone, is small: a 1,000-instruction
# hash feeding 20 consumers would otherwise be emitted and compiled 20 times.
MAX_DUPLICATED_INSTRUCTIONS = 40
# The longest chain of operations in one fused computation. Backends generate a fused
# computation's code by recursion over operands (xlapy/backends/llvm/elemental.py), about
# 3.5 Python frames per level: a 100-step elementwise recurrence (an unrolled RNN cell, an
# ODE step: 300 operations deep) fused whole went past Python's recursion limit (1,000
# frames), under jit and jit(grad) alike. A deeper chain is cut into kernels of at most
# this depth (one more pass over memory per MAX_FUSED_DEPTH operations): about 700 frames,
# which leaves the caller's own stack room, and keeps a 40-round hash (a random sampler's
# rounds) one kernel.
MAX_FUSED_DEPTH = 200


def _root(instr: Instruction) -> Instruction:
    return instr.fused_computation.root if instr.opcode == "fusion" else instr


def _fused_ops(instr: Instruction) -> list[Instruction]:
    return list(instr.fused_computation.instructions) if instr.opcode == "fusion" else [instr]


def fused_depth(instr: Instruction) -> int:
    """The longest chain of operations (parameters and constants not counted) from an input
    of `instr`'s fused computation to its root; 1 for an instruction that is not a fusion."""
    if instr.opcode != "fusion":
        return 1
    depth: dict = {}
    for i in instr.fused_computation.post_order():
        if i.opcode in ("parameter", "constant"):
            depth[id(i)] = 0
        else:
            depth[id(i)] = 1 + max((depth.get(id(o), 0) for o in i.operands), default=0)
    return max(depth.values(), default=0)


def is_expensive(instr: Instruction, depth: int = 4) -> bool:
    """Whether duplicating `instr` into several consumers would duplicate expensive work:
    it contains an expensive op, or a loop-fusible producer within `depth` levels does
    (fusing a cheap `add` would pull the exp chain feeding it along)."""
    if any(i.opcode in EXPENSIVE for i in _fused_ops(instr)):
        return True
    if depth == 0:
        return False
    return any(o.opcode not in ("parameter", "constant") and producer_fusible(o)[0]
               and is_expensive(o, depth - 1) for o in instr.operands)


def cone_size(p: Instruction, limit: int = MAX_DUPLICATED_INSTRUCTIONS) -> int:
    """How many instructions fusing `p` into a consumer would copy there, at most about
    `limit`: p (or its fused body) and the loop-fusible producers above it, each once
    (constants and parameters are free). Stops counting once past `limit`."""
    seen = {id(p)}
    stack = [p]
    n = 0
    while stack and n <= limit:
        i = stack.pop()
        n += len(i.fused_computation.instructions) - len(i.fused_computation.parameters) \
            if i.opcode == "fusion" else 1
        for o in i.operands:
            if id(o) not in seen and o.opcode not in ("parameter", "constant") \
                    and producer_fusible(o)[0]:
                seen.add(id(o))
                stack.append(o)
    return n


def producer_fusible(p: Instruction) -> tuple[bool, str]:
    if p.opcode == "parameter":
        return False, "producer is a parameter"
    if p.shape.is_tuple:
        return False, "producer has a tuple shape"
    if p.opcode == "constant":
        if p.shape.size > MAX_FUSED_CONSTANT_ELEMENTS:
            return False, "non-scalar constant stays in memory"
        return True, "scalar constant"
    if p.opcode == "fusion":
        kinds = {i.opcode for i in _fused_ops(p)}
        if kinds & REDUCTIONS:
            return False, "producer is a reduction fusion"
        if all(k in LOOP_FUSIBLE or k in ("parameter", "tuple") for k in kinds):
            return True, "loop fusion"
        return False, "producer fusion is not loop-fusible"
    if p.opcode in REDUCTIONS:
        return False, "producer is a reduction (would be recomputed per consumer element)"
    if p.opcode in LOOP_FUSIBLE:
        return True, "loop-fusible producer"
    return False, f"producer {p.opcode} is not loop-fusible"


def consumer_fusible(c: Instruction) -> tuple[bool, str]:
    if c.shape.is_tuple and c.opcode != "fusion" and c.opcode not in REDUCTIONS:
        return False, "consumer has a tuple shape"
    if c.opcode == "fusion":
        ok = all(i.opcode in LOOP_FUSIBLE or i.opcode in REDUCTIONS
                 or i.opcode in ("parameter", "tuple", "get-tuple-element")
                 for i in _fused_ops(c))
        return (True, "consumer fusion") if ok else (False, "consumer fusion is not fusible")
    if c.opcode in LOOP_FUSIBLE or c.opcode in REDUCTIONS:
        return True, "fusible consumer"
    return False, f"consumer {c.opcode} cannot absorb producers"


_BRANCHING = ("pad", "concatenate")


def _read_through_branch(consumer: Instruction, producer: Instruction) -> bool:
    """Whether the consumer reads the producer as an operand of a pad or concatenate."""
    if consumer.opcode in _BRANCHING:
        return True
    if consumer.opcode != "fusion":
        return False
    fc = consumer.fused_computation
    params = {p.parameter_number: p for p in fc.parameters}
    return any(o is producer and k in params
               and any(u.opcode in _BRANCHING for u in params[k].users)
               for k, o in enumerate(consumer.operands))


def _is_epilogue(consumer: Instruction, producer: Instruction) -> bool:
    """A reduction whose only user is an elementwise computation of the same shape reads
    each reduced value exactly once: fusing it there costs no recomputation."""
    if len(producer.users) != 1 or producer.shape.is_tuple:
        return False
    is_reduction = (_root(producer).opcode == "reduce" if producer.opcode == "fusion"
                    else producer.opcode == "reduce")
    if not is_reduction or consumer.shape.is_tuple or consumer.shape.dims != producer.shape.dims:
        return False
    ops = _fused_ops(consumer)
    if consumer.opcode == "fusion":
        # the producer's parameter must feed elementwise ops only (same index mapping)
        fc = consumer.fused_computation
        params = [fc.parameters[k] for k, o in enumerate(consumer.operands) if o is producer]
        return all(u.opcode in ELEMENTWISE and u.shape.dims == producer.shape.dims
                   for p in params for u in p.users) and all(
            i.opcode in ELEMENTWISE or i.opcode in ("parameter", "constant", "broadcast")
            for i in ops)
    return consumer.opcode in ELEMENTWISE


def _regroup(comp, fused: Instruction, offset: int, shape) -> Instruction:
    """tuple(gte(fused, offset), gte(fused, offset + 1), ...) of tuple shape `shape`: the
    value an old tuple-shaped instruction had, rebuilt from a multi-output fusion."""
    elems = []
    for k, s in enumerate(shape.tuple_shapes):
        g = Instruction("get-tuple-element", s, [fused], {"index": k + offset},
                        "get-tuple-element")
        comp.add_instruction(g)
        elems.append(g)
    t = Instruction("tuple", shape, elems, name="tuple")
    comp.add_instruction(t)
    return t


def _reaches(src: Instruction, dst: Instruction, skip_edge_to: Instruction | None) -> bool:
    """Is there a path src -> ... -> dst not using the direct edge src -> skip_edge_to?"""
    stack = [u for u in src.users if u is not skip_edge_to]
    seen = set()
    while stack:
        n = stack.pop()
        if n is dst:
            return True
        if id(n) in seen:
            continue
        seen.add(id(n))
        stack.extend(n.users)
    return False


class FusionPass:
    name = "fusion"

    def __init__(self, log: list | None = None):
        self.decisions = log

    def _decide(self, consumer, producer, fused: bool, reason: str):
        msg = (f"{'fused' if fused else 'not fused'}: {producer.name} into {consumer.name}: "
               f"{reason}")
        log.debug(msg)
        if self.decisions is not None:
            self.decisions.append((consumer.name, producer.name, fused, reason))

    def run(self, module: Module) -> bool:
        changed = False
        skip = self._fused_or_scalar(module)
        for comp in list(module.computations):
            if id(comp) in skip:
                continue
            changed |= self._run_computation(comp)
            changed |= self._multi_output(comp)
        return changed

    @staticmethod
    def _fused_or_scalar(module: Module) -> set:
        """ids of the computations that fusion leaves alone: fused computations, and those
        called as reducers, comparators or map functions (computed once for the module:
        asking per computation made the pass quadratic in the number of computations)."""
        out = set()
        for c in module.computations:
            for i in c.instructions:
                if i.opcode == "fusion":
                    out.add(id(i.fused_computation))
                if i.opcode not in CONTROL_FLOW:
                    out.update(id(k) for k in i.called_computations())
        return out

    # ---- producer/consumer fusion -----------------------------------------------------------
    _deferring = False  # (see _detach)

    def _run_computation(self, comp: Computation) -> bool:
        self._deferring = True
        try:
            return self._fuse_producers(comp)
        finally:
            self._deferring = False
            comp.instructions = [i for i in comp.instructions if i.parent is comp]

    def _fuse_producers(self, comp: Computation) -> bool:
        changed = False
        progress = True
        while progress:
            progress = False
            order = comp.post_order()
            position = {id(i): k for k, i in enumerate(order)}
            for consumer in reversed(order):
                if consumer.parent is not comp:
                    continue
                ok, why = consumer_fusible(consumer)
                if not ok:
                    continue
                if self._absorb(comp, consumer, position):
                    changed = progress = True
        return changed

    def _absorb(self, comp: Computation, consumer: Instruction, position: dict) -> bool:
        """Fuse the consumer's producers into it, and the producers those expose, each tried
        once, latest in post order first: a producer is then reached after those of its
        users that the consumer absorbs, so a DAG whose values have several users (a hash's
        rounds) is fused whole, each value once, instead of duplicated copies of shared
        values piling up (or its middle parts becoming kernels of their own first)."""

        changed = False
        tried: set = set()
        heap: list = []

        def push(ops):
            for o in dict.fromkeys(ops):
                if id(o) not in tried:
                    tried.add(id(o))
                    heapq.heappush(heap, (-position.get(id(o), -1), len(tried), o))

        push(consumer.operands)
        while heap:
            producer = heapq.heappop(heap)[2]
            if producer.parent is not comp or producer not in consumer.operands:
                continue
            fused, reason = self._should_fuse(consumer, producer)
            self._decide(consumer, producer, fused, reason)
            if fused:
                consumer = self._fuse(comp, consumer, producer)
                changed = True
                push(consumer.operands)
        return changed

    def _detach(self, comp: Computation, instr: Instruction) -> None:
        """comp.remove_instruction(instr); within _run_computation, leaving it in
        comp.instructions (with no parent) for the end of the round to drop: removing each
        fused producer from the list one by one made fusing a chain of n instructions take
        n * n steps."""
        if (not self._deferring or instr.users or instr is comp.root
                or instr.opcode == "parameter"):
            comp.remove_instruction(instr)  # (or its error)
            return
        instr.drop_operands()
        instr.parent = None
        if comp.module is not None:
            comp.module.release_name(instr.name)

    def _should_fuse(self, consumer, producer) -> tuple[bool, str]:
        ok, why = producer_fusible(producer)
        if not ok and _is_epilogue(consumer, producer):
            ok, why = True, "reduction epilogue (elementwise consumer of the same shape)"
        if not ok:
            return False, why
        if producer.shape.size == 0 or consumer.shape.leaves()[0].size == 0:
            return False, "zero-size array"
        if _read_through_branch(consumer, producer) and is_expensive(producer):
            # each output element of a pad or concatenate picks its source by a branch,
            # which keeps the fused loop scalar: the expensive math stays a kernel of its
            # own, vectorized (an LSTM's gate gradients, padded into the [b, 4h] gradient)
            return False, "expensive producer read through a pad / concatenate branch"
        if len(producer.users) > 1 and is_expensive(producer):
            # Duplicate an expensive producer only if every user absorbs it (then it is
            # recomputed from its inputs instead of being written to and read from memory).
            if len(producer.users) > MAX_DUPLICATES:
                return False, f"expensive producer with more than {MAX_DUPLICATES} users"
            for u in producer.users:
                if not consumer_fusible(u)[0]:
                    return False, (f"expensive producer would be duplicated, and its user "
                                   f"{u.name} cannot fuse it")
            why = why + ", duplicated into all of its users"
        elif len(producer.users) > 1 and cone_size(producer) > MAX_DUPLICATED_INSTRUCTIONS:
            # duplicating it would copy a large computation into every user: it is computed
            # once, as a kernel of its own, and its users read it from memory
            return False, (f"producer with several users would duplicate more than "
                           f"{MAX_DUPLICATED_INSTRUCTIONS} instructions")
        size = len(_fused_ops(consumer)) + len(_fused_ops(producer))
        if size > MAX_FUSED_INSTRUCTIONS and len(_fused_ops(consumer)) > 1:
            return False, f"fusion would exceed {MAX_FUSED_INSTRUCTIONS} instructions"
        if fused_depth(consumer) + fused_depth(producer) > MAX_FUSED_DEPTH:
            return False, f"fusion would chain more than {MAX_FUSED_DEPTH} operations"
        return True, why

    def _fuse(self, comp: Computation, consumer: Instruction, producer: Instruction) -> Instruction:
        fusion = consumer if consumer.opcode == "fusion" else self._wrap(comp, consumer)
        fc = fusion.fused_computation
        # Parameters of the fusion that are `producer`
        idx = [k for k, o in enumerate(fusion.operands) if o is producer]
        # Clone the producer (inlining its own fused computation if it is a fusion) into fc
        new_operands = list(fusion.operands)
        params = {k: fc.parameters[k] for k in idx}
        n_before = len(fc.instructions)
        body_root = self._clone_into(fc, producer, fusion, new_operands)
        for _k, p in params.items():
            p.replace_all_uses_with(body_root)
        # Remove those parameters and renumber. One plain instruction replacing one
        # parameter (a chain growing by one link) is placed and deduplicated locally;
        # sorting and deduplicating the whole fused computation each time made absorbing n
        # producers cost n * n.
        local = producer.opcode != "fusion" and len(idx) == 1
        keep = [k for k in range(len(new_operands)) if k not in idx]
        self._renumber(fc, fusion, new_operands, keep, dedupe=not local)
        if local:
            _place_before_users(fc, fc.instructions[n_before - 1:], body_root)
            _dedupe_one(fc, body_root)
        if not producer.users and producer is not comp.root:
            self._detach(comp, producer)
        return fusion

    def _wrap(self, comp: Computation, instr: Instruction) -> Instruction:
        """Make `instr` a one-instruction fusion (kind kLoop, or kInput for a reduction)."""
        module = comp.module
        fc = Computation(f"fused_{instr.opcode.replace('-', '_')}")
        operands = list(dict.fromkeys(instr.operands))
        params = []
        for k, o in enumerate(operands):
            p = Instruction("parameter", o.shape, name=f"param_{k}", parameter_number=k)
            fc.add_instruction(p)
            params.append(p)
        body = Instruction(instr.opcode, instr.shape,
                           [params[operands.index(o)] for o in instr.operands],
                           dict(instr.attrs), instr.name, dict(instr.metadata), instr.literal)
        fc.add_instruction(body)
        fc.root = body
        module.add_computation(fc, before=comp)
        kind = "kInput" if instr.opcode in REDUCTIONS else "kLoop"
        fusion = Instruction("fusion", instr.shape, operands, {"kind": kind, "calls": fc},
                             f"{instr.opcode.replace('-', '_')}_fusion", dict(instr.metadata))
        comp.add_instruction(fusion)
        comp.instructions.pop()  # (in instr's place, which it takes over)
        comp.instructions[comp.instructions.index(instr)] = fusion
        instr.replace_all_uses_with(fusion)
        comp.instructions.append(instr)
        self._detach(comp, instr)
        return fusion

    def _clone_into(self, fc: Computation, producer: Instruction, fusion: Instruction,
                    new_operands: list) -> Instruction:
        """Copy producer (or its fused body) into fc; its operands become fusion params."""
        def param_for(value: Instruction) -> Instruction:
            for k, o in enumerate(new_operands):
                if o is value:
                    return fc.parameters[k]
            n = len(new_operands)
            p = Instruction("parameter", value.shape, name=f"param_{n}", parameter_number=n)
            fc.add_instruction(p)
            new_operands.append(value)
            return p

        if producer.opcode == "fusion":
            inner = producer.fused_computation
            mapping = {id(p): param_for(producer.operands[p.parameter_number])
                       for p in inner.parameters}
            for old in inner.post_order():
                if old.opcode == "parameter":
                    continue
                new = Instruction(old.opcode, old.shape, [mapping[id(o)] for o in old.operands],
                                  dict(old.attrs), old.name, dict(old.metadata), old.literal)
                fc.add_instruction(new)
                mapping[id(old)] = new
            return mapping[id(inner.root)]
        ops = [param_for(o) for o in producer.operands]
        new = Instruction(producer.opcode, producer.shape, ops, dict(producer.attrs),
                          producer.name, dict(producer.metadata), producer.literal)
        fc.add_instruction(new)
        return new

    @staticmethod
    def _renumber(fc: Computation, fusion: Instruction, operands: list, keep: list,
                  dedupe: bool = True) -> None:
        old_params = list(fc.parameters)
        dead = [p for k, p in enumerate(old_params) if k not in keep]
        for p in dead:
            fc.instructions.remove(p)
            p.parent = None
        fc.parameters = []
        for new_k, old_k in enumerate(keep):
            p = old_params[old_k]
            p.parameter_number = new_k
            p.name = p.name if p.name.startswith("param_") else p.name
            fc.parameters.append(p)
        fusion.replace_operands([operands[k] for k in keep])
        # topological order inside the fused computation, then merge duplicated copies
        if dedupe:
            fc.instructions = fc.post_order()
            _dedupe(fc)

    # ---- multi-output fusion of dependent reductions --------------------------------------------
    def _multi_output(self, comp: Computation) -> bool:
        changed = True
        any_change = False
        while changed:
            changed = False
            for c in reversed(comp.post_order()):
                if c.parent is not comp or not _is_reduction_kernel(c):
                    continue
                for p in _producers_through_gte(c):
                    if p is c or p.parent is not comp or not _is_reduction_kernel(p):
                        continue
                    if _loop_dims(p) != _loop_dims(c):
                        continue
                    if _column_reduction(p) or _column_reduction(c):
                        self._decide(c, p, False, "a column reduction: the consumer needs the "
                                                  "producer's finished sums for every row")
                        continue
                    if any(o is not p and _reaches_any(p, o) for o in _real_operands(c, p)):
                        self._decide(c, p, False, "multi-output fusion would create a cycle")
                        continue
                    self._decide(c, p, True, "multi-output fusion of dependent reductions")
                    self._fuse_multi_output(comp, c, p)
                    changed = any_change = True
                    break
                if changed:
                    break
        return any_change

    def _fuse_multi_output(self, comp: Computation, consumer: Instruction, producer: Instruction):
        """consumer' = fusion with root tuple(producer's roots..., consumer's roots...)."""
        consumer_users = list(consumer.users)  # snapshot before any rewiring
        consumer_was_root = comp.root is consumer
        fc = consumer.fused_computation
        new_operands = list(consumer.operands)
        feeds = {}  # consumer parameter index -> producer element index (None: whole array)
        for k, o in enumerate(new_operands):
            if o is producer:
                feeds[k] = None
            elif o.opcode == "get-tuple-element" and o.operands[0] is producer:
                feeds[k] = o.attrs["index"]
        cloned_root = self._clone_into(fc, producer, consumer, new_operands)
        cloned = _elements(fc, cloned_root)
        for k, idx in feeds.items():
            fc.parameters[k].replace_all_uses_with(cloned[0] if idx is None else cloned[idx])
        keep = [k for k in range(len(new_operands)) if k not in feeds]
        # no dedupe yet: a cloned root identical to one of the consumer's instructions would
        # be merged away before the tuple below refers to it
        self._renumber(fc, consumer, new_operands, keep, dedupe=False)
        old_root = fc.root
        old_elems = _elements(fc, old_root)
        elems = cloned + old_elems
        tup = Instruction("tuple", _tuple_shape([e.shape for e in elems]), elems, name="tuple")
        fc.add_instruction(tup)
        fc.root = tup
        for dead in (cloned_root, old_root):
            if dead.opcode == "tuple" and not dead.users and dead is not tup:
                fc.remove_instruction(dead)
        fc.instructions = fc.post_order()
        _dedupe(fc)
        old_consumer_shape = consumer.shape
        consumer.shape = tup.shape
        producer_users = list(producer.users)
        producer_was_root = comp.root is producer
        self._redirect(comp, producer, consumer, 0, producer.shape, producer_users,
                       producer_was_root)
        self._redirect(comp, consumer, consumer, len(cloned), old_consumer_shape, consumer_users,
                       consumer_was_root)
        if not producer.users and comp.root is not producer:
            comp.remove_instruction(producer)
        comp.instructions = comp.post_order()

    @staticmethod
    def _redirect(comp, old, fused, offset, old_shape, users, was_root):
        """The given users of `old` (shape old_shape) read elements offset.. of `fused`."""
        if old_shape.is_tuple:
            for u in users:
                if u.opcode == "get-tuple-element" and u.operands[0] is old:
                    u.attrs["index"] = u.attrs["index"] + offset
                    if old is not fused:
                        u.replace_operand_with(old, fused)
                    continue
                u.replace_operand_with(old, _regroup(comp, fused, offset, old_shape))
            if was_root:
                comp.root = _regroup(comp, fused, offset, old_shape)
            return
        g = Instruction("get-tuple-element", old_shape, [fused], {"index": offset},
                        "get-tuple-element")
        comp.add_instruction(g)
        for u in users:
            u.replace_operand_with(old, g)
        if was_root:
            comp.root = g


def _elements(fc: Computation, root: Instruction) -> list[Instruction]:
    """The values of a fused root: itself, a tuple's operands, or the get-tuple-elements of
    a variadic reduce (argmax: its elements, not its operands)."""
    if not root.shape.is_tuple:
        return [root]
    if root.opcode == "tuple":
        return list(root.operands)
    return [fc.add_instruction(Instruction("get-tuple-element", s, [root], {"index": k},
                                           "get-tuple-element"))
            for k, s in enumerate(root.shape.tuple_shapes)]


def _is_reduction_kernel(i: Instruction) -> bool:
    """A fusion whose every output is a reduction, possibly followed by an elementwise
    epilogue of the same shape (mean = sum * 1/n)."""
    if i.opcode != "fusion":
        return False
    return all(_reduction_like(e) for e in _root_elements(i))


def _column_reduction(i: Instruction) -> bool:
    """A reduction kernel keeping its input's minor-most dim (batch norm's statistics over
    NHWC): its sums are only complete after the last row, so a dependent reduction fused
    into the same kernel would walk the input column by column, a cache miss per element."""
    for e in i.fused_computation.instructions:
        if e.opcode == "reduce":
            src = e.operands[0].shape
            if src.rank and src.minor_to_major[0] not in e.attrs["dimensions"]:
                return True
    return False


def _reduction_like(e: Instruction, depth: int = 8) -> bool:
    if e.opcode == "reduce":
        return True
    if depth == 0 or e.opcode not in ELEMENTWISE:
        return False
    return any(o.shape.dims == e.shape.dims and _reduction_like(o, depth - 1)
               for o in e.operands)


def _root_elements(i: Instruction) -> list[Instruction]:
    r = _root(i)
    return list(r.operands) if r.opcode == "tuple" else [r]


def _loop_dims(i: Instruction):
    dims = {e.shape.dims if not e.shape.is_tuple else e.shape.tuple_shapes[0].dims
            for e in _root_elements(i)}
    return dims.pop() if len(dims) == 1 else None


def _producers_through_gte(c: Instruction) -> list[Instruction]:
    out = []
    for o in c.operands:
        src = o.operands[0] if o.opcode == "get-tuple-element" else o
        if src not in out:
            out.append(src)
    return out


def _real_operands(c: Instruction, p: Instruction) -> list[Instruction]:
    return [o for o in c.operands
            if not (o is p or (o.opcode == "get-tuple-element" and o.operands[0] is p))]


def _reaches_any(src: Instruction, dst: Instruction) -> bool:
    """Is there any path src -> ... -> dst?"""
    return _reaches(src, dst, None)


def _key(i: Instruction):
    lit = None
    if i.opcode == "constant":
        lit = ((i.literal.tobytes(), str(i.literal.dtype)) if hasattr(i.literal, "tobytes")
               else id(i))
    attrs = tuple((k, id(v) if hasattr(v, "instructions") else
                   tuple(id(x) for x in v) if isinstance(v, list) else v)
                  for k, v in i.attrs.items())
    return (i.opcode, i.shape, tuple(id(o) for o in i.operands), attrs, lit)


def _place_before_users(fc: Computation, added: list, root: Instruction) -> None:
    """Move the instructions just added at the end of fc (`added`: new parameters, then
    `root`, whose operands are parameters) to right before root's first user."""
    users = [u for u in root.users if u.parent is fc]
    if not users:
        return
    del fc.instructions[len(fc.instructions) - len(added):]
    at = min(fc.instructions.index(u) for u in users)   # (identity search at C speed)
    fc.instructions[at:at] = added


def _dedupe_one(fc: Computation, new: Instruction) -> None:
    """Merge `new` into an identical instruction of fc, if there is one (local CSE for one
    instruction: the candidates are the other users of its first operand)."""
    if not new.operands:
        return
    key = _hashable_key(new)
    if key is None:
        return
    for other in new.operands[0].users:
        if other is not new and other.parent is fc and other.opcode == new.opcode \
                and _hashable_key(other) == key:
            new.replace_all_uses_with(other)
            if fc.root is new:
                fc.root = other
            new.drop_operands()
            fc.instructions.remove(new)
            new.parent = None
            return


def _dedupe(fc: Computation) -> None:
    """Local CSE inside a fused computation: identical instructions (same opcode, shape,
    operands, attributes, literal) are merged, so duplicated producers are computed once.
    `fc.instructions` must be in post order (the callers have just sorted it): then merging
    only changes the operands of instructions not visited yet, and the full key of an
    instruction, needed only once a second one has its opcode and operands, is the same
    whenever it is computed."""
    seen: dict = {}
    alone: dict = {}  # (opcode, operand ids) -> its only instruction so far, or None
    for i in list(fc.instructions):
        if i.opcode == "parameter":
            continue
        cheap = (i.opcode, tuple(map(id, i.operands)))
        if cheap not in alone:
            alone[cheap] = i  # equal to no earlier instruction: its key would be new
            continue
        earlier = alone[cheap]
        if earlier is not None:
            alone[cheap] = None
            k = _hashable_key(earlier)
            if k is not None:
                seen[k] = earlier
        k = _hashable_key(i)
        if k is None:
            continue
        first = seen.get(k)
        if first is None:
            seen[k] = i
        elif i is not fc.root:
            i.replace_all_uses_with(first)
            fc.remove_instruction(i)


def _hashable_key(i: Instruction):
    """_key(i), or None when it cannot be hashed (such an instruction is never merged)."""
    try:
        k = _key(i)
        hash(k)
    except TypeError:
        return None
    return k


def _tuple_shape(shapes):
    return Shape.tuple(shapes)


def count_kernels(module: Module) -> int:
    """Kernels the entry computation launches (fusions, reductions, dots, and other
    non-aliasing instructions): what fusion tests pin down."""
    return sum(1 for i in module.entry.instructions if i.opcode not in NO_KERNEL)
