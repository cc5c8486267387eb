"""The project's own exception types.

Every error a user can cause (bad HLO text, wrong shapes, unsupported ops, wrong inputs)
surfaces as one of these, with a message that names the problem and where it is. Code deep
inside xlapy never lets a raw KeyError/IndexError/AssertionError escape to the user for
bad input: it raises one of these instead.
"""

from __future__ import annotations


class XlapyError(Exception):
    """Base class of every error xlapy raises on purpose."""


class ParseError(XlapyError):
    """HLO text could not be parsed. Carries line:column and the offending line with a caret."""

    def __init__(self, message: str, line: int = 0, column: int = 0, source_line: str = "",
                 filename: str = "<hlo>"):
        self.message = message
        self.line = line
        self.column = column
        self.source_line = source_line
        self.filename = filename
        super().__init__(self._format())

    def _format(self) -> str:
        if not self.line:
            return f"{self.filename}: error: {self.message}"
        text = f"{self.filename}:{self.line}:{self.column}: error: {self.message}"
        if self.source_line:
            caret = " " * max(self.column - 1, 0) + "^"
            text += f"\n{self.source_line}\n{caret}"
        return text


class VerificationError(XlapyError):
    """A module is structurally invalid: wrong shape, operand count, attribute, signature.

    The message quotes the offending instruction (and its computation)."""


class ShapeError(VerificationError):
    """Shape inference failed for an instruction (incompatible operand shapes, bad dims)."""


class EvaluationError(XlapyError):
    """The reference interpreter could not evaluate an instruction (e.g. an unsupported
    custom-call target, an elided constant, a runaway while loop)."""


class LoweringError(XlapyError):
    """A backend could not compile an instruction. Quotes the HLO and says how to dump IR."""


class AotError(XlapyError):
    """Ahead-of-time compilation cannot go on: a wrong target triple, CPU or feature, a
    dynamic shape, a bad tf2xla config, a symbol the object would need at link time."""


class InputError(XlapyError):
    """Arguments given to an executable do not match its parameters (count, shape, dtype)."""


class UnsupportedError(XlapyError, AttributeError):
    """A name NumPy or JAX has that xlapy does not provide (yet). An AttributeError too, so
    hasattr() and feature checks work."""


class XlapyWarning(UserWarning):
    """Something works but not as asked (e.g. a donated buffer that could not be reused)."""


class ResourceExhaustedError(XlapyError):
    """Not enough memory for what a program needs (XLA's RESOURCE_EXHAUSTED): the message
    names the program, the buffer and its size."""
