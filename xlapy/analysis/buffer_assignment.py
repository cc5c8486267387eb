"""Buffer assignment: where every intermediate array lives in one preallocated arena.

Input: a computation, its schedule (a list of its instructions, operands first), and a
backend's answer to two questions: which instructions define new buffers (`defines`), and
how many bytes each needs (`size_of`). Instructions that only alias their operands (tuple,
get-tuple-element, bitcast, opt-barrier, parameter, constant) define none.

Algorithm: liveness over the schedule. A buffer is live from the position of its defining
instruction to the last position at which it, or any alias of it, is used; buffers that
reach the computation's root stay live to the end. A linear scan assigns arena offsets
first-fit from a free list; a buffer's slice is released right after its last use, so a
later buffer can reuse it. Each slice is 64-byte aligned.

In-place outputs: a backend may also say, per instruction, which operands its code can
overwrite with the result (`may_share`, e.g. an elementwise kernel reads x[i] before it
writes out[i]). If such an operand's buffer has its last use at this very instruction and
the same size, the instruction takes over that slice instead of a new one
(`BufferAssignment.shared` records which operand).

Invariant (checked in tests): two buffers whose live ranges overlap never overlap in the
arena, except an in-place result and the operand whose slice it took over, whose ranges
meet only at the instruction itself. The arena size is the high-water mark.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from xlapy.hlo.ir import Computation, Instruction
from xlapy.hlo.opcodes import ALIASING

ALIGN = 64
ALIASING_OPCODES = ALIASING  # the opcode table's aliases_operand column


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


@dataclass(eq=False)
class Allocation:
    instr: Instruction
    offset: int
    size: int
    start: int  # schedule position of the definition
    end: int    # last schedule position where it is used (inclusive)


@dataclass
class BufferAssignment:
    allocations: dict[int, Allocation] = field(default_factory=dict)  # id(instr) -> slice
    size: int = 0
    shared: dict[int, int] = field(default_factory=dict)  # id(instr) -> operand index it overwrote

    def offset(self, instr: Instruction) -> int:
        return self.allocations[id(instr)].offset

    def has(self, instr: Instruction) -> bool:
        return id(instr) in self.allocations


def live_ranges(comp: Computation, schedule: list[Instruction],
                defines: Callable[[Instruction], bool]) -> dict[int, tuple[int, int]]:
    """(start, end) schedule positions for each buffer-defining instruction."""
    pos = {id(i): k for k, i in enumerate(schedule)}
    end_of_program = len(schedule)

    def last_use(instr: Instruction, seen: set) -> int:
        if id(instr) in seen:
            return -1
        seen.add(id(instr))
        end = pos[id(instr)]
        if instr is comp.root:
            end = end_of_program
        for user in instr.users:
            if id(user) not in pos:
                continue
            end = max(end, pos[id(user)])
            if user.opcode in ALIASING_OPCODES:
                end = max(end, last_use(user, seen))
        return end

    return {id(i): (pos[id(i)], last_use(i, set())) for i in schedule if defines(i)}


def assign_buffers(comp: Computation, schedule: list[Instruction],
                   defines: Callable[[Instruction], bool],
                   size_of: Callable[[Instruction], int], base: int = 0,
                   may_share: Callable[[Instruction], list[int]] | None = None
                   ) -> BufferAssignment:
    ranges = live_ranges(comp, schedule, defines)
    result = BufferAssignment()
    free: list[tuple[int, int]] = []  # (offset, size), sorted by offset
    high = base
    by_start = sorted(ranges.items(), key=lambda kv: kv[1][0])
    by_id = {id(i): i for i in schedule}
    active: list[Allocation] = []
    for key, (start, end) in by_start:
        # release buffers whose last use is before this definition
        still = []
        for a in active:
            if a.end < start:
                free.append((a.offset, a.size))
            else:
                still.append(a)
        active = still
        free = _coalesce(free)
        instr = by_id[key]
        size = _align(max(size_of(instr), 1))
        taken = _take_dying_operand(instr, start, size, active, result, may_share)
        if taken is not None:
            active.remove(taken)
            alloc = Allocation(instr, taken.offset, size, start, end)
            result.allocations[key] = alloc
            active.append(alloc)
            continue
        offset = None
        for k, (off, sz) in enumerate(free):
            if sz >= size:
                offset = off
                free[k] = (off + size, sz - size)
                if free[k][1] == 0:
                    free.pop(k)
                break
        if offset is None:
            offset = high
            high += size
        alloc = Allocation(instr, offset, size, start, end)
        result.allocations[key] = alloc
        active.append(alloc)
    result.size = high - base
    return result


def _take_dying_operand(instr, start, size, active, result, may_share):
    """The allocation of an operand instr may overwrite that dies here, if any."""
    if may_share is None:
        return None
    for k in may_share(instr):
        a = result.allocations.get(id(instr.operands[k]))
        if a is not None and a.end == start and a.size == size and a in active:
            result.shared[id(instr)] = k
            return a
    return None


def _coalesce(free: list[tuple[int, int]]) -> list[tuple[int, int]]:
    free = sorted(free)
    out: list[tuple[int, int]] = []
    for off, sz in free:
        if out and out[-1][0] + out[-1][1] == off:
            out[-1] = (out[-1][0], out[-1][1] + sz)
        else:
            out.append((off, sz))
    return out
