"""HLO passes: each `run(module) -> changed`; Pipeline and FixedPoint compose them."""

from xlapy.passes.algebraic_simplifier import AlgebraicSimplifier
from xlapy.passes.constant_folding import ConstantFolding
from xlapy.passes.cse import CSE
from xlapy.passes.dce import DCE
from xlapy.passes.fusion import FusionPass
from xlapy.passes.inliner import CallInliner, FusionInliner
from xlapy.passes.pipeline import FixedPoint, Pass, PassError, Pipeline
from xlapy.passes.simplify import simplification_pipeline
from xlapy.passes.tuple_simplifier import TupleSimplifier

__all__ = ["AlgebraicSimplifier", "CSE", "CallInliner", "ConstantFolding", "DCE", "FixedPoint",
           "FusionInliner", "FusionPass", "Pass", "PassError", "Pipeline", "TupleSimplifier",
           "simplification_pipeline"]
