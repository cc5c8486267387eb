"""CpuExecutable.run's native path: an argument is passed straight to the trampoline when
it is a C-contiguous array of the parameter's dtype and shape (exact row-major strides, or
NumPy's flags for the size-1 dimensions whose strides do not matter); every other argument
takes the checked path. A result tuple of arrays comes back as the outputs' tuple."""

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import xlapy as xp
from xlapy.backends.base import get_platform
from xlapy.backends.cpu.runtime import guard_pages
from xlapy.errors import InputError
from xlapy.hlo import parse_module

# (a run with XLAPY_GUARD_PAGES, checking the generated code's accesses, has no native path)
pytestmark = pytest.mark.skipif(guard_pages.enabled(),
                                reason="XLAPY_GUARD_PAGES: every call takes the checked path")


def _exe(fn, *args):
    return get_platform("cpu").compiler.compile(xp.jit(fn).lower(*args).module)


def test_arguments_of_every_layout_give_the_same_results():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    exe = _exe(lambda x, y: (x * 2.0 + y, x - y), a, a)
    assert exe._trampoline is not None
    want = (a * 2 + a, a - a)
    big = np.arange(24, dtype=np.float32).reshape(3, 8)
    row = np.arange(4, dtype=np.float32).reshape(1, 4)
    odd_row = as_strided(row, (1, 4), (1000, 4))  # contiguous: a size-1 dimension's stride
    assert odd_row.flags.c_contiguous and odd_row.strides != row.strides
    cases = [(a, a), (np.asfortranarray(a), a), (big[:, ::2], a), (big[:, :4], a)]
    for x, y in cases:
        got = exe.run(x, y)
        assert type(got) is tuple and len(got) == 2
        np.testing.assert_array_equal(got[0], x * 2.0 + y)
        np.testing.assert_array_equal(got[1], x - y)
    np.testing.assert_array_equal(exe.run(a, a)[0], want[0])
    with pytest.raises(InputError, match="expected dtype f32"):
        exe.run(a.astype(np.float64), a)
    with pytest.raises(InputError, match="shape"):
        exe.run(big, a)
    one = _exe(lambda x: x + 1.0, row)
    np.testing.assert_array_equal(one.run(odd_row), row + 1.0)


def test_nested_result_tuples_keep_their_structure():
    m = parse_module("""HloModule m
ENTRY e {
  p = f32[6] parameter(0)
  one = f32[] constant(1)
  ones = f32[6] broadcast(one), dimensions={}
  a = f32[6] add(p, ones)
  b = f32[6] multiply(p, p)
  inner = (f32[6], f32[6]) tuple(b, a)
  ROOT r = (f32[6], (f32[6], f32[6])) tuple(a, inner)
}
""")
    exe = get_platform("cpu").compiler.compile(m)
    x = np.arange(6, dtype=np.float32)
    got = exe.run(x)
    assert isinstance(got, tuple) and isinstance(got[1], tuple) and len(got[1]) == 2
    np.testing.assert_array_equal(got[0], x + 1)
    np.testing.assert_array_equal(got[1][0], x * x)
    np.testing.assert_array_equal(got[1][1], x + 1)
