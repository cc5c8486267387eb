"""Random HLO programs written directly with xlapy's Builder (every op of the opcode table
that XLA runs, in every element type, with the attributes JAX seldom or never emits).

A program is a small data-flow graph over a pool of values: each step picks an op, takes
operands from the pool (or makes a parameter of the shape it needs) and adds its result.
Several programs are built side by side in one module (a bundle), each with its own
parameters and its own outputs in the root tuple, so that one compilation checks several
programs; the shrinker takes a failing bundle apart.

The builder infers every shape, so a combination the generator gets wrong fails at once
(ShapeError) and the step is retried with another op.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

from xlapy.errors import XlapyError
from xlapy.hlo.builder import Builder, _window
from xlapy.hlo.shape_inference import infer_shape
from xlapy.hlo.shapes import (BF16, F16, F32, F64, PRED, S8, S16, S32, S64, U8, U16, U32,
                              U64, Shape)

from fuzzlib import values

FLOATS = [F32, F32, F32, F32, F16, BF16, F64]
INTS = [S32, S32, S8, S16, S64, U8, U16, U32, U64]
ALL = FLOATS + INTS + [PRED]
SAME_WIDTH = {8: [S8, U8], 16: [S16, U16, F16, BF16], 32: [S32, U32, F32],
              64: [S64, U64, F64]}

UNARY_F = ["exponential", "exponential-minus-one", "log", "log-plus-one", "logistic", "sqrt",
           "rsqrt", "cbrt", "sine", "cosine", "tan", "tanh", "erf", "floor", "ceil",
           "round-nearest-afz", "round-nearest-even", "abs", "negate", "sign", "copy"]
UNARY_S = ["abs", "negate", "sign", "not", "popcnt", "count-leading-zeros"]
UNARY_U = ["negate", "not", "popcnt", "count-leading-zeros"]
BINARY_F = ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum",
            "power", "atan2"]
BINARY_I = ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum",
            "power", "and", "or", "xor", "shift-left", "shift-right-arithmetic",
            "shift-right-logical"]
BINARY_P = ["and", "or", "xor", "maximum", "minimum"]
DIRECTIONS = ["EQ", "NE", "LT", "LE", "GT", "GE"]


class Skip(Exception):
    """This step does not fit the values at hand: try another."""


@dataclass
class Param:
    instr: object
    role: str | None = None
    bound: int = 0


@dataclass
class Program:
    """One generated module: its text, input arrays and what it covers."""
    module: object
    inputs: list
    ops: set = field(default_factory=set)
    dtypes: set = field(default_factory=set)
    programs: int = 1
    source_text: str | None = None  # the text as generated (JAX's), else the module printed

    @property
    def text(self) -> str:
        return self.source_text or self.module.to_string()


def _dims(rng: random.Random, rank: int | None = None) -> tuple[int, ...]:
    if rank is None:
        rank = rng.choices([0, 1, 2, 3, 4], [1, 3, 4, 2, 1])[0]
    sizes = [1, 2, 3, 4, 5, 7, 8, 16, 0]
    weights = [4, 4, 5, 4, 3, 2, 2, 1, 0.35]
    return tuple(rng.choices(sizes, weights)[0] for _ in range(rank))


def _kind(t) -> str:
    return "p" if t is PRED else ("f" if t.is_float else ("s" if t.is_signed else "u"))


class Gen:
    """Builds one bundle of programs into one Builder."""

    def __init__(self, seed: int, max_ops: int = 10):
        self.rng = random.Random(seed)
        self.nprng = np.random.default_rng(seed)
        self.b = Builder(f"fuzz_{seed}")
        self.params: list[Param] = []
        self.max_ops = max_ops
        self.pool: list = []
        self.ops: set[str] = set()
        self.raw: set[int] = set()  # values whose bits are inputs' bits (for bitcasts)

    # ---- values ----------------------------------------------------------------------------
    def param(self, t, dims, role=None, bound=0, b=None):
        p = (b or self.b).parameter(Shape.array(t, dims), f"p{len(self.params)}")
        self.params.append(Param(p, role, bound))
        self.raw.add(id(p))
        if role is None:
            self.pool.append(p)
        return p

    def constant(self, t, dims=(), role=None, bound=0, b=None):
        arr = values.array_for(self.nprng, t.np_dtype, dims, role, bound)
        return (b or self.b).constant(arr, t)

    def pick(self, pred=lambda v: True, fresh=0.25, make=None):
        """A value of the pool satisfying pred (recent ones preferred), else a new one."""
        cands = [v for v in self.pool if v.shape.is_array and pred(v)]
        if cands and self.rng.random() > fresh:
            k = len(cands)
            return cands[min(int(self.rng.expovariate(1.5 / max(k, 1)) ), k - 1) * -1 - 1]
        if make is None:
            raise Skip()
        v = make()
        if not pred(v):
            raise Skip()
        return v

    def same(self, v, t=None):
        """Another value of v's dims (and type t, default v's type)."""
        t = t or v.shape.element_type
        dims = v.shape.dims
        r = self.rng.random()
        if r < 0.15:
            c = self.constant(t)
            return self.b.broadcast(c, dims) if dims else c
        if r < 0.2 and t is not PRED:
            return self.b.iota(t, dims, self.rng.randrange(len(dims))) if dims else \
                self.constant(t)
        return self.pick(lambda u: u.shape.dims == dims and u.shape.element_type is t
                         and u is not v, fresh=0.3, make=lambda: self.param(t, dims))

    def add(self, v, op: str):
        self.ops.add(op)
        self.pool.append(v)
        return v

    # ---- steps -----------------------------------------------------------------------------
    def step(self):
        kinds = [(self.unary, 8), (self.binary, 10), (self.compare_select, 4),
                 (self.convert, 4), (self.bitcast_convert, 1), (self.reduce_precision, 1),
                 (self.clamp, 1), (self.broadcast, 3), (self.reshape, 3), (self.transpose, 2),
                 (self.slice, 2), (self.concatenate, 2), (self.pad, 2), (self.reverse, 1),
                 (self.iota, 1), (self.dynamic_slice, 2), (self.dynamic_update_slice, 2),
                 (self.gather, 3), (self.scatter, 3), (self.reduce, 5),
                 (self.variadic_reduce, 1), (self.reduce_window, 2),
                 (self.select_and_scatter, 1), (self.dot, 4), (self.convolution, 3),
                 (self.sort, 2), (self.topk, 1), (self.while_loop, 1), (self.conditional, 1),
                 (self.call, 1), (self.map, 1), (self.tuple_ops, 1), (self.cholesky, 0.3)]
        fns, weights = zip(*kinds)
        for _ in range(20):
            fn = self.rng.choices(fns, weights)[0]
            try:
                return fn()
            except Skip:
                continue
            except XlapyError:  # a shape the builder rejects: another step
                continue
        return None

    def start(self):
        t = self.rng.choice(ALL)
        return self.param(t, _dims(self.rng))

    # elementwise ------------------------------------------------------------------------------
    def unary(self):
        v = self.pick(lambda u: True, make=self.start)
        t = v.shape.element_type
        k = _kind(t)
        if k == "f":
            op = self.rng.choice(UNARY_F + ["is-finite"])
            if op == "is-finite":
                return self.add(self.b.is_finite(v), op)
        else:
            op = self.rng.choice({"s": UNARY_S, "u": UNARY_U, "p": ["not"]}[k])
        return self.add(self.b._ew(op, v), op)

    def binary(self):
        v = self.pick(make=self.start)
        t = v.shape.element_type
        k = _kind(t)
        op = self.rng.choice(BINARY_F if k == "f" else BINARY_P if k == "p" else BINARY_I)
        if op.startswith("shift") and self.rng.random() < 0.7:
            w = self.param(t, v.shape.dims, role="shift")
        elif op == "power" and k != "f" and self.rng.random() < 0.8:
            w = self.param(t, v.shape.dims, role="small")
        else:
            w = self.same(v)
        if self.rng.random() < 0.5:
            v, w = w, v
        return self.add(self.b._ew(op, v, w), op)

    def compare_select(self):
        v = self.pick(make=self.start)
        t = v.shape.element_type
        w = self.same(v)
        d = self.rng.choice(DIRECTIONS)
        ty = "TOTALORDER" if t.is_float and self.rng.random() < 0.3 else None
        c = self.add(self.b.compare(v, w, d, ty), "compare")
        if self.rng.random() < 0.6:
            x = self.pick(lambda u: u.shape.dims == v.shape.dims, fresh=0.2,
                          make=lambda: self.param(self.rng.choice(ALL), v.shape.dims))
            y = self.same(x)
            return self.add(self.b.select(c, x, y), "select")
        return c

    def convert(self):
        v = self.pick(make=self.start)
        t = self.rng.choice(ALL)
        return self.add(self.b.convert(v, t), "convert")

    def bitcast_convert(self):
        v = self.pick(lambda u: id(u) in self.raw and u.shape.element_type is not PRED,
                      make=lambda: self.param(self.rng.choice(FLOATS + INTS),
                                              _dims(self.rng)))
        t = v.shape.element_type
        out = self.rng.choice(SAME_WIDTH[t.bits])
        r = self.add(self.b.bitcast_convert(v, out), "bitcast-convert")
        self.raw.add(id(r))
        return r

    def reduce_precision(self):
        v = self.pick(lambda u: u.shape.element_type.is_float, make=lambda: self.param(
            self.rng.choice(FLOATS), _dims(self.rng)))
        e, m = self.rng.choice([(8, 7), (5, 10), (8, 23), (4, 3), (5, 2), (11, 52), (3, 1)])
        t = v.shape.element_type
        e = min(e, {16: 5 if t is F16 else 8, 32: 8, 64: 11}[t.bits])
        m = min(m, {16: 10 if t is F16 else 7, 32: 23, 64: 52}[t.bits])
        return self.add(self.b.reduce_precision(v, e, m), "reduce-precision")

    def clamp(self):
        v = self.pick(lambda u: u.shape.element_type is not PRED, make=self.start)
        t = v.shape.element_type
        if t is PRED:
            raise Skip()
        scalar = self.rng.random() < 0.5
        lo = self.constant(t) if scalar else self.same(v)
        hi = self.constant(t) if scalar else self.same(v)
        return self.add(self.b.clamp(lo, v, hi), "clamp")

    # data movement ------------------------------------------------------------------------------
    def broadcast(self):
        v = self.pick(lambda u: u.shape.rank <= 3, make=self.start)
        dims = list(v.shape.dims)
        out_rank = len(dims) + self.rng.randrange(0, 3)
        if out_rank > 5:
            raise Skip()
        pos = sorted(self.rng.sample(range(out_rank), len(dims)))
        out = list(_dims(self.rng, out_rank))
        for p, d in zip(pos, dims):
            out[p] = d
        r = self.b._add("broadcast", [v], {"dimensions": tuple(pos)},
                        declared=Shape.array(v.shape.element_type, out))
        if id(v) in self.raw:
            self.raw.add(id(r))
        return self.add(r, "broadcast")

    def reshape(self):
        v = self.pick(make=self.start)
        dims = list(v.shape.dims)
        r = self.rng.random()
        if r < 0.25:
            out = [int(np.prod(dims, dtype=np.int64))]
        elif r < 0.5 and len(dims) >= 2:
            i = self.rng.randrange(len(dims) - 1)
            out = dims[:i] + [dims[i] * dims[i + 1]] + dims[i + 2:]
        elif r < 0.75:
            i = self.rng.randrange(len(dims) + 1)
            out = dims[:i] + [1] + dims[i:]
        else:
            splits = [i for i, d in enumerate(dims) if d in (4, 6, 8, 16)]
            if not splits:
                raise Skip()
            i = self.rng.choice(splits)
            out = dims[:i] + [2, dims[i] // 2] + dims[i + 1:]
        if len(out) > 5:
            raise Skip()
        res = self.add(self.b.reshape(v, out), "reshape")
        if id(v) in self.raw:
            self.raw.add(id(res))
        return res

    def transpose(self):
        v = self.pick(lambda u: u.shape.rank >= 2, make=lambda: self.param(
            self.rng.choice(ALL), _dims(self.rng, self.rng.randrange(2, 5))))
        perm = list(range(v.shape.rank))
        self.rng.shuffle(perm)
        return self.add(self.b.transpose(v, perm), "transpose")

    def slice(self):
        v = self.pick(lambda u: u.shape.rank >= 1, make=lambda: self.param(
            self.rng.choice(ALL), _dims(self.rng, self.rng.randrange(1, 4))))
        starts, limits, strides = [], [], []
        for d in v.shape.dims:
            s = self.rng.randrange(d + 1)
            e = self.rng.randrange(s, d + 1)
            starts.append(s)
            limits.append(e)
            strides.append(self.rng.choice([1, 1, 2, 3]))
        return self.add(self.b.slice(v, starts, limits, strides), "slice")

    def concatenate(self):
        v = self.pick(lambda u: u.shape.rank >= 1, make=lambda: self.param(
            self.rng.choice(ALL), _dims(self.rng, self.rng.randrange(1, 4))))
        dim = self.rng.randrange(v.shape.rank)
        t = v.shape.element_type
        others = []
        for _ in range(self.rng.randrange(1, 3)):
            dims = list(v.shape.dims)
            dims[dim] = self.rng.choice([0, 1, 2, 3, 5])
            others.append(self.pick(lambda u, dims=dims: u.shape.element_type is t
                                    and len(u.shape.dims) == len(dims) and all(
                                        a == b for i, (a, b) in enumerate(
                                            zip(u.shape.dims, dims)) if i != dim),
                                    fresh=0.5, make=lambda dims=dims: self.param(t, dims)))
        ops = [v] + others
        self.rng.shuffle(ops)
        return self.add(self.b.concatenate(ops, dim), "concatenate")

    def pad(self):
        v = self.pick(lambda u: u.shape.rank >= 1, make=self.start)
        config = []
        for d in v.shape.dims:
            interior = self.rng.choice([0, 0, 0, 1, 2])
            size = d + max(d - 1, 0) * interior
            lo = self.rng.randrange(-min(size, 2), 4)
            hi = self.rng.randrange(-min(size - lo if lo < 0 else size, 2), 4) \
                if size + lo > 0 else self.rng.randrange(0, 3)
            if size + lo + hi < 0:
                hi = -(size + lo)
            config.append((lo, hi, interior))
        pv = self.constant(v.shape.element_type)
        return self.add(self.b.pad(v, pv, config), "pad")

    def reverse(self):
        v = self.pick(lambda u: u.shape.rank >= 1, make=self.start)
        dims = [d for d in range(v.shape.rank) if self.rng.random() < 0.6]
        return self.add(self.b.reverse(v, dims), "reverse")

    def iota(self):
        t = self.rng.choice(FLOATS + INTS)
        dims = _dims(self.rng, self.rng.randrange(1, 4))
        return self.add(self.b.iota(t, dims, self.rng.randrange(len(dims))), "iota")

    # indexing -------------------------------------------------------------------------------------
    def _index_type(self):
        return self.rng.choice([S32, S32, S64, U32, S8, U8])

    def _scalar_index(self, bound):
        t = self._index_type()
        if self.rng.random() < 0.3:
            return self.constant(t, (), "index", bound)
        return self.param(t, (), role="index", bound=bound)

    def dynamic_slice(self):
        v = self.pick(lambda u: u.shape.rank >= 1, make=self.start)
        sizes = [self.rng.randrange(d + 1) for d in v.shape.dims]
        t = self._index_type()
        idx = [self.param(t, (), role="index", bound=d) if self.rng.random() < 0.7
               else self.constant(t, (), "index", d) for d in v.shape.dims]
        return self.add(self.b.dynamic_slice(v, idx, sizes), "dynamic-slice")

    def dynamic_update_slice(self):
        v = self.pick(lambda u: u.shape.rank >= 1, make=self.start)
        t = v.shape.element_type
        sizes = [self.rng.randrange(d + 1) for d in v.shape.dims]
        upd = self.pick(lambda u: u.shape.dims == tuple(sizes) and u.shape.element_type is t,
                        fresh=0.5, make=lambda: self.param(t, sizes))
        it = self._index_type()
        idx = [self.param(it, (), role="index", bound=d) for d in v.shape.dims]
        return self.add(self.b.dynamic_update_slice(v, upd, idx), "dynamic-update-slice")

    def _index_setup(self, operand_dims, mapped_dims, unique=False):
        """Index array for gather/scatter: batch shape, index vector at a random position."""
        k = len(mapped_dims)
        batch = list(_dims(self.rng, self.rng.choice([0, 1, 1, 2])))
        batch = [min(b, 4) for b in batch]
        ivd = self.rng.randrange(len(batch) + 1)
        shape = batch[:ivd] + [k] + batch[ivd:]
        if k == 1 and self.rng.random() < 0.3:  # implicit trailing index vector
            shape, ivd = batch, len(batch)
        bound = max((operand_dims[d] for d in mapped_dims), default=1)
        t = self._index_type()
        role = "unique" if unique else "index"
        if unique:
            bound = min((operand_dims[d] for d in mapped_dims), default=1)
        p = self.param(t, shape, role=role, bound=bound)
        return p, batch, ivd

    def gather(self):
        v = self.pick(lambda u: u.shape.rank >= 1, make=lambda: self.param(
            self.rng.choice(ALL), _dims(self.rng, self.rng.randrange(1, 4))))
        dims = v.shape.dims
        rank = len(dims)
        mapped = self.rng.sample(range(rank), self.rng.randrange(1, rank + 1))
        sizes = [self.rng.randrange(d + 1) if self.rng.random() < 0.5 else min(d, 1)
                 for d in dims]
        collapsed = sorted(d for d in range(rank) if sizes[d] == 1 and self.rng.random() < 0.7)
        idx, batch, ivd = self._index_setup(dims, mapped)
        out_rank = len(batch) + rank - len(collapsed)
        offset = sorted(self.rng.sample(range(out_rank), rank - len(collapsed)))
        r = self.b.gather(v, idx, offset_dims=offset, collapsed_slice_dims=collapsed,
                          start_index_map=mapped, index_vector_dim=ivd, slice_sizes=sizes)
        return self.add(r, "gather")

    def _combiner(self, t, names=None):
        k = _kind(t)
        names = names or (["add", "maximum", "minimum", "multiply"] if k != "p"
                          else ["or", "and"])
        op = self.rng.choice(names)
        return op, self.b.scalar_computation(op, t)

    def _assign_computation(self, t):
        sub = self.b.subcomputation("assign")
        sub.parameter(Shape.array(t, ()), "old")
        new = sub.parameter(Shape.array(t, ()), "new")
        return sub.build(new)

    def scatter(self):
        v = self.pick(lambda u: u.shape.rank >= 1, make=lambda: self.param(
            self.rng.choice(ALL), _dims(self.rng, self.rng.randrange(1, 4))))
        t = v.shape.element_type
        dims = v.shape.dims
        rank = len(dims)
        assign = self.rng.random() < 0.25
        mapped = self.rng.sample(range(rank), self.rng.randrange(1, rank + 1))
        inserted = sorted(d for d in mapped if self.rng.random() < 0.6)
        if assign:  # one element per index, distinct indices in range
            mapped = mapped[:1]
            inserted = list(mapped)
        window = {d: (1 if assign and d in mapped else self.rng.randrange(dims[d] + 1))
                  for d in range(rank) if d not in inserted}
        idx, batch, ivd = self._index_setup(dims, mapped, unique=assign)
        upd_rank = len(batch) + len(window)
        uwd = sorted(self.rng.sample(range(upd_rank), len(window)))
        upd_dims = [0] * upd_rank
        wsizes = [window[d] for d in sorted(window)]
        for p, s in zip(uwd, wsizes):
            upd_dims[p] = s
        rest = [p for p in range(upd_rank) if p not in uwd]
        for p, s in zip(rest, batch):
            upd_dims[p] = s
        if assign and int(np.prod(batch, dtype=np.int64)) > dims[mapped[0]]:
            raise Skip()
        upd = self.param(t, upd_dims)
        comp = self._assign_computation(t) if assign else self._combiner(t)[1]
        r = self.b.scatter(v, idx, upd, comp, update_window_dims=uwd,
                           inserted_window_dims=inserted, scatter_dims_to_operand_dims=mapped,
                           index_vector_dim=ivd, unique_indices=assign and
                           self.rng.random() < 0.5)
        return self.add(r, "scatter")

    # reductions ---------------------------------------------------------------------------------
    def _init(self, op, t):
        # XLA may apply the init value any number of times (even none: a reduction over
        # dimensions of size 1 becomes a reshape): it must be the reducer's identity
        identity = {"add": 0, "multiply": 1, "or": 0, "xor": 0, "and": -1}  # (-1: all ones)
        if op in identity:
            return self.b.constant(np.array(identity[op]).astype(t.np_dtype), t)
        if t.is_float:
            return self.b.constant(np.array(-np.inf if op == "maximum" else np.inf,
                                            t.np_dtype), t)
        if t is PRED:
            return self.b.constant(np.array(op == "minimum"), t)
        info = np.iinfo(t.np_dtype)
        return self.b.constant(np.array(info.min if op == "maximum" else info.max,
                                        t.np_dtype), t)

    def reduce(self):
        v = self.pick(lambda u: u.shape.rank >= 1, make=self.start)
        t = v.shape.element_type
        op, comp = self._combiner(t, None if t is PRED else
                                  ["add", "add", "maximum", "minimum", "multiply"]
                                  + (["and", "or", "xor"] if not t.is_float else []))
        dims = sorted(d for d in range(v.shape.rank) if self.rng.random() < 0.6)
        return self.add(self.b.reduce(v, self._init(op, t), comp, dims), "reduce")

    def variadic_reduce(self):
        """argmax / argmin over a total order: (value, index) pairs, ties to the lower index
        (associative and commutative, so any reduction order gives the same answer)."""
        v = self.pick(lambda u: u.shape.rank >= 1 and u.shape.element_type is not PRED,
                      make=lambda: self.param(self.rng.choice(FLOATS + INTS),
                                              _dims(self.rng, self.rng.randrange(1, 4))))
        t = v.shape.element_type
        it = self.rng.choice([S32, S64])
        dim = self.rng.randrange(v.shape.rank)
        idx = self.b.iota(it, v.shape.dims, dim)
        direction = self.rng.choice(["GT", "LT"])
        sub = self.b.subcomputation("argminmax")
        av = sub.parameter(Shape.array(t, ()), "av")
        ai = sub.parameter(Shape.array(it, ()), "ai")
        xv = sub.parameter(Shape.array(t, ()), "xv")
        xi = sub.parameter(Shape.array(it, ()), "xi")
        ty = "TOTALORDER" if t.is_float else None
        # the init (any value, index -1) is an identity: never picked over an element,
        # always replaced by one (XLA may apply it any number of times)
        better = sub.compare(xv, av, direction, ty)
        tie = sub.and_(sub.compare(xv, av, "EQ", ty), sub.compare(xi, ai, "LT"))
        zero = sub.constant(np.array(0, it.np_dtype), it)
        pick = sub.or_(sub.compare(ai, zero, "LT"),
                       sub.and_(sub.compare(xi, zero, "GE"), sub.or_(better, tie)))
        comp = sub.build(sub.tuple([sub.select(pick, xv, av), sub.select(pick, xi, ai)]))
        init_v = self.b.constant(np.array(0).astype(t.np_dtype), t) if \
            self.rng.random() < 0.5 else self.constant(t)
        init_i = self.b.constant(np.array(-1, it.np_dtype), it)
        r = self.b.reduce([v, idx], [init_v, init_i], comp, [dim])
        self.ops.add("reduce")
        self.ops.add("tuple")
        return self.add(self.b.get_tuple_element(r, self.rng.randrange(2)),
                        "get-tuple-element")

    def _window(self, dims, allow_dilation=True):
        size, stride, pad, bd, wd = [], [], [], [], []
        for d in dims:
            size.append(self.rng.randrange(1, min(d, 3) + 2))
            stride.append(self.rng.choice([1, 1, 2, 3]))
            pad.append((self.rng.randrange(0, 3), self.rng.randrange(0, 3)))
            bd.append(self.rng.choice([1, 1, 1, 2]) if allow_dilation else 1)
            wd.append(self.rng.choice([1, 1, 1, 2]) if allow_dilation else 1)
        return size, stride, pad, bd, wd

    def reduce_window(self):
        v = self.pick(lambda u: 1 <= u.shape.rank <= 4, make=self.start)
        t = v.shape.element_type
        op, comp = self._combiner(t, None if t is PRED else
                                  ["add", "maximum", "minimum", "add", "multiply"])
        size, stride, pad, bd, wd = self._window(v.shape.dims)
        r = self.b.reduce_window(v, self._init(op, t), comp, size, stride, pad, bd, wd)
        return self.add(r, "reduce-window")

    def select_and_scatter(self):
        v = self.pick(lambda u: 1 <= u.shape.rank <= 4 and u.shape.element_type not in
                      (PRED,), make=lambda: self.param(F32, _dims(self.rng, 2)))
        t = v.shape.element_type
        size, stride, pad, _, _ = self._window(v.shape.dims, allow_dilation=False)
        init = self.b.constant(np.array(0).astype(t.np_dtype), t)
        shape = infer_shape("reduce-window", [v.shape, init.shape],
                            {"window": _window(size, stride, pad),
                             "to_apply": self.b.scalar_computation("maximum", t)})
        source = self.param(t, shape.dims)
        sel = self.b.subcomputation("select")
        a = sel.parameter(Shape.array(t, ()), "a")
        c = sel.parameter(Shape.array(t, ()), "b")
        ty = "TOTALORDER" if t.is_float and self.rng.random() < 0.5 else None
        sel_comp = sel.build(sel.compare(a, c, self.rng.choice(["GE", "LE", "GT"]), ty))
        r = self.b.select_and_scatter(v, sel_comp, size, stride, pad, source, init,
                                      self.b.scalar_computation("add", t))
        return self.add(r, "select-and-scatter")

    # linear algebra -------------------------------------------------------------------------------
    def dot(self):
        t = self.rng.choice([F32, F32, F32, F64, F16, BF16, S32, S8, U8, S64])
        nb, nc = self.rng.choice([0, 0, 1, 1, 2]), self.rng.choice([0, 1, 1, 1, 2])
        nl, nr = self.rng.choice([0, 1, 1, 2]), self.rng.choice([0, 1, 1, 2])
        bd = _dims(self.rng, nb)
        cd = [min(x, 8) for x in _dims(self.rng, nc)]
        lhs_roles = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + \
            [("l", i) for i in range(nl)]
        rhs_roles = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + \
            [("r", i) for i in range(nr)]
        self.rng.shuffle(lhs_roles)
        self.rng.shuffle(rhs_roles)
        free = {("l", i): d for i, d in enumerate(_dims(self.rng, nl))}
        free.update({("r", i): d for i, d in enumerate(_dims(self.rng, nr))})

        def size(role):
            return bd[role[1]] if role[0] == "b" else cd[role[1]] if role[0] == "c" \
                else free[role]
        ld = [size(r) for r in lhs_roles]
        rd = [size(r) for r in rhs_roles]
        lhs = self.pick(lambda u: u.shape.dims == tuple(ld) and u.shape.element_type is t,
                        make=lambda: self.param(t, ld))
        rhs = self.param(t, rd)
        contracting = ([lhs_roles.index(("c", i)) for i in range(nc)],
                       [rhs_roles.index(("c", i)) for i in range(nc)])
        batch = ([lhs_roles.index(("b", i)) for i in range(nb)],
                 [rhs_roles.index(("b", i)) for i in range(nb)])
        pref = None
        if self.rng.random() < 0.25:
            pref = {F16: F32, BF16: F32, S8: S32, U8: U32, F32: F64}.get(t)
        return self.add(self.b.dot_general(lhs, rhs, contracting, batch, pref), "dot")

    def convolution(self):
        t = self.rng.choice([F32, F32, F32, F64, F16, BF16])
        ns = self.rng.choice([1, 1, 2, 2, 0])
        groups = self.rng.choice([1, 1, 1, 2, 3])
        bgroups = 1 if groups > 1 else self.rng.choice([1, 1, 1, 1, 2])
        batch = self.rng.choice([1, 2, 3]) * bgroups
        cin = groups * self.rng.choice([1, 2, 3])
        cout = groups * bgroups * self.rng.choice([1, 2])
        spatial = [self.rng.choice([1, 2, 3, 4, 5, 7]) for _ in range(ns)]
        ksz = [self.rng.choice([1, 1, 2, 3]) for _ in range(ns)]

        def labels(letters):
            ls = list(letters) + [str(i) for i in range(ns)]
            self.rng.shuffle(ls)
            return "".join(ls)
        lhs_l, rhs_l, out_l = labels("bf"), labels("io"), labels("bf")
        dn = f"{lhs_l}_{rhs_l}->{out_l}"
        ld = {"b": batch, "f": cin}
        rd = {"i": cin // groups, "o": cout}
        for i in range(ns):
            ld[str(i)], rd[str(i)] = spatial[i], ksz[i]
        lhs = self.param(t, [ld[c] for c in lhs_l])
        rhs = self.param(t, [rd[c] for c in rhs_l])
        strides = [self.rng.choice([1, 1, 2]) for _ in range(ns)]
        pad = [(self.rng.randrange(-1, 3), self.rng.randrange(-1, 3)) for _ in range(ns)]
        lhs_dil = [self.rng.choice([1, 1, 1, 2]) for _ in range(ns)]
        rhs_dil = [self.rng.choice([1, 1, 1, 2]) for _ in range(ns)]
        r = self.b.convolution(lhs, rhs, strides, pad, lhs_dil, rhs_dil, dn, groups, bgroups)
        return self.add(r, "convolution")

    def cholesky(self):
        t = self.rng.choice([F32, F64])
        n = self.rng.choice([1, 2, 3, 4])
        # x x^T + n I is SPD only for finite x (HLO leaves the factor of anything else
        # implementation-defined: XLA's then depends on where LAPACK stops)
        x = self.param(t, (n, n), role="finite")
        a = self.b.dot_general(x, x, ((1,), (1,)))
        eye = self.b.convert(self.b.compare(self.b.iota(S32, (n, n), 0),
                                            self.b.iota(S32, (n, n), 1), "EQ"), t)
        spd = self.b.add(a, self.b.multiply(eye, self.b.broadcast(
            self.b.constant(np.array(n, t.np_dtype), t), (n, n))))
        self.ops.update({"dot", "iota", "compare", "convert", "multiply", "add", "broadcast"})
        return self.add(self.b.op("cholesky", spd, lower=self.rng.random() < 0.5), "cholesky")

    # control --------------------------------------------------------------------------------------
    def sort(self):
        v = self.pick(lambda u: u.shape.rank >= 1 and u.shape.element_type is not PRED,
                      make=lambda: self.param(self.rng.choice(FLOATS + INTS),
                                              _dims(self.rng, self.rng.randrange(1, 3))))
        n = self.rng.choice([1, 1, 2, 3])
        ops = [v] + [self.pick(lambda u, d=v.shape.dims: u.shape.dims == d and u is not v,
                               fresh=0.5, make=lambda: self.param(
                                   self.rng.choice(ALL), v.shape.dims))
                     for _ in range(n - 1)]
        sub = self.b.subcomputation("compare")
        ps = []
        for i, o in enumerate(ops):
            ps.append((sub.parameter(Shape.array(o.shape.element_type, ()), f"a{i}"),
                       sub.parameter(Shape.array(o.shape.element_type, ()), f"b{i}")))
        d = self.rng.choice(["LT", "GT"])
        stable = self.rng.random() < 0.5
        # a strict total order over all operands (lexicographic), or a key compare when the
        # sort is stable: either way the result does not depend on the algorithm
        keys = range(len(ops)) if not stable else range(1)
        res = None
        for i in reversed(list(keys)):
            a, b = ps[i]
            ty = "TOTALORDER" if ops[i].shape.element_type.is_float else None
            lt = sub.compare(a, b, d, ty)
            if res is None:
                res = lt
            else:
                eq = sub.compare(a, b, "EQ", ty)
                res = sub.or_(lt, sub.and_(eq, res))
        comp = sub.build(res)
        r = self.b.sort(ops, comp, self.rng.randrange(v.shape.rank), stable)
        if n == 1:
            return self.add(r, "sort")
        self.ops.add("sort")
        return self.add(self.b.get_tuple_element(r, self.rng.randrange(n)),
                        "get-tuple-element")

    def topk(self):
        v = self.pick(lambda u: u.shape.rank >= 1 and u.shape.element_type in (F32, S32),
                      make=lambda: self.param(self.rng.choice([F32, S32]),
                                              _dims(self.rng, self.rng.randrange(1, 3))))
        k = self.rng.randrange(v.shape.dims[-1] + 1)
        r = self.b.topk(v, k, True)
        self.ops.add("topk")
        return self.add(self.b.get_tuple_element(r, self.rng.randrange(2)),
                        "get-tuple-element")

    def _chain(self, sub, x, steps=2):
        """A few elementwise ops on x inside a sub-builder."""
        t = x.shape.element_type
        for _ in range(steps):
            k = _kind(t)
            if self.rng.random() < 0.5:
                op = self.rng.choice({"f": ["negate", "abs", "sine", "floor", "tanh", "copy"],
                                      "s": ["negate", "not", "abs"], "u": ["not", "negate"],
                                      "p": ["not"]}[k])
                x = sub._ew(op, x)
            else:
                op = self.rng.choice({"f": ["add", "multiply", "maximum", "subtract"],
                                      "s": ["add", "multiply", "xor", "minimum"],
                                      "u": ["add", "multiply", "or"], "p": ["xor", "and"]}[k])
                arr = values.array_for(self.nprng, t.np_dtype, ())
                c = sub.constant(arr, t)
                if x.shape.dims:
                    c = sub.broadcast(c, x.shape.dims)
                x = sub._ew(op, x, c)
            self.ops.add(op)
        return x

    def while_loop(self):
        v = self.pick(lambda u: u.shape.rank <= 2, make=self.start)
        n = self.rng.randrange(0, 5)
        st = Shape.tuple([Shape.array(S32, ()), v.shape])
        body = self.b.subcomputation("body")
        s = body.parameter(st, "s")
        i = body.get_tuple_element(s, 0)
        x = body.get_tuple_element(s, 1)
        nx = self._chain(body, x)
        body_c = body.build(body.tuple([body.add(i, body.constant(np.int32(1))), nx]))
        cond = self.b.subcomputation("cond")
        s = cond.parameter(st, "s")
        limit = cond.constant(np.int32(n))
        cond_c = cond.build(cond.compare(cond.get_tuple_element(s, 0), limit, "LT"))
        init = self.b.tuple([self.b.constant(np.int32(0)), v])
        w = self.b.while_loop(cond_c, body_c, init)
        self.ops.update({"while", "tuple"})
        return self.add(self.b.get_tuple_element(w, 1), "get-tuple-element")

    def conditional(self):
        v = self.pick(lambda u: u.shape.rank <= 2, make=self.start)
        nb = self.rng.choice([2, 2, 3])
        use_pred = nb == 2 and self.rng.random() < 0.5
        index = self.param(PRED, ()) if use_pred else self.param(S32, (), "index", nb)
        branches = []
        for _ in range(nb):
            sub = self.b.subcomputation("branch")
            x = sub.parameter(v.shape, "x")
            branches.append(sub.build(self._chain(sub, x, self.rng.randrange(0, 3))))
        return self.add(self.b.conditional(index, branches, [v] * nb), "conditional")

    def call(self):
        v = self.pick(make=self.start)
        sub = self.b.subcomputation("callee")
        x = sub.parameter(v.shape, "x")
        comp = sub.build(self._chain(sub, x))
        return self.add(self.b.call(comp, v), "call")

    def map(self):
        v = self.pick(lambda u: u.shape.rank >= 1, make=self.start)
        t = v.shape.element_type
        w = self.same(v)
        sub = self.b.subcomputation("mapped")
        x = sub.parameter(Shape.array(t, ()), "x")
        y = sub.parameter(Shape.array(t, ()), "y")
        k = _kind(t)
        op = self.rng.choice({"f": ["add", "multiply", "maximum"], "p": ["and", "or"]}.get(
            k, ["add", "xor", "minimum"]))
        comp = sub.build(self._chain(sub, sub._ew(op, x, y), 1))
        return self.add(self.b.map(comp, [v, w]), "map")

    def tuple_ops(self):
        v = self.pick(make=self.start)
        w = self.pick(make=self.start)
        t = self.b.tuple([v, w])
        if self.rng.random() < 0.5:
            t = self.b.optimization_barrier(t)
            self.ops.add("opt-barrier")
        self.ops.add("tuple")
        return self.add(self.b.get_tuple_element(t, self.rng.randrange(2)),
                        "get-tuple-element")

    # ---- one program, one bundle ------------------------------------------------------------
    def program(self) -> list:
        """Build one program; returns its outputs."""
        self.pool = []
        self.start()
        made = []
        for _ in range(self.rng.randrange(1, self.max_ops + 1)):
            r = self.step()
            if r is not None:
                made.append(r)
        if not made:
            made = [self.pool[-1]]
        outs = [made[-1]] + [v for v in made[:-1] if not v.users and self.rng.random() < 0.3]
        return [o for o in outs if o.shape.is_array]


def generate(seed: int, programs: int = 8, max_ops: int = 10) -> Program:
    """A bundle of `programs` random programs (deterministic in seed)."""
    g = Gen(seed, max_ops)
    outs = []
    for _ in range(programs):
        outs += g.program()
    root = g.b.tuple(outs)
    module = g.b.build_module(root, name=f"fuzz_{seed}")
    inputs = [values.array_for(g.nprng, p.instr.shape.element_type.np_dtype,
                               p.instr.shape.dims, p.role, p.bound) for p in g.params]
    used = {i.opcode for i in module.instructions()} - {"parameter", "constant"}
    return Program(module, inputs, used,
                   {i.shape.element_type.name for i in module.instructions()
                    if i.shape.is_array}, programs)
