"""JVP rules (forward mode), one module per module of xlapy/frontend/primitives/.

A rule is `rule(primals, tangents, **params) -> (out, tangent_out)` registered with
`prim.def_jvp(rule)`; tangents hold None for a symbolic zero (the rule may return None for
a zero output tangent, or a list with None entries for a multi-result primitive). Rules
compute with xlapy operations (bind), so their results are traced by an enclosing jit or
taped by an enclosing grad, and can be differentiated again. Most rules come from three
helpers in rules.py: `linear` (the primitive is linear in some operands: apply it to the
tangents), `bilinear` (mul, dot_general, conv) and `derivatives` (one partial derivative
per operand, contributions summed). Importing this package registers every rule.
"""

from xlapy.frontend.jvp import (basic, collectives, control, conv, custom, dynamic_slice,
                               indexing, misc, shapes, sorting, windowed)
