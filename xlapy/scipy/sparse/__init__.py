"""xlapy.scipy.sparse (jax.scipy.sparse): the iterative solvers of its linalg module."""


def __getattr__(name):
    if name == "linalg":
        import importlib
        return importlib.import_module("xlapy.scipy.sparse.linalg")
    raise AttributeError(f"module 'xlapy.scipy.sparse' has no attribute '{name}'")
