"""The tests/hlo corpus on the gpu backend's programs, their kernels run on the host by the
emulator (runtime/emulator.py), matches the interpreter.

This checks the gpu's plan, launch dimensions, the kernels' index arithmetic (one thread
per element from ctaid/ntid/tid), buffers, the thunks' control flow (while, conditional),
and cuBLAS's row-major operand mapping (the emulator's gemm is NumPy's on the same
arguments) without a GPU. Row reductions run in their loop-kernel form here and math is
xlapy's own rather than libdevice's: the warp-shuffle kernels and libdevice are checked by
ptxas (test_gpu_ptxas.py), and numerically only on a GPU (test_gpu_runtime.py).
"""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

from xlapy.backends.base import flatten, get_platform
from xlapy.errors import LoweringError
from xlapy.hlo import parse_file

_spec = importlib.util.spec_from_file_location("gpu_corpus",
                                               pathlib.Path(__file__).with_name("gpu_corpus.py"))
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)


@pytest.mark.parametrize("entry,filename", corpus.CASES, ids=corpus.FILES)
def test_emulated_gpu_matches_interpreter(entry, filename):
    module = parse_file(corpus.CORPUS / filename)
    inputs = corpus.load_inputs(entry)
    emu = get_platform("gpu-emulator")
    refused = corpus.refusal(entry, filename)
    if refused:
        with pytest.raises(LoweringError, match=refused):
            emu.compiler.compile(module)
        return
    got = flatten(emu.compiler.compile(module).run(*inputs))
    corpus.assert_matches_interpreter(module, entry, inputs, got)
