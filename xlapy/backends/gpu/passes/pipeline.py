"""The gpu backend's HLO pass pipeline (run on a clone of the user's module).

  call-inliner, fusion-inliner, simplify, transpose-folding   as on the cpu
  reduction-splitter   a large reduction to a scalar becomes a row reduction (many blocks)
                       and a small one
  fusion               loop, reduction-input and multi-output fusion: each fusion becomes
                       one kernel (emitters/program.py)
  dce

The cpu's row and column fusions (a row kept in cache, a column kernel) and its gemm
fusions are choices for a CPU's caches and its own gemm; they are not run here.
"""

from __future__ import annotations

from xlapy.hlo.ir import Module
from xlapy.passes import DCE, CallInliner, FusionInliner, FusionPass, Pipeline, \
    simplification_pipeline
from xlapy.passes.reduction_splitter import ReductionSplitter
from xlapy.passes.transpose_folding import TransposeFolding


def gpu_pipeline(observers=(), verify: bool | None = None) -> Pipeline:
    simplify = simplification_pipeline()
    simplify.name = "simplify"
    return Pipeline("gpu", [CallInliner(), FusionInliner(all_fusions=True), simplify,
                            TransposeFolding(), ReductionSplitter(), DCE(), FusionPass(), DCE()],
                    verify=verify, observers=list(observers))


def run_gpu_pipeline(module: Module, observers=(), verify: bool | None = None) -> Module:
    gpu_pipeline(observers, verify).run(module)
    return module
