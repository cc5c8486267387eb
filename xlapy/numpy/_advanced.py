"""Advanced indexing (integer arrays, boolean masks), `.at[...]` updates, take and
take_along_axis — NumPy's rules, lowered to gather / scatter.

Indexing rules (NumPy's):
  * Integer arrays (and lists) broadcast together to one shape B. Once any array index is
    present, plain integers count as 0-d array indices too.
  * If the array indices are adjacent in the key (no slice, None or Ellipsis between them),
    B replaces them in place; otherwise B goes first, followed by the sliced / None dims.
  * Negative indices wrap. Out-of-bounds indices: with concrete (NumPy) indices an
    IndexError (XlapyIndexError) is raised, as NumPy does; with traced indices XLA's gather
    CLAMPS them into range (no error is possible at run time) — as JAX does. The gradient
    then flows to the clamped position that was read (JAX drops it instead).
  * Boolean masks must be concrete (NumPy arrays or lists): they become integer indices with
    np.nonzero at trace time. A traced mask raises XlapyError: the result's shape would
    depend on the mask's values (use xnp.where(mask, x, 0) instead). A 0-d bool (x[True])
    adds a length-1 (or 0) axis.

`at(x)[key]` (x.at[key] on traced values, like jax): .get(mode=None|"clip"|"fill",
fill_value=None), .set(v), .add(v), .subtract(v), .multiply(v) (= .mul), .divide(v),
.min(v), .max(v); v broadcasts to x[key]'s shape and is cast to x's dtype. Negative
indices wrap; out-of-bounds updates are DROPPED (XLA scatter) — never an error. Duplicate
indices accumulate for add / multiply / min / max; for set the last one wins. jax's
keyword arguments (indices_are_sorted, unique_indices, mode="drop") are accepted.
Implementation: the flat positions x[key] would read (an iota indexed by the same key, with
out-of-bounds entries pointing at a -1 sentinel) drive a 1-d scatter into x.ravel().
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.core import Tracer
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives import indexing as I
from xlapy.frontend.primitives import shapes as S
from xlapy.numpy._core import asarray, broadcast_shapes, broadcast_to, cast, dtype_of, shape


class XlapyIndexError(XlapyError, IndexError):
    """An index is out of bounds (raised for concrete indices, like NumPy's IndexError)."""


class _Plan:
    """A normalized advanced key: operand reshape (for 0-d bools), slices per operand dim,
    the advanced (dim, index array) pairs, and the item layout (for result placement)."""

    def __init__(self):
        self.operand_shape = ()
        self.slices = {}     # operand dim -> slice
        self.adv = []        # (operand dim, int array: np.ndarray or Tracer)
        self.layout = []     # ("S", dim) | ("N",) | ("A", dim) in key order

    @property
    def concrete(self) -> bool:
        return not any(isinstance(a, Tracer) for _, a in self.adv)


def _item(k):
    if isinstance(k, (list, tuple)):
        a = asarray(k)
        return a.astype(np.int64) if isinstance(a, np.ndarray) and a.size == 0 else a
    if isinstance(k, (bool, np.bool_)):
        return np.asarray(k)
    return k


def consumed_dims(k) -> int:
    """How many dims of the indexed array a key item consumes (NumPy): None / Ellipsis and
    0-d booleans none, a boolean array (or nested bool list) its ndim, anything else one."""
    if k is None or k is Ellipsis:
        return 0
    if isinstance(k, (list, tuple)):
        k = _item(k)
    if isinstance(k, (bool, np.bool_)):
        return 0
    if isinstance(k, (np.ndarray, Tracer)) and k.dtype == np.bool_:
        return len(k.shape)
    return 1


def normalize_key(key, nd: int) -> list:
    """The key as a list with Ellipsis expanded to full slices (and missing trailing dims
    added), None entries kept."""
    if not isinstance(key, tuple):
        key = (key,)
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise XlapyIndexError("an index can only have a single ellipsis ('...')")
    n_real = sum(consumed_dims(k) for k in key)
    if n_real > nd:
        raise XlapyIndexError(f"too many indices for array: array is {nd}-dimensional, but "
                              f"{n_real} were indexed")
    out = []
    for k in key:
        out.extend([slice(None)] * (nd - n_real) if k is Ellipsis else [k])
    if not any(k is Ellipsis for k in key):
        out.extend([slice(None)] * (nd - n_real))
    return out


def make_plan(x_shape, items) -> _Plan:
    """Plan the key `items` (Ellipsis already expanded, as _indexing.normalize_key does)."""
    items = [_item(k) for k in items]
    plan = _Plan()
    shp, dim = [], 0
    src = list(x_shape)
    for k in items:
        if k is None:
            plan.layout.append(("N",))
        elif isinstance(k, slice):
            plan.slices[len(shp)] = k
            plan.layout.append(("S", len(shp)))
            shp.append(src[dim] if dim < len(src) else 1)
            dim += 1
        elif isinstance(k, (int, np.integer)):
            plan.adv.append((len(shp), np.asarray(k)))
            plan.layout.append(("A", len(shp)))
            shp.append(src[dim] if dim < len(src) else 1)
            dim += 1
        elif isinstance(k, (np.ndarray, Tracer)) and k.dtype == np.bool_:
            if isinstance(k, Tracer):
                raise XlapyError(
                    f"indexing with a traced boolean mask {k.aval}: the result's shape would "
                    "depend on the mask's values, which are unknown while tracing. Use "
                    "xnp.where(mask, x, 0) (or a fill value) to keep the shape, or pass the "
                    "mask as a concrete NumPy array")
            if k.ndim == 0:  # x[True]: a new length-1 axis indexed by [0] (or by [])
                plan.adv.append((len(shp), np.zeros(int(k), np.int64)))
                plan.layout.append(("A", len(shp)))
                shp.append(1)
                continue
            want = tuple(src[dim:dim + k.ndim])
            if k.shape != want:
                raise XlapyIndexError(
                    f"boolean index did not match indexed array along axis {dim}; the mask has "
                    f"shape {list(k.shape)} but the indexed dims are {list(want)}")
            for nz in np.nonzero(k):
                plan.adv.append((len(shp), nz.astype(np.int64)))
                plan.layout.append(("A", len(shp)))
                shp.append(src[dim])
                dim += 1
        elif isinstance(k, (np.ndarray, Tracer)):
            if np.dtype(k.dtype).kind not in "iu":
                raise XlapyIndexError(f"arrays used as indices must be of integer (or boolean) "
                                      f"type, got {np.dtype(k.dtype)}")
            plan.adv.append((len(shp), k))
            plan.layout.append(("A", len(shp)))
            shp.append(src[dim])
            dim += 1
        else:
            raise XlapyIndexError(f"only integers, slices (`:`), ellipsis (`...`), None and "
                                  f"integer or boolean arrays are valid indices, got "
                                  f"{type(k).__name__}")
    if dim > len(src):
        raise XlapyIndexError(f"too many indices for array: array is {len(src)}-dimensional, "
                              f"but {dim} were indexed")
    for d in range(dim, len(src)):  # dims the key did not reach
        plan.slices[len(shp)] = slice(None)
        plan.layout.append(("S", len(shp)))
        shp.append(src[d])
    plan.operand_shape = tuple(shp)
    return plan


def _adv_first(plan) -> bool:
    """NumPy: advanced indices separated by a slice / None put the broadcast dims first."""
    pos = [i for i, t in enumerate(plan.layout) if t[0] == "A"]
    return bool(pos) and pos[-1] - pos[0] + 1 != len(pos)


def _normalize_index(arr, n: int, dim: int, mode: str):
    """Wrap negatives; mode "numpy" raises for concrete out-of-bounds, "fill" sends them to
    the sentinel position n; "clip" (and traced "numpy") leaves them to gather's clamp."""
    if isinstance(arr, Tracer):
        if arr.dtype.itemsize < 4 or (arr.dtype.kind == "u" and arr.dtype.itemsize < 8):
            arr = B.convert(arr, np.int32 if n < 2 ** 31 - 1 else np.int64)  # room for +n
        if arr.dtype.kind == "u":
            wrapped = arr
        else:
            wrapped = B.select(B.lt(arr, B.zeros_like(arr)), B.add(arr, B.full_like(arr, n)), arr)
        if mode == "fill":
            ok = B.and_(B.ge(wrapped, B.zeros_like(arr)), B.lt(wrapped, B.full_like(arr, n)))
            wrapped = B.select(ok, wrapped, B.full_like(arr, n))
        return wrapped
    a = np.asarray(arr).astype(np.int64)
    bad = (a < -n) | (a >= n)
    if mode == "numpy" and bad.any():
        i = int(a[bad].flat[0])
        raise XlapyIndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
    a = np.where(a < 0, a + n, a)
    if mode == "fill":
        a = np.where(bad, n, a)
    return a


def _index_vectors(arrays):
    """Broadcast the index arrays together and stack them on a new last axis."""
    bshape = broadcast_shapes(*[shape(a) for a in arrays])
    if not any(isinstance(a, Tracer) for a in arrays):
        return np.stack([np.broadcast_to(a, bshape) for a in arrays], -1).astype(np.int64), bshape
    dts = {np.dtype(dtype_of(a)) for a in arrays if isinstance(a, Tracer)}
    dt = dts.pop() if len(dts) == 1 and all(isinstance(a, Tracer) for a in arrays) \
        else np.dtype(np.int64)
    parts = [S.reshape(broadcast_to(cast(a, dt), bshape), bshape + (1,)) for a in arrays]
    return S.concatenate(parts, len(bshape)), bshape


def gather_plan(x, plan: _Plan, mode: str = "numpy", fill_value=None):
    """x[key] for a planned key. mode: "numpy" (concrete OOB raises, traced clamps), "clip"
    or "fill" (OOB reads fill_value)."""
    x = S.reshape(x, plan.operand_shape)
    nd = len(plan.operand_shape)
    starts = [0] * nd
    limits = list(plan.operand_shape)
    strides, flips, sliced = [1] * nd, [], list(plan.operand_shape)
    for d, sl in plan.slices.items():
        n = plan.operand_shape[d]
        start, stop, step = sl.indices(n)
        count = len(range(start, stop, step))
        sliced[d] = count
        if count == 0:
            starts[d] = limits[d] = 0
        elif step > 0:
            starts[d], limits[d], strides[d] = start, start + (count - 1) * step + 1, step
        else:
            starts[d], limits[d], strides[d] = start + (count - 1) * step, start + 1, -step
            flips.append(d)
    x = S.slice_(x, starts, limits, strides)
    if flips:
        x = S.rev(x, flips)
    adv_dims = [d for d, _ in plan.adv]
    if mode == "fill":  # sentinel slot n holds the fill value
        dt = dtype_of(x)
        fv = I.default_fill(dt) if fill_value is None else fill_value
        x = S.pad(x, np.asarray(fv, dtype=dt),
                  [(0, 1, 0) if d in adv_dims else (0, 0, 0) for d in range(nd)])
    arrays = [_normalize_index(a, sliced[d], d, mode) for d, a in plan.adv]
    idx, bshape = _index_vectors(arrays)
    xs = shape(x)
    first = _adv_first(plan)
    # the gather's output: the sliced dims in order, B at b_at (first, or where the
    # adjacent advanced indices stood); the None dims are inserted by the final reshape
    b_at, n_s, final, placed = (0 if first else None), 0, (list(bshape) if first else []), first
    for t in plan.layout:
        if t[0] == "N":
            final.append(1)
        elif t[0] == "S":
            final.append(sliced[t[1]])
            n_s += 1
        elif not placed:
            b_at, placed = n_s, True
            final.extend(bshape)
    s_dims = [t[1] for t in plan.layout if t[0] == "S"]
    nb = len(bshape)
    if any(xs[d] == 0 for d in adv_dims):  # NumPy allows an empty index into an empty axis
        if math.prod(bshape) != 0:
            raise XlapyIndexError(f"index out of bounds for an axis of size 0 (key dims "
                                  f"{adv_dims})")
        return B.full(tuple(final), 0, dtype_of(x))
    dn = I.GatherDimensionNumbers(
        offset_dims=[i if i < b_at else i + nb for i in range(len(s_dims))],
        collapsed_slice_dims=sorted(adv_dims), start_index_map=adv_dims)
    res = I.gather(x, idx, dn, [1 if d in adv_dims else xs[d] for d in range(nd)])
    return S.reshape(res, tuple(final))


def _numpy_key(plan: _Plan, mode: str):
    """The plan as a key NumPy's own indexing evaluates identically (concrete plans)."""
    key = []
    for t in plan.layout:
        if t[0] == "N":
            key.append(None)
        elif t[0] == "S":
            key.append(plan.slices[t[1]])
        else:
            d = t[1]
            arr = dict(plan.adv)[d]
            key.append(_normalize_index(arr, plan.operand_shape[d], d, mode))
    return tuple(key)


def advanced_getitem(x, items):
    """x[items] where items (Ellipsis expanded) holds an integer array, a boolean mask, or
    a list; called by _indexing.getitem."""
    x = asarray(x)
    return gather_plan(x, make_plan(shape(x), items), "numpy")


# ---- .at[...] ---------------------------------------------------------------------------------

def _positions(x_shape, key):
    """Flat positions of x[key] (int array of x[key]'s shape; -1 where an index is out of
    bounds) — concrete when the key is."""
    items = normalize_key(key, len(x_shape))
    plan = make_plan(x_shape, items)
    size = math.prod(x_shape)
    it = np.int32 if size < 2 ** 31 - 1 else np.int64
    if plan.concrete:
        pos = np.arange(size, dtype=it).reshape(plan.operand_shape)
        adv_dims = {d for d, _ in plan.adv}
        pos = np.pad(pos, [(0, 1) if d in adv_dims else (0, 0) for d in range(pos.ndim)],
                     constant_values=-1)
        return pos[_numpy_key(plan, "fill")]
    pos = S.reshape(S.iota(it, (size,)), plan.operand_shape)
    return gather_plan(pos, plan, "fill", fill_value=-1)


class _AtRef:
    def __init__(self, x, key):
        self.x = x
        self.key = key

    def get(self, mode=None, fill_value=None, indices_are_sorted=False, unique_indices=False):
        """x[key]; out-of-bounds indices clamp (mode None / "clip") or read fill_value
        (mode "fill"; default NaN / INT_MIN / True) — never an error."""
        if mode not in (None, "clip", "fill"):
            raise XlapyError(f"at[...].get: mode must be None, 'clip' or 'fill', got {mode!r}")
        x = asarray(self.x)
        plan = make_plan(shape(x), normalize_key(self.key, len(shape(x))))
        if not plan.adv:
            from xlapy.numpy._indexing import getitem
            return getitem(x, self.key)
        return gather_plan(x, plan, mode or "clip", fill_value)

    def _update(self, kind, values, kw):
        bad = set(kw) - {"mode", "indices_are_sorted", "unique_indices"}
        if bad or kw.get("mode") not in (None, "drop", "promise_in_bounds"):
            raise XlapyError(f"at[...].{kind}: unsupported arguments {kw} (out-of-bounds "
                             "updates are always dropped)")
        x = asarray(self.x)
        xs, dt = shape(x), dtype_of(x)
        pos = _positions(xs, self.key)
        ps = shape(pos)
        v = broadcast_to(cast(asarray(values), dt), ps)
        n = math.prod(xs)
        dn = I.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                       scatter_dims_to_operand_dims=(0,))
        fn = {"set": I.scatter, "add": I.scatter_add, "mul": I.scatter_mul,
              "min": I.scatter_min, "max": I.scatter_max}[kind]
        idx = pos.reshape(ps + (1,)) if isinstance(pos, np.ndarray) else S.reshape(pos, ps + (1,))
        out = fn(S.reshape(x, (n,)), idx, v, dn)
        return S.reshape(out, xs)

    def set(self, values, **kw):
        return self._update("set", values, kw)

    def add(self, values, **kw):
        return self._update("add", values, kw)

    def subtract(self, values, **kw):
        from xlapy.numpy._ufuncs import negative
        return self._update("add", negative(asarray(values)), kw)

    def multiply(self, values, **kw):
        return self._update("mul", values, kw)

    mul = multiply

    def divide(self, values, **kw):
        from xlapy.numpy._ufuncs import reciprocal
        if np.dtype(dtype_of(self.x)).kind != "f":
            raise XlapyError("at[...].divide needs a floating-point array")
        return self._update("mul", reciprocal(cast(asarray(values), dtype_of(self.x))), kw)

    def min(self, values, **kw):
        return self._update("min", values, kw)

    def max(self, values, **kw):
        return self._update("max", values, kw)


class _AtIndexer:
    def __init__(self, x):
        self.x = x

    def __getitem__(self, key):
        return _AtRef(self.x, key)


def at(x):
    """The `.at` helper: at(x)[key].add(v) returns x with v added at x[key] (a new array)."""
    return _AtIndexer(x)


# ---- take / take_along_axis ---------------------------------------------------------------------

def take(a, indices, axis=None, mode=None, fill_value=None):
    """np.take. mode None/"raise": concrete out-of-bounds raise, traced clamp; "wrap": modulo;
    "clip": clamp to [0, n-1] (negative indices clip to 0, as NumPy); "fill": fill_value."""
    a = asarray(a)
    if axis is None:
        a, axis = S.reshape(a, (math.prod(shape(a)),)), 0
    nd = len(shape(a))
    from xlapy.numpy._core import normalize_axis
    axis = normalize_axis(axis, nd)
    n = shape(a)[axis]
    idx = asarray(indices)
    if np.dtype(dtype_of(idx)).kind not in "iu":
        raise XlapyIndexError(f"take: indices must be integers, got {np.dtype(dtype_of(idx))}")
    if mode in ("wrap", "clip"):
        if n == 0:
            raise XlapyIndexError("take: cannot do a non-empty take from an empty axis")
        if isinstance(idx, Tracer):
            if mode == "wrap":
                r = B.rem(idx, B.full_like(idx, n))
                idx = B.select(B.lt(r, B.zeros_like(r)), B.add(r, B.full_like(r, n)), r)
            else:
                idx = B.min_(B.max_(idx, B.zeros_like(idx)), B.full_like(idx, n - 1))
        else:
            idx = np.mod(idx, n) if mode == "wrap" else np.clip(idx, 0, n - 1)
        mode = "numpy"
    elif mode in (None, "raise"):
        mode = "numpy"
    elif mode != "fill":
        raise XlapyError(f"take: mode must be 'raise', 'wrap', 'clip' or 'fill', got {mode!r}")
    items = [slice(None)] * axis + [idx] + [slice(None)] * (nd - axis - 1)
    return gather_plan(a, make_plan(shape(a), items), mode, fill_value)


def take_along_axis(arr, indices, axis):
    """np.take_along_axis: out[..., i, ...] = arr[..., indices[..., i, ...], ...]; the
    non-axis dims broadcast. Negative indices wrap; out-of-bounds: concrete raise, traced
    clamp."""
    arr = asarray(arr)
    idx = asarray(indices)
    if axis is None:
        arr, axis = S.reshape(arr, (math.prod(shape(arr)),)), 0
        if len(shape(idx)) != 1:
            raise XlapyError("take_along_axis with axis=None needs 1-d indices")
    from xlapy.numpy._core import normalize_axis
    nd = len(shape(arr))
    if len(shape(idx)) != nd:
        raise XlapyError(f"take_along_axis: indices {list(shape(idx))} and array "
                         f"{list(shape(arr))} must have the same number of dimensions")
    if np.dtype(dtype_of(idx)).kind not in "iu":
        raise XlapyIndexError(f"take_along_axis: indices must be integers, got "
                              f"{np.dtype(dtype_of(idx))}")
    axis = normalize_axis(axis, nd)
    sa, si = shape(arr), shape(idx)
    common = broadcast_shapes(tuple(1 if d == axis else n for d, n in enumerate(sa)),
                              tuple(1 if d == axis else n for d, n in enumerate(si)))
    arr = broadcast_to(arr, tuple(sa[axis] if d == axis else n for d, n in enumerate(common)))
    idx = broadcast_to(idx, tuple(si[axis] if d == axis else n for d, n in enumerate(common)))
    n = sa[axis]
    idx = _normalize_index(idx, n, axis, "numpy")
    if n == 0:
        if math.prod(shape(idx)) != 0:
            raise XlapyIndexError(f"index out of bounds for axis {axis} with size 0")
        return B.full(shape(idx), 0, dtype_of(arr))
    return I.gather_along_axis(arr, idx, axis)


# re-exports: xlapy.numpy imports these names from here
from xlapy.numpy._sorting import argsort, cumprod, cumsum, sort  # noqa: E402,F401
from xlapy.numpy._padding import pad  # noqa: E402,F401
from xlapy.numpy._einsum import einsum, tensordot  # noqa: E402,F401
