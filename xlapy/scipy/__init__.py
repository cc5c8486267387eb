"""xlapy.scipy: jax.scipy's modules (fft, integrate, linalg, ndimage, optimize, signal, sparse,
special, stats)."""


def __getattr__(name):
    if name in ("fft", "integrate", "linalg", "ndimage", "optimize", "signal", "sparse",
                "special", "stats"):
        import importlib
        return importlib.import_module(f"xlapy.scipy.{name}")
    raise AttributeError(f"module 'xlapy.scipy' has no attribute '{name}'")
