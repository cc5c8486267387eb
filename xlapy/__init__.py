"""xlapy: an XLA-style compiler for linear algebra, written in Python."""

from xlapy.errors import (EvaluationError, InputError, LoweringError, ParseError, ShapeError,
                          VerificationError, XlapyError, XlapyWarning)

__version__ = "0.1.0"


def __getattr__(name):
    # Lazy: `import xlapy` stays cheap; the frontend loads on first use.
    if name in ("jit", "grad", "value_and_grad", "vjp", "clear_caches"):
        import xlapy.numpy  # (installs the array operators on traced values)
        from xlapy.frontend import autodiff, jit as _jit
        return {"jit": _jit.jit, "grad": autodiff.grad, "value_and_grad": autodiff.value_and_grad,
                "vjp": autodiff.vjp, "clear_caches": _jit.clear_caches}[name]
    if name == "vmap":
        from xlapy.frontend.vmap import vmap
        return vmap
    if name in ("numpy", "nn", "lax"):
        import importlib
        return importlib.import_module(f"xlapy.{name}")
    raise AttributeError(f"module 'xlapy' has no attribute '{name}'")
