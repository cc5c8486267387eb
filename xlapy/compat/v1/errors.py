"""TensorFlow's error classes (tf.errors.*), as xlapy errors.

Every class derives from xlapy.errors.XlapyError (through OpError). Errors that TensorFlow
1.x scripts commonly catch as Python built-ins also derive from those: InvalidArgumentError
is a ValueError (TF raised ValueError for bad feeds and shape mismatches at graph
construction) and NotFoundError is a KeyError (TF raised KeyError for unknown names).
"""

from __future__ import annotations

from xlapy.errors import XlapyError

OK, CANCELLED, UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND = 0, 1, 2, 3, 4, 5
ALREADY_EXISTS, PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION = 6, 7, 8, 9
ABORTED, OUT_OF_RANGE, UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS = 10, 11, 12, 13, 14, 15
UNAUTHENTICATED = 16


class OpError(XlapyError):
    """An error raised while building or running a graph. `op` is the Operation concerned
    (or None), `message` the text without the op prefix."""

    error_code = UNKNOWN

    def __init__(self, message: str, op=None, node_def=None, error_code=None):
        self.message = message
        self.op = op
        self.node_def = node_def
        if error_code is not None:
            self.error_code = error_code
        super().__init__(message)

    def __str__(self):
        return self.message


def _cls(name, code, *bases, doc=""):
    return type(name, (OpError,) + bases, {"error_code": code, "__doc__": doc,
                                           "__module__": __name__})


CancelledError = _cls("CancelledError", CANCELLED)
UnknownError = _cls("UnknownError", UNKNOWN)
InvalidArgumentError = _cls("InvalidArgumentError", INVALID_ARGUMENT, ValueError,
                            doc="A wrong argument: a feed of the wrong shape or dtype, "
                                "incompatible shapes, a missing placeholder feed.")
DeadlineExceededError = _cls("DeadlineExceededError", DEADLINE_EXCEEDED)
NotFoundError = _cls("NotFoundError", NOT_FOUND, KeyError,
                     doc="A name that does not exist in the graph.")
AlreadyExistsError = _cls("AlreadyExistsError", ALREADY_EXISTS)
PermissionDeniedError = _cls("PermissionDeniedError", PERMISSION_DENIED)
ResourceExhaustedError = _cls("ResourceExhaustedError", RESOURCE_EXHAUSTED)
FailedPreconditionError = _cls("FailedPreconditionError", FAILED_PRECONDITION,
                               doc="E.g. reading a variable that was never initialized.")
AbortedError = _cls("AbortedError", ABORTED)
OutOfRangeError = _cls("OutOfRangeError", OUT_OF_RANGE)
UnimplementedError = _cls("UnimplementedError", UNIMPLEMENTED,
                          doc="E.g. an op placed on an XLA device that has no XLA lowering.")
InternalError = _cls("InternalError", INTERNAL)
UnavailableError = _cls("UnavailableError", UNAVAILABLE)
DataLossError = _cls("DataLossError", DATA_LOSS)
UnauthenticatedError = _cls("UnauthenticatedError", UNAUTHENTICATED)
InvalidTypeError = type("InvalidTypeError", (InvalidArgumentError, TypeError), {
    "__doc__": "A value of the wrong type where TensorFlow raised TypeError (fetching or "
               "feeding something that is not a tensor, mixing dtypes in an op).",
    "__module__": __name__})
SessionClosedError = type("SessionClosedError", (CancelledError, RuntimeError), {
    "__doc__": "Session.run on a closed session (TF raised RuntimeError).",
    "__module__": __name__})

_BY_CODE = {c.error_code: c for c in (
    CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError, NotFoundError,
    AlreadyExistsError, PermissionDeniedError, ResourceExhaustedError,
    FailedPreconditionError, AbortedError, OutOfRangeError, UnimplementedError, InternalError,
    UnavailableError, DataLossError, UnauthenticatedError)}


class _Status:
    """What TF's C API functions wrote their outcome to: a code (tf.errors.OK, ...) and a
    message. Code set through `code` (or set(code, message))."""

    def __init__(self):
        self.code = OK
        self.message = ""

    def set(self, code, message=""):
        self.code, self.message = int(code), str(message)


class raise_exception_on_not_ok_status:
    """Context manager of old TF scripts around pywrap calls: yields a status object and,
    on leaving the block, raises the tf.errors class of its code (with its message) when
    the code is not OK.

        with tf.errors.raise_exception_on_not_ok_status() as status:
            some_call(..., status)
    """

    def __enter__(self):
        self.status = _Status()
        return self.status

    def __exit__(self, type_arg, value_arg, traceback_arg):
        try:
            code = self.status.code
            if code != OK:
                cls = _BY_CODE.get(code, UnknownError)
                raise cls(self.status.message, None, None, code if cls is UnknownError
                          else None)
        finally:
            del self.status
        return False
