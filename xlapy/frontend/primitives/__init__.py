"""Primitive definitions. Importing this package registers them all."""

from xlapy.frontend.primitives import (basic, bitcast, collectives, control, conv,
                                       dynamic_slice, indexing, misc, shapes, sorting, windowed)
