"""Random programs written with JAX (jnp, lax, jax.nn, grad), lowered to HLO text by
`jax.jit(f).lower(...).as_text(dialect="hlo")`: the HLO that JAX users hand to XLA, with
JAX's own lowering patterns (argmax, softmax, cumulative sums as reduce-window, floor
division guards, gathers from fancy indexing, scatters from .at[], loops and their
gradients).

A bundle is one jitted function of a few parameters computing several independent
programs, each a few steps over a pool of traced values; a step that does not fit the
values at hand (a shape error while tracing) is skipped. A third of the bundles trace with
jax_enable_x64 (f64, s64, u64 values).
"""

from __future__ import annotations

import math
import random

import ml_dtypes
import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

from fuzzlib import values, xla
from fuzzlib.gen_hlo import Program

jax.config.update("jax_platforms", "cpu")

BF16 = np.dtype(ml_dtypes.bfloat16)
F32, F16, F64 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.float64)
I32, I8, U8, U32, I64 = (np.dtype(t) for t in (np.int32, np.int8, np.uint8, np.uint32,
                                                np.int64))


def _is_float(x) -> bool:
    return jnp.issubdtype(x.dtype, jnp.floating)


def _is_int(x) -> bool:
    return jnp.issubdtype(x.dtype, jnp.integer)


def copysign(x, y):
    """jnp.copysign with its sign taken from a number: a NaN's sign bit is not specified
    (the NaN a product makes on x86 has it set; README, Numerics)."""
    return jnp.copysign(x, jnp.where(jnp.isnan(y), jnp.zeros_like(y), y))


# the most elements a generated value may have (the fuzzer runs small arrays many times)
MAX_ELEMENTS = 1 << 16

UNARY = [jnp.sin, jnp.cos, jnp.tanh, jnp.exp, jnp.log, jnp.log1p, jnp.expm1, jnp.sqrt,
         jnp.abs, jnp.sign, jnp.floor, jnp.ceil, jnp.round, jnp.negative, jnp.reciprocal,
         jnp.square, jax.nn.sigmoid, jax.nn.relu, jax.nn.gelu, jax.nn.softplus, jnp.arctan,
         jnp.tan, jnp.cbrt, lax.rsqrt, jax.scipy.special.erf, jnp.isnan, jnp.isinf,
         jnp.nan_to_num, jnp.trunc, jnp.rint, jnp.sinh, jnp.arcsinh, jnp.exp2, jnp.log2]
UNARY_INT = [jnp.abs, jnp.negative, jnp.sign, jnp.invert, lax.population_count, lax.clz,
             jnp.square]
BINARY = [jnp.add, jnp.subtract, jnp.multiply, jnp.true_divide, jnp.maximum, jnp.minimum,
          jnp.arctan2, jnp.power, jnp.remainder, jnp.fmod, jnp.logaddexp, jnp.hypot,
          jnp.floor_divide, copysign, jnp.nextafter]
BINARY_INT = [jnp.add, jnp.subtract, jnp.multiply, jnp.floor_divide, jnp.remainder,
              jnp.fmod, jnp.maximum, jnp.minimum, jnp.bitwise_and, jnp.bitwise_or,
              jnp.bitwise_xor, jnp.left_shift, jnp.right_shift, lax.div, lax.rem,
              lax.shift_right_logical]
COMPARE = [jnp.less, jnp.less_equal, jnp.greater, jnp.equal, jnp.not_equal]
REDUCE = [jnp.sum, jnp.mean, jnp.max, jnp.min, jnp.prod, jnp.argmax, jnp.argmin, jnp.var,
          jnp.std, jax.nn.logsumexp, jnp.any, jnp.all, jnp.nanmax, jnp.nansum, jnp.median]
CUMULATIVE = [jnp.cumsum, jnp.cumprod, lax.cummax, lax.cummin, lax.cumlogsumexp]


class JaxGen:
    def __init__(self, seed: int, x64: bool):
        self.rng = random.Random(seed * 7919 + 1)
        self.x64 = x64
        floats = [F32, F32, F32, F16, BF16] + ([F64, F64] if x64 else [])
        ints = [I32, I32, U8, I8, U32] + ([I64] if x64 else [])
        self.floats, self.ints = floats, ints
        self.ops: set[str] = set()

    def shape(self, rank=None):
        if rank is None:
            rank = self.rng.choice([0, 1, 1, 2, 2, 2, 3])
        return tuple(self.rng.choice([1, 2, 3, 4, 5, 8, 0] if self.rng.random() < 0.1
                                     else [1, 2, 3, 4, 5, 6, 8]) for _ in range(rank))

    def constant(self, dt, shape, role=None, bound=0):
        nprng = np.random.default_rng(self.rng.randrange(1 << 30))
        return values.array_for(nprng, dt, shape, role, bound)

    # ---- steps (each takes the pool, returns a new value or raises) -----------------------
    def pick(self, pool, pred=lambda v: True):
        cands = [v for v in pool if pred(v)]
        if not cands:
            raise TypeError("no operand")
        return cands[-1 - min(int(self.rng.expovariate(0.7)), len(cands) - 1)]

    def partner(self, pool, x):
        r = self.rng.random()
        if r < 0.2:
            return jnp.asarray(self.constant(x.dtype, ()), x.dtype)
        cands = [v for v in pool if v.shape == x.shape and v.dtype == x.dtype and v is not x]
        if cands and r < 0.8:
            return self.rng.choice(cands)
        return jnp.asarray(self.constant(x.dtype, x.shape), x.dtype)

    def step(self, pool):
        r = self.rng.random()
        R = self.rng
        x = self.pick(pool)
        if r < 0.18:
            if _is_float(x):
                f = R.choice(UNARY)
            elif x.dtype == np.bool_:
                f = jnp.logical_not
            else:
                f = R.choice(UNARY_INT)
            self.ops.add(getattr(f, "__name__", "unary"))
            return f(x)
        if r < 0.36:
            y = self.partner(pool, x)
            f = R.choice(BINARY if _is_float(x) else BINARY_INT if _is_int(x)
                         else [jnp.logical_and, jnp.logical_or, jnp.logical_xor])
            if f in (jnp.left_shift, jnp.right_shift, lax.shift_right_logical):
                y = jnp.asarray(self.constant(x.dtype, x.shape, "shift"), x.dtype)
            self.ops.add(getattr(f, "__name__", "binary"))
            return f(x, y) if R.random() < 0.7 else f(y, x)
        if r < 0.42:
            y = self.partner(pool, x)
            c = R.choice(COMPARE)(x, y)
            self.ops.add("compare")
            if R.random() < 0.7:
                z = self.partner(pool, x)
                self.ops.add("where")
                return jnp.where(c, x, z)
            return c
        if r < 0.47:
            dt = R.choice(self.floats + self.ints + [np.dtype(np.bool_)])
            self.ops.add("astype")
            return x.astype(dt)
        if r < 0.57:
            if x.ndim == 0:
                raise TypeError("scalar")
            f = R.choice(REDUCE)
            axis = R.choice([None, R.randrange(x.ndim), tuple(sorted(R.sample(
                range(x.ndim), R.randrange(1, x.ndim + 1))))])
            if f in (jnp.argmax, jnp.argmin) and isinstance(axis, tuple):
                axis = axis[0]
            if f in (jnp.any, jnp.all):
                x = x != 0
            kw = {"keepdims": True} if R.random() < 0.3 and f not in (
                jnp.argmax, jnp.argmin) else {}
            self.ops.add(f.__name__)
            return f(x, axis=axis, **kw)
        if r < 0.61:
            if x.ndim == 0:
                raise TypeError("scalar")
            f = R.choice(CUMULATIVE)
            if f is lax.cumlogsumexp and not _is_float(x):
                raise TypeError("float only")
            self.ops.add(f.__name__)
            axis = R.randrange(x.ndim)
            if f in (jnp.cumsum, jnp.cumprod):
                return f(x, axis=axis)
            return f(x, axis=axis, reverse=R.random() < 0.3)
        if r < 0.70:
            return self.shape_op(x)
        if r < 0.78:
            return self.index_op(x)
        if r < 0.85:
            return self.linalg(x)
        if r < 0.88:
            return self.nn(x)
        if r < 0.95:
            return self.control(x, pool)
        return self.sorting(x)

    def shape_op(self, x):
        R = self.rng
        k = R.randrange(9)
        self.ops.add(["reshape", "transpose", "concatenate", "pad", "roll", "flip", "tile",
                      "broadcast", "slice"][k])
        if k == 0:
            return x.reshape(-1) if R.random() < 0.5 else x.reshape(x.shape + (1,))
        if k == 1:
            return jnp.transpose(x, R.sample(range(x.ndim), x.ndim))
        if k == 2:
            axis = R.randrange(max(x.ndim, 1))
            return jnp.concatenate([x, jnp.flip(x, axis) if x.ndim else x], axis=axis) \
                if x.ndim else jnp.stack([x, x])
        if k == 3:
            mode = R.choice(["constant", "edge", "reflect", "wrap", "symmetric"])
            if mode != "constant" and 0 in x.shape:
                raise TypeError("empty")
            return jnp.pad(x, [(R.randrange(3), R.randrange(3)) for _ in x.shape], mode=mode)
        if k == 4:
            return jnp.roll(x, R.randrange(-3, 4), axis=R.randrange(x.ndim) if x.ndim else None)
        if k == 5:
            return jnp.flip(x)
        if k == 6:
            return jnp.tile(x, [R.choice([1, 2]) for _ in range(max(x.ndim, 1))])
        if k == 7:
            return jnp.broadcast_to(x, (R.choice([1, 3]),) + x.shape)
        sl = tuple(slice(R.randrange(-2, 2) or None, None, R.choice([1, 1, 2, -1]))
                   for _ in x.shape)
        return x[sl]

    def index_op(self, x):
        R = self.rng
        if x.ndim == 0:
            raise TypeError("scalar")
        axis = R.randrange(x.ndim)
        n = x.shape[axis]
        k = R.randrange(6)
        idx = jnp.asarray(self.constant(I32, (R.randrange(1, 5),), "index", n), jnp.int32)
        if k == 0:
            self.ops.add("take")
            return jnp.take(x, idx, axis=axis, mode=R.choice(["clip", "fill", None]))
        if k == 1:
            self.ops.add("gather-index")
            return x[idx] if axis == 0 else x[..., idx]
        if k == 2:
            self.ops.add("scatter")
            upd_shape = (idx.shape[0],) + x.shape[1:]
            upd = jnp.asarray(self.constant(x.dtype, upd_shape), x.dtype)
            at = x.at[idx]
            op = R.choice(["set", "add", "mul", "min", "max"])
            self.ops.add(f"at.{op}")
            if op == "set":  # distinct indices: order-independent
                idx = jnp.asarray(self.constant(I32, (min(n, 3),), "unique", n), jnp.int32)
                upd = jnp.asarray(self.constant(x.dtype, (idx.shape[0],) + x.shape[1:]),
                                  x.dtype)
                return x.at[idx].set(upd, mode=R.choice(["drop", "clip", None]))
            return getattr(at, op)(upd)
        if k == 3:
            self.ops.add("dynamic_slice")
            start = [int(R.randrange(-2, d + 3)) for d in x.shape]
            size = [R.randrange(d + 1) for d in x.shape]
            return lax.dynamic_slice(x, [jnp.int32(s) for s in start], size)
        if k == 4:
            self.ops.add("dynamic_update_slice")
            size = [R.randrange(d + 1) for d in x.shape]
            upd = jnp.asarray(self.constant(x.dtype, size), x.dtype)
            return lax.dynamic_update_slice(x, upd, [jnp.int32(R.randrange(-2, d + 3))
                                                     for d in x.shape])
        self.ops.add("take_along_axis")
        ind = jnp.asarray(self.constant(I32, x.shape, "inrange", n), jnp.int32)
        return jnp.take_along_axis(x, ind, axis=axis)

    def linalg(self, x):
        R = self.rng
        if not (_is_float(x) or x.dtype == I32):
            raise TypeError("dtype")
        k = R.randrange(4)
        if k == 0 and x.ndim >= 1:
            self.ops.add("matmul")
            w = jnp.asarray(self.constant(x.dtype, (x.shape[-1], R.choice([1, 3, 4]))),
                            x.dtype)
            return x @ w
        if k == 1 and x.ndim >= 2:
            self.ops.add("einsum-batch")
            w = jnp.asarray(self.constant(x.dtype, x.shape[:-2] + (x.shape[-1], 3)), x.dtype)
            return jnp.einsum("...ij,...jk->...ik", x, w)
        if k == 2 and x.ndim >= 1:
            self.ops.add("tensordot")
            return jnp.tensordot(x, x, axes=x.ndim if R.random() < 0.5 else 0)
        if x.ndim == 2:
            self.ops.add("dot_general")
            w = jnp.asarray(self.constant(x.dtype, (x.shape[0], 2, x.shape[1])), x.dtype)
            return lax.dot_general(w, x, (((2,), (1,)), ((0,), (0,))))
        raise TypeError("rank")

    def nn(self, x):
        R = self.rng
        if not _is_float(x) or x.ndim < 1:
            raise TypeError("float")
        k = R.randrange(5)
        if k == 0:
            self.ops.add("softmax")
            return jax.nn.softmax(x, axis=-1)
        if k == 1:
            self.ops.add("log_softmax")
            return jax.nn.log_softmax(x, axis=-1)
        if k == 2:
            self.ops.add("one_hot")
            return jax.nn.one_hot(jnp.argmax(x, -1), x.shape[-1], dtype=x.dtype)
        if k == 3 or x.ndim < 3:
            self.ops.add("pool")
            win = (1,) * (x.ndim - 1) + (R.choice([1, 2, 3]),)
            init, f = (-jnp.inf, lax.max) if R.random() < 0.5 else (0.0, lax.add)
            return lax.reduce_window(x, jnp.asarray(init, x.dtype), f, win,
                                     (1,) * (x.ndim - 1) + (R.choice([1, 2]),),
                                     R.choice(["SAME", "VALID"]))
        self.ops.add("conv")
        # x: [N, C, W...] -> grouped convolution
        g = R.choice([1, x.shape[1]]) if x.shape[1] else 1
        cout = g * R.choice([1, 2])
        kshape = (cout, x.shape[1] // max(g, 1)) + tuple(R.choice([1, 2, 3])
                                                         for _ in x.shape[2:])
        w = jnp.asarray(self.constant(x.dtype, kshape), x.dtype)
        return lax.conv_general_dilated(
            x, w, tuple(R.choice([1, 2]) for _ in x.shape[2:]),
            R.choice(["SAME", "VALID", [(R.randrange(-1, 2), R.randrange(0, 2))
                                        for _ in x.shape[2:]]]),
            lhs_dilation=tuple(R.choice([1, 1, 2]) for _ in x.shape[2:]),
            rhs_dilation=tuple(R.choice([1, 1, 2]) for _ in x.shape[2:]),
            feature_group_count=max(g, 1))

    def control(self, x, pool):
        R = self.rng
        k = R.randrange(6)
        if k == 0:
            self.ops.add("fori_loop")
            return lax.fori_loop(0, R.randrange(0, 4),
                                 lambda i, v: v * 2 - 1 if _is_float(v) else v + i.astype(
                                     v.dtype) if v.dtype != np.bool_ else ~v, x)
        if k == 1:
            self.ops.add("while_loop")
            n = R.randrange(1, 5)
            return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] + c[1]),
                                  (0, x))[1] if x.dtype != np.bool_ else x
        if k == 2:
            self.ops.add("cond")
            p = jnp.sum(x.astype(jnp.float32)) > 0
            return lax.cond(p, lambda v: v[::-1] if v.ndim else -v, lambda v: v, x) \
                if x.dtype != np.bool_ else x
        if k == 3:
            self.ops.add("switch")
            i = jnp.int32(R.randrange(-1, 4))
            fs = [lambda v: v, lambda v: v + v, lambda v: v * v]
            return lax.switch(i, fs, x) if x.dtype != np.bool_ else x
        if k == 4 and x.ndim >= 1:
            self.ops.add("scan")
            if x.dtype == np.bool_:
                x = x.astype(jnp.int32)
            _, ys = lax.scan(lambda c, v: (c + v, c * v), jnp.zeros(x.shape[1:], x.dtype), x)
            return ys
        if _is_float(x):
            self.ops.add("grad")
            xs = x.astype(jnp.float32) if x.dtype in (F16, BF16) else x
            fn = self.rng.choice([
                lambda v: jnp.sum(jnp.tanh(v) * v),
                lambda v: jnp.sum(jax.nn.log_softmax(v.reshape(-1)) * 0.5),
                lambda v: jnp.max(v) + jnp.sum(jnp.sort(v.reshape(-1))[:1]),
                lambda v: jnp.sum(jnp.cumsum(v.reshape(-1)) ** 2),
                lambda v: jnp.mean(jnp.maximum(v, 0.5) * v),
                lambda v: jnp.sum(lax.reduce_window(v.reshape((1,) + v.shape), -jnp.inf,
                                                    lax.max, (1,) + (2,) * v.ndim,
                                                    (1,) * (v.ndim + 1), "SAME"))])
            return jax.grad(fn)(xs)
        raise TypeError("grad of int")

    def sorting(self, x):
        R = self.rng
        if x.ndim == 0 or x.dtype == np.bool_:
            raise TypeError("rank")
        k = R.randrange(3)
        if k == 0:
            self.ops.add("sort")
            return jnp.sort(x, axis=R.randrange(x.ndim))
        if k == 1:
            self.ops.add("argsort")
            return jnp.argsort(x, axis=-1, stable=True)
        self.ops.add("top_k")
        kk = R.randrange(0, x.shape[-1] + 1)
        return lax.top_k(x, kk)[R.randrange(2)]

    # ---- a bundle ------------------------------------------------------------------------
    def build(self, programs: int):
        nparams = self.rng.randrange(1, 4)
        specs = []
        for _ in range(nparams):
            dt = self.rng.choice(self.floats + self.ints)
            specs.append((dt, self.shape()))
        seed = self.rng.randrange(1 << 30)
        gen = self

        def f(*args):
            gen.rng = random.Random(seed)
            outs = []
            for _ in range(programs):
                pool = list(args)
                made = []
                for _ in range(gen.rng.randrange(1, 6)):
                    for _attempt in range(6):
                        try:
                            v = gen.step(pool)
                        except (TypeError, ValueError, IndexError, ZeroDivisionError,
                                NotImplementedError):
                            continue
                        if isinstance(v, jax.Array) or hasattr(v, "shape"):
                            if math.prod(v.shape) > MAX_ELEMENTS:
                                # (an outer product of an outer product: f32[256]^4 is
                                # 17 GB, which killed a campaign worker, jax 21001506)
                                continue
                            pool.append(v)
                            made.append(v)
                            break
                if made:
                    outs.append(made[-1])
            return tuple(outs) if outs else (args[0],)
        return f, specs


def generate(seed: int, programs: int = 6) -> Program:
    x64 = seed % 3 == 0
    g = JaxGen(seed, x64)
    f, specs = g.build(programs)
    with jax.enable_x64(x64):
        avals = [jax.ShapeDtypeStruct(s, dt) for dt, s in specs]
        lowered = jax.jit(f).lower(*avals)
    from xlapy.hlo.parser import parse
    from xlapy.hlo.stablehlo import parse_stablehlo
    own = parse_stablehlo(lowered.as_text())
    if xla.divides_constants(own):
        # jaxlib's StableHLO -> HLO conversion folds an integer division of constants and
        # dies of SIGFPE on a zero divisor (jax seed 18005373): xlapy's own reading of the
        # StableHLO is the module, which XLA is no reference for (xla.crashes_xla)
        text = own.to_string()
    else:
        text = lowered.as_text(dialect="hlo")
    module = parse(text)
    nprng = np.random.default_rng(seed)
    inputs = [values.array_for(nprng, p.shape.dtype, p.shape.dims)
              for p in module.entry.parameters]
    used = {i.opcode for i in module.instructions()} - {"parameter", "constant"}
    prog = Program(module, inputs, {"jax:" + o for o in g.ops} | used,
                   {i.shape.element_type.name for i in module.instructions()
                    if i.shape.is_array}, programs)
    prog.source_text = text
    return prog
