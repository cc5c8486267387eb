"""Primitive definitions. Importing this package registers them all."""

from xlapy.frontend.primitives import (basic, control, conv, dynamic_slice, indexing,  # noqa: F401
                                       misc, shapes, sorting, windowed)
