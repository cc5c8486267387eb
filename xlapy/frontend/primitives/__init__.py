"""Primitive definitions. Importing this package registers them all."""

from xlapy.frontend.primitives import (all_to_all, basic, bitcast, collectives, complex,
                                       control, conv, dynamic_slice, fft, indexing, misc,
                                       process_collectives, shapes, sorting, windowed)
