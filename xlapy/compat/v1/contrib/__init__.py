"""tf.contrib: only contrib.compiler.jit (experimental_jit_scope)."""

from xlapy.compat.v1.contrib import compiler
