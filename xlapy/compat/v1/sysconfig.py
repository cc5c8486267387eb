"""tf.sysconfig: where this installation is, for build scripts of custom ops.

xlapy cannot load custom C++ ops (tf.load_op_library refuses every library: xlapy runs TF
graphs with its own kernels and has no TensorFlow C++ runtime or headers). These functions
answer with xlapy's package directory, so setup scripts that only query them still run:
get_include() and get_lib() are that directory (it holds no C++ headers and no
libtensorflow_framework), get_compile_flags() is ["-I<dir>", "-D_GLIBCXX_USE_CXX11_ABI=0"]
and get_link_flags() is ["-L<dir>"] (there is no framework library to link).
"""

from __future__ import annotations

import os

import xlapy

__all__ = ["CXX11_ABI_FLAG", "MONOLITHIC_BUILD", "get_compile_flags", "get_include",
           "get_lib", "get_link_flags"]

CXX11_ABI_FLAG = 0     # TF 1.15's pip packages were built with the pre-C++11 ABI
MONOLITHIC_BUILD = 0


def get_include() -> str:
    """The directory of the xlapy package (TF: its C++ headers; xlapy has none)."""
    return os.path.dirname(os.path.abspath(xlapy.__file__))


def get_lib() -> str:
    """The directory of the xlapy package (TF: where libtensorflow_framework is; xlapy
    has no such library)."""
    return os.path.dirname(os.path.abspath(xlapy.__file__))


def get_compile_flags() -> list:
    """TF's compile flags for a custom op, pointing at this installation (custom C++ ops
    cannot be loaded by xlapy, whatever they are built with)."""
    return [f"-I{get_include()}", f"-D_GLIBCXX_USE_CXX11_ABI={CXX11_ABI_FLAG}"]


def get_link_flags() -> list:
    """TF's link flags for a custom op, pointing at this installation (there is no
    framework library to link against)."""
    return [f"-L{get_lib()}"]
