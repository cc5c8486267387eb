"""The target-independent simplification every backend pipeline starts with."""

from __future__ import annotations

from xlapy.passes.algebraic_simplifier import AlgebraicSimplifier
from xlapy.passes.constant_folding import ConstantFolding
from xlapy.passes.cse import CSE
from xlapy.passes.dce import DCE
from xlapy.passes.pipeline import FixedPoint
from xlapy.passes.tuple_simplifier import TupleSimplifier


def simplification_pipeline(max_iterations: int = 25, flush_denormals: bool = False,
                            **options) -> FixedPoint:
    """FixedPoint(algsimp, constant_folding, cse, dce, tuple-simplifier): the
    target-independent cleanup every backend pipeline starts with. flush_denormals: fold
    constants as code that runs with denormals flushed computes them (ConstantFolding)."""
    return FixedPoint([AlgebraicSimplifier(), ConstantFolding(flush_denormals=flush_denormals),
                       CSE(), DCE(),
                       TupleSimplifier()], max_iterations=max_iterations,
                      name="simplification", **options)
