"""xlapy.scipy: jax.scipy's special functions and distributions (special, stats)."""


def __getattr__(name):
    if name in ("special", "stats"):
        import importlib
        return importlib.import_module(f"xlapy.scipy.{name}")
    raise AttributeError(f"module 'xlapy.scipy' has no attribute '{name}'")
