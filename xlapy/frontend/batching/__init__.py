"""Batching (vmap): the BatchTrace and one batching rule per primitive.

Importing this package registers every rule; the rules live in modules that mirror
xlapy/frontend/primitives/*.py by concern. `RULELESS` lists the primitives that need none,
with the reason (tests/frontend/test_vmap_coverage.py checks that every other primitive
has a rule).
"""

from xlapy.frontend.batching.trace import (NOT_MAPPED, BatchFrame, BatchTrace, BatchTracer,
                                           apply_batched, leading_batch_rule, moveaxis)
from xlapy.frontend.batching import (collectives, control, conv, custom, elementwise,
                                     indexing, shapes, sorting, windowed)

RULELESS = {
    "iota": "it has no operands, so it is never applied to a batched value",
}
