"""Large constants stay out of the object code: external symbols named for their bytes,
pointed at buffers the executable owns (elemental.literal_global, runtime/constants.py),
read by direct kernels and fused ones, shared between executables, kept in the disk cache,
and across the parts of a split module."""

from __future__ import annotations

import gc
import warnings

import ml_dtypes
import numpy as np
import pytest

from xlapy.backends.cpu import split
from xlapy.backends.cpu.compiler import CpuCompiler
from xlapy.backends.cpu.runtime import constants as C
from xlapy.backends.llvm.elemental import EXTERNAL_CONSTANT_PREFIX
from xlapy.errors import XlapyWarning
from xlapy.hlo import parse
from xlapy.hlo.literal import format_literal
from xlapy.hlo.parser import parse_shape

K, N, M = 128, 160, 40_000   # w: f32 80 KB, c: bf16 80 KB, mask: 40 KB (inside the code)
BF16 = ml_dtypes.bfloat16


def _lit(arr, t):
    return format_literal(arr, parse_shape(f"{t}[{','.join(map(str, arr.shape))}]"))


def _module(seed=0, name="big"):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((K, N)).astype(np.float32)
    c = rng.standard_normal(M).astype(BF16)
    mask = rng.random(M) < 0.5
    text = (f"HloModule {name}\n\nENTRY main {{\n"
            f"  x = f32[4,{K}] parameter(0)\n  y = f32[{M}] parameter(1)\n"
            f"  w = f32[{K},{N}] constant({_lit(w, 'f32')})\n"
            f"  c = bf16[{M}] constant({_lit(c, 'bf16')})\n"
            f"  m = pred[{M}] constant({_lit(mask, 'pred')})\n"
            f"  d = f32[4,{N}] dot(x, w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}\n"
            f"  yb = bf16[{M}] convert(y)\n  eb = bf16[{M}] multiply(yb, c)\n"
            f"  e = f32[{M}] convert(eb)\n  s = f32[{M}] select(m, e, y)\n"
            f"  ROOT r = (f32[4,{N}], f32[{M}]) tuple(d, s)\n}}\n")
    return text, w, c, mask


def _check(exe, w, c, mask, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((4, K)).astype(np.float32)
    y = rng.standard_normal(M).astype(np.float32)
    d, s = exe.run(x, y)
    np.testing.assert_allclose(d, x @ w, rtol=1e-4, atol=1e-4)
    e = (y.astype(BF16).astype(np.float32) * c.astype(np.float32)).astype(BF16)
    np.testing.assert_array_equal(s, np.where(mask, e.astype(np.float32), y))


@pytest.fixture
def no_cache(monkeypatch):
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    monkeypatch.delenv("XLAPY_FLAGS", raising=False)


def test_large_constants_are_external_and_correct(no_cache):
    text, w, c, mask = _module()
    exe = CpuCompiler().compile(parse(text))
    _check(exe, w, c, mask)
    consts = exe.spec.constants
    assert sorted(np.asarray(d).nbytes for d in consts.values()) == [M * 2, K * N * 4]
    assert all(n.startswith(EXTERNAL_CONSTANT_PREFIX) for n in consts)
    code = b"".join(exe.spec.objects)
    assert w.tobytes()[:256] not in code and c.tobytes()[:256] not in code
    assert len(code) < K * N * 4   # (the 20 KB mask is inside)


def test_executables_share_and_outlive_each_others_buffers(no_cache):
    text, w, c, mask = _module()
    a = CpuCompiler().compile(parse(text))
    b = CpuCompiler().compile(parse(text.replace("HloModule big", "HloModule big2")))
    assert [id(x) for x in a._constants] == [id(x) for x in b._constants]
    symbols = set(a.spec.constants)
    del a
    gc.collect()
    _check(b, w, c, mask)
    del b
    gc.collect()
    assert not symbols & set(C._live)   # freed with the last executable holding them
    again = CpuCompiler().compile(parse(text))    # registered afresh, at a new buffer
    _check(again, w, c, mask, seed=2)
    with pytest.raises(ValueError):
        again._constants[0][0] = 1   # read-only


def test_disk_cache_keeps_the_constants(tmp_path, monkeypatch):
    monkeypatch.setenv("XLAPY_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("XLAPY_DISABLE_CACHE", raising=False)
    monkeypatch.delenv("XLAPY_FLAGS", raising=False)
    text, w, c, mask = _module(seed=3, name="cached_big")
    first = CpuCompiler()
    _check(first.compile(parse(text)), w, c, mask)
    second = CpuCompiler()
    with warnings.catch_warnings():
        warnings.simplefilter("error", XlapyWarning)
        exe = second.compile(parse(text))
    assert second.stats["disk_hits"] == 1 and second.stats["compiles"] == 0
    assert len(exe.spec.constants) == 2
    _check(exe, w, c, mask)


def test_split_module_parts_share_the_constants(monkeypatch):
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_cpu_parallel_codegen_split_count=4")
    monkeypatch.setattr(split, "MIN_PART_LINES", 5)   # (this module is small)
    text, w, c, mask = _module(seed=4)
    exe = CpuCompiler().compile(parse(text))
    assert len(exe.spec.objects) > 1
    _check(exe, w, c, mask)


@pytest.mark.parametrize("large", [False, True])
def test_dumps_elide_large_constants_unless_asked(tmp_path, monkeypatch, large):
    monkeypatch.setenv("XLAPY_DISABLE_CACHE", "1")
    monkeypatch.setenv("XLAPY_FLAGS", f"--xla_dump_to={tmp_path} --xla_dump_hlo_pass_re=cse"
                       + (" --xla_dump_large_constants" if large else ""))
    c = (np.arange(2000, dtype=np.float32) - 1000) / 8   # over printer.LARGE_CONSTANT
    text = ("HloModule dumped_big\n\nENTRY main {\n  p = f32[2000] parameter(0)\n"
            f"  c = f32[2000] constant({_lit(c, 'f32')})\n  ROOT r = f32[2000] add(p, c)\n}}\n")
    np.testing.assert_array_equal(CpuCompiler().compile(parse(text)).run(c), 2 * c)
    dumps = [p for p in tmp_path.glob("*dumped_big*.txt")]
    assert any("after_" in p.name for p in dumps) and any("before_opt" in p.name for p in dumps)
    for p in dumps:
        body = p.read_text()
        assert ("{...}" in body) != large and ("{-125, -124.875," in body) == large, p.name
