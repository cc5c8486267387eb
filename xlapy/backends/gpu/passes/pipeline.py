"""The gpu backend's HLO pass pipeline (run on a clone of the user's module).

  call-inliner, fusion-inliner, simplify, transpose-folding   as on the cpu
  reduction-splitter   a large reduction to a scalar becomes a row reduction (many blocks)
                       and a small one
  fusion               loop, reduction-input and multi-output fusion: each fusion becomes
                       one kernel (emitters/program.py)
  dce
  boundary-layouts     copies where a called computation's parameter or root is laid out
                       unlike the value passed (a transposed {2,0,1} operand of a
                       conditional whose branch takes {2,1,0}): buffers cross as they are

The cpu's row and column fusions (a row kept in cache, a column kernel) and its gemm
fusions are choices for a CPU's caches and its own gemm; they are not run here.
"""

from __future__ import annotations

from xlapy.hlo.ir import Module
from xlapy.passes import DCE, CallInliner, FusionInliner, FusionPass, Pipeline, \
    simplification_pipeline
from xlapy.passes.boundary_layouts import BoundaryLayouts
from xlapy.passes.reduction_splitter import ReductionSplitter
from xlapy.passes.transpose_folding import TransposeFolding


def gpu_pipeline(observers=(), verify: bool | None = None) -> Pipeline:
    simplify = simplification_pipeline()
    simplify.name = "simplify"
    return Pipeline("gpu", [CallInliner(), FusionInliner(all_fusions=True), simplify,
                            TransposeFolding(), ReductionSplitter(), DCE(), FusionPass(), DCE(),
                            BoundaryLayouts()],
                    verify=verify, observers=list(observers))


def run_gpu_pipeline(module: Module, observers=(), verify: bool | None = None) -> Module:
    gpu_pipeline(observers, verify).run(module)
    return module
