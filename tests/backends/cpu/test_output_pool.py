"""output_pool: dropped results are reused as later output buffers, by any executable, and
a buffer anyone still refers to (the array, a view of it, an argument) is never written."""

import numpy as np
import pytest

from xlapy.backends.cpu.runtime import output_pool
from xlapy.backends.cpu.compiler import CpuCompiler
from xlapy.hlo import parse

N = 1 << 16   # f32: 256 KB, above RECYCLE_BYTES


def _program(op: str):
    return CpuCompiler().compile(parse(f"""HloModule m
ENTRY e {{
  x = f32[{N}] parameter(0)
  ROOT y = f32[{N}] {op}(x, x)
}}"""))


@pytest.fixture(autouse=True)
def _empty_pool():
    output_pool.clear()
    yield
    output_pool.clear()


def test_a_dropped_result_is_reused_by_another_program():
    x = np.arange(N, dtype=np.float32)
    add, mul = _program("add"), _program("multiply")
    out = add.run(x)
    addr = out.ctypes.data
    np.testing.assert_array_equal(out, x + x)
    del out
    again = mul.run(x)                     # another executable, same shape and dtype
    assert again.ctypes.data == addr
    np.testing.assert_array_equal(again, x * x)


def test_held_results_views_and_arguments_are_never_written():
    x = np.arange(N, dtype=np.float32)
    add = _program("add")
    held = add.run(x)
    second = add.run(x)
    assert second.ctypes.data != held.ctypes.data
    np.testing.assert_array_equal(held, x + x)
    view = second[1:]
    del second
    third = add.run(x * 3)
    assert not np.may_share_memory(third, view)
    np.testing.assert_array_equal(view, (x + x)[1:])
    fed = add.run(held)                     # a kept buffer passed back in as the argument
    assert not np.may_share_memory(fed, held)
    np.testing.assert_array_equal(fed, 4 * x)


def test_kept_bytes_are_capped(monkeypatch):
    monkeypatch.setattr(output_pool, "CAP_BYTES", 3 * (N + 4) * 4)
    arrays = [np.empty(N + k, np.float32) for k in range(5)]   # five shapes, one each
    for a in arrays:
        output_pool.keep(a)
    assert output_pool.kept_bytes() <= 3 * (N + 4) * 4
    newest = arrays[4].ctypes.data
    del arrays, a
    assert output_pool.take((N + 4,), np.float32).ctypes.data == newest
    # the least recently kept shapes were let go: a new array, the pool holds none of them
    assert not output_pool._pools.get(((N,), np.dtype(np.float32)))


def test_small_outputs_skip_the_pool():
    assert output_pool.recyclable((N,), np.float32)
    assert not output_pool.recyclable((16,), np.float32)
    small = CpuCompiler().compile(parse("""HloModule m
ENTRY e {
  x = f32[16] parameter(0)
  ROOT y = f32[16] add(x, x)
}"""))
    x = np.arange(16, dtype=np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(small.run(x), x + x)
    assert output_pool.kept_bytes() == 0
