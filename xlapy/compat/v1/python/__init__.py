"""Mirror of tensorflow.python: the import paths TF 1.x scripts and tests use
(framework, ops, platform, training, summary, util, client), each module delegating to the
xlapy.compat.v1 module that implements it (python/_shim.py)."""
