"""The cpu backend's HLO pass pipeline (run on a clone of the user's module).

  call-inliner      nested computations called with `call` become part of their caller
  fusion-inliner    fusions already in the module (XLA-optimized input) are undone, so the
                    module goes through xlapy's own fusion decisions like any other
  fusion-legalizer  (required: runs even when disabled) with fusion-inliner disabled, the
                    imported fusions the cpu cannot emit as one loop kernel (XLA fuses
                    scatter, sort, ...) are still undone, so a valid module always compiles
  simplify          fixed point of algsimp, constant_folding, cse, dce, tuple-simplifier
  conv-phases       an lhs-dilated convolution becomes one convolution per output phase
                    (no products with the dilation's holes: conv_phases.py)
  transpose-folding transposes feeding dots become gemm transpose flags
  reduction-splitter large reductions to a scalar become a parallel row reduction + a
                    small one
  gemm-update-fusion W - c*(A.B) becomes one gemm with alpha/beta (training updates)
  gemm-epilogue-fusion the elementwise computation on a dot's result (bias, activation,
                    mask) runs inside xlapy's own gemm, tile by tile (gemm_epilogue.py)
  fusion            loop, reduction-input and multi-output fusion (passes/fusion.py)
  row-fusion        a row reduction merges into its elementwise consumer: one kernel that
                    works row by row with the row in cache (softmax, layernorm)
  column-fusion     an elementwise kernel and a column reduction over the same data become
                    one multi-output kernel (a layer's gradient and its bias gradient)
  dce               whatever fusion left unused
  dot-output-layout a dot whose one user transposes it writes its result in that order,
                    the transpose becoming a bitcast (dot_layout.py)
  attention-fusion  a row kernel between two batched dots (softmax in attention) runs per
                    batch element between the two gemms, its block in cache
                    (attention_fusion.py)
  reshape-to-bitcast a reshape between row-major shapes becomes a bitcast (no copy)

Passes named in --xla_disable_hlo_passes (XLAPY_FLAGS) are skipped, but for required ones;
observers receive the module before and after each pass (the --xla_dump_hlo_pass_re dumps).
"""

from __future__ import annotations

from xlapy.backends.cpu.passes.column_plan import column_plan
from xlapy.backends.cpu.passes.attention_fusion import AttentionFusion
from xlapy.backends.cpu.passes.conv_phases import ConvPhases
from xlapy.backends.cpu.passes.dot_layout import DotOutputLayout
from xlapy.backends.cpu.passes.gemm_epilogue import GemmEpilogueFusion
from xlapy.backends.cpu.passes.gemm_update import GemmUpdateFusion
from xlapy.backends.cpu.passes.reshape_bitcast import ReshapeToBitcast
# (the modules registering the elemental rules: _loop_emittable reads them, and the emitters
# that import them are loaded only when a program is compiled: compiler._code_generator)
from xlapy.backends.llvm import elemental_complex, elemental_data  # noqa: F401
from xlapy.backends.llvm import elemental_ops, elemental_reduce  # noqa: F401
from xlapy.backends.llvm.elemental import ELEMENTAL_RULES
from xlapy.flags import flags
from xlapy.hlo.ir import Instruction, Module
from xlapy.passes import (DCE, CallInliner, FusionInliner, FusionPass, Pipeline,
                          simplification_pipeline)
from xlapy.passes.boundary_layouts import BoundaryLayouts
from xlapy.passes.column_fusion import ColumnFusion
from xlapy.passes.reduction_splitter import ReductionSplitter
from xlapy.passes.row_fusion import RowFusion
from xlapy.passes.transpose_folding import TransposeFolding


def _loop_emittable(i: Instruction) -> bool:
    return i.opcode in ELEMENTAL_RULES or i.opcode in ("parameter", "tuple")


class FusionLegalizer(FusionInliner):
    """Required pass: inline the fusions whose body has an instruction without an elemental
    rule (they cannot become one loop kernel); a no-op after fusion-inliner."""

    name = "fusion-legalizer"
    required = True

    def __init__(self):
        super().__init__(keep_fused=_loop_emittable)


def cpu_pipeline(observers=(), verify: bool | None = None) -> Pipeline:
    # constants fold as the compiled code computes (denormals flushed unless --xla_cpu_ftz
    # is false), so that folding a value never changes it
    simplify = simplification_pipeline(flush_denormals=flags().xla_cpu_ftz)
    simplify.name = "simplify"
    return Pipeline("cpu", [CallInliner(), FusionInliner(all_fusions=True),
                            FusionLegalizer(), simplify, ConvPhases(),
                            TransposeFolding(), ReductionSplitter(), GemmUpdateFusion(), DCE(),
                            GemmEpilogueFusion(),
                            FusionPass(), RowFusion(),
                            ColumnFusion(column_kernel=column_plan), DCE(),
                            DotOutputLayout(), AttentionFusion(), DCE(),
                            BoundaryLayouts(), ReshapeToBitcast()],
                    verify=verify, observers=list(observers))


def run_cpu_pipeline(module: Module, observers=(), verify: bool | None = None) -> Module:
    cpu_pipeline(observers, verify).run(module)
    return module
