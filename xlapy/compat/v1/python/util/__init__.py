"""tensorflow.python.util: compat."""
