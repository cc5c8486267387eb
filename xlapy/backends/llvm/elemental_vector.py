"""Vector generators: `lanes` consecutive elements along one dimension as one LLVM vector.

A vectorized reduction (elemental_reduce._reduce_vectorized) combines LANES consecutive
input elements per step. Its generic form computes them in a scalar loop of LANES iterations
into a stack array, which LLVM's loop vectorizer turns into vector code; for the operand trees
below, this module emits the vector code directly, so LLVM has no loop to vectorize and no
stack array to promote (about half of a small reduction kernel's optimization time: the
`optimized parts optimized again` figure of benchmarks/compile_breakdown.py).

  vg = vector_gen(em, instr, dim, lanes)    # None: the tree is not supported
  v = vg(index)                             # <lanes x T>: elements index .. index + lanes-1
                                            # along `dim` (index[dim] is the first)
  vg = vector_gen(em, instr, dim, lanes, count)   # only the first `count` lanes are valid
                                            # (a row shorter than a vector): arrays are read
                                            # with masked loads, the other lanes are zero
                                            # there and whatever the operations make of it
Supported trees (f32 and f64 values):
  - parameters bound to arrays in memory (ArrayInput) in which `dim` is the contiguous
    dimension: one vector load;
  - concatenate: a branch per vector picks the operand (along `dim` only when every
    operand's extent is a multiple of `lanes`, so that no vector straddles two operands);
  - dynamic-slice of a parameter array, or keeping all of `dim` (its start there clamps
    to 0): the operand's vector at the clamped starts plus the index;
  - add, subtract, multiply, divide, negate (IEEE, as the scalar rules), maximum and
    minimum (llvm.maximum / llvm.minimum: NaN-propagating, -0 < +0, as the scalar rules);
  - exponential, exponential-minus-one, log, log-plus-one, tanh and logistic: the math
    library's vector forms (math.VECTOR_FUNCTIONS), lane for lane the scalar functions;
  - broadcast: along `dim` the operand's own vector, otherwise its one (scalar) element
    splat across the lanes;
  - scalar constants, splat;
  - reshape, when `dim` is the last dimension and both last dimensions are multiples of
    `lanes` (the caller's lanes start at multiples of `lanes`), so that the lanes stay within
    one row of the operand; or of a parameter array stored row-major, whose lanes are
    consecutive in memory whichever of its rows they span (a long reduction split into rows
    of any length).
With `count` (a row of fewer than `lanes` elements, the row kernels' short rows) parameters
are read with masked loads of their first `count` elements, a value a row kernel keeps in a
row buffer (of the row's length) is written and read back masked too, and reshapes are not
supported.
Everything else returns None and the caller keeps its scalar code. Kernels use the same
generators for their output loops (kernels.vector_outputs): elementwise kernels run as one
flat loop and row kernels' output loops store `lanes` outputs per iteration, with a scalar
loop for the remainder. Values of an
instruction that does not vary along `dim` come from the scalar generators (em.gen_of), so
they share em's cache with the scalar code.
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import ArrayInput
from xlapy.backends.llvm.elemental_data import clamped_starts, piecewise
from xlapy.backends.llvm.elemental_ops import _FLOAT_MATH
from xlapy.backends.llvm.math import VECTOR_FUNCTIONS, math_function
from xlapy.backends.llvm.loops import linear_of, row_major_index_of, row_major_linear

_BINARY = {"add": "fadd", "subtract": "fsub", "multiply": "fmul", "divide": "fdiv"}
_MINMAX = {"maximum": "llvm.maximum", "minimum": "llvm.minimum"}
_MATH = {op: name for op, name in _FLOAT_MATH.items() if name in VECTOR_FUNCTIONS}


def vector_gen(em, instr, dim: int, lanes: int, count: int | None = None):
    """callable(index) -> <lanes x T> for `instr`'s elements along `dim`, or None; with
    `count`, only the first `count` lanes hold elements (see the module's docstring).

    Built once per (generator, dim, lanes) and caching its values per index in em's scopes
    as the scalar generators do: a value used twice (x * tanh(x), x + x) is emitted once, so
    the code of a chain of such values grows linearly, not exponentially."""
    g = em.gen_of.get(id(instr))
    if g is None or (instr.opcode != "parameter" and not g.elemental):
        return None  # a kernel supplies this value some other way (an override)
    if count is not None and count >= lanes:
        count = None
    built = em.vector_gens.get((id(g), dim, lanes, count))
    if built is not None and built[0] is g:  # (holding g keeps its id from being reused)
        return built[1]
    vg = _build(em, instr, g, dim, lanes, count)
    em.vector_gens[(id(g), dim, lanes, count)] = (g, vg)
    return vg


def _build(em, instr, g, dim: int, lanes: int, count: int | None):
    vg = _vector_gen(em, instr, g, dim, lanes, count)
    if vg is not None:
        vg = em.cached(("vector", id(g), dim, lanes, count), vg)
    if vg is None or g.tee is None:
        return vg
    # a row kernel keeps this value in a row buffer (row_kernel._tee): the vector form must
    # fill it as the scalar form does while the row is hoisted, and read it back after
    buf, minor, phase = g.tee
    if minor != dim:
        return None
    t = instr.shape.element_type
    vty = ir.VectorType(T.value_type(t), lanes)
    align = t.bits // 8

    def teed(index):  # (with count: the buffer holds the row's `count` elements, masked)
        b = em.b
        addr = b.bitcast(b.gep(buf, [index[dim]], inbounds=True, source_etype=T.value_type(t)),
                         vty.as_pointer())
        if phase[0] == "hoist":
            v = vg(index)
            if count is None:
                b.store(v, addr, align=align)
            else:
                T.masked_store(b, em.module, v, addr, count, align)
            return v
        if count is None:
            return b.load(addr, typ=vty, align=align)
        return T.masked_load(b, em.module, addr, vty, count, align)
    return teed


def _vector_gen(em, instr, g, dim: int, lanes: int, count: int | None):
    t = instr.shape.element_type
    if t.name not in ("f32", "f64") or instr.shape.is_tuple:
        return None
    op = instr.opcode
    vty = ir.VectorType(T.value_type(t), lanes)
    if op == "parameter":
        if not isinstance(g, ArrayInput):
            return None
        shape = g.shape  # (a flat kernel reads its arrays as one dimension)
        if shape.element_type != t or not shape.rank or shape.minor_to_major[0] != dim:
            return None
        return _loads(em, g.ptr, t, lanes, lambda index: linear_of(em.b, shape, index), count)
    if op == "constant" and instr.shape.rank == 0:
        return lambda index: T.splat(em.b, g([]), lanes)
    if op in _BINARY or op in _MINMAX:
        x, y = (vector_gen(em, o, dim, lanes, count) for o in instr.operands)
        if x is None or y is None:
            return None
        if op == "divide":  # (the divisor flushed first: elemental_ops._arith)
            return lambda index: em.b.fdiv(x(index), T.flush_subnormal(em.b, y(index)))
        if op in _BINARY:
            return lambda index: getattr(em.b, _BINARY[op])(x(index), y(index))
        fn = T.intrinsic(em.module, _MINMAX[op], vty, 2)
        return lambda index: T.flush_subnormal(em.b, em.b.call(fn, [x(index), y(index)]))
    if op in _MATH:
        x = vector_gen(em, instr.operands[0], dim, lanes, count)
        if x is None:
            return None
        fn = math_function(em.module, _MATH[op], vty)
        return lambda index: em.b.call(fn, [x(index)])
    if op == "negate":
        x = vector_gen(em, instr.operands[0], dim, lanes, count)
        return None if x is None else (lambda index: em.b.fneg(x(index)))
    if op == "broadcast":
        dims = list(instr.attrs["dimensions"])
        operand = instr.operands[0]
        if dim in dims:
            x = vector_gen(em, operand, dims.index(dim), lanes, count)
            return None if x is None else (lambda index: x([index[d] for d in dims]))
        scalar = em.gen_of.get(id(operand))
        if scalar is None:
            return None
        return lambda index: T.splat(em.b, scalar([index[d] for d in dims]), lanes)
    if op == "concatenate":
        return _concatenate(em, instr, dim, lanes, count)
    if op == "dynamic-slice":
        operand = instr.operands[0]
        sizes = instr.attrs["dynamic_slice_sizes"]
        if instr.shape.rank == 0 or (operand.opcode != "parameter"
                                     and sizes[dim] != operand.shape.dims[dim]):
            return None  # (a shifted vector could straddle what the operand's form needs)
        x = vector_gen(em, operand, dim, lanes, count)
        if x is None:
            return None
        gens = [em.gen_of.get(id(o)) for o in instr.operands]
        if any(g is None for g in gens):
            return None
        return lambda index: x([em.b.add(s, i) for s, i in zip(
            clamped_starts(em, gens, 1, instr.operands[0].shape, sizes), index)])
    if op == "reshape" and count is None:
        src = instr.operands[0].shape
        out = instr.shape
        if dim != out.rank - 1 or src.rank == 0:
            return None
        if out.dims[-1] % lanes or src.dims[-1] % lanes:
            return _row_major_array(em, instr.operands[0], out, lanes)
        x = vector_gen(em, instr.operands[0], src.rank - 1, lanes)
        if x is None:
            return None
        if src.dims == out.dims:
            return x
        return lambda index: x(row_major_index_of(
            em.b, src.dims, row_major_linear(em.b, out.dims, index)))
    return None


def _concatenate(em, instr, dim: int, lanes: int, count: int | None):
    """One operand's vector per index: along `dim` every operand's extent a multiple of
    `lanes` (the lanes start at multiples of `lanes`, so no vector straddles two operands);
    along another dim the lanes share their coordinate there. A branch per vector picks the
    operand, whose vector is computed in its own block (elemental_data.piecewise)."""
    d = instr.attrs["dimensions"][0]
    sizes = [o.shape.dims[d] for o in instr.operands]
    if d == dim and (count is not None or any(n % lanes for n in sizes)):
        return None
    xs = [vector_gen(em, o, dim, lanes, count) for o in instr.operands]
    if any(x is None for x in xs):
        return None
    return lambda index: piecewise(em, index, d, sizes, xs)


def _row_major_array(em, operand, out, lanes: int):
    """A reshape to `out` of a parameter array stored row-major: lanes consecutive along out's
    last dimension are consecutive in memory, whichever rows of the array they span."""
    g = em.gen_of.get(id(operand))
    if (operand.opcode != "parameter" or not isinstance(g, ArrayInput) or g.tee is not None
            or g.shape.element_type != out.element_type or g.shape.size != out.size
            or not g.shape.has_default_layout):
        return None
    return _loads(em, g.ptr, out.element_type, lanes,
                  lambda index: row_major_linear(em.b, out.dims, index))


def _loads(em, ptr, t, lanes: int, offset, count: int | None = None):
    """index -> one vector load of `lanes` elements of type t at ptr + offset(index) (with
    `count`: a masked load of the first `count`, the other lanes zero)."""
    vty = ir.VectorType(T.value_type(t), lanes)

    def load(index):
        addr = em.b.gep(ptr, [offset(index)], inbounds=True, source_etype=T.value_type(t))
        if count is not None:
            return T.masked_load(em.b, em.module, addr, vty, count, t.bits // 8)
        return em.b.load(addr, typ=vty, align=t.bits // 8)
    return load
