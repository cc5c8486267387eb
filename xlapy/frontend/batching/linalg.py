"""Batching rules of the linear-algebra primitives: their operands take leading batch
dimensions, so the batch axis just moves to the front."""

from xlapy.frontend.batching.trace import leading_batch_rule
from xlapy.frontend.primitives.linalg import cholesky_p

cholesky_p.def_batch(leading_batch_rule(cholesky_p))
