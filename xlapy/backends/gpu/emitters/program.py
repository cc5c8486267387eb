"""The gpu program: each kernel-worthy instruction of the optimized module (a fusion, or an
unfused instruction with an elemental rule) becomes one kernel in one LLVM module; control
flow, tuples and aliases become thunks and buffer bookkeeping (runtime/program.py).

  pe = ProgramEmitter(module)
  program = pe.emit()           # Program with .kernels (the plan) and pe.llmod (LLVM IR)

Buffers are trees mirroring shapes: an int (a Buffer's index) for an array, a tuple of
trees for a tuple. get-tuple-element, tuple, bitcast and opt-barrier make no kernels: they
name the buffers of their operands.
"""

from __future__ import annotations

import re

import numpy as np
from llvmlite import ir

from xlapy.backends.gpu.emitters.kernel_abi import GpuKernelTarget
from xlapy.backends.gpu.emitters.launch import loop_launch
from xlapy.backends.gpu.emitters.reduction import emit_row_reduction, row_reduction_plan
from xlapy.backends.gpu.emitters.scatter import SCATTER_LAUNCH, emit_scatter
from xlapy.backends.gpu.emitters.select_and_scatter import emit_select_and_scatter
from xlapy.backends.gpu.emitters.sort import emit_sort, sort_launch
from xlapy.backends.gpu.emitters.topk import emit_topk, topk_launch, topk_supported
from xlapy.backends.gpu.emitters.transpose import emit_transpose, transpose_plan
from xlapy.backends.gpu.runtime.program import (Buffer, Conditional, Copy, Gemm, KernelInfo,
                                                Launch, Program, While)
from xlapy.backends.gpu.target import DATA_LAYOUT, TRIPLE
from xlapy.backends.llvm.elemental import ELEMENTAL_RULES, lowering_error
from xlapy.backends.llvm.loop_kernel import emit_loop_kernel
from xlapy.hlo.ir import ELIDED, Computation, Instruction, Module
from xlapy.hlo.shapes import Shape

_ALIASES = ("bitcast", "opt-barrier")


def _leaves(tree) -> list[int]:
    if isinstance(tree, tuple):
        return [x for t in tree for x in _leaves(t)]
    return [tree]


def _nbytes(shape: Shape) -> int:
    return shape.size * shape.element_type.itemsize


def _constant_bytes(instr: Instruction) -> bytes:
    arr = np.asarray(instr.literal)
    order = list(reversed(instr.shape.minor_to_major))
    phys = np.ascontiguousarray(np.transpose(arr, order) if arr.ndim else arr)
    data = phys.astype(np.uint8) if instr.shape.element_type.is_pred else phys
    return data.tobytes()


class ProgramEmitter:
    def __init__(self, module: Module, row_reductions: bool = True, use_libdevice: bool = True):
        self.hlo = module
        self.row_reductions = row_reductions
        self.use_libdevice = use_libdevice
        self.llmod = ir.Module(name=module.name)
        self.llmod.flush_denormals = False  # IEEE subnormals, as XLA:GPU (no --xla_gpu_ftz)
        self.llmod.triple = TRIPLE
        self.llmod.data_layout = DATA_LAYOUT
        self.program = Program()

    # ---- buffers -------------------------------------------------------------------------
    def _buffer(self, shape: Shape, kind: str = "temp", **kw) -> int:
        idx = len(self.program.buffers)
        self.program.buffers.append(Buffer(idx, _nbytes(shape), kind, **kw))
        return idx

    def _fresh(self, shape: Shape):
        if shape.is_tuple:
            return tuple(self._fresh(s) for s in shape.tuple_shapes)
        return self._buffer(shape)

    # ---- the program ---------------------------------------------------------------------
    def emit(self) -> Program:
        entry = self.hlo.entry
        params = []
        for p in entry.parameters:
            leaves = p.shape.leaves()
            bufs = [self._buffer(s, "param", param=(p.parameter_number, k))
                    for k, s in enumerate(leaves)]
            it = iter(bufs)
            params.append(_rebuild(p.shape, it))
            self.program.params.append(bufs)
        result = self.emit_computation(entry, params, self.program.thunks)
        self.program.outputs = _leaves(result)
        return self.program

    def emit_computation(self, comp: Computation, param_trees: list, thunks: list):
        trees: dict[int, object] = {}
        for instr in comp.post_order():
            trees[id(instr)] = self._instruction(instr, [trees[id(o)] for o in instr.operands],
                                                 param_trees, thunks)
        return trees[id(comp.root)]

    def _instruction(self, instr: Instruction, ops: list, param_trees: list, thunks: list):
        op = instr.opcode
        if op == "parameter":
            return param_trees[instr.parameter_number]
        if op == "constant":
            if instr.shape.is_tuple:
                raise lowering_error(instr, "tuple constants are not supported on the gpu")
            if instr.literal is ELIDED:
                raise lowering_error(instr, "constant was printed as {...}; its value is unknown")
            return self._buffer(instr.shape, "constant", data=_constant_bytes(instr))
        if op == "tuple":
            return tuple(ops)
        if op == "get-tuple-element":
            return ops[0][instr.attrs["index"]]
        if op in _ALIASES and _same_bytes(instr):
            return ops[0]
        if op == "call":
            return self.emit_computation(instr.attrs["to_apply"], ops, thunks)
        if op == "while":
            return self._while(instr, ops[0], thunks)
        if op == "conditional":
            return self._conditional(instr, ops, thunks)
        if op == "dot" and gemm_shape(instr) is not None:
            return self._gemm(instr, ops, thunks)
        if op == "sort" and len(instr.attrs.get("dimensions", ())) == 1:
            return self._sort(instr, ops, thunks)
        if op == "scatter":
            return self._scatter(instr, ops, thunks)
        if op in ("topk", "custom-call") and topk_supported(instr):
            out = self._fresh(instr.shape)
            name = f"k{len(self.program.kernels)}_{re.sub(r'[^A-Za-z0-9_]', '_', instr.name)}"
            emit_topk(self.llmod, instr, name)
            d = topk_launch(instr)
            thunks.append(Launch(name, d.grid, d.block, tuple(_leaves(out) + _leaves(ops[0]))))
            self.program.kernels.append(KernelInfo(name, instr.name, "topk", d.grid, d.block))
            return out
        if op == "select-and-scatter":
            return self._serial(instr, ops, thunks, emit_select_and_scatter)
        if op == "fusion" or op in ELEMENTAL_RULES:
            return self._kernel(instr, ops, thunks)
        if op == "custom-call":
            target = instr.attrs.get("custom_call_target", "")
            raise lowering_error(instr, f"unsupported custom-call target '{target}' (the gpu "
                                 "backend implements no custom calls yet)")
        raise lowering_error(instr, f"the gpu backend has no lowering for {op} yet")

    def _kernel(self, instr: Instruction, ops: list, thunks: list):
        out = self._fresh(instr.shape)
        name = f"k{len(self.program.kernels)}_{re.sub(r'[^A-Za-z0-9_]', '_', instr.name)}"
        plan = row_reduction_plan(instr) if self.row_reductions else None
        tplan = transpose_plan(instr) if plan is None else None
        if plan is not None:
            emit_row_reduction(self.llmod, instr, plan, name, self.use_libdevice)
            dims, kind = plan.launch, "row-reduction"
        elif tplan is not None:
            emit_transpose(self.llmod, instr, tplan, name)
            dims, kind = tplan.launch, "transpose"
        else:
            n = instr.shape.leaves()[0].size
            target = GpuKernelTarget(use_libdevice=self.use_libdevice).for_elements(n)
            emit_loop_kernel(target, self.llmod, instr, name)
            dims, kind = loop_launch(n), "loop"
        args = tuple(_leaves(out) + [x for t in ops for x in _leaves(t)])
        thunks.append(Launch(name, dims.grid, dims.block, args))
        self.program.kernels.append(KernelInfo(name, instr.name, kind, dims.grid, dims.block))
        return out

    def _sort(self, instr: Instruction, ops: list, thunks: list):
        out = self._fresh(instr.shape)
        name = f"k{len(self.program.kernels)}_{re.sub(r'[^A-Za-z0-9_]', '_', instr.name)}"
        emit_sort(self.llmod, instr, name, self.use_libdevice)
        dims = sort_launch(instr)
        thunks.append(Launch(name, dims.grid, dims.block,
                             tuple(_leaves(out) + [x for t in ops for x in _leaves(t)])))
        self.program.kernels.append(KernelInfo(name, instr.name, "sort", dims.grid, dims.block))
        return out

    def _serial(self, instr: Instruction, ops: list, thunks: list, emit):
        """A one-thread kernel (emit(module, instr, name, use_libdevice))."""
        out = self._fresh(instr.shape)
        name = f"k{len(self.program.kernels)}_{re.sub(r'[^A-Za-z0-9_]', '_', instr.name)}"
        emit(self.llmod, instr, name, self.use_libdevice)
        d = SCATTER_LAUNCH
        thunks.append(Launch(name, d.grid, d.block,
                             tuple(_leaves(out) + [x for t in ops for x in _leaves(t)])))
        self.program.kernels.append(KernelInfo(name, instr.name, instr.opcode, d.grid, d.block))
        return out

    def _scatter(self, instr: Instruction, ops: list, thunks: list):
        n = (len(instr.operands) - 1) // 2
        out = self._fresh(instr.shape)
        outs = _leaves(out)
        for dst, src in zip(outs, [x for t in ops[:n] for x in _leaves(t)]):
            thunks.append(Copy(dst, src, self.program.buffers[dst].nbytes))
        name = f"k{len(self.program.kernels)}_{re.sub(r'[^A-Za-z0-9_]', '_', instr.name)}"
        emit_scatter(self.llmod, instr, name, self.use_libdevice)
        d = SCATTER_LAUNCH
        thunks.append(Launch(name, d.grid, d.block,
                             tuple(outs + [x for t in ops[n:] for x in _leaves(t)])))
        self.program.kernels.append(KernelInfo(name, instr.name, "scatter", d.grid, d.block))
        return out

    def _gemm(self, instr: Instruction, ops: list, thunks: list):
        out = self._fresh(instr.shape)
        batch, m, n, k = gemm_shape(instr)
        thunks.append(Gemm(out, ops[0], ops[1], batch, m, n, k,
                           instr.shape.element_type.name))
        self.program.kernels.append(KernelInfo(f"gemm{len(self.program.kernels)}", instr.name,
                                               "gemm", (), ()))
        return out

    def _moves(self, dst_tree, src_tree, shape: Shape) -> list:
        """Copies src -> dst leaf by leaf, through temporaries when a source is also a
        destination elsewhere (a loop body that swaps its state)."""
        dst, src = _leaves(dst_tree), _leaves(src_tree)
        sizes = [self.program.buffers[d].nbytes for d in dst]
        pairs = [(d, s, n) for d, s, n in zip(dst, src, sizes) if d != s]
        if not set(s for _, s, _ in pairs) & set(d for d, _, _ in pairs):
            return [Copy(d, s, n) for d, s, n in pairs]
        tmps = [(self._bytes_buffer(n), d, s, n) for d, s, n in pairs]
        return [Copy(t, s, n) for t, d, s, n in tmps] + [Copy(d, t, n) for t, d, s, n in tmps]

    def _bytes_buffer(self, nbytes: int) -> int:
        idx = len(self.program.buffers)
        self.program.buffers.append(Buffer(idx, nbytes, "temp"))
        return idx

    def _while(self, instr: Instruction, init, thunks: list):
        state = self._fresh(instr.shape)
        thunks.extend(self._moves(state, init, instr.shape))
        cond_thunks, body_thunks = [], []
        pred = self.emit_computation(instr.attrs["condition"], [state], cond_thunks)
        result = self.emit_computation(instr.attrs["body"], [state], body_thunks)
        moves = self._moves(state, result, instr.shape)
        thunks.append(While(cond_thunks, pred, body_thunks, moves))
        return state

    def _conditional(self, instr: Instruction, ops: list, thunks: list):
        out = self._fresh(instr.shape)
        sel = instr.operands[0].shape
        comps = instr.attrs.get("branch_computations") or \
            [instr.attrs["true_computation"], instr.attrs["false_computation"]]
        branches = []
        for k, comp in enumerate(comps):
            br: list = []
            res = self.emit_computation(comp, [ops[k + 1]], br)
            br.extend(self._moves(out, res, instr.shape))
            branches.append(br)
        thunks.append(Conditional(ops[0], sel.element_type.is_pred, branches))
        return out


GEMM_TYPES = ("f32", "f16", "bf16")


def _row_major(shape: Shape) -> bool:
    return tuple(shape.minor_to_major) == tuple(reversed(range(shape.rank)))


def gemm_shape(instr: Instruction) -> tuple | None:
    """(batch, m, n, k) of a dot cuBLAS computes as one strided-batched gemm: row-major
    [b.., m, k] x [b.., k, n] -> [b.., m, n] of f32, f16 or bf16 (matrix-vector and other
    forms stay loop kernels)."""
    lhs, rhs = instr.operands[0].shape, instr.operands[1].shape
    out = instr.shape
    t = out.element_type.name
    if t not in GEMM_TYPES or lhs.element_type.name != t or rhs.element_type.name != t:
        return None
    if lhs.rank != rhs.rank or lhs.rank not in (2, 3) or out.rank != lhs.rank:
        return None
    nb = lhs.rank - 2
    a = instr.attrs
    if tuple(a.get("lhs_batch_dims", ())) != tuple(range(nb)) or \
            tuple(a.get("rhs_batch_dims", ())) != tuple(range(nb)):
        return None
    if tuple(a.get("lhs_contracting_dims", ())) != (nb + 1,) or \
            tuple(a.get("rhs_contracting_dims", ())) != (nb,):
        return None
    if not (_row_major(lhs) and _row_major(rhs) and _row_major(out)):
        return None
    batch = lhs.dims[0] if nb else 1
    m, k = lhs.dims[nb], lhs.dims[nb + 1]
    n = rhs.dims[nb + 1]
    if min(batch, m, n, k) == 0:
        return None
    return batch, m, n, k


def _same_bytes(instr: Instruction) -> bool:
    if instr.opcode == "opt-barrier":
        return True
    a, b = instr.shape, instr.operands[0].shape
    return not a.is_tuple and not b.is_tuple and _nbytes(a) == _nbytes(b)


def _rebuild(shape: Shape, it):
    if shape.is_tuple:
        return tuple(_rebuild(s, it) for s in shape.tuple_shapes)
    return next(it)
