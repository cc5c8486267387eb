"""xlapy: an XLA-style compiler for linear algebra, written in Python."""

from xlapy.errors import (EvaluationError, InputError, LoweringError, ParseError, ShapeError,
                          VerificationError, XlapyError)

__version__ = "0.1.0"
