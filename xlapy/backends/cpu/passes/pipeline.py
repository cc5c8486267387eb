"""The cpu backend's HLO pass pipeline (run on a clone of the user's module).

  call-inliner      nested computations called with `call` become part of their caller
  fusion-inliner    fusions already in the module (XLA-optimized input) are undone, so the
                    module goes through xlapy's own fusion decisions like any other
  simplify          fixed point of algsimp, constant_folding, cse, dce, tuple-simplifier
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

Passes named in --xla_disable_hlo_passes (XLAPY_FLAGS) are skipped; observers receive the
module before and after each pass (the --xla_dump_hlo_pass_re dumps).
"""

from __future__ import annotations

from xlapy.backends.cpu.passes.column_plan import column_plan
from xlapy.backends.cpu.passes.gemm_epilogue import GemmEpilogueFusion
from xlapy.backends.cpu.passes.gemm_update import GemmUpdateFusion
from xlapy.hlo.ir import Module
from xlapy.passes import (DCE, CallInliner, FusionInliner, FusionPass, Pipeline,
                          simplification_pipeline)
from xlapy.passes.boundary_layouts import BoundaryLayouts
from xlapy.passes.column_fusion import ColumnFusion
from xlapy.passes.reduction_splitter import ReductionSplitter
from xlapy.passes.row_fusion import RowFusion
from xlapy.passes.transpose_folding import TransposeFolding


def cpu_pipeline(observers=(), verify: bool | None = None) -> Pipeline:
    simplify = simplification_pipeline()
    simplify.name = "simplify"
    return Pipeline("cpu", [CallInliner(), FusionInliner(all_fusions=True), simplify,
                            TransposeFolding(), ReductionSplitter(), GemmUpdateFusion(), DCE(),
                            GemmEpilogueFusion(),
                            FusionPass(), RowFusion(),
                            ColumnFusion(column_kernel=column_plan), DCE(),
                            BoundaryLayouts()],
                    verify=verify, observers=list(observers))


def run_cpu_pipeline(module: Module, observers=(), verify: bool | None = None) -> Module:
    cpu_pipeline(observers, verify).run(module)
    return module
