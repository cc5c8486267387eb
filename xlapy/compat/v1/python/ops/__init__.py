"""tensorflow.python.ops: the modules TF 1.x code imports from it (python/_shim.py)."""
