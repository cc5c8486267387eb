"""Primitive definitions. Importing this package registers them all."""

from xlapy.frontend.primitives import basic, shapes  # noqa: F401
