"""The cpu backend's native fft (emitters/fft.py) against numpy.fft (computed in float64):
all four fft types, many lengths (powers of two through radix-2, the others through
Bluestein), one to three transformed dimensions, batches, both complex types."""

from __future__ import annotations

import numpy as np
import pytest

from xlapy.backends.base import get_platform
from xlapy.hlo import parse

LENGTHS = [1, 2, 3, 5, 7, 8, 12, 97, 128, 1000, 1024, 4096]
_PART = {"c64": "f32", "c128": "f64"}
_DT = {"c64": np.complex64, "c128": np.complex128, "f32": np.float32, "f64": np.float64}


def _run(text, *args):
    return [np.asarray(r) for r in get_platform("cpu").compiler.compile(parse(text)).run(*args)]


def _check(got, want, t, n):
    eps = np.finfo(_DT[_PART[t]]).eps
    err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
    # pocketfft's bound is O(eps log n); allow a small constant over it
    assert err <= 4 * eps * max(np.log2(max(n, 2)), 1), (t, n, err / eps)


@pytest.mark.parametrize("t", ["c64", "c128"])
def test_one_dimension_every_type_many_lengths(t):
    r, rng = _PART[t], np.random.default_rng(0)
    params, body, args, wants, outs = [], [], [], [], []
    for i, n in enumerate(LENGTHS):
        h = n // 2 + 1
        z = (rng.normal(size=(2, n)) + 1j * rng.normal(size=(2, n))).astype(_DT[t])
        x = rng.normal(size=(2, n)).astype(_DT[r])
        hz = (rng.normal(size=(2, h)) + 1j * rng.normal(size=(2, h))).astype(_DT[t])
        params += [f"  z{i} = {t}[2,{n}] parameter({3 * i})",
                   f"  x{i} = {r}[2,{n}] parameter({3 * i + 1})",
                   f"  h{i} = {t}[2,{h}] parameter({3 * i + 2})"]
        args += [z, x, hz]
        for kind, src, shape in (("FFT", f"z{i}", f"{t}[2,{n}]"), ("IFFT", f"z{i}", f"{t}[2,{n}]"),
                                 ("RFFT", f"x{i}", f"{t}[2,{h}]"),
                                 ("IRFFT", f"h{i}", f"{r}[2,{n}]")):
            name = f"{kind.lower()}{i}"
            body.append(f"  {name} = {shape} fft({src}), fft_type={kind}, fft_length={{{n}}}")
            outs.append((name, shape, n))
        wants += [np.fft.fft(z.astype(complex)), np.fft.ifft(z.astype(complex)),
                  np.fft.rfft(x.astype(float)), np.fft.irfft(hz.astype(complex), n)]
    root = (f"  ROOT out = ({', '.join(s for _, s, _ in outs)}) "
            f"tuple({', '.join(nm for nm, _, _ in outs)})")
    text = "HloModule m\nENTRY e {\n" + "\n".join(params + body + [root]) + "\n}\n"
    got = _run(text, *args)
    for g, w, (name, shape, n) in zip(got, wants, outs):
        assert g.dtype == _DT[shape.split("[")[0]], name
        _check(g, w, t, n)


@pytest.mark.parametrize("t", ["c64", "c128"])
def test_two_and_three_dimensions(t):
    r, rng = _PART[t], np.random.default_rng(1)
    z = (rng.normal(size=(2, 3, 5, 8)) + 1j * rng.normal(size=(2, 3, 5, 8))).astype(_DT[t])
    x = rng.normal(size=(3, 6, 7)).astype(_DT[r])
    hz = (rng.normal(size=(2, 4, 6)) + 1j * rng.normal(size=(2, 4, 6))).astype(_DT[t])
    text = f"""HloModule m
ENTRY e {{
  z = {t}[2,3,5,8] parameter(0)
  x = {r}[3,6,7] parameter(1)
  h = {t}[2,4,6] parameter(2)
  a = {t}[2,3,5,8] fft(z), fft_type=FFT, fft_length={{5,8}}
  b = {t}[2,3,5,8] fft(z), fft_type=IFFT, fft_length={{3,5,8}}
  c = {t}[3,6,4] fft(x), fft_type=RFFT, fft_length={{3,6,7}}
  d = {r}[2,4,10] fft(h), fft_type=IRFFT, fft_length={{4,10}}
  ROOT o = ({t}[2,3,5,8], {t}[2,3,5,8], {t}[3,6,4], {r}[2,4,10]) tuple(a, b, c, d)
}}"""
    got = _run(text, z, x, hz)
    c = z.astype(complex)
    wants = [np.fft.fftn(c, axes=(2, 3)), np.fft.ifftn(c, axes=(1, 2, 3)),
             np.fft.rfftn(x.astype(float)), np.fft.irfftn(hz.astype(complex), (4, 10), axes=(1, 2))]
    for g, w in zip(got, wants):
        _check(g, w, t, 40)


def test_fft_of_zero_sized_batches_and_length_one():
    text = """HloModule m
ENTRY e {
  z = c64[0,4] parameter(0)
  w = c64[3,1] parameter(1)
  a = c64[0,4] fft(z), fft_type=FFT, fft_length={4}
  b = c64[3,1] fft(w), fft_type=IFFT, fft_length={1}
  ROOT o = (c64[0,4], c64[3,1]) tuple(a, b)
}"""
    w = np.array([[1 + 2j], [3], [-1j]], np.complex64)
    a, b = _run(text, np.zeros((0, 4), np.complex64), w)
    assert a.shape == (0, 4)
    np.testing.assert_array_equal(b, w)
