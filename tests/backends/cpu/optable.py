"""The cpu backend's op table: per-op run-and-compare tests against the interpreter.

ELEMENTWISE holds one row per elementwise opcode: the element types it is defined for (the
verifier must reject every other type), its arity, how its float results compare with the
interpreter's (EXACT: bit for bit, NaN positions and signed zeros included; ULP: within
MAX_ULPS units in the last place, for the polynomial transcendentals the interpreter
computes in f64 and rounds) and the attribute variants it is tested with.

OTHER_OPS names the test file covering each remaining opcode of xlapy.hlo.opcodes.OPCODES;
ELSEWHERE and UNSUPPORTED give the reason for the opcodes this table leaves to other tests
or that the cpu backend does not lower. test_optable_coverage.py fails when an opcode is in
none of them.

Inputs (`values`, `pair_values`) are the special values of each type (+-0, +-inf, NaN,
subnormals, the extremes, rounding ties, INT_MIN/INT_MAX, shift amounts around the bit
width) followed by random values; `pair_values` gives every special against every special,
so binary ops see each combination once.

Shapes (SHAPES): a scalar, zero-size dimensions, sizes that are not a multiple of the vector
width, a 3-D shape, and operands/results with non-default layouts. Compile time grows with
the number of kernels: a test builds ONE module holding many ops (`ModuleText`, a tuple
root), and `compare_outputs` checks each output separately, naming the op.

The test files import this file under a private name: tests/frontend has an optable.py of
its own, and both may run in one pytest session.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

# ---- element types ---------------------------------------------------------------------------

TYPES = ("pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32",
         "f64")
FLOATS = ("f16", "bf16", "f32", "f64")
SINTS = ("s8", "s16", "s32", "s64")
UINTS = ("u8", "u16", "u32", "u64")
INTS = SINTS + UINTS
NUMERIC = INTS + FLOATS
BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPE = {"pred": np.dtype(np.bool_), "s8": np.dtype(np.int8), "s16": np.dtype(np.int16),
         "s32": np.dtype(np.int32), "s64": np.dtype(np.int64), "u8": np.dtype(np.uint8),
         "u16": np.dtype(np.uint16), "u32": np.dtype(np.uint32), "u64": np.dtype(np.uint64),
         "f16": np.dtype(np.float16), "bf16": BF16, "f32": np.dtype(np.float32),
         "f64": np.dtype(np.float64)}
WIDTH = {t: (8 if t == "pred" else DTYPE[t].itemsize * 8) for t in TYPES}

# How a result compares with the interpreter's:
EXACT = "exact"    # bit for bit; signed zeros count, any NaN matches any NaN
BITS = "bits"      # bit for bit, NaN payloads included (data movement, bitcasts)
ULP = "ulp"        # floats within MAX_ULPS units in the last place (NaN where NaN)
CLOSE = "close"    # floats within rtol/atol, ("close", rtol, atol): sums in another order
MAX_ULPS = 4


@dataclass(frozen=True)
class Op:
    opcode: str
    types: tuple[str, ...]
    arity: int
    float_check: str = EXACT          # integer and pred results always compare exactly
    # attribute variants: each a string appended to the instruction ("" = none); a callable
    # gets the element type and returns the variants that apply to it
    attrs: tuple | object = ("",)
    result: str | None = None          # result element type when not the operand's

    def check(self, t: str) -> str:
        return self.float_check if t in FLOATS else EXACT

    def variants(self, t: str) -> tuple[str, ...]:
        return tuple(self.attrs(t)) if callable(self.attrs) else tuple(self.attrs)

    def result_type(self, t: str) -> str:
        return self.result or t


_DIRS = ("EQ", "NE", "LT", "LE", "GT", "GE")


def _compare_attrs(t: str):
    """Every direction with every comparison type that applies to t (and the default)."""
    if t in FLOATS:
        types = ("", "FLOAT", "TOTALORDER")
    elif t in SINTS:
        types = ("", "SIGNED")     # the verifier requires the type's own signedness
    else:
        types = ("", "UNSIGNED")
    return tuple(f", direction={d}" + (f", type={ty}" if ty else "") for ty in types for d in _DIRS)


_REDUCE_PRECISION = (", exponent_bits=5, mantissa_bits=10", ", exponent_bits=8, mantissa_bits=7",
                     ", exponent_bits=4, mantissa_bits=3", ", exponent_bits=5, mantissa_bits=2",
                     ", exponent_bits=2, mantissa_bits=1", ", exponent_bits=8, mantissa_bits=23",
                     ", exponent_bits=11, mantissa_bits=52", ", exponent_bits=3, mantissa_bits=0")

_ROWS = [
    # unary
    Op("abs", SINTS + FLOATS, 1),
    Op("negate", NUMERIC, 1),
    Op("sign", SINTS + FLOATS, 1),
    Op("floor", FLOATS, 1),
    Op("ceil", FLOATS, 1),
    Op("round-nearest-afz", FLOATS, 1),
    Op("round-nearest-even", FLOATS, 1),
    Op("exponential", FLOATS, 1, ULP),
    Op("exponential-minus-one", FLOATS, 1, ULP),
    Op("log", FLOATS, 1, ULP),
    Op("log-plus-one", FLOATS, 1, ULP),
    Op("logistic", FLOATS, 1, ULP),
    Op("sqrt", FLOATS, 1),                 # correctly rounded: exact
    Op("rsqrt", FLOATS, 1, ULP),
    Op("cbrt", FLOATS, 1, ULP),
    Op("sine", FLOATS, 1, ULP),
    Op("cosine", FLOATS, 1, ULP),
    Op("tan", FLOATS, 1, ULP),
    Op("tanh", FLOATS, 1, ULP),
    Op("erf", FLOATS, 1, ULP),
    Op("not", ("pred",) + INTS, 1),
    Op("is-finite", FLOATS, 1, result="pred"),
    Op("popcnt", INTS, 1),
    Op("count-leading-zeros", INTS, 1),
    # binary
    Op("add", TYPES, 2),
    Op("subtract", NUMERIC, 2),
    Op("multiply", TYPES, 2),
    Op("divide", NUMERIC, 2),
    Op("remainder", NUMERIC, 2),
    Op("maximum", TYPES, 2),
    Op("minimum", TYPES, 2),
    Op("power", NUMERIC, 2, ULP),          # integer power is exact
    Op("atan2", FLOATS, 2, ULP),
    Op("and", ("pred",) + INTS, 2),
    Op("or", ("pred",) + INTS, 2),
    Op("xor", ("pred",) + INTS, 2),
    Op("shift-left", INTS, 2),
    Op("shift-right-arithmetic", INTS, 2),
    Op("shift-right-logical", INTS, 2),
    # other elementwise (select, clamp, convert, bitcast-convert: their own tests)
    Op("compare", TYPES, 2, attrs=_compare_attrs, result="pred"),
    Op("reduce-precision", FLOATS, 1, attrs=_REDUCE_PRECISION),
]
ELEMENTWISE: dict[str, Op] = {r.opcode: r for r in _ROWS}

# Opcodes with tests of their own shape (not the one-op-per-row scheme above): the test
# file that covers each, and what it covers.
OTHER_OPS: dict[str, tuple[str, str]] = {
    "select": ("test_ops_elementwise.py", "every type, array and scalar predicate"),
    "clamp": ("test_ops_elementwise.py", "every numeric type, scalar and array bounds"),
    "convert": ("test_ops_elementwise.py", "all 13x13 type pairs on special values"),
    "bitcast-convert": ("test_ops_elementwise.py", "same width, to narrower, to wider"),
    "copy": ("test_ops_data.py", "every type, layout changes"),
    "parameter": ("test_ops_data.py", "every test; tuple parameters"),
    "constant": ("test_ops_data.py", "scalar, array, non-default layout, every type"),
    "iota": ("test_ops_data.py", "every type, each dimension, layouts"),
    "tuple": ("test_ops_data.py", "nested tuples"),
    "get-tuple-element": ("test_ops_data.py", "nested tuples"),
    "bitcast": ("test_ops_data.py", "non-default layouts"),
    "opt-barrier": ("test_ops_data.py", "tuple operand"),
    "after-all": ("test_ops_data.py", "token passed along"),
    "broadcast": ("test_ops_data.py", "scalar and array operands, dimension maps"),
    "reshape": ("test_ops_data.py", "merging/splitting dims, layouts"),
    "transpose": ("test_ops_data.py", "2-D and 3-D permutations"),
    "slice": ("test_ops_data.py", "strides, zero-size"),
    "concatenate": ("test_ops_data.py", "3 operands, non-minor dim, zero-size operand"),
    "pad": ("test_ops_data.py", "negative edge and interior padding"),
    "reverse": ("test_ops_data.py", "several dims"),
    "dynamic-slice": ("test_ops_data.py", "out-of-range starts of signed/unsigned types"),
    "dynamic-update-slice": ("test_ops_data.py", "out-of-range starts of signed/unsigned types"),
    "gather": ("test_ops_data.py", "take, take_along_axis, batched, clamped starts"),
    "reduce": ("test_ops_reduce.py", "one/several/all dims, variadic argmax, every type"),
    "reduce-window": ("test_ops_reduce.py", "strides, padding, dilations"),
    "dot": ("test_ops_linalg.py", "BLAS layouts, batch dims, ints, f16/bf16, zero-size"),
    "convolution": ("test_ops_linalg.py", "dim_labels, groups, dilations"),
    "while": ("test_ops_control.py", "tuple state with layouts, nested, zero trips"),
    "conditional": ("test_ops_control.py", "pred and index, out-of-range index"),
    "call": ("test_ops_control.py", "nested calls, tuple results"),
    "map": ("test_ops_control.py", "unary/binary, layouts, zero-size"),
    "fusion": ("test_ops_control.py", "XLA-fused input (the cpu pipeline re-fuses it)"),
}

ELSEWHERE: dict[str, str] = {
    "sort": "test_sort.py (dedicated sort emitter)",
    "scatter": "test_scatter.py (dedicated scatter emitter)",
    "select-and-scatter": "test_select_and_scatter.py (dedicated emitter)",
    "topk": "test_topk.py (dedicated emitter)",
    "cholesky": "test_cholesky.py (LAPACK potrf routine, every float type and layout)",
    "complex": "test_complex.py (complex elemental rules, every complex opcode, c64 and c128)",
    "real": "test_complex.py",
    "imag": "test_complex.py",
    "fft": "test_fft.py (native fft routine: every fft type, many lengths, 1-3 dims)",
    **{op: "test_collectives_mpi.py (MPI calls: 2- and 4-process jobs against the "
           "interpreter's replicas, one process as the identity)"
       for op in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                  "collective-permute", "replica-id", "partition-id")},
}

UNSUPPORTED: dict[str, str] = {
    "custom-call": "only the targets in xlapy/backends/cpu/custom_calls.py lower (tested by "
                   "test_cholesky.py and the corpus); test_ops_control.py checks that an "
                   "unknown target is a LoweringError",
}


# ---- shapes ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ShapeCase:
    name: str
    dims: tuple[int, ...]
    layout: tuple[int, ...] | None = None     # minor_to_major; None = default

    @property
    def size(self) -> int:
        return int(np.prod(self.dims, dtype=np.int64))

    def text(self, t: str, layout=None) -> str:
        layout = self.layout if layout is None else layout
        s = f"{t}[{','.join(map(str, self.dims))}]"
        return s + ("{" + ",".join(map(str, layout)) + "}" if layout is not None else "")


SHAPES = (
    ShapeCase("scalar", ()),
    ShapeCase("zero", (0, 5)),
    ShapeCase("zero_minor", (3, 0)),
    ShapeCase("odd", (37,)),
    ShapeCase("layout", (3, 17), (0, 1)),
    ShapeCase("3d", (2, 3, 5), (1, 2, 0)),
)


# ---- values ------------------------------------------------------------------------------------

def _float_specials(t: str) -> list[float]:
    fi = ml_dtypes.finfo(DTYPE[t])
    tiny, big, eps = float(fi.tiny), float(fi.max), float(fi.eps)
    sub = float(fi.smallest_subnormal)
    mant = fi.nmant
    large = {"f16": 3e4, "bf16": 1e30, "f32": 1e30, "f64": 1e300}[t]
    return [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.5, 0.75, 2.0, 0.1, 1e-3,
            np.inf, -np.inf, np.nan, -np.nan, big, -big, tiny, -tiny, sub, -sub, 3 * sub,
            tiny - sub,                        # the largest subnormal
            1 + eps, 1 - eps / 2,              # next to one
            1 + eps / 2,                       # a rounding tie in wider types
            2.0 ** mant + 1, -(2.0 ** (mant + 1)) + 2, 2.0 ** (mant - 1) + 0.5,  # ties
            100.25, -7.75, np.pi, -np.e, large, -large / 3, 127.5, -128.5, 40000.0, 300.0]


def _int_specials(t: str) -> list[int]:
    bits = WIDTH[t]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if t in SINTS else (0, (1 << bits) - 1)
    vals = [0, 1, -1, 2, -2, 3, 7, -7, 5, lo, hi, lo + 1, hi - 1, bits - 1, bits, bits + 1,
            2 * bits, 100, -100, 0x55, 1 << (bits - 2), -(1 << (bits - 2)), 6, 63, 64, 65]
    return vals


def _wrap_ints(vals, t: str) -> np.ndarray:
    bits = WIDTH[t]
    u = np.array([int(v) % (1 << bits) for v in vals], dtype=np.dtype(f"u{bits // 8}"))
    return u.view(DTYPE[t])


def specials(t: str) -> np.ndarray:
    """The special values of type t (1-D)."""
    if t == "pred":
        return np.array([False, True])
    if t in FLOATS:
        with np.errstate(over="ignore"):
            x = np.array(_float_specials(t), dtype=np.float64).astype(DTYPE[t])
        _, first = np.unique(x.view(_UINT[x.dtype.itemsize]), return_index=True)
        return x[np.sort(first)]
    return _wrap_ints(dict.fromkeys(_int_specials(t)), t)


def random_values(t: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if t == "pred":
        return rng.integers(0, 2, n).astype(bool)
    if t in FLOATS:
        scale = 10.0 ** rng.uniform(-3, 3, n)
        if t == "f16":
            scale = np.minimum(scale, 100.0)
        x = rng.standard_normal(n) * scale
        small = rng.random(n) < 0.2  # some small integers and halves: exact results, ties
        x[small] = np.round(rng.uniform(-20, 20, small.sum()) * 2) / 2
        return x.astype(DTYPE[t])
    dt = DTYPE[t]
    info = np.iinfo(dt)
    x = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    small = rng.random(n) < 0.3
    x[small] = rng.integers(-9 if t in SINTS else 0, 10, small.sum()).astype(dt)
    return x


def values(t: str, dims, rng: np.random.Generator, offset: int = 0) -> np.ndarray:
    """An array of dims: the specials (rotated by offset) first, then random values."""
    n = int(np.prod(dims, dtype=np.int64))
    sp = np.roll(specials(t), offset)[:n]
    out = np.concatenate([sp, random_values(t, n - len(sp), rng)]) if n > len(sp) else sp
    return out.astype(DTYPE[t]).reshape(dims)


def pair_values(t: str) -> tuple[np.ndarray, np.ndarray]:
    """(x, y): every special value of t against every special value (1-D, equal length)."""
    s = specials(t)
    x, y = np.meshgrid(s, s, indexing="ij")
    return x.ravel(), y.ravel()


def convert_values(src: str, rng: np.random.Generator, n_random: int = 64) -> np.ndarray:
    """1-D values of type src for testing `convert` to every type: the specials, values at
    and next to the rounding ties of every narrower float type, at the edges of every
    integer range (saturation), and random values; floats also get random bit patterns
    (every exponent, NaN payloads)."""
    if src == "pred":
        return np.array([False, True, True, False])
    edges = []
    for k in (7, 8, 11, 12, 15, 16, 24, 25, 31, 32, 53, 54, 63, 64):
        for d in (-1.0, -0.5, 0.0, 0.5, 1.0, 3.0):
            edges += [2.0 ** k + d, -(2.0 ** k) - d]
    base = list(specials(src))
    if src in FLOATS:
        ties = []
        for m in (7, 10, 23):   # bf16, f16, f32 mantissa bits: ties and their neighbours
            for e in (0, 5, -3):
                t = 2.0 ** e * (1 + 2.0 ** -(m + 1))
                ties += [t, -t, t * (1 + 2.0 ** -40), 2.0 ** e * (1 + 3 * 2.0 ** -(m + 1))]
        bounds = [65504.0, 65519.99, 65520.0, 1e5, 3.4028235e38, 3.5e38, 2.0 ** -24,
                  2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -14, 2.0 ** -133, 2.0 ** -149,
                  2.0 ** -150, 1.5 * 2.0 ** -149, 1e-40, 3.3895314e38, 3.39e38, 255.5,
                  -128.5, 127.9, 65535.9, 4294967295.5, -0.9, 0.9]
        with np.errstate(over="ignore"):
            extra = np.array(edges + ties + bounds, dtype=np.float64).astype(DTYPE[src])
        bits = rng.integers(0, 1 << min(WIDTH[src], 63), n_random, dtype=np.int64,
                            endpoint=False).astype(_UINT[DTYPE[src].itemsize])
        if WIDTH[src] == 64:
            bits |= rng.integers(0, 2, n_random).astype(np.uint64) << np.uint64(63)
        rand = np.concatenate([random_values(src, n_random, rng), bits.view(DTYPE[src])])
        return np.concatenate([np.asarray(base, DTYPE[src]), extra, rand])
    ints = [int(v) for v in edges if float(v).is_integer()]
    ints += [(1 << 24) + 1, (1 << 24) + 3, (1 << 53) + 1, (1 << 11) + 1, (1 << 8) + 1,
             (1 << 63) + (1 << 39) + 1, 0x7FFFFF80, 0xFFFFFF7F, 0x10080, 0x10180,
             (1 << 24) + (1 << 16) + 1, (1 << 40) + (1 << 32) + 1, -(1 << 24) - (1 << 16) - 1,
             (1 << 62) + (1 << 54) + 1, (1 << 16) + (1 << 8) + 1]
    lo, hi = (-(1 << (WIDTH[src] - 1)), (1 << (WIDTH[src] - 1)) - 1) if src in SINTS else \
        (0, (1 << WIDTH[src]) - 1)
    ints = [v for v in ints if lo <= v <= hi]
    return np.concatenate([np.asarray(base, DTYPE[src]), np.asarray(ints, DTYPE[src]),
                           random_values(src, n_random, rng)])


def literal(v) -> str:
    """A scalar as HLO literal text (nan, -nan, inf, true, ...)."""
    a = np.asarray(v)
    if a.dtype == np.bool_:
        return "true" if bool(a) else "false"
    if not is_float_dtype(a.dtype):
        return str(int(a))
    f = float(a)
    if np.isnan(f):
        return "-nan" if np.signbit(f) else "nan"
    if np.isinf(f):
        return "inf" if f > 0 else "-inf"
    return repr(f)


# ---- building modules ---------------------------------------------------------------------------

@dataclass
class ModuleText:
    """Builds an entry computation with many outputs: `param` adds a parameter, `op` an
    instruction; `text()` returns HLO text whose root is a tuple of every `output`."""
    name: str = "m"
    params: list = field(default_factory=list)
    lines: list = field(default_factory=list)
    outputs: list = field(default_factory=list)       # (instr name, shape text, label)
    extra: list = field(default_factory=list)         # other computations' text
    _n: int = 0

    def fresh(self, base: str) -> str:
        self._n += 1
        return f"{''.join(c if c.isalnum() else '_' for c in base)}.{self._n}"

    def param(self, shape_text: str) -> str:
        name = f"p{len(self.params)}"
        self.params.append((name, shape_text))
        return name

    def op(self, shape_text: str, expr: str, label: str | None = None, base: str = "v") -> str:
        name = self.fresh(base)
        self.lines.append(f"  {name} = {shape_text} {expr}")
        if label is not None:
            self.outputs.append((name, shape_text, label))
        return name

    def output(self, name: str, shape_text: str, label: str) -> None:
        self.outputs.append((name, shape_text, label))

    def text(self) -> str:
        body = [f"  {n} = {s} parameter({k})" for k, (n, s) in enumerate(self.params)]
        body += self.lines
        shapes = ", ".join(s for _, s, _ in self.outputs)
        names = ", ".join(n for n, _, _ in self.outputs)
        body.append(f"  ROOT out = ({shapes}) tuple({names})")
        return (f"HloModule {self.name}\n\n" + "".join(e + "\n\n" for e in self.extra)
                + "ENTRY main {\n" + "\n".join(body) + "\n}\n")

    @property
    def labels(self) -> list[str]:
        return [label for _, _, label in self.outputs]


# ---- comparing ---------------------------------------------------------------------------------

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_SINT = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def _order_key(a: np.ndarray) -> np.ndarray:
    """Float bits as integers ordered like the floats (TOTALORDER), as f64 (exact enough for
    ulp distances)."""
    s = np.ascontiguousarray(a).view(_SINT[a.dtype.itemsize]).astype(np.int64)
    flip = np.int64(np.iinfo(_SINT[a.dtype.itemsize]).max)
    k = np.where(s < 0, s ^ flip, s)
    return k.astype(np.float64) if a.dtype.itemsize == 8 else k


def ulp_distance(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Units in the last place between two float arrays of one dtype (NaN pairs: 0; NaN
    against a number: inf)."""
    gn, wn = np.isnan(got.astype(np.float32 if got.dtype.itemsize < 4 else got.dtype)), \
        np.isnan(want.astype(np.float32 if want.dtype.itemsize < 4 else want.dtype))
    if got.dtype.itemsize == 8:
        # f64 keys do not fit f64 exactly: difference in integers where the signs agree
        s_g = np.ascontiguousarray(got).view(np.int64)
        s_w = np.ascontiguousarray(want).view(np.int64)
        flip = np.int64(np.iinfo(np.int64).max)
        kg = np.where(s_g < 0, s_g ^ flip, s_g)
        kw = np.where(s_w < 0, s_w ^ flip, s_w)
        same = (kg >= 0) == (kw >= 0)
        with np.errstate(over="ignore"):
            d = np.where(same, np.abs(kg - kw).astype(np.float64),
                         np.abs(kg.astype(np.float64)) + np.abs(kw.astype(np.float64)))
    else:
        d = np.abs(_order_key(got) - _order_key(want)).astype(np.float64)
    d = np.where(gn & wn, 0.0, np.where(gn | wn, np.inf, d))
    return d


def is_float_dtype(dt) -> bool:
    dt = np.dtype(dt)
    return dt.kind == "f" or dt == BF16


def mismatch(got, want, check: str, max_ulps: int = MAX_ULPS) -> str | None:
    """None when got matches want under `check`, else a description of the first
    mismatches."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} != {want.dtype}"
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    if got.size == 0:
        return None
    kind = check[0] if isinstance(check, tuple) else check
    if is_float_dtype(got.dtype):
        if kind == ULP:
            bad = ulp_distance(got, want) > max_ulps
        elif kind == CLOSE:
            rtol, atol = check[1:] if isinstance(check, tuple) else (1e-6, 1e-6)
            g, w = got.astype(np.float64), want.astype(np.float64)
            with np.errstate(invalid="ignore"):
                bad = ~((np.abs(g - w) <= atol + rtol * np.abs(w)) | (g == w)
                        | (np.isnan(g) & np.isnan(w)))
        elif kind == BITS:
            bad = (np.ascontiguousarray(got).view(_UINT[got.dtype.itemsize])
                   != np.ascontiguousarray(want).view(_UINT[want.dtype.itemsize]))
        else:
            gb = np.ascontiguousarray(got).view(_UINT[got.dtype.itemsize])
            wb = np.ascontiguousarray(want).view(_UINT[want.dtype.itemsize])
            g32 = got.astype(np.float32) if got.dtype.itemsize < 4 else got
            w32 = want.astype(np.float32) if want.dtype.itemsize < 4 else want
            bad = (gb != wb) & ~(np.isnan(g32) & np.isnan(w32))  # any NaN payload
    else:
        bad = got != want
    if not bad.any():
        return None
    where = np.argwhere(bad.reshape(got.shape) if got.ndim else bad.reshape(()))
    first = [tuple(int(i) for i in w) for w in where[:6]]
    shown = [f"{i}: got {got[i]!r} want {want[i]!r}" for i in first]
    return f"{int(bad.sum())} of {got.size} elements differ ({kind}); " + "; ".join(shown)


def compare_outputs(got: list, want: list, labels: list, checks) -> None:
    """Compare every output; one assertion listing every mismatching output. `checks` is
    one check for all outputs or a list with one per output."""
    assert len(got) == len(want) == len(labels), (len(got), len(want), len(labels))
    if not isinstance(checks, list):
        checks = [checks] * len(labels)
    errors = []
    for g, w, label, check in zip(got, want, labels, checks):
        msg = mismatch(g, w, check)
        if msg:
            errors.append(f"{label}: {msg}")
    assert not errors, f"{len(errors)} of {len(labels)} outputs differ:\n  " + "\n  ".join(
        errors[:40])
