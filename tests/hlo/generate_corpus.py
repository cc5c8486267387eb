"""Generate the HLO reference corpus in tests/hlo/ from JAX/XLA (CPU).

Run:  .venv/bin/python tests/hlo/generate_corpus.py [NAME ...]
(with no NAME everything is regenerated; with NAMEs only those programs are
regenerated and their MANIFEST.json entries updated.  Files of programs that
were removed from the table are deleted; files the manifest does not list are
never touched).  Deterministic: two runs give byte-identical files.

Every program in PROGRAMS yields these files (all in tests/hlo/):

  <name>.hlo      Pre-optimization HLO text.  For JAX programs this is exactly
                  ``jax.jit(f).lower(*inputs).as_text(dialect="hlo")`` (XLA's
                  "short parsable" printer: no '%' sigils, layouts on every
                  shape, no metadata, large constants printed in full).  For
                  hand-written programs (source "hlo-text") it is the text in
                  this file, verified to be accepted by XLA's own parser.
  <name>.opt.hlo  The module after XLA's CPU optimization pipeline: the text
                  of ``jax.jit(f).lower(*inputs).compile().as_text()``, i.e.
                  XLA's default printer (with '%' sigils, metadata, the
                  FileNames/FunctionNames/FileLocations/StackFrames header
                  blocks, fusion computations, ``is_scheduled=true``), except
                  that large constants are printed in full instead of
                  ``{...}`` (HloPrintOptions.print_large_constants = True).
                  Absolute paths of this checkout inside metadata are made
                  repository-relative so the files do not depend on where the
                  repository lives.
  <name>.mlir     The same program in StableHLO (MLIR text): for JAX programs
                  exactly ``jax.jit(f).lower(*inputs).as_text()`` (JAX's default
                  dialect, no locations); for hand-written programs the module
                  XLA's HLO -> StableHLO translation gives (with its locations,
                  ``#loc`` aliases defined at the end of the file).  Checked by
                  compiling it with XLA and reproducing the outputs.
  <name>.npz      The inputs, written like ``np.savez(path, *inputs)``:
                  members arr_0.npy, arr_1.npy, ... in parameter order.
  <name>.out.npz  XLA's result: the flattened leaves (jax.tree_util order,
                  which is the order of the entry computation's result tuple)
                  as arr_0.npy, arr_1.npy, ...  A non-tuple result is arr_0.

  bfloat16 arrays do not round-trip through np.savez (they come back as void
  '|V2'), so they are stored as their raw uint16 bit patterns and the
  manifest says ``"dtype": "bfloat16", "stored_as": "uint16"``.  float16
  round-trips and is stored natively.  bool (HLO pred) is stored as numpy bool.
  The .npz zip members carry a fixed timestamp so regeneration is
  byte-for-byte reproducible; np.load reads them as usual.

  MANIFEST.json   A JSON list with one entry per program:
     name, source ("jax" | "hlo-text"), x64 (jax_enable_x64 was on),
     files {hlo, opt_hlo, mlir, inputs, outputs},
     inputs / outputs: [{dtype, shape[, stored_as]}],
     opcodes {hlo: [...], opt_hlo: [...]} (sorted, from `= <shape> <opcode>(`),
     custom_call_targets {hlo: [...], opt_hlo: [...], mlir: [...]},
     expect: null, or "unsupported-custom-call" when a file contains a
             custom-call other than JAX's LAPACK ones (lapack_?<routine>_ffi,
             which xlapy runs); expect_files then says which file(s) ("hlo",
             "opt_hlo", "mlir") are affected (e.g. lax.top_k is the HLO `topk` op
             before optimization, but a custom-call "TopK" after it),
     notes, versions.

Running an HLO text with XLA (``run_hlo_text_with_xla``)
--------------------------------------------------------
jaxlib 0.10.2 has no direct "compile HLO text" entry point, but this chain
works (all in-process, CPU):

  text --jaxlib._hlo.hlo_module_from_text--> HloModule     (XLA's HLO parser)
       --.as_serialized_hlo_module_proto()--> HloModuleProto bytes
       --jaxlib._hlo.XlaComputation(bytes)--> XlaComputation
       --xla_client._xla.mlir.xla_computation_to_mlir_module--> StableHLO text
       --backend.compile_and_load(text, DeviceList, CompileOptions())-->
         LoadedExecutable; .execute_sharded(device arrays) and
         .disassemble_into_single_device_arrays() give the results, and
         .hlo_modules()[0].to_string(opts) the optimized module.

It is used for opcodes JAX never emits (HLO `map`; `logistic`, since jax
lowers lax.logistic to 1/(1+exp(-x))).  It works for pre-optimization text
(JAX's or hand-written).  It does NOT work in general for *optimized* text:
XLA:CPU CHECK-fails (aborting the process) on some already-fused modules,
and the HLO -> StableHLO import drops the backend_config of kind=kCustom
fusions ("Fusion must have backend config").

Self-checks done for every program:
  * the .hlo text is run through run_hlo_text_with_xla and must reproduce the
    outputs (bit-exactly, or within recheck_tol);
  * the .opt.hlo text is parsed by XLA and re-printed; it must give the same
    lines as the compiled module (ignoring metadata, which the parser
    renumbers, and computation order), which proves every constant is
    printed in full and the text is a faithful, parseable module;
  * no written text contains "{...}".

Tolerances: outputs are what XLA:CPU computed; transcendental functions use
XLA's own (vectorized polynomial) implementations, so a NumPy reference
interpreter should compare floats with a few-ulp / rtol ~1e-6 (f32)
tolerance, bit-exactly for integers/bools, and treat NaN == NaN.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import re
import sys
import time
import types
import zipfile
import zlib
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

import jax

jax.config.update("jax_platforms", "cpu")

import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402
import jaxlib._hlo as _hlo  # noqa: E402
import ml_dtypes  # noqa: E402
from jax import lax  # noqa: E402
from jax._src.lib import xla_client as _xc  # noqa: E402
import jax.extend.backend  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
F32, F64, F16 = np.float32, np.float64, np.float16
BF16 = ml_dtypes.bfloat16
S8, S32, S64, U8, U32 = np.int8, np.int32, np.int64, np.uint8, np.uint32
INF, NAN = np.inf, np.nan


# --------------------------------------------------------------------------
# XLA helpers
# --------------------------------------------------------------------------

def _print_options() -> Any:
    """XLA's default printer options, but with large constants in full."""
    opts = _hlo.HloPrintOptions()
    opts.print_large_constants = True
    return opts


def optimized_hlo_text(executable: Any) -> str:
    """Optimized module text of a jaxlib LoadedExecutable, constants in full."""
    modules = executable.hlo_modules()
    assert len(modules) == 1, modules
    return modules[0].to_string(_print_options())


def compile_hlo_text_with_xla(text: str) -> Any:
    """Parse HLO text with XLA's parser and compile it for the CPU backend."""
    module = _hlo.hlo_module_from_text(text)
    computation = _hlo.XlaComputation(module.as_serialized_hlo_module_proto())
    mlir_module = _xc._xla.mlir.xla_computation_to_mlir_module(computation)
    backend = jax.extend.backend.get_backend("cpu")
    devices = _xc._xla.DeviceList(tuple(backend.local_devices()[:1]))
    return backend.compile_and_load(str(mlir_module), devices,
                                    _xc.CompileOptions())


def run_compiled_executable(executable: Any,
                            inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    device = executable.local_devices()[0]
    with jax.enable_x64(True):   # keep 64-bit inputs 64-bit
        buffers = [jax.device_put(np.asarray(x), device) for x in inputs]
    results = executable.execute_sharded(buffers)
    return [np.asarray(per_device[0])
            for per_device in results.disassemble_into_single_device_arrays()]


def hlo_text_to_stablehlo(text: str) -> str:
    """XLA's own translation of an HLO module (text) into StableHLO text."""
    module = _hlo.hlo_module_from_text(text)
    computation = _hlo.XlaComputation(module.as_serialized_hlo_module_proto())
    return str(_xc._xla.mlir.xla_computation_to_mlir_module(computation))


def run_stablehlo_text_with_xla(text: str, inputs: Sequence[np.ndarray]
                                ) -> list[np.ndarray]:
    """Compile StableHLO text with XLA:CPU and run it; the flat outputs."""
    backend = jax.extend.backend.get_backend("cpu")
    devices = _xc._xla.DeviceList(tuple(backend.local_devices()[:1]))
    executable = backend.compile_and_load(text, devices, _xc.CompileOptions())
    return run_compiled_executable(executable, inputs)


def run_hlo_text_with_xla(text: str, inputs: Sequence[np.ndarray]
                          ) -> list[np.ndarray]:
    """Run an HLO module given as text on XLA:CPU; returns the flat outputs
    (a tuple-shaped result comes back as one array per tuple element)."""
    return run_compiled_executable(compile_hlo_text_with_xla(text), inputs)


# --------------------------------------------------------------------------
# Text analysis
# --------------------------------------------------------------------------

_INSTR = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*(.*)$")
_OPCODE = re.compile(r"([a-z][a-z0-9\-]*)\(")
_CC_TARGET = re.compile(r'custom_call_target="([^"]*)"')


def _skip_shape(s: str) -> str:
    """Drop the leading shape (array, token or nested tuple) from `s`."""
    s = s.lstrip()
    if s.startswith("("):
        depth = 0
        for i, ch in enumerate(s):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                return s[i + 1:]
        raise ValueError(s)
    return s.split(None, 1)[1] if " " in s else ""


def opcodes_of(text: str) -> list[str]:
    ops = set()
    for line in text.splitlines():
        m = _INSTR.match(line)
        if not m:
            continue
        m2 = _OPCODE.match(_skip_shape(m.group(1)).lstrip())
        if m2:
            ops.add(m2.group(1))
    return sorted(ops)


def custom_call_targets_of(text: str) -> list[str]:
    return sorted(set(_CC_TARGET.findall(text)))


_MLIR_CC_TARGET = re.compile(r'stablehlo\.custom_call"?\s*@([\w$.]+)|call_target_name = "([^"]*)"')


def mlir_custom_call_targets_of(text: str) -> list[str]:
    return sorted({a or b for a, b in _MLIR_CC_TARGET.findall(text)})


# --------------------------------------------------------------------------
# File writing
# --------------------------------------------------------------------------

def _storable(a: np.ndarray) -> tuple[np.ndarray, dict]:
    a = np.asarray(a)
    info = {"dtype": str(a.dtype), "shape": list(a.shape)}
    if a.dtype == BF16:
        info["dtype"] = "bfloat16"
        info["stored_as"] = "uint16"
        a = a.view(np.uint16)
    return a, info


def write_npz(path: Path, arrays: Sequence[np.ndarray]) -> list[dict]:
    """np.savez(path, *arrays), but with fixed zip timestamps."""
    stored, infos = zip(*(_storable(a) for a in arrays)) if arrays else ((), ())
    buf = io.BytesIO()
    np.savez(buf, *stored)
    buf.seek(0)
    out = io.BytesIO()
    with zipfile.ZipFile(buf) as src, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for item in src.infolist():
            info = zipfile.ZipInfo(item.filename, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            dst.writestr(info, src.read(item.filename))
    path.write_bytes(out.getvalue())
    return list(infos)


def _normalize_paths(text: str) -> str:
    return text.replace(str(REPO) + "/", "")


# --------------------------------------------------------------------------
# Program table
# --------------------------------------------------------------------------

@dataclasses.dataclass
class Program:
    name: str
    fn: Callable | None            # JAX function (None for hlo-text programs)
    inputs: Callable[[np.random.Generator], list]
    notes: str = ""
    x64: bool = False
    hlo_text: str | None = None    # hand-written module (source "hlo-text")
    recheck_tol: float = 0.0       # tolerance for the text round-trip check


def _a(values, dtype):
    return np.asarray(values, dtype=dtype)


def _normal(r, shape, dtype=F32, scale=1.0):
    return (r.standard_normal(shape) * scale).astype(dtype)


# ---- elementwise float ----------------------------------------------------

def elementwise_unary_f32(x, p):
    return (jnp.exp(x), jnp.log(p), jnp.log1p(p), jnp.expm1(x), jnp.tanh(x),
            jnp.sqrt(p), lax.rsqrt(p), jnp.cbrt(x), jnp.sin(x), jnp.cos(x),
            jnp.tan(x), lax.erf(x), jnp.abs(x), jnp.sign(x), -x,
            jnp.floor(x), jnp.ceil(x),
            lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO), jnp.round(x),
            jnp.isfinite(x))


def elementwise_unary_f32_special(x):
    """Same ops on -0, +-inf, NaN, tiny/huge values and rounding ties."""
    return elementwise_unary_f32(x, x)


def _unary_inputs(r):
    base = [-3.7, -2.5, -1.5, -1.0, -0.5, -0.49, 0.0, 0.3, 0.5, 1.5, 2.5, 3.7]
    x = np.concatenate([_a(base, F32), _normal(r, 20, scale=2.0)])
    p = np.concatenate([_a([0.0, 1e-6, 0.5, 1.0, 4.0, 100.0, 1e6], F32),
                        np.abs(_normal(r, 25, scale=3.0))])
    return [x, p]


def _unary_special_inputs(r):
    return [_a([-INF, INF, NAN, -0.0, 0.0, 1e-38, -1e-38, 1e-45, 3.4e38,
                -3.4e38, 88.0, 89.0, -104.0, 0.5, -0.5, 2.5, -2.5, 1e7 + 0.5,
                8388607.5, -8388609.0, 1e-20, 20.0, -20.0, 1e30], F32)]


def elementwise_binary_f32(x, y):
    return (x + y, x - y, x * y, x / y, jnp.arctan2(x, y), lax.pow(x, y),
            lax.rem(x, y), jnp.remainder(x, y), jnp.maximum(x, y),
            jnp.minimum(x, y), lax.max(x, y), lax.min(x, y),
            jnp.where(x > y, x, y), lax.clamp(F32(-1.0), x, F32(2.0)))


def _binary_inputs(r):
    x = _a([1.0, -1.0, 0.0, -0.0, 0.0, 2.0, -2.0, -2.0, 7.5, -7.5, NAN, 1.0,
            NAN, INF, -INF, INF, 3.0, 0.25, 5.0, -5.0], F32)
    y = _a([0.0, 0.0, 0.0, 0.0, -0.0, 3.0, 3.0, 0.5, 2.0, 2.0, 1.0, NAN,
            NAN, 1.0, 2.0, INF, -3.0, -2.0, -3.0, 3.0], F32)
    return [np.concatenate([x, _normal(r, 12, scale=3)]),
            np.concatenate([y, _normal(r, 12, scale=3)])]


def compare_all_directions(xf, yf, xi, yi, xu, yu):
    out = []
    for a, b in ((xf, yf), (xi, yi), (xu, yu)):
        out += [a == b, a != b, a < b, a <= b, a > b, a >= b]
    out.append(jnp.where(xf < yf, xi, yi))        # select
    out.append(jnp.logical_not(xf < yf))           # not on pred
    out.append((xf < yf) & (xi < yi) | (xu == yu) ^ (xf != xf))
    return tuple(out)


def _compare_inputs(r):
    xf = _a([1.0, 2.0, NAN, 0.0, -0.0, INF, -INF, NAN, 3.0, -1.0], F32)
    yf = _a([1.0, 1.0, 1.0, -0.0, 0.0, INF, 0.0, NAN, 4.0, -2.0], F32)
    xi = _a([1, 2, -3, 0, -2**31, 2**31 - 1, -1, 5, 7, -7], S32)
    yi = _a([1, 1, 3, 0, 2**31 - 1, -2**31, 1, 5, 8, -8], S32)
    xu = _a([1, 2, 3, 0, 2**31, 2**32 - 1, 0, 5, 7, 2**31 - 1], U32)
    yu = _a([1, 1, 4, 0, 1, 2**31, 2**32 - 1, 5, 8, 2**31], U32)
    return [xf, yf, xi, yi, xu, yu]


def logistic_softplus(x):
    return (jax.nn.sigmoid(x), lax.logistic(x), jax.nn.softplus(x),
            jax.nn.relu(x), jax.nn.silu(x))


def f64_math(x, y):
    return (jnp.exp(x), jnp.log(jnp.abs(y)), jnp.sin(x) * jnp.cos(y),
            x / y, jnp.sqrt(jnp.abs(x)), jnp.tanh(x), lax.erf(x),
            jnp.sum(x * y), x @ y.T,
            jnp.floor(x * 1e10), x.astype(F32), (x * 1e6).astype(S64))


def _f64_inputs(r):
    return [_normal(r, (4, 8), F64, 2.0),
            _normal(r, (4, 8), F64, 2.0) + _a(1e-3, F64)]


# ---- integers ---------------------------------------------------------------

def _int_ops(a, b, s):
    """Ops shared by all integer widths. b has no zeros and (a, b) never is
    (INT_MIN, -1) (XLA leaves those implementation-defined)."""
    signed = jnp.issubdtype(a.dtype, jnp.signedinteger)
    lo = a.dtype.type(-5 if signed else 5)
    return (a + b, a - b, a * b, lax.div(a, b), lax.rem(a, b), a // b, a % b,
            a & b, a | b, a ^ b, ~a, lax.shift_left(a, s),
            lax.shift_right_arithmetic(a, s), lax.shift_right_logical(a, s),
            lax.population_count(a), lax.clz(a), jnp.maximum(a, b),
            jnp.minimum(a, b), lax.clamp(lo, a, a.dtype.type(100)),
            a < b, a.astype(F32))


def int_ops_signed(a, b, s):
    return _int_ops(a, b, s) + (-a, jnp.abs(a), jnp.sign(a))


def int_ops_unsigned(a, b, s):
    return _int_ops(a, b, s)


def _signed_int_inputs(dtype, bits):
    lo, hi = -2**(bits - 1), 2**(bits - 1) - 1

    def build(r):
        a = [lo, lo, hi, hi, -7, -7, 7, 7, -1, 0, 1, 13, -13, lo + 1, 100, -100]
        b = [3, 1, -1, 2, 2, -2, 2, -2, 5, 3, -4, -5, 5, -1, 7, -7]
        s = [0, 1, 3, bits - 1, bits, bits + 1, -1, 100, 2, 1, 0, bits - 2,
             4, 5, 63 if bits < 64 else 127, 2]
        n = 8
        ra = r.integers(lo, hi, n, endpoint=True)
        rb = r.integers(1, 100, n) * r.choice([-1, 1], n)
        rs = r.integers(0, bits + 3, n)
        rb[(ra == lo) & (rb == -1)] = 1
        return [_a(a + list(ra), dtype), _a(b + list(rb), dtype),
                _a(s + list(rs), dtype)]
    return build


def _unsigned_int_inputs(dtype, bits):
    hi = 2**bits - 1

    def build(r):
        a = [0, 1, hi, hi, hi - 1, 2**(bits - 1), 2**(bits - 1) - 1, 7, 200 % hi,
             13, 255, 128]
        b = [3, 1, 1, 2, hi, 3, 2**(bits - 1), 2, 7, hi, 16, 9]
        s = [0, 1, bits - 1, bits, bits + 1, hi, 2, 3, 4, 5, 6, 7]
        n = 8
        ra = r.integers(0, hi, n, endpoint=True)
        rb = r.integers(1, hi, n, endpoint=True)
        rs = r.integers(0, bits + 3, n)
        return [_a(a + list(ra), dtype), _a(b + list(rb), dtype),
                _a(s + list(rs), dtype)]
    return build


# ---- conversions --------------------------------------------------------------

def conversions(f, fi, i, u, s8):
    """`f` has special values; `fi` (for float->int) stays in range, since
    out-of-range / NaN float->int conversion is implementation-defined."""
    return (fi.astype(S32), jnp.abs(fi * 10).astype(U8), fi.astype(S8),
            f.astype(BF16), (f * 1000).astype(F16), f.astype(bool),
            f.astype(BF16).astype(F32), f.astype(F16).astype(F32), i.astype(F32),
            i.astype(U8), i.astype(S8), i.astype(bool).astype(S32),
            u.astype(S32), u.astype(F32), s8.astype(S32), s8.astype(U32),
            s8.astype(F32), (f > 0).astype(F32), lax.convert_element_type(i, BF16),
            jnp.abs(fi * 1e6).astype(U32))


def _conversion_inputs(r):
    f = _a([0.0, -0.0, 0.4, 0.5, 0.6, -0.5, -2.7, 2.7, 99.9, -99.9, 1.00390625,
            1.01171875, 3.3895314e38, 65504.0, 65520.0, 70000.0, 6e-8, 1e-10,
            INF, -INF, NAN, 1.5, 25.5, -1e9], F32)
    fi = np.concatenate([_a([0.0, -0.0, 0.4, 0.5, 0.6, -0.5, -0.99, -2.7, 2.7,
                             12.5, -12.5, 25.5, -25.5, 3.999], F32),
                         r.uniform(-25, 25, 10).astype(F32)])
    i = _a([0, 1, -1, 255, 256, 300, -129, 127, 128, 16777217, -16777217,
            2**31 - 1, -2**31, 65535, 7, -7] + list(r.integers(-1000, 1000, 8)),
           S32)
    u = _a([0, 1, 2**31, 2**32 - 1, 2**31 - 1, 16777217, 123456789, 7], U32)
    s8 = _a([-128, -1, 0, 1, 127, -7, 7, 64], S8)
    return [f, fi, i, u, s8]


def bitcast_convert(f, i, u):
    return (lax.bitcast_convert_type(f, S32), lax.bitcast_convert_type(f, U32),
            lax.bitcast_convert_type(i, F32), lax.bitcast_convert_type(u, F32),
            lax.bitcast_convert_type(f, U8), lax.bitcast_convert_type(f, np.uint16),
            lax.bitcast_convert_type(lax.bitcast_convert_type(f, S32) ^ S32(1),
                                     F32))


def _bitcast_inputs(r):
    f = np.concatenate([_a([0.0, -0.0, 1.0, -2.5, INF, -INF, 1e-40, 3e38],
                           F32), _normal(r, 8)])
    i = _a([0, 1, 0x3F800000, -0x40800000, 0x7F800000, 0x00000001,
            0x7F7FFFFF, -1082130432], S32)
    u = _a([0, 0x80000000, 0x3F800000, 0xC0490FDB, 0x7F800000, 0xFF800000,
            0x00800000, 0x40490FDB], U32)
    return [f, i, u]


# ---- reductions ---------------------------------------------------------------

def reductions(x, i, b):
    return (jnp.sum(x), jnp.sum(x, axis=0), jnp.sum(x, axis=(1, 2)),
            jnp.max(x, axis=1, keepdims=True), jnp.min(x, axis=2),
            jnp.prod(x, axis=0), jnp.mean(x, axis=(0, 2), keepdims=True),
            jnp.sum(i, axis=1), jnp.max(i, axis=(0, 2)), jnp.min(i),
            jnp.prod(i[:, :2, :3], axis=2), jnp.any(b, axis=0),
            jnp.all(b, axis=2), jnp.max(jnp.where(x > 0.5, NAN, x), axis=2))


def _reduction_inputs(r):
    return [_normal(r, (3, 4, 5)), _a(r.integers(-50, 50, (3, 4, 5)), S32),
            r.random((3, 4, 5)) > 0.3]


def argmax_argmin(x, i):
    return (jnp.argmax(x, axis=0), jnp.argmax(x, axis=1), jnp.argmin(x, axis=1),
            jnp.argmin(x), jnp.argmax(i, axis=1), jnp.argmin(i, axis=0))


def _argmax_inputs(r):
    x = _normal(r, (5, 6))
    x[1, :] = 1.0            # ties: first index wins
    x[2, 3] = NAN            # NaN wins argmax and argmin in JAX
    x[3, 1] = x[3, 4] = -9.0
    i = _a(r.integers(-3, 3, (5, 6)), S32)
    return [x, i]


# ---- shapes / data movement ---------------------------------------------------------

def shape_ops(x, y):
    t = jnp.transpose(x, (2, 0, 1))
    return (t, x.reshape(6, 4), x.reshape(4, 6).T, x[None] + y[:, None, None, None],
            jnp.broadcast_to(y, (3, 4)), jnp.expand_dims(y, 1) * y,
            jnp.squeeze(x[:1]), t.reshape(-1), jnp.swapaxes(x, 0, 2) + 1.0,
            x * np.arange(24, dtype=F32).reshape(2, 3, 4),   # 3-D constant
            y - np.linspace(-1, 1, 4, dtype=F32))


def _shape_inputs(r):
    return [_normal(r, (2, 3, 4)), _normal(r, (4,))]


def slice_concat_pad(x, y):
    return (x[1:7:2, ::3], x[-3:, 2:4], jnp.concatenate([x, y], axis=1),
            jnp.concatenate([x[:2], x[5:], x[3:4]], axis=0),
            jnp.concatenate([y[:3], x[:3, :2], y[3:6]], axis=1),
            lax.pad(x, F32(0.5), [(1, -2, 1), (-1, 2, 2)]),
            lax.pad(y, F32(-1), [(0, 0, 0), (2, 1, 0)]),
            jnp.pad(x, ((1, 2), (0, 1))), jnp.pad(y, 2, mode="edge"),
            jnp.pad(y, ((1, 1), (2, 2)), mode="reflect"))


def _slice_inputs(r):
    return [_normal(r, (8, 6)), _normal(r, (8, 3))]


def reverse_iota(x):
    return (jnp.flip(x, (0, 2)), jnp.flip(x), x[:, ::-1],
            lax.iota(S32, 5), lax.broadcasted_iota(F32, (3, 4), 1),
            jnp.arange(3, 17, 2), x + jnp.arange(4, dtype=F32),
            jnp.eye(3, 4, k=1, dtype=F32), jnp.tril(x[0]))


def _reverse_inputs(r):
    return [_normal(r, (3, 3, 4))]


# ---- linear algebra / NN ----------------------------------------------------------

def matmul_einsum(a, b, c, d, v, i, j):
    return (a @ b, a @ v, v @ v, jnp.einsum("bij,bjk->bik", c, d),
            jnp.einsum("bij,bkj->bki", c, c), jnp.einsum("ijk,ljk->il", c, c),
            jnp.einsum("i,j->ij", v, v), i @ j, jnp.einsum("bij->b", c))


def _matmul_inputs(r):
    return [_normal(r, (4, 8)), _normal(r, (8, 3)), _normal(r, (3, 4, 5)),
            _normal(r, (3, 5, 2)), _normal(r, (8,)),
            _a(r.integers(-9, 9, (3, 5)), S32), _a(r.integers(-9, 9, (5, 2)), S32)]


def softmax(x):
    return (jax.nn.softmax(x, axis=-1), jax.nn.softmax(x, axis=0),
            jax.nn.log_softmax(x))


def log_softmax_cross_entropy(logits, labels):
    logp = jax.nn.log_softmax(logits)
    nll = -jnp.take_along_axis(logp, labels[:, None], axis=1)[:, 0]
    onehot = jax.nn.one_hot(labels, logits.shape[1])
    return jnp.mean(nll), -jnp.sum(onehot * logp, axis=1)


def _xent_inputs(r):
    return [_normal(r, (6, 10), scale=3), _a(r.integers(0, 10, 6), S32)]


def _layernorm(x, g, b, eps=1e-5):
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) * lax.rsqrt(var + eps) * g + b


def layernorm_gelu_tanh(x, g, b):
    return jax.nn.gelu(_layernorm(x, g, b), approximate=True)


def layernorm_gelu_erf(x, g, b):
    return jax.nn.gelu(_layernorm(x, g, b), approximate=False)


def _layernorm_inputs(r):
    return [_normal(r, (4, 16), scale=2) + 1, 1 + _normal(r, (16,), scale=.1),
            _normal(r, (16,), scale=.1)]


def mnist_sgd_step(w, b, x, y):
    def loss(params):
        w, b = params
        logp = jax.nn.log_softmax(x @ w + b)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))
    l, (gw, gb) = jax.value_and_grad(loss)((w, b))
    return w - 0.1 * gw, b - 0.1 * gb, l


def _mnist_inputs(r):
    return [_normal(r, (784, 10), scale=0.01), np.zeros(10, F32),
            r.random((8, 784)).astype(F32), _a(r.integers(0, 10, 8), S32)]


def mlp_train_step(w1, b1, w2, b2, x, y):
    def loss(p):
        w1, b1, w2, b2 = p
        h = jax.nn.relu(x @ w1 + b1)
        out = jnp.tanh(h @ w2 + b2)
        return jnp.mean((out - y) ** 2)
    params = (w1, b1, w2, b2)
    l, g = jax.value_and_grad(loss)(params)
    return tuple(p - 0.05 * gp for p, gp in zip(params, g)) + (l,)


def _mlp_inputs(r):
    return [_normal(r, (16, 32), scale=0.3), _normal(r, (32,), scale=0.1),
            _normal(r, (32, 4), scale=0.3), _normal(r, (4,), scale=0.1),
            _normal(r, (8, 16)), _normal(r, (8, 4), scale=0.5)]


def attention(q, k, v, mask):
    d = q.shape[-1]
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(F32(d))
    s = jnp.where(mask, s, -1e9)
    p = jax.nn.softmax(s, axis=-1)
    return jnp.einsum("bhqk,bhkd->bhqd", p, v), p


def _attention_inputs(r):
    shape = (2, 2, 6, 8)
    return [_normal(r, shape), _normal(r, shape), _normal(r, shape),
            np.tril(np.ones((6, 6), bool))]


def cnn_train_step(w, b, wd, x, y):
    def loss(p):
        w, b, wd = p
        h = lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = jax.nn.relu(h + b)
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                              "VALID")
        logits = h.reshape(h.shape[0], -1) @ wd
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) *
                                 jax.nn.one_hot(y, 3), axis=-1))
    params = (w, b, wd)
    l, g = jax.value_and_grad(loss)(params)
    return tuple(p - 0.1 * gp for p, gp in zip(params, g)) + (l,)


def _cnn_inputs(r):
    return [_normal(r, (3, 3, 2, 4), scale=0.3), np.zeros(4, F32),
            _normal(r, (3 * 3 * 4, 3), scale=0.2), _normal(r, (2, 6, 6, 2)),
            _a([0, 2], S32)]


# ---- gather / scatter / dynamic slicing -------------------------------------------

def gather_indexing(x, idx, idx2, rows, cols, along):
    return (x[idx], x[idx, 2], x[idx2], jnp.take_along_axis(x, along, axis=1),
            jnp.take(x, cols, axis=1, mode="clip"), x[rows, cols],
            x.at[idx].get(mode="fill", fill_value=-1.0),
            x.at[rows].get(mode="promise_in_bounds"))


def _gather_inputs(r):
    return [_normal(r, (10, 4)), _a([0, 3, -1, 9, 3, -10], S32),
            _a([[1, 2], [0, 9], [-2, 5]], S32), _a([0, 9, 12, -20, 5], S32),
            _a([3, 0, 7, -9, 1], S32), _a(r.integers(-4, 4, (10, 2)), S32)]


def scatter_ops(x, idx, upd, xi, idx_dup):
    return (x.at[idx_dup].add(upd), x.at[idx].set(upd), x.at[idx_dup].max(upd),
            x.at[idx_dup].min(upd), x.at[idx_dup].mul(upd),
            x.at[:, 1].add(1.0), x.at[1:3, idx[:2]].set(0.0),
            xi.at[idx_dup[:, None], jnp.arange(3)[None, :]].add(7))


def _scatter_inputs(r):
    return [_normal(r, (6, 3)), _a([4, 0, -1, 2, 100], S32),
            _normal(r, (5, 3)), _a(r.integers(-9, 9, (6, 3)), S32),
            _a([1, 3, 1, 1, 5], S32)]


def dynamic_slicing(x, i, j, k, u):
    return (lax.dynamic_slice(x, (i, j), (4, 3)),
            lax.dynamic_slice(x, (k, i), (2, 8)),
            lax.dynamic_update_slice(x, u, (j, k)),
            lax.dynamic_update_slice(x, u, (i, i)),
            lax.dynamic_index_in_dim(x, k, axis=0, keepdims=False),
            lax.dynamic_slice_in_dim(x, j, 5, axis=0))


def _dynamic_slice_inputs(r):
    # i < 0 clamps to 0, j = 9 is past the end (clamped so the slice fits),
    # k = -2 wraps (jax adds the dimension size for negative starts).
    return [_normal(r, (10, 8)), _a(-3, S32), _a(9, S32), _a(-2, S32),
            _normal(r, (3, 5))]


# ---- control flow -----------------------------------------------------------------

def fori_loop(x, n):
    def body(i, c):
        a, b = c
        return a * F32(0.9) + jnp.sin(b) * i.astype(F32), b + a
    fixed = lax.fori_loop(0, 7, body, (x, x * 2))
    dynamic = lax.fori_loop(0, n, lambda i, v: v + i, jnp.zeros(3, S32))
    return fixed + (dynamic,)


def while_data_dependent(n, x):
    def collatz(v):
        def body(c):
            v, steps = c
            v = jnp.where(v == 1, v, jnp.where(v % 2 == 0, v // 2, 3 * v + 1))
            return v, steps + (v != 1).astype(S32)
        return lax.while_loop(lambda c: jnp.any(c[0] != 1), body,
                              (v, jnp.zeros_like(v)))

    def newton_sqrt(a):
        def cond(c):
            y, it = c
            return (jnp.max(jnp.abs(y * y - a)) > 1e-4) & (it < 50)
        return lax.while_loop(cond, lambda c: (0.5 * (c[0] + a / c[0]), c[1] + 1),
                              (a, 0))
    return collatz(n) + newton_sqrt(x)


def cond_switch(p, i, x):
    c = lax.cond(p, lambda v: (jnp.sin(v), v.sum()), lambda v: (v * 2, -v.sum()),
                 x)
    s = lax.switch(i, [jnp.exp, jnp.cos, lambda v: v[::-1]], x)
    s2 = lax.switch(i + 5, [jnp.exp, jnp.cos, lambda v: v[::-1]], x)  # clamped
    return c + (s, s2)


def cumulative(x, i):
    return (jnp.cumsum(x, axis=1), jnp.cumsum(x, axis=0), jnp.cumprod(x, axis=1),
            lax.cummax(x, axis=1), lax.cummin(x, axis=0), jnp.cumsum(i),
            lax.cumsum(x, axis=1, reverse=True))


def _cumulative_inputs(r):
    return [_normal(r, (4, 6)), _a(r.integers(-5, 5, 12), S32)]


def sorting(x, i, k, v1, v2):
    return (jnp.sort(x), jnp.argsort(x, stable=True), jnp.sort(i, axis=0),
            jnp.sort(i, axis=1, descending=True), jnp.argsort(i[:, 0]),
            *lax.sort((k, v1, v2), num_keys=1),
            *lax.sort((k, v1), num_keys=2, is_stable=True))


def _sort_inputs(r):
    x = np.concatenate([_a([NAN, -0.0, 0.0, INF, -INF, 1.0, 1.0, -1.0], F32),
                        _normal(r, 8)])
    return [x, _a(r.integers(-5, 5, (4, 5)), S32), _a([3, 1, 2, 1, 3, 0, 1], S32),
            _a([0.5, 1.5, 2.5, 0.5, -1.5, 7.0, -0.5], F32),
            _a([10, 20, 30, 40, 50, 60, 70], S32)]


# ---- convolution / pooling --------------------------------------------------------

def conv2d_nhwc(x, w):
    dn = ("NHWC", "HWIO", "NHWC")
    return (lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=dn),
            lax.conv_general_dilated(x, w, (1, 1), "VALID", rhs_dilation=(2, 1),
                                     dimension_numbers=dn),
            lax.conv_general_dilated(x, w, (1, 2), ((1, 0), (2, 1)),
                                     dimension_numbers=dn))


def _conv_nhwc_inputs(r):
    return [_normal(r, (2, 7, 7, 3)), _normal(r, (3, 3, 3, 4), scale=0.5)]


def conv2d_nchw_grouped(x, w, w1d, x1d):
    dn = ("NCHW", "OIHW", "NCHW")
    return (lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)),
                                     feature_group_count=2, dimension_numbers=dn),
            lax.conv_general_dilated(x, w, (2, 1), ((0, 1), (2, 0)),
                                     lhs_dilation=(1, 2), rhs_dilation=(1, 1),
                                     feature_group_count=2, dimension_numbers=dn),
            lax.conv_transpose(x[:, :2], jnp.transpose(w[:2], (2, 3, 1, 0)),
                               (2, 2), "SAME",
                               dimension_numbers=("NCHW", "HWIO", "NCHW")),
            lax.conv_general_dilated(x1d, w1d, (1,), "SAME",
                                     dimension_numbers=("NWC", "WIO", "NWC")))


def _conv_nchw_inputs(r):
    return [_normal(r, (1, 4, 6, 6)), _normal(r, (6, 2, 3, 3), scale=0.5),
            _normal(r, (3, 2, 2), scale=0.5), _normal(r, (2, 9, 2))]


def max_pool_and_grad(x, ct):
    def pool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                                 "VALID")

    def pool_overlap(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 1, 1, 1),
                                 "SAME")
    y, vjp = jax.vjp(pool, x)
    y2, vjp2 = jax.vjp(pool_overlap, x)
    return y, vjp(ct)[0], y2, vjp2(jnp.ones_like(y2))[0]


def _pool_inputs(r):
    x = _normal(r, (1, 6, 6, 2))
    x[0, 0, 0, 0] = x[0, 0, 1, 0] = 5.0     # tie inside one window
    return [x, _normal(r, (1, 3, 3, 2))]


def avg_pool(x, xi):
    window, strides = (1, 3, 3, 1), (1, 2, 2, 1)
    s = lax.reduce_window(x, 0.0, lax.add, window, strides, "SAME")
    n = lax.reduce_window(jnp.ones_like(x), 0.0, lax.add, window, strides, "SAME")
    s2 = lax.reduce_window(x[0, :, :, 0], 0.0, lax.add, (2, 2), (1, 1),
                           ((1, 0), (0, 1)), window_dilation=(1, 2),
                           base_dilation=(2, 1))
    mi = lax.reduce_window(xi, jnp.iinfo(S32).max, lax.min, (2, 2), (2, 1),
                           "VALID")
    return s / n, s2, mi


def _avg_pool_inputs(r):
    return [_normal(r, (1, 5, 5, 2)), _a(r.integers(-20, 20, (4, 5)), S32)]


# ---- low precision -------------------------------------------------------------

def bf16_arith(a, b, c):
    return (a * b + a, jnp.exp(a), jnp.tanh(b), jnp.sum(a, axis=1),
            jnp.dot(a, c, preferred_element_type=F32), a @ c,
            jnp.maximum(a, b), (a / b).astype(F32), jax.nn.softmax(a))


def f16_arith(a, b, c):
    return bf16_arith(a, b, c)


def _lowp_inputs(dtype):
    def build(r):
        return [_normal(r, (4, 8), dtype), (_normal(r, (4, 8)) + 3).astype(dtype),
                _normal(r, (8, 3), dtype)]
    return build


# ---- misc --------------------------------------------------------------------

@jax.jit
def _inner_jit(x, y):
    return jnp.sin(x) * y + 1.0


def nested_call(x, y):
    return _inner_jit(x, y) + _inner_jit(y, x) * 2.0, _inner_jit(x, x)


def transpose_copy(x, y):
    t = jnp.transpose(x, (1, 0, 2))
    return t * 2.0, (x.T @ y).reshape(-1), jnp.transpose(x, (2, 1, 0)).reshape(4, 6)


def _transpose_copy_inputs(r):
    return [_normal(r, (2, 3, 4)), _normal(r, (2, 5))]


def random_normal(key_data):
    key = jax.random.wrap_key_data(key_data, impl="threefry2x32")
    return jax.random.normal(key, (3, 4)), jax.random.randint(key, (5,), -10, 10)


def custom_call_cholesky(a):
    return jnp.linalg.cholesky(a @ a.T + 4 * jnp.eye(a.shape[0], dtype=a.dtype))


def _cholesky_inputs(r):
    return [_normal(r, (4, 4))]


def custom_call_top_k(x):
    return lax.top_k(x, 3)


def _top_k_inputs(r):
    x = _normal(r, (3, 10))
    x[0, 2] = x[0, 5]
    return [x]


# ---- hand-written HLO text (ops JAX never emits) ------------------------------------

HLO_MAP = """\
HloModule hlo_map, entry_computation_layout={(f32[3,4]{1,0}, f32[3,4]{1,0}, s32[5]{0})->(f32[3,4]{1,0}, f32[3,4]{1,0}, s32[5]{0})}

mul_add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] add(a, b)
  ROOT m = f32[] multiply(s, a)
}

max_sin {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  sa = f32[] sine(a)
  ROOT mx = f32[] maximum(sa, b)
}

square_minus_one {
  x = s32[] parameter(0)
  sq = s32[] multiply(x, x)
  one = s32[] constant(1)
  ROOT r = s32[] subtract(sq, one)
}

ENTRY main {
  x = f32[3,4]{1,0} parameter(0)
  y = f32[3,4]{1,0} parameter(1)
  i = s32[5]{0} parameter(2)
  m0 = f32[3,4]{1,0} map(x, y), dimensions={0,1}, to_apply=mul_add
  m1 = f32[3,4]{1,0} map(m0, x), dimensions={0,1}, to_apply=max_sin
  m2 = s32[5]{0} map(i), dimensions={0}, to_apply=square_minus_one
  ROOT t = (f32[3,4]{1,0}, f32[3,4]{1,0}, s32[5]{0}) tuple(m0, m1, m2)
}
"""  # noqa: E501 (HLO text: one instruction a line)

HLO_LOGISTIC = """\
HloModule hlo_logistic, entry_computation_layout={(f32[16]{0}, f16[8]{0}, f32[2,3]{1,0})->(f32[16]{0}, f16[8]{0}, f32[2,3]{1,0})}

ENTRY main {
  x = f32[16]{0} parameter(0)
  h = f16[8]{0} parameter(1)
  m = f32[2,3]{1,0} parameter(2)
  lx = f32[16]{0} logistic(x)
  lh = f16[8]{0} logistic(h)
  lm = f32[2,3]{1,0} logistic(m)
  c = f32[] constant(0.5)
  cb = f32[2,3]{1,0} broadcast(c), dimensions={}
  d = f32[2,3]{1,0} subtract(lm, cb)
  ROOT t = (f32[16]{0}, f16[8]{0}, f32[2,3]{1,0}) tuple(lx, lh, d)
}
"""  # noqa: E501 (HLO text: one instruction a line)


def _hlo_map_inputs(r):
    return [_normal(r, (3, 4)), _normal(r, (3, 4)), _a([-3, -1, 0, 7, 46341], S32)]


def _hlo_logistic_inputs(r):
    x = np.concatenate([_a([-INF, INF, NAN, 0.0, -0.0, 100.0, -100.0, 20.0],
                           F32), _normal(r, 8, scale=4)])
    return [x, _normal(r, 8, F16, 3), _normal(r, (2, 3))]


# ---- the table -------------------------------------------------------------------

P = Program
PROGRAMS: list[Program] = [
    P("elementwise_unary_f32", elementwise_unary_f32, _unary_inputs,
      "unary math on ordinary values incl. rounding ties; log/sqrt/rsqrt get "
      "non-negative inputs"),
    P("elementwise_unary_f32_special", elementwise_unary_f32_special,
      _unary_special_inputs,
      "unary math on +-0, +-inf, NaN, denormals, huge values (NaN/inf "
      "propagation, exp overflow, log(-x) = NaN)"),
    P("elementwise_binary_f32", elementwise_binary_f32, _binary_inputs,
      "binary math incl. x/0, 0/0, NaN in max/min (propagates), atan2 signed "
      "zeros, pow with negative base, rem (fmod) vs jnp.remainder, clamp"),
    P("compare_all_directions", compare_all_directions, _compare_inputs,
      "compare EQ/NE/LT/LE/GT/GE on f32 (NaN, -0), s32 and u32 (unsigned "
      "ordering), select, not/and/or/xor on pred"),
    P("logistic_softplus", logistic_softplus,
      lambda r: [np.concatenate([_a([-INF, INF, -100, 100, 0], F32),
                                 _normal(r, 11, scale=4)])],
      "jax.nn.sigmoid / lax.logistic: JAX lowers these to 1/(1+exp(-x)), "
      "NOT to the HLO logistic op (see hlo_logistic)"),
    P("f64_math", f64_math, _f64_inputs, "float64 math (jax_enable_x64)",
      x64=True),
    P("int32_ops", int_ops_signed, _signed_int_inputs(S32, 32),
      "s32: wrapping add/mul, div/rem with negatives (truncating) and jnp // % "
      "(flooring), shifts by negative/>=32 amounts, popcnt, clz, clamp, "
      "abs/neg of INT_MIN"),
    P("int8_ops", int_ops_signed, _signed_int_inputs(S8, 8), "s8 variant"),
    P("uint8_ops", int_ops_unsigned, _unsigned_int_inputs(U8, 8), "u8 variant"),
    P("uint32_ops", int_ops_unsigned, _unsigned_int_inputs(U32, 32),
      "u32 variant: values >= 2^31, unsigned div/rem/compare"),
    P("int64_ops", int_ops_signed, _signed_int_inputs(S64, 64),
      "s64 variant (jax_enable_x64)", x64=True),
    P("conversions", conversions, _conversion_inputs,
      "convert: f32->s32 (in range, truncation), f32->u8, f32->bf16/f16 "
      "(round-to-nearest-even, f16 overflow to inf), f32->pred, s32->u8/s8 "
      "(wrap), u32->s32, s8->u32, int->float rounding (16777217), s32->bf16"),
    P("bitcast_convert", bitcast_convert, _bitcast_inputs,
      "bitcast-convert f32<->s32/u32 and to narrower types (f32 -> u8[...,4], "
      "u16[...,2]: little-endian element order)"),
    P("reductions", reductions, _reduction_inputs,
      "reduce sum/max/min/prod over several axes, keepdims, int reductions, "
      "any/all on pred, max with NaN"),
    P("argmax_argmin", argmax_argmin, _argmax_inputs,
      "variadic (value, index) reduce; ties take the first index; NaN wins"),
    P("shape_ops", shape_ops, _shape_inputs, "broadcast/reshape/transpose"),
    P("slice_concat_pad", slice_concat_pad, _slice_inputs,
      "strided slice, concatenate, pad with negative low/high and interior "
      "padding, jnp.pad edge/reflect"),
    P("reverse_iota", reverse_iota, _reverse_inputs, "reverse, iota, eye/tril"),
    P("matmul_einsum", matmul_einsum, _matmul_inputs,
      "dot: matmul, matvec, vector dot, batched einsum (batch dims), "
      "multi-dim contraction, outer product, s32 matmul"),
    P("softmax", softmax, lambda r: [_normal(r, (4, 7), scale=3)], "softmax"),
    P("log_softmax_cross_entropy", log_softmax_cross_entropy, _xent_inputs,
      "log-softmax cross entropy with integer labels (gather) and one-hot"),
    P("layernorm_gelu_tanh", layernorm_gelu_tanh, _layernorm_inputs,
      "layernorm + gelu(approximate=True)"),
    P("layernorm_gelu_erf", layernorm_gelu_erf, _layernorm_inputs,
      "layernorm + gelu(approximate=False): JAX expands erfc itself"),
    P("mnist_sgd_step", mnist_sgd_step, _mnist_inputs,
      "softmax regression 784->10, batch 8, one SGD step (value_and_grad)"),
    P("mlp_train_step", mlp_train_step, _mlp_inputs,
      "2-layer MLP (relu, tanh, MSE) SGD step"),
    P("attention", attention, _attention_inputs,
      "softmax(QK^T/sqrt(d)) V with a causal mask"),
    P("cnn_train_step", cnn_train_step, _cnn_inputs,
      "conv(SAME)+relu+maxpool+dense SGD step: convolution gradients and "
      "select-and-scatter"),
    P("gather_indexing", gather_indexing, _gather_inputs,
      "gather: fancy indexing with negative indices, take_along_axis, "
      "take(mode=clip), fill mode, promise_in_bounds with out-of-range "
      "indices (XLA clamps)"),
    P("scatter_ops", scatter_ops, _scatter_inputs,
      "scatter add/set/max/min/mul, duplicate indices (combined), "
      "out-of-bounds index 100 (dropped), int scatter"),
    P("dynamic_slicing", dynamic_slicing, _dynamic_slice_inputs,
      "dynamic-slice/dynamic-update-slice with negative and too-large starts "
      "(XLA clamps starts so the slice fits)"),
    P("fori_loop", fori_loop, lambda r: [_normal(r, (5,)), _a(4, S32)],
      "fori_loop: fixed trip count and trip count from an input (while)"),
    P("while_data_dependent", while_data_dependent,
      lambda r: [_a([1, 6, 7, 27, 3], S32), _a([0.25, 2.0, 9.0, 1e4], F32)],
      "while_loop with data-dependent trip count (collatz, newton sqrt)"),
    P("cond_switch", cond_switch,
      lambda r: [np.bool_(False), _a(1, S32), _normal(r, (4,))],
      "lax.cond and lax.switch (conditional); switch index clamped"),
    P("cumulative", cumulative, _cumulative_inputs,
      "cumsum/cumprod/cummax/cummin (reduce-window on CPU)"),
    P("sorting", sorting, _sort_inputs,
      "sort with NaN/-0/inf (total order), stable argsort, descending, "
      "multi-operand lax.sort with num_keys 1 and 2"),
    P("conv2d_nhwc", conv2d_nhwc, _conv_nhwc_inputs,
      "convolution NHWC/HWIO: stride, SAME, rhs dilation, explicit padding"),
    P("conv2d_nchw_grouped", conv2d_nchw_grouped, _conv_nchw_inputs,
      "convolution NCHW/OIHW, feature_group_count=2, lhs dilation, "
      "conv_transpose, 1-D conv"),
    P("max_pool_and_grad", max_pool_and_grad, _pool_inputs,
      "reduce-window max and its gradient (select-and-scatter), with a tie"),
    P("avg_pool", avg_pool, _avg_pool_inputs,
      "reduce-window add with SAME padding, base/window dilation, s32 min"),
    P("bf16_arith", bf16_arith, _lowp_inputs(BF16),
      "bfloat16 arithmetic, reductions, dot (also preferred f32)"),
    P("f16_arith", f16_arith, _lowp_inputs(F16), "float16 variant"),
    P("nested_call", nested_call,
      lambda r: [_normal(r, (6,)), _normal(r, (6,))],
      "nested jax.jit -> HLO call (inlined by XLA)"),
    P("transpose_copy", transpose_copy, _transpose_copy_inputs,
      "transposes that become copy/bitcast after layout assignment"),
    P("random_normal", random_normal,
      lambda r: [_a([0, 42], U32)],
      "threefry2x32 PRNG: u32 arithmetic, shifts, bitcast-convert, erf_inv"),
    P("custom_call_cholesky", custom_call_cholesky, _cholesky_inputs,
      "jnp.linalg.cholesky -> custom-call lapack_spotrf_ffi (both files)"),
    P("custom_call_top_k", custom_call_top_k, _top_k_inputs,
      "lax.top_k: HLO `topk` op before optimization, custom-call \"TopK\" "
      "after it"),
    P("hlo_map", None, _hlo_map_inputs,
      "hand-written: HLO map (JAX never emits it), run by XLA via "
      "run_hlo_text_with_xla", hlo_text=HLO_MAP),
    P("hlo_logistic", None, _hlo_logistic_inputs,
      "hand-written: HLO logistic op (JAX expands logistic itself), f32 and "
      "f16", hlo_text=HLO_LOGISTIC),
]


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------

def _close(a: np.ndarray, b: np.ndarray, tol: float) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype == BF16 or a.dtype == F16:
        a, b = a.astype(F32), b.astype(F32)
    if tol == 0 or not np.issubdtype(a.dtype, np.floating):
        return np.array_equal(a, b, equal_nan=np.issubdtype(a.dtype, np.floating))
    return np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True)


def build(prog: Program) -> dict:
    rng = np.random.default_rng(zlib.crc32(prog.name.encode()))
    inputs = [np.asarray(x) for x in prog.inputs(rng)]

    if prog.hlo_text is None:
        with jax.enable_x64(prog.x64):
            lowered = jax.jit(_renamed(prog.fn, prog.name)).lower(*inputs)
            hlo_text = lowered.as_text(dialect="hlo")
            mlir_text = lowered.as_text()
            compiled = lowered.compile()
            executable = compiled.runtime_executable()
            opt_text = optimized_hlo_text(executable)
            result = compiled(*inputs)
            outputs = [np.asarray(x) for x in jax.tree_util.tree_leaves(result)]
        source = "jax"
    else:
        hlo_text = prog.hlo_text
        mlir_text = hlo_text_to_stablehlo(hlo_text)
        executable = compile_hlo_text_with_xla(hlo_text)
        opt_text = optimized_hlo_text(executable)
        outputs = run_compiled_executable(executable, inputs)
        source = "hlo-text"
    opt_text = _normalize_paths(opt_text)

    # Self-checks.
    # 1. XLA's parser + printer must reproduce the optimized module line for
    #    line (up to the order of computations; metadata is left out because
    #    the parser renumbers stack frame ids).  This proves that no constant
    #    was elided or abbreviated.  (Recompiling the *optimized* text is not
    #    possible in general: XLA:CPU CHECK-fails on some already-fused
    #    modules, and the HLO -> StableHLO import drops the backend_config of
    #    kCustom fusions.)
    no_metadata = _print_options()
    no_metadata.print_metadata = False
    reprinted = _hlo.hlo_module_from_text(opt_text).to_string(no_metadata)
    original = executable.hlo_modules()[0].to_string(no_metadata)
    assert sorted(reprinted.splitlines()) == sorted(original.splitlines()), \
        prog.name
    # 2. The pre-optimization text must compile and reproduce the outputs.
    again = run_hlo_text_with_xla(hlo_text, inputs)
    assert len(again) == len(outputs), prog.name
    for k, (a, b) in enumerate(zip(again, outputs)):
        assert _close(a, b, prog.recheck_tol), (prog.name, k, a, b)

    # 3. The StableHLO text must compile and reproduce the outputs too.
    again = run_stablehlo_text_with_xla(mlir_text, inputs)
    assert len(again) == len(outputs), prog.name
    for k, (a, b) in enumerate(zip(again, outputs)):
        assert _close(a, b, prog.recheck_tol), (prog.name, "mlir", k, a, b)

    for text in (hlo_text, opt_text):
        assert "{...}" not in text, prog.name

    files = {"hlo": f"{prog.name}.hlo", "opt_hlo": f"{prog.name}.opt.hlo",
             "mlir": f"{prog.name}.mlir",
             "inputs": f"{prog.name}.npz", "outputs": f"{prog.name}.out.npz"}
    (HERE / files["hlo"]).write_text(hlo_text)
    (HERE / files["opt_hlo"]).write_text(opt_text)
    (HERE / files["mlir"]).write_text(mlir_text)
    in_info = write_npz(HERE / files["inputs"], inputs)
    out_info = write_npz(HERE / files["outputs"], outputs)

    targets = {"hlo": custom_call_targets_of(hlo_text),
               "opt_hlo": custom_call_targets_of(opt_text),
               "mlir": mlir_custom_call_targets_of(mlir_text)}
    # JAX's LAPACK custom-calls (lapack_?getrf_ffi, ...) run on every backend
    expect_files = [k for k, v in targets.items()
                    if any(not re.fullmatch(r"lapack_[sd]\w+_ffi", t) for t in v)]
    return {
        "name": prog.name,
        "source": source,
        "x64": prog.x64,
        "files": files,
        "inputs": in_info,
        "outputs": out_info,
        "opcodes": {"hlo": opcodes_of(hlo_text), "opt_hlo": opcodes_of(opt_text)},
        "custom_call_targets": targets,
        "expect": "unsupported-custom-call" if expect_files else None,
        "expect_files": expect_files,
        "notes": prog.notes,
        "versions": {"jax": jax.__version__, "jaxlib": jaxlib.__version__,
                     "backend": "cpu"},
    }


def _renamed(fn: Callable, name: str) -> Callable:
    """`fn` under the name `name` (so the module is `jit_<name>`), keeping its
    parameter names (JAX uses them for the HLO parameter names)."""
    if fn.__name__ == name:
        return fn
    copy = types.FunctionType(fn.__code__, fn.__globals__, name,
                              fn.__defaults__, fn.__closure__)
    copy.__qualname__ = name
    return copy


def _format_manifest(entries: list[dict]) -> str:
    """JSON, one line per entry field (keeps the file small and diffable)."""
    def entry(e):
        return "{" + ",\n  ".join(f"{json.dumps(k)}: {json.dumps(v)}"
                                   for k, v in e.items()) + "}"
    return "[\n" + ",\n".join(entry(e) for e in entries) + "\n]\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="only regenerate these")
    args = parser.parse_args(argv)
    names = [p.name for p in PROGRAMS]
    assert len(set(names)) == len(names)
    unknown = set(args.names) - set(names)
    if unknown:
        sys.exit(f"unknown programs: {sorted(unknown)}")

    manifest_path = HERE / "MANIFEST.json"
    old = {}
    if manifest_path.exists():
        old = {e["name"]: e for e in json.loads(manifest_path.read_text())}
    selected = [p for p in PROGRAMS if not args.names or p.name in args.names]

    t0 = time.perf_counter()
    entries = {n: e for n, e in old.items() if n in names}
    for prog in selected:
        t = time.perf_counter()
        entries[prog.name] = build(prog)
        print(f"{prog.name:32s} {time.perf_counter() - t:6.2f}s", flush=True)

    # Remove files of programs that no longer exist (only files that the old
    # manifest listed: other files in tests/hlo/ are never touched).
    keep = {f for e in entries.values() for f in e["files"].values()}
    for e in old.values():
        for f in e["files"].values():
            if f not in keep and (HERE / f).exists():
                (HERE / f).unlink()
    manifest = [entries[n] for n in names if n in entries]
    manifest_path.write_text(_format_manifest(manifest))
    print(f"{len(selected)} programs in {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
