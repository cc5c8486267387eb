"""Loop emission helpers: counted loops and loop nests over array shapes.

`for_range(b, start, stop)` is a context manager yielding the induction variable (i64); the
body is emitted inside the `with` block and the builder is left after the loop. Loops are
written in the canonical form LLVM's loop passes and vectorizer expect (preheader, header
with a phi, single latch, exit). Trip counts are i64: index arithmetic is 64-bit.

`index_of(b, shape, linear)` and `linear_of(b, shape, index)` convert between a logical
multi-index and the physical linear offset given the shape's layout.
"""

from __future__ import annotations

import contextlib
import math

from llvmlite import ir

from xlapy.backends.llvm.types import I64
from xlapy.hlo.shapes import Shape


def entry_alloca(b: ir.IRBuilder, ty: ir.Type, count=None, name: str = ""):
    """A stack slot (of `count` elements: an int or an i64 value) in the entry block of the
    builder's function, so mem2reg can promote it and loops never grow the stack."""
    entry = b.function.entry_basic_block
    saved = b.block
    if entry.instructions:
        b.position_before(entry.instructions[0])
    else:
        b.position_at_end(entry)
    size = c64(count) if isinstance(count, int) else count
    slot = b.alloca(ty, size=size, name=name)
    b.position_at_end(saved)
    return slot


def c64(v: int) -> ir.Constant:
    return ir.Constant(I64, v)


def merge_index(rank: int, *parts) -> list:
    """An index of `rank` dims put together from (dims, values) parts: values[k] at dim
    dims[k]."""
    index = [None] * rank
    for dims, values in parts:
        for d, v in zip(dims, values):
            index[d] = v
    return index


def clamp_index(b: ir.IRBuilder, v, t, hi: int):
    """An index `v` of element type `t`, sign- or zero-extended to i64 and clamped to
    [0, hi] (XLA's clamping of dynamic-slice and gather starts)."""
    if t.bits < 64:
        v = b.sext(v, I64) if t.is_signed else b.zext(v, I64)
    if t.is_signed:
        v = b.select(b.icmp_signed("<", v, c64(0)), c64(0), v)
        return b.select(b.icmp_signed(">", v, c64(hi)), c64(hi), v)
    return b.select(b.icmp_unsigned(">", v, c64(hi)), c64(hi), v)


def _enter_loop(b: ir.IRBuilder, name: str, *parts: str) -> list[ir.Block]:
    """New blocks `name.part` of the builder's function; the builder branches to the first
    (the loop header) and is left there."""
    blocks = [b.function.append_basic_block(f"{name}.{part}") for part in parts]
    b.branch(blocks[0])
    b.position_at_end(blocks[0])
    return blocks


@contextlib.contextmanager
def for_range(b: ir.IRBuilder, start, stop, step=1, name: str = "i", hints=None):
    """Emit `for (i = start; i < stop; i += step)`; yields i. `step` (an int or an i64
    value) must be positive. `hints`: LLVM loop metadata for the loop, e.g.
    {"llvm.loop.interleave.count": 1}."""
    if isinstance(start, int):
        start = c64(start)
    if isinstance(stop, int):
        stop = c64(stop)
    pre = b.block
    header, body, exit_ = _enter_loop(b, name, "header", "body", "exit")
    i = b.phi(I64, name=name)
    i.add_incoming(start, pre)
    b.cbranch(b.icmp_signed("<", i, stop), body, exit_)
    b.position_at_end(body)
    yield i
    nxt = b.add(i, c64(step) if isinstance(step, int) else step, name=f"{name}.next",
                flags=["nsw"])
    latch = b.block
    i.add_incoming(nxt, latch)
    br = b.branch(header)
    if hints:
        set_loop_hints(b.module, br, hints)
    b.position_at_end(exit_)


def set_loop_hints(m: ir.Module, back_edge: ir.Instruction, hints: dict) -> None:
    """Attach LLVM loop metadata (e.g. NOT_VECTORIZED) to a loop's back-edge branch."""
    ops = [m.add_metadata([ir.MetaDataString(m, k), ir.Constant(ir.IntType(32), int(v))])
           for k, v in hints.items()]
    loop_id = m.add_metadata(ops)
    loop_id.operands = (loop_id, *ops)   # a loop ID refers to itself (printed distinct)
    back_edge.set_metadata("llvm.loop", loop_id)


NOT_VECTORIZED = {"llvm.loop.vectorize.enable": 0}


@contextlib.contextmanager
def index_nest(b: ir.IRBuilder, dims, name: str = "n", hints: dict | None = None):
    """Loops over every logical index of `dims` in row-major order; yields the index (a list
    of i64 values; dims of size 1 get the constant 0 and no loop). `hints`: loop metadata
    for each loop (set_loop_hints)."""
    index = [c64(0)] * len(dims)
    with contextlib.ExitStack() as stack:
        for d, n in enumerate(dims):
            if n != 1:
                index[d] = stack.enter_context(for_range(b, 0, n, name=f"{name}{d}",
                                                         hints=hints))
        yield index


@contextlib.contextmanager
def while_loop(b: ir.IRBuilder, cond, name: str = "while"):
    """`while (cond()) { body }`: cond() is called with the builder in the loop header and
    returns an i1; the body is emitted inside the `with` block."""
    header, body, exit_ = _enter_loop(b, name, "cond", "body", "exit")
    b.cbranch(cond(), body, exit_)
    b.position_at_end(body)
    yield
    b.branch(header)
    b.position_at_end(exit_)


def step_down_while(b: ir.IRBuilder, start, floor, goes_before, move=None, name: str = "down"):
    """`j = start; while (j > floor && goes_before(j, j - 1)) { move(j, j - 1); j -= 1; }`
    (an insertion sort's inner loop); returns the final j. goes_before returns an i1; move
    (if any) is emitted where it holds."""
    pre = b.block
    head, test, body, done = _enter_loop(b, name, "head", "test", "body", "done")
    j = b.phi(I64, name=f"{name}.j")
    j.add_incoming(start, pre)
    b.cbranch(b.icmp_signed(">", j, floor), test, done)
    b.position_at_end(test)
    jm1 = b.sub(j, c64(1))
    b.cbranch(goes_before(j, jm1), body, done)
    b.position_at_end(body)
    if move is not None:
        move(j, jm1)
    j.add_incoming(jm1, b.block)
    b.branch(head)
    b.position_at_end(done)
    return j


def lanes_then_rest(b: ir.IRBuilder, start, stop, lanes: int, vector_body, scalar_body,
                    name: str) -> None:
    """for i in [start, stop): vector_body(i) for each whole group of `lanes` (i its first
    element), then scalar_body(i) for the remainder, in a loop LLVM is told not to vectorize
    (the vector code is already there). `vector_body` None: the scalar loop alone, left to
    LLVM's vectorizer. start/stop: ints (the split is computed here) or i64 values."""
    if vector_body is None:
        with for_range(b, start, stop, name=name) as i:
            scalar_body(i)
        return
    if isinstance(start, int) and isinstance(stop, int):
        whole = stop - (stop - start) % lanes
    else:
        start, stop = (c64(v) if isinstance(v, int) else v for v in (start, stop))
        whole = b.add(start, b.mul(b.sdiv(b.sub(stop, start), c64(lanes)), c64(lanes)))
    if not isinstance(whole, int) or whole > start:
        with for_range(b, start, whole, step=lanes, name=name + "v") as i:
            vector_body(i)
    if not isinstance(whole, int) or whole < stop:
        with for_range(b, whole, stop, name=name, hints=NOT_VECTORIZED) as i:
            scalar_body(i)


def strides(shape: Shape) -> list[int]:
    """Element strides of each logical dimension under the shape's layout."""
    st = [0] * shape.rank
    acc = 1
    for d in shape.minor_to_major:
        st[d] = acc
        acc *= shape.dims[d]
    return st


def linear_of(b: ir.IRBuilder, shape: Shape, index) -> ir.Value:
    """Physical linear element offset of a logical multi-index (list of i64 values)."""
    return _offset(b, shape.dims, strides(shape), index)


def _offset(b: ir.IRBuilder, dims, st, index) -> ir.Value:
    """sum(index[d] * st[d]) over the dimensions longer than 1."""
    total = None
    for d in range(len(dims)):
        if dims[d] == 1:
            continue
        term = index[d] if st[d] == 1 else b.mul(index[d], c64(st[d]), flags=["nsw", "nuw"])
        total = term if total is None else b.add(total, term, flags=["nsw", "nuw"])
    return c64(0) if total is None else total


def index_of(b: ir.IRBuilder, shape: Shape, linear) -> list:
    """Logical multi-index of a physical linear offset."""
    return _split_linear(b, shape.dims, list(reversed(shape.minor_to_major)), linear)


def _split_linear(b: ir.IRBuilder, dims, major_to_minor: list, linear) -> list:
    """The multi-index over `dims` of a linear offset whose dims run in `major_to_minor`
    order (udiv/urem by each dim's stride; size-1 dims are 0)."""
    index = [None] * len(dims)
    rem = linear
    for k, d in enumerate(major_to_minor):
        stride = math.prod(dims[dd] for dd in major_to_minor[k + 1:])
        if dims[d] == 1:
            index[d] = c64(0)
        elif stride == 1:
            index[d] = rem
        else:
            index[d] = b.udiv(rem, c64(stride))
            rem = b.urem(rem, c64(stride))
    return index


def row_major_linear(b: ir.IRBuilder, dims, index) -> ir.Value:
    """Row-major linear offset over `dims` of a multi-index (inverse of row_major_index_of)."""
    st, acc = [0] * len(dims), 1
    for d in reversed(range(len(dims))):
        st[d], acc = acc, acc * dims[d]
    return _offset(b, dims, st, index)


def row_major_index_of(b: ir.IRBuilder, dims, linear) -> list:
    """Multi-index of a row-major linear offset over `dims`."""
    return _split_linear(b, dims, list(range(len(dims))), linear)


@contextlib.contextmanager
def loop_nest(b: ir.IRBuilder, shape: Shape, outer_start=None, outer_stop=None, name="d",
              hints=None, inner_hints=None):
    """Loops over every element of `shape` in physical order (major outermost). Yields the
    logical multi-index. The outermost loop runs over [outer_start, outer_stop) of the
    most-major dimension when given (for splitting work across threads). `hints`: loop
    metadata (for_range) of every loop of the nest; `inner_hints`: more for the innermost
    loop alone."""
    order = list(reversed(shape.minor_to_major))  # major -> minor
    index = [c64(0)] * shape.rank
    loops = [(k, d) for k, d in enumerate(order)
             if shape.dims[d] != 1 or (k == 0 and outer_start is not None)]
    with contextlib.ExitStack() as stack:
        for n, (k, d) in enumerate(loops):
            lo, hi = 0, shape.dims[d]
            if k == 0 and outer_start is not None:
                lo, hi = outer_start, outer_stop
            h = {**(hints or {}), **inner_hints} if inner_hints and n == len(loops) - 1 \
                else hints
            index[d] = stack.enter_context(for_range(b, lo, hi, name=f"{name}{d}", hints=h))
        yield index
