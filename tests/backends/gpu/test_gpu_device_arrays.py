"""Device-resident arrays of the gpu backend, without a GPU: the emulator's context
implements the same memory interface as the CUDA context (a caching allocator, uploads
and downloads of NumPy buffers), so DeviceArray, the executable's input and result
handling and the allocator are tested here; test_gpu_runtime.py runs the GPU's."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy.backends.base import get_platform
from xlapy.backends.gpu.runtime.allocator import CachingAllocator, size_class
from xlapy.backends.gpu.runtime.device_array import DeviceArray
from xlapy.errors import InputError, XlapyError
from xlapy.hlo import parse

EMU = "gpu-emulator"

MATMUL_TUPLE = """HloModule mm
ENTRY e {
  a = f32[8,16]{1,0} parameter(0)
  b = f32[16,4]{1,0} parameter(1)
  d = f32[8,4]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[] constant(2)
  ROOT t = (f32[8,4]{1,0}, f32[8,16]{1,0}, f32[], f32[8,4]{1,0}) tuple(d, a, c, d)
}
"""


@pytest.fixture
def ctx():
    return get_platform(EMU).context


@pytest.fixture
def uploads(ctx, monkeypatch):
    """The number of host -> device copies the context makes."""
    count = [0]
    real = ctx.upload

    def counting(addr, host):
        count[0] += 1
        real(addr, host)
    monkeypatch.setattr(ctx, "upload", counting)
    return count


def _data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_jit_results_stay_on_the_device():
    x, w = _data(6, 40), _data(40, 3, seed=1)

    def f(x, w):
        e = xnp.exp(x - x.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)) @ w
    got = xp.jit(f, backend=EMU)(x, w)
    assert type(got) is DeviceArray and isinstance(got, xp.Array)
    assert (got.shape, got.dtype, got.ndim, got.size) == ((6, 3), np.float32, 2, 18)
    assert got.device == xp.devices(EMU)[0] and got.devices() == {got.device}
    assert got.block_until_ready() is got and xp.block_until_ready([got])[0] is got
    want = xp.jit(f, backend="cpu")(x, w)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
    host = np.asarray(got)
    assert np.asarray(got) is host and not host.flags.writeable   # downloaded once
    np.testing.assert_allclose(got + 1, want + 1, rtol=1e-5)        # NumPy on the host copy
    assert float(got[0, 0]) == pytest.approx(float(want[0, 0]), rel=1e-5)
    assert repr(got).startswith("DeviceArray([[")
    assert type(xp.device_get({"a": got})["a"]) is np.ndarray


def test_device_inputs_are_read_in_place_across_calls(uploads):
    x = _data(5, 7)
    dx = xp.device_put(x, EMU)
    assert type(dx) is DeviceArray and uploads[0] == 1
    assert xp.device_put(dx, xp.devices(EMU)[0]) is dx           # already there
    f = xp.jit(lambda a: a * 2 + 1, backend=EMU)
    before = uploads[0]
    outs = [f(dx) for _ in range(4)]                                # fast path after the first
    chained = f(outs[0])                                            # a result as an input
    assert uploads[0] == before                                     # no host copies at all
    for o in outs:
        np.testing.assert_allclose(np.asarray(o), x * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(chained), (x * 2 + 1) * 2 + 1, rtol=1e-6)
    f(x)                                                            # NumPy in: uploaded
    assert uploads[0] == before + 1
    np.testing.assert_allclose(np.asarray(dx), x)                   # inputs are never written


def test_results_alias_inputs_constants_and_each_other():
    exe = get_platform(EMU).compiler.compile(parse(MATMUL_TUPLE))
    a, b = _data(8, 16), _data(16, 4, seed=1)
    da = exe.device_put(a)
    d, a_out, c, d2 = exe.run_device(da, b)
    assert a_out is da                       # the parameter returned: the same array
    assert d is not d2 and d.unsafe_buffer_pointer() != d2.unsafe_buffer_pointer()
    np.testing.assert_allclose(np.asarray(d), a @ b, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(d2), a @ b, rtol=1e-5)
    assert float(c) == 2.0
    del d, d2, c
    c_again = exe.run_device(da, b)[2]       # the constant's copy: the executable's own
    assert float(c_again) == 2.0             # block was not handed out and freed
    # NumPy out: writable arrays of their own, the input's array untouched
    d, a_out, c, d2 = exe.run(da, b)
    assert type(d) is np.ndarray and d.flags.writeable and a_out.flags.writeable
    a_out[0, 0] = 99.0
    np.testing.assert_allclose(np.asarray(da), a)


def test_numpy_out_frees_every_block(ctx):
    exe = get_platform(EMU).compiler.compile(parse(MATMUL_TUPLE))
    a, b = _data(8, 16), _data(16, 4, seed=1)
    exe.run(a, b)
    live = ctx.allocator.stats()["live_blocks"]
    for _ in range(3):
        exe.run(a, b)
    assert ctx.allocator.stats()["live_blocks"] == live


def test_allocator_reuses_blocks_across_calls(ctx):
    f = xp.jit(lambda x: xnp.exp(x) * 2 + xnp.sin(x), backend=EMU)
    x = xp.device_put(_data(64, 33), EMU)
    r = f(x)
    r = f(x)                                  # warm: as many blocks as the loop holds
    before = ctx.allocator.stats()
    for _ in range(5):
        r = f(x)
    after = ctx.allocator.stats()
    assert after["raw_allocs"] == before["raw_allocs"]    # nothing new from the "driver"
    assert after["reuses"] >= before["reuses"] + 5
    live = after["live_blocks"]
    del r
    assert ctx.allocator.stats()["live_blocks"] == live - 1  # a dropped result is freed


def test_pred_and_column_major_arrays_round_trip():
    text = """HloModule p
ENTRY e {
  x = f32[3,5]{0,1} parameter(0)
  z = f32[] constant(0)
  zb = f32[3,5]{0,1} broadcast(z), dimensions={}
  g = pred[3,5]{0,1} compare(x, zb), direction=GT
  ROOT t = (pred[3,5]{0,1}, f32[3,5]{0,1}) tuple(g, x)
}
"""
    exe = get_platform(EMU).compiler.compile(parse(text))
    x = _data(3, 5)
    g, x_out = exe.run_device(x)
    assert g.dtype == np.bool_ and g.order == (1, 0)
    np.testing.assert_array_equal(np.asarray(g), x > 0)
    np.testing.assert_array_equal(np.asarray(x_out), x)
    g2, x2 = exe.run_device(x_out)           # a column-major DeviceArray, read in place
    assert x2 is x_out
    np.testing.assert_array_equal(np.asarray(g2), x > 0)
    # a row-major DeviceArray into a column-major parameter: through the host
    row = xp.device_put(x, EMU)
    g3, x3 = exe.run_device(row)
    assert x3 is not row
    np.testing.assert_array_equal(np.asarray(x3), x)
    np.testing.assert_array_equal(np.asarray(g3), x > 0)


def test_wrong_device_array_is_refused_clearly():
    exe = get_platform(EMU).compiler.compile(parse(MATMUL_TUPLE))
    wrong = xp.device_put(_data(8, 15), EMU)
    with pytest.raises(InputError, match="expected f32\\[8, 16\\].*DeviceArray of float32"):
        exe.run_device(wrong, _data(16, 4))
    with pytest.raises(InputError, match="takes 2 argument"):
        exe.run_device(wrong)


def test_deleted_array():
    d = xp.device_put(np.arange(4, dtype=np.float32), EMU)
    d.delete()
    assert d.is_deleted() and "deleted" in repr(d)
    with pytest.raises(XlapyError, match="was deleted"):
        np.asarray(d)
    d.delete()                                 # twice: nothing more to free


def test_device_put_names_unknown_devices():
    with pytest.raises(XlapyError, match="unknown device 'tpu'"):
        xp.device_put(np.ones(2, np.float32), "tpu")


# ---- the caching allocator itself ------------------------------------------------------

class _Driver:
    def __init__(self, capacity=None):
        self.live, self.next, self.capacity = {}, 4096, capacity

    def alloc(self, n):
        if self.capacity is not None and sum(self.live.values()) + n > self.capacity:
            raise XlapyError("out of memory")
        a, self.next = self.next, self.next + n
        self.live[a] = n
        return a

    def free(self, a):
        del self.live[a]


def test_size_classes():
    assert [size_class(n) for n in (0, 1, 512, 513, 4000, 1 << 20)] == \
        [512, 512, 512, 1024, 4096, 1 << 20]
    assert size_class((1 << 20) + 1) == 2 << 20 and size_class(5 << 20) == 6 << 20


def test_allocator_buckets_release_and_close():
    drv = _Driver()
    pool = CachingAllocator(drv.alloc, drv.free)
    a = pool.alloc(1000)
    pool.free(a)
    assert pool.alloc(900) == a and pool.reuses == 1          # same class: reused
    b = pool.alloc(3000)                                       # another class: a new block
    assert b != a and pool.raw_allocs == 2
    with pytest.raises(XlapyError, match="freed twice"):
        pool.free(b) or pool.free(b)
    pool.release()
    assert list(drv.live) == [a]                               # cached block given back
    pool.close()
    pool.free(a)
    assert drv.live == {}                                      # after close: straight back
    with pytest.raises(XlapyError, match="closed"):
        pool.alloc(1)


def test_allocator_releases_its_cache_when_the_device_is_full():
    drv = _Driver(capacity=5 << 20)
    pool = CachingAllocator(drv.alloc, drv.free)
    pool.free(pool.alloc(2 << 20))          # cached, still held from the driver
    c = pool.alloc(4 << 20)                 # does not fit beside it: cache released, retried
    assert drv.live == {c: 4 << 20}


def test_device_arrays_into_host_backends_and_numpy():
    """A DeviceArray passed to a cpu (or interpreter) jit is read through the host, on
    the first call and on the fast path after it; NumPy and xlapy.numpy take it too."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    d = xp.device_put(x, EMU)
    for backend in ("cpu", "interpreter"):
        f = xp.jit(lambda a: a * 2, backend=backend)
        for _ in range(3):
            got = f(d)
            assert type(got) is not DeviceArray
            np.testing.assert_array_equal(got, x * 2)
    np.testing.assert_allclose(xnp.exp(d), np.exp(x), rtol=1e-6)
    np.testing.assert_array_equal(np.concatenate([d, d]), np.concatenate([x, x]))
    assert float(xnp.sum(d)) == 15.0
    assert d.sum() == 15.0 and d.T.shape == (3, 2) and d.reshape(6)[5] == 5.0
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = d.nope
