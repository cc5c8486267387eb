"""xlapy: an XLA-style compiler for linear algebra, written in Python."""

from xlapy.errors import (EvaluationError, InputError, LoweringError, ParseError, ShapeError,
                          UnsupportedError, VerificationError, XlapyError, XlapyWarning)
from xlapy.gc_control import register_exit_freeze as _register_exit_freeze

__version__ = "0.1.0"

# the interpreter's shutdown skips walking every live object (gc_control.freeze_at_exit)
_register_exit_freeze()

# Lazy: `import xlapy` stays cheap; the frontend loads on first use. name -> (module, attr)
_LAZY = {
    "jit": ("xlapy.frontend.jit", "jit"),
    "clear_caches": ("xlapy.frontend.jit", "clear_caches"),
    "grad": ("xlapy.frontend.autodiff", "grad"),
    "value_and_grad": ("xlapy.frontend.autodiff", "value_and_grad"),
    "vjp": ("xlapy.frontend.autodiff", "vjp"),
    "vmap": ("xlapy.frontend.vmap", "vmap"),
    "pmap": ("xlapy.frontend.pmap", "pmap"),
    "enable_x64": ("xlapy.config", "enable_x64"),
    "jvp": ("xlapy.frontend.forward", "jvp"),
    "linearize": ("xlapy.frontend.forward", "linearize"),
    "jacfwd": ("xlapy.frontend.forward", "jacfwd"),
    "jacrev": ("xlapy.frontend.forward", "jacrev"),
    "jacobian": ("xlapy.frontend.forward", "jacrev"),
    "hessian": ("xlapy.frontend.forward", "hessian"),
    "custom_jvp": ("xlapy.frontend.custom_derivatives", "custom_jvp"),
    "custom_vjp": ("xlapy.frontend.custom_derivatives", "custom_vjp"),
    "checkpoint": ("xlapy.frontend.checkpoint", "checkpoint"),
    "remat": ("xlapy.frontend.checkpoint", "checkpoint"),
    "checkpoint_policies": ("xlapy.frontend.checkpoint", "checkpoint_policies"),
    "make_jaxpr": ("xlapy.frontend.jaxpr", "make_jaxpr"),
    "eval_shape": ("xlapy.frontend.jaxpr", "eval_shape"),
    "ShapeDtypeStruct": ("xlapy.frontend.jaxpr", "ShapeDtypeStruct"),
    "pure_callback": ("xlapy.frontend.callbacks", "pure_callback"),
    "disable_jit": ("xlapy.config", "disable_jit"),
    "debug_nans": ("xlapy.config", "debug_nans"),
    "debug_infs": ("xlapy.config", "debug_infs"),
    **{name: ("xlapy.frontend.api_more", name) for name in (
        "custom_gradient", "linear_transpose", "typeof", "float0", "default_matmul_precision")},
    "closure_convert": ("xlapy.frontend.closure", "closure_convert"),
    **{name: ("xlapy.frontend.scopes", name) for name in (
        "named_scope", "named_call", "ensure_compile_time_eval", "default_device")},
    "device_get": ("xlapy.frontend.devices", "device_get"),
    "print_environment_info": ("xlapy.frontend.devices", "print_environment_info"),
    **{name: ("xlapy.frontend.devices", name) for name in (
        "Array", "device_put", "block_until_ready", "devices", "local_devices", "device_count",
        "local_device_count", "default_backend", "process_index", "process_count")},
}
# subpackages reachable as attributes after `import xlapy`, as jax.random etc. after `import jax`
_MODULES = ("numpy", "nn", "lax", "tree_util", "tree", "config", "dtypes", "distributed",
            "random", "scipy", "example_libraries", "aot", "image", "debug", "flatten_util",
            "experimental")


def __getattr__(name):
    import importlib
    if name in _LAZY:
        module, attr = _LAZY[name]
        if module.startswith("xlapy.frontend"):
            import xlapy.numpy  # (installs the array operators on traced values)
        return getattr(importlib.import_module(module), attr)
    if name in _MODULES:
        return importlib.import_module(f"xlapy.{name}")
    raise AttributeError(f"module 'xlapy' has no attribute '{name}'")
