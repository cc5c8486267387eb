"""The target-independent simplification every backend pipeline starts with."""

from __future__ import annotations

from xlapy.passes.algebraic_simplifier import AlgebraicSimplifier
from xlapy.passes.constant_folding import ConstantFolding
from xlapy.passes.cse import CSE
from xlapy.passes.dce import DCE
from xlapy.passes.pipeline import FixedPoint
from xlapy.passes.tuple_simplifier import TupleSimplifier


def simplification_pipeline(max_iterations: int = 25, **options) -> FixedPoint:
    """FixedPoint(algsimp, constant_folding, cse, dce, tuple-simplifier): the
    target-independent cleanup every backend pipeline starts with."""
    return FixedPoint([AlgebraicSimplifier(), ConstantFolding(), CSE(), DCE(),
                       TupleSimplifier()], max_iterations=max_iterations,
                      name="simplification", **options)
