"""A gemm epilogue fusion (passes/gemm_epilogue.py) as xlapy's own gemm calling the fused
elementwise computation on each finished tile of the result (gemm_kernel.EPILOGUE_TYPE)."""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.cpu.emitters.gemm import emit_gemm, swapped_for
from xlapy.backends.cpu.emitters.gemm_kernel import EPILOGUE_TYPE
from xlapy.backends.cpu.emitters.kernel_abi import set_vector_width
from xlapy.backends.cpu.emitters.registry import custom_emitter
from xlapy.backends.cpu.passes.dot_plan import own_gemm_for, plan_for
from xlapy.backends.cpu.passes.gemm_epilogue import KIND
from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.elemental import ArrayInput, ElementalEmitter, lowering_error
from xlapy.backends.llvm.loops import c64, for_range, linear_of
from xlapy.hlo.ir import Computation, Instruction


def _dot_of(comp: Computation) -> Instruction:
    return next(i for i in comp.instructions if i.opcode in ("dot", "convolution"))


@custom_emitter("fusion")
def emit_gemm_epilogue(pe, instr, dest, operands) -> bool:
    if instr.attrs.get("kind") != KIND:
        return False
    comp = instr.fused_computation
    d = _dot_of(comp)
    if d.opcode == "convolution":
        return _emit_conv_epilogue(pe, instr, d, dest, operands)
    plan = plan_for(d.attrs, d.operands[0].shape, d.operands[1].shape, d.shape)
    if plan is None or not own_gemm_for(plan):
        raise lowering_error(instr, "a gemm epilogue fusion needs xlapy's own gemm for its dot "
                                    "(XLAPY_GEMM changed after the module was optimized?)")
    roots = comp.root_elements()
    raw = next(k for k, r in enumerate(roots)
               if r is d or (r.shape.equal_with_layout(d.shape) and d not in roots))
    leaf = [o[0] if isinstance(o, tuple) else o for o in operands]
    lhs, rhs = (leaf[p.parameter_number] for p in d.operands)
    fn = _epilogue_function(pe.llmod, instr, d, raw, swapped_for(plan),
                            pe.me.unique(f"epi.{instr.name}"))
    ctx = pe.table(list(dest) + leaf)
    emit_gemm(pe, plan, dest[raw], lhs, rhs, epilogue=(fn, ctx))
    return True


def _emit_conv_epilogue(pe, instr, d, dest, operands) -> bool:
    """The same for a convolution computed by one gemm (conv.py, conv_plan.epilogue_ok):
    the tile's row index is the output's collapsed batch and spatial position."""
    # (the convolution emitters and plans are imported with the first convolution: compiling
    # a program without one never loads them)
    from xlapy.backends.cpu.emitters.conv import emit_conv_gemm
    from xlapy.backends.cpu.emitters.conv import swapped_for as conv_swapped_for  # (lazy)
    from xlapy.backends.cpu.emitters.conv_guard import guarded  # (lazy: see above)
    from xlapy.backends.cpu.emitters.conv_winograd import emit_guarded  # (lazy: see above)
    from xlapy.backends.cpu.passes.conv_plan import conv_plan  # (lazy: see above)
    from xlapy.backends.cpu.passes.winograd_plan import winograd_plan  # (lazy: see above)
    plan = conv_plan(d)
    if plan is None or not plan.epilogue_ok:
        raise lowering_error(instr, "a gemm epilogue fusion's convolution is not one gemm")
    comp = instr.fused_computation
    roots = comp.root_elements()
    raw = next(k for k, r in enumerate(roots)
               if r is d or (r.shape.equal_with_layout(d.shape) and d not in roots))
    leaf = [o[0] if isinstance(o, tuple) else o for o in operands]
    lhs, rhs = (leaf[p.parameter_number] for p in d.operands)
    dn = d.attrs["dim_labels"]
    row_dims = [dn.output_batch if kind == "b" else dn.output_spatial[j]
                for kind, j, _ in plan.rows]
    sizes = [size for _, _, size in plan.rows]

    def index_of(b, i):
        """The output index of tile row i, the feature left None."""
        idx = [None] * d.shape.rank
        rem = i
        for dim, size in zip(reversed(row_dims), reversed(sizes)):
            idx[dim] = b.urem(rem, c64(size)) if size != 1 else c64(0)
            rem = b.udiv(rem, c64(size)) if size != 1 else rem
        return idx, dn.output_feature

    fn = _epilogue_function(pe.llmod, instr, d, raw, conv_swapped_for(plan),
                            pe.me.unique(f"epi.{instr.name}"), index_of)
    ctx = pe.table(list(dest) + leaf)
    kernel = d.operands[1]
    kernel = instr.operands[kernel.parameter_number] if kernel.opcode == "parameter" else None

    def gemm_path():
        guarded(pe, d, kernel, rhs,
                lambda: emit_conv_gemm(pe, d, plan, dest[raw], lhs, rhs, epilogue=(fn, ctx)),
                lambda: pe.run_kernel(instr, dest, operands))

    wp = winograd_plan(d)
    if wp is None:
        gemm_path()
        return True
    # Winograd calls the epilogue per output pixel, in the gemm's orientation (not swapped)
    wfn = fn if not conv_swapped_for(plan) else _epilogue_function(
        pe.llmod, instr, d, raw, False, pe.me.unique(f"epi.{instr.name}"), index_of)
    emit_guarded(pe, d, wp, dest[raw], lhs, rhs, gemm_path, epilogue=(wfn, ctx))
    return True


def _epilogue_function(module: ir.Module, instr: Instruction, d: Instruction, raw: int,
                       swap: bool, name: str, index_of=None) -> ir.Function:
    """epi(ctx, row, col, rows, cols): the fused computation's results on one tile of the
    dot's result (kernel coordinates, transposed when the gemm computes C^T), the dot's
    values read from result `raw`'s buffer, where the gemm left them."""
    comp = instr.fused_computation
    roots = comp.root_elements()
    n_ptrs = len(roots) + len(instr.operands)
    # the work is in `body`, whose pointer arguments are noalias (a result's buffer is never
    # an operand's; the raw products are read and written through the same pointer), so LLVM
    # vectorizes its loop without run-time overlap checks; `fn` unpacks the context into it
    body = ir.Function(module, ir.FunctionType(T.VOID, [T.PTR] * n_ptrs + [T.I64] * 4),
                       name + ".body")
    body.linkage = "internal"
    body.attributes.add("nounwind")
    body.attributes.add("alwaysinline")
    set_vector_width(body)
    for a in body.args[:n_ptrs]:
        a.add_attribute("noalias")
    fn = ir.Function(module, EPILOGUE_TYPE, name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    set_vector_width(fn)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ctx = fn.args[0]
    b.call(body, [b.load(b.gep(ctx, [c64(k)], source_etype=T.PTR), typ=T.PTR)
                  for k in range(n_ptrs)] + list(fn.args[1:]))
    b.ret_void()

    b = ir.IRBuilder(body.append_basic_block("entry"))
    em = ElementalEmitter(b, module)
    ptrs, (r0, c0, nr, nc) = body.args[:n_ptrs], body.args[n_ptrs:]
    outs, ins = ptrs[:len(roots)], ptrs[len(roots):]
    gens = em.generators(comp, [ArrayInput(em, p, o.shape) for p, o in zip(ins, instr.operands)],
                         {id(d): ArrayInput(em, outs[raw], d.shape)})
    if swap:
        r0, c0, nr, nc = c0, r0, nc, nr
    with for_range(b, r0, b.add(r0, nr), name="er") as i:
        row_index, col_dim = index_of(b, i) if index_of else ([i, None], 1)
        # a tile row is a few vectors long: no interleaving (it would need 64 columns)
        with for_range(b, c0, b.add(c0, nc), name="ec",
                       hints={"llvm.loop.interleave.count": 1}) as j:
            with em.scope():
                index = list(row_index)
                index[col_dim] = j
                values = [gens[id(r)](index) for r in roots]  # every load before any store
                for p, r, v in zip(outs, roots, values):
                    addr = b.gep(p, [linear_of(b, r.shape, index)], inbounds=True,
                                 source_etype=T.storage_type(r.shape.element_type))
                    T.store(b, v, addr, r.shape.element_type)
    b.ret_void()
    return fn
