"""Structured control flow, with JAX's signatures: fori_loop, while_loop, cond, switch, scan.

    fori_loop(lower, upper, body_fun, init_val)     body_fun(i, val) -> val
    while_loop(cond_fun, body_fun, init_val)        cond_fun(val) -> bool scalar
    cond(pred, true_fun, false_fun, *operands)      the branches get *operands
    switch(index, branches, *operands)              index clamped into [0, len(branches)-1]
    scan(f, init, xs, length=None, reverse=False)   f(carry, x) -> (carry, y); returns
                                                     (carry, ys stacked along axis 0)

Carries, operands and outputs are pytrees (tuples, lists, dicts, None) of arrays. The
functions are traced once on abstract values (so Python `if` on a traced value inside
them is an error: use cond), work eagerly, inside jit (lowering to HLO while /
conditional) and under grad.

Carry rules: leaves of init become arrays as xlapy.numpy.asarray makes them (a Python
float is f32, f64 with jax_enable_x64; 64-bit arrays are canonicalized the same way). The
carry returned by a body must have the same structure, shapes and dtypes as init; a leaf
returned as a Python scalar is cast to the carry's dtype (it is "weak"), any other
mismatch is an XlapyError naming the leaf and both types. cond/switch branches must agree
on their outputs in the same way (a Python scalar in one branch takes the dtype of the
others).

fori_loop with concrete bounds is a scan of length upper-lower (as in JAX), so it can be
reverse-differentiated; with traced bounds it is a while_loop. Its counter is int32 for
Python int bounds, else the bounds' dtype. Differentiation: scan and cond (hence
fori_loop with static bounds) support reverse mode, including grad of grad for cond;
while_loop does not (its VJP raises an XlapyError), see
xlapy.frontend.primitives.control for the rules.
"""

from __future__ import annotations

import numpy as np

import xlapy.numpy  # noqa: F401  (installs the operators of traced values used by bodies)
from xlapy.errors import XlapyError
from xlapy.frontend import pytree
from xlapy.frontend.core import Tracer
from xlapy.frontend.dtypes import canonicalize_value
from xlapy.frontend.graph import make_graph
from xlapy.frontend.primitives import basic as B
from xlapy.frontend.primitives import control as C
from xlapy.frontend.primitives.basic import aval_of

_PY_SCALARS = (bool, int, float)


# ---- pytree helpers -------------------------------------------------------------------------

def _paths(treedef, prefix: str) -> list[str]:
    """One printable path per leaf, in flatten order: carry[0]['w'], ..."""
    return [prefix + pytree.keystr(p) for p in pytree.treedef_paths(treedef)]


def _as_array(x, what: str):
    if isinstance(x, Tracer):
        return x
    try:
        arr = np.asarray(x)
    except Exception:
        arr = None
    if arr is None or (arr.dtype.kind not in "biuf" and not B.is_float(arr.dtype)):
        raise XlapyError(f"{what} must be arrays or numbers, got {type(x).__name__}")
    return canonicalize_value(arr)


def _leaves(tree, what: str):
    leaves, treedef = pytree.flatten(tree)
    return [_as_array(x, what) for x in leaves], treedef


def _tree_str(treedef) -> str:
    return str(pytree.unflatten(treedef, ["*"] * pytree.num_leaves(treedef))).replace("'*'", "*")


def _match_carry(fn_name: str, out, treedef, avals, prefix: str = "carry") -> list:
    """The flat leaves of `out` checked against the carry (structure, shapes, dtypes);
    Python scalars are cast to the carry's dtype."""
    leaves, tree = pytree.flatten(out)
    if tree != treedef:
        raise XlapyError(f"{fn_name} must return a carry with the same structure as the initial "
                         f"value: expected {_tree_str(treedef)}, got {_tree_str(tree)}")
    result = []
    for leaf, aval, path in zip(leaves, avals, _paths(treedef, prefix)):
        if isinstance(leaf, _PY_SCALARS):
            leaf = np.asarray(leaf, dtype=aval.dtype)
        leaf = _as_array(leaf, f"{fn_name}'s outputs")
        got = aval_of(leaf)
        if got.shape != aval.shape or got.dtype != aval.dtype:
            what = "dtype" if got.shape == aval.shape else "shape"
            hint = (f" (cast it with .astype(np.{np.dtype(aval.dtype).name}) or change the "
                    "initial value)" if what == "dtype" else "")
            raise XlapyError(
                f"{fn_name} changed the {what} of {path}: it is {aval} in the initial value but "
                f"{got} after the body; the carry's structure, shapes and dtypes must stay the "
                f"same across iterations{hint}")
        result.append(leaf)
    return result


# ---- while_loop / fori_loop -------------------------------------------------------------------

def while_loop(cond_fun, body_fun, init_val):
    """Repeat `val = body_fun(val)` while `cond_fun(val)` is true; returns the final val.
    Not reverse-differentiable (use fori_loop with static bounds, or scan)."""
    init, treedef = _leaves(init_val, "while_loop's init_val leaves")
    avals = [aval_of(x) for x in init]

    def cond_flat(*c):
        r = cond_fun(pytree.unflatten(treedef, list(c)))
        leaves, t = pytree.flatten(r)
        r = _as_array(leaves[0], "cond_fun's output") if len(leaves) == 1 else None
        if r is None or t != pytree.LEAF or aval_of(r).shape != () or \
                aval_of(r).dtype != np.bool_:
            got = aval_of(r) if r is not None else _tree_str(t)
            raise XlapyError(f"while_loop: cond_fun must return a boolean scalar, got {got}")
        return r

    def body_flat(*c):
        out = body_fun(pytree.unflatten(treedef, list(c)))
        return _match_carry("while_loop: body_fun", out, treedef, avals)

    return pytree.unflatten(treedef, C.while_flat(cond_flat, body_flat, init))


def _index_dtype(lower, upper):
    kinds = []
    for v in (lower, upper):
        if isinstance(v, Tracer) or not isinstance(v, _PY_SCALARS):
            dt = aval_of(v).dtype
            if not np.issubdtype(dt, np.integer):
                raise XlapyError(f"fori_loop: the bounds must be integers, got {aval_of(v)}")
            kinds.append(dt)
        elif not isinstance(v, int) or isinstance(v, bool):
            raise XlapyError(f"fori_loop: the bounds must be integers, got {v!r}")
    return np.result_type(*kinds) if kinds else np.dtype(np.int32)


def fori_loop(lower, upper, body_fun, init_val):
    """val = body_fun(i, val) for i in range(lower, upper); returns val. Concrete bounds make
    a scan (reverse-differentiable); traced bounds a while_loop."""
    dt = _index_dtype(lower, upper)
    init, treedef = _leaves(init_val, "fori_loop's init_val leaves")
    avals = [aval_of(x) for x in init]

    def step(i, c):
        out = body_fun(i, pytree.unflatten(treedef, list(c)))
        return _match_carry("fori_loop: body_fun", out, treedef, avals)

    if not isinstance(lower, Tracer) and not isinstance(upper, Tracer):
        lo, hi = int(np.asarray(lower)), int(np.asarray(upper))
        one = np.asarray(1, dt)

        def body(carry, _):
            i, c = carry[0], carry[1:]
            return [B.add(i, one)] + step(i, c), []

        final, _ = C.scan_flat(body, [np.asarray(lo, dt)] + init, [], max(hi - lo, 0))
        return pytree.unflatten(treedef, final[1:])

    lo, hi = (B.convert(v, dt) if isinstance(v, Tracer) else np.asarray(v, dt)
              for v in (lower, upper))
    final = C.while_flat(lambda i, n, *c: B.lt(i, n),
                         lambda i, n, *c: [B.add(i, np.asarray(1, dt)), n] + step(i, c),
                         [lo, hi] + init)
    return pytree.unflatten(treedef, final[2:])


# ---- cond / switch ----------------------------------------------------------------------------

def _branches(fn_name: str, branch_fns, names, operands):
    """Trace-check the branches; returns flat branch functions whose outputs agree, and the
    output treedef."""
    ops, in_tree = _leaves(tuple(operands), f"{fn_name}'s operands")
    avals = [aval_of(x) for x in ops]
    results = []
    for fn in branch_fns:
        state = {}

        def probe(*vals, fn=fn, state=state):
            out = fn(*pytree.unflatten(in_tree, list(vals)))
            leaves, t = pytree.flatten(out)
            state["tree"] = t
            state["weak"] = [isinstance(x, _PY_SCALARS) for x in leaves]
            return [_as_array(x, f"{fn_name}'s branch outputs") for x in leaves]
        g, _, _ = make_graph(probe, avals)
        results.append((state["tree"], state["weak"], g.out_avals))
    tree0 = results[0][0]
    for (t, _, _), name in zip(results, names):
        if t != tree0:
            raise XlapyError(f"{fn_name}: {names[0]} and {name} must return the same structure, "
                             f"got {_tree_str(tree0)} and {_tree_str(t)}")
    n_out = len(results[0][2])
    targets = []
    paths = _paths(tree0, "output")
    for j in range(n_out):
        strong = [(name, r[2][j]) for r, name in zip(results, names) if not r[1][j]]
        ref_name, ref = strong[0] if strong else (names[0], results[0][2][j])
        for (_, weak, avs), name in zip(results, names):
            av = avs[j]
            if av.shape != ref.shape or (av.dtype != ref.dtype and not weak[j]):
                raise XlapyError(f"{fn_name}: the branches must return the same shapes and dtypes; "
                                 f"{paths[j]} is {ref} in {ref_name} but {av} in {name}")
        targets.append(ref)

    def make(fn):
        def flat(*vals):
            leaves, _ = pytree.flatten(fn(*pytree.unflatten(in_tree, list(vals))))
            return [B.convert(_as_array(x, "branch output"), a.dtype)
                    for x, a in zip(leaves, targets)]
        return flat
    return [make(fn) for fn in branch_fns], ops, tree0


def _scalar(x, what: str):
    x = _as_array(x, what)
    if aval_of(x).shape != ():
        raise XlapyError(f"{what} must be a scalar, got {aval_of(x)}")
    return x


def cond(pred, true_fun, false_fun, *operands):
    """true_fun(*operands) if pred else false_fun(*operands), with a traced pred."""
    if not callable(true_fun) or not callable(false_fun):
        raise XlapyError("cond(pred, true_fun, false_fun, *operands): the branches must be "
                         "callables")
    pred = _scalar(pred, "cond: pred")
    dt = aval_of(pred).dtype
    if dt != np.bool_:
        if dt.kind not in "iuf":
            raise XlapyError(f"cond: pred must be a boolean or numeric scalar, got {aval_of(pred)}")
        pred = B.ne(pred, np.zeros((), dt))
    fns, ops, tree = _branches("cond", [false_fun, true_fun], ["false_fun", "true_fun"],
                               operands)
    return pytree.unflatten(tree, C.cond_flat(pred, fns, ops))


def switch(index, branches, *operands):
    """branches[index](*operands); index is clamped into [0, len(branches) - 1]."""
    branches = list(branches)
    if not branches or not all(callable(b) for b in branches):
        raise XlapyError("switch: branches must be a non-empty sequence of callables")
    index = _scalar(index, "switch: index")
    dt = aval_of(index).dtype
    if not np.issubdtype(dt, np.integer):
        raise XlapyError(f"switch: index must be an integer scalar, got {aval_of(index)}")
    n = len(branches)
    if isinstance(index, Tracer):  # clamp in the index's own type, then to int32
        lo, hi = np.zeros((), dt), np.asarray(min(n - 1, np.iinfo(dt).max), dt)
        index = B.convert(B.min_(B.max_(index, lo), hi), np.int32)
    else:
        index = np.asarray(np.clip(int(index), 0, n - 1), np.int32)
    fns, ops, tree = _branches("switch", branches, [f"branch {k}" for k in range(n)], operands)
    return pytree.unflatten(tree, C.cond_flat(index, fns, ops))


# ---- scan ------------------------------------------------------------------------------------

def scan(f, init, xs, length=None, reverse=False):
    """Loop f over the leading axis of xs carrying state: returns (final carry, ys) where
    ys stacks the per-step outputs y of `carry, y = f(carry, x)`."""
    carry, c_tree = _leaves(init, "scan's init leaves")
    xs_flat, x_tree = _leaves(xs, "scan's xs leaves")
    lengths = set()
    for x, path in zip(xs_flat, _paths(x_tree, "xs")):
        if aval_of(x).ndim == 0:
            raise XlapyError(f"scan: {path} is a scalar; every xs leaf needs a leading axis to "
                             "scan over")
        lengths.add(aval_of(x).shape[0])
    if length is not None:
        length = int(length)
        if lengths and lengths != {length}:
            raise XlapyError(f"scan: length={length} does not match the leading axis of xs "
                             f"({sorted(lengths)})")
    elif len(lengths) > 1:
        raise XlapyError(f"scan: the xs leaves have different leading axis sizes {sorted(lengths)}")
    elif not lengths:
        raise XlapyError("scan: length must be given when xs is None or has no leaves")
    else:
        length = lengths.pop()
    avals = [aval_of(c) for c in carry]
    y_tree = {}

    def body(c, x):
        res = f(pytree.unflatten(c_tree, c), pytree.unflatten(x_tree, x))
        if not isinstance(res, (tuple, list)) or len(res) != 2:
            raise XlapyError("scan: f must return a pair (new_carry, y)")
        new_c = _match_carry("scan: f", res[0], c_tree, avals)
        ys, y_tree["tree"] = _leaves(res[1], "scan: the outputs y of f")
        return new_c, ys

    final, ys = C.scan_flat(body, carry, xs_flat, length, reverse)
    return pytree.unflatten(c_tree, final), pytree.unflatten(y_tree["tree"], ys)
