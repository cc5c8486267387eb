"""vectorize: NumPy's generalized-ufunc wrapper, as jax.numpy.vectorize, built on vmap.

    f = xnp.vectorize(lambda a, b: a @ b, signature="(m,n),(n)->(m)")
    f(mats[5, 3, 4], vec[4])        # [5, 3]: one matrix-vector product per leading index

Without a signature every argument's core is a scalar. The arguments' leading (loop)
dimensions broadcast against each other as in NumPy; each loop dimension becomes one vmap
(an argument of size 1 or missing there is not mapped, so nothing is copied), and the
function runs once, traced, on the core shapes. Core dimensions with the same name must
agree across the inputs; output core dimensions must match the signature (a name only
outputs have is sized by the function). `excluded` names positional indices or keyword
names passed through unvectorized. Non-excluded keyword arguments are vectorized like
positional ones with a scalar core (no signature only).
"""

from __future__ import annotations

import functools
import re

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.core import Tracer
from xlapy.numpy._core import asarray, shape

_DIM = r"\w+"
_CORE = rf"\((?:{_DIM}(?:,{_DIM})*)?\)"
_ARGS = rf"{_CORE}(?:,{_CORE})*"
_SIGNATURE = re.compile(rf"^{_ARGS}->{_ARGS}$")


class VectorizeError(XlapyError, ValueError):
    """vectorize's arguments do not fit its signature."""


def _parse(signature: str):
    sig = signature.replace(" ", "")
    if not _SIGNATURE.match(sig):
        raise VectorizeError(f"not a valid gufunc signature: {signature}")
    ins, outs = sig.split("->")
    parse = lambda s: [tuple(re.findall(_DIM, c)) for c in re.findall(_CORE, s)]
    return parse(ins), parse(outs)


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """A function applying pyfunc over the broadcast loop dimensions of its arguments."""
    excluded = frozenset(excluded)
    in_cores, out_cores = _parse(signature) if signature is not None else (None, None)

    @functools.wraps(pyfunc, updated=())
    def wrapped(*args, **kwargs):
        from xlapy.frontend.vmap import vmap
        where = f" on vectorized function with excluded={set(excluded) or '{}'} and " \
                f"signature={signature!r}"
        fixed_pos = {i: a for i, a in enumerate(args) if i in excluded}
        fixed_kw = {k: v for k, v in kwargs.items() if k in excluded}
        vec = [a for i, a in enumerate(args) if i not in excluded]
        kw_names = [k for k in kwargs if k not in excluded]
        if kw_names and in_cores is not None:
            raise VectorizeError(f"keyword arguments {kw_names} must be excluded when a "
                                 f"signature is given{where}")
        vec += [kwargs[k] for k in kw_names]
        cores = in_cores if in_cores is not None else [()] * len(vec)
        if len(cores) != len(vec):
            raise TypeError(f"wrong number of positional arguments: expected {len(cores)}, "
                            f"got {len(vec)}{where}")
        vec = [a if isinstance(a, Tracer) else asarray(a) for a in vec]
        sizes: dict = {}
        loops = []
        for a, core in zip(vec, cores):
            s = shape(a)
            if len(s) < len(core):
                raise VectorizeError(f"input with shape {s} does not have enough dimensions "
                                     f"for all core dimensions {core}{where}")
            for dim, n in zip(core, s[len(s) - len(core):]):
                if sizes.setdefault(dim, n) != n:
                    raise VectorizeError(f"inconsistent size for core dimension {dim!r}: "
                                         f"{sizes[dim]} vs {n}{where}")
            loops.append(s[:len(s) - len(core)])
        try:
            loop_shape = tuple(np.broadcast_shapes(*loops)) if loops else ()
        except ValueError:
            raise VectorizeError(f"the loop dimensions {loops} of the arguments do not "
                                 f"broadcast{where}") from None

        def core_fn(*vals):
            pos = list(vals[:len(vals) - len(kw_names)])
            full = []
            for i in range(len(args)):
                full.append(fixed_pos[i] if i in fixed_pos else pos.pop(0))
            kw = dict(fixed_kw, **dict(zip(kw_names, vals[len(vals) - len(kw_names):])))
            out = pyfunc(*full, **kw)
            if out_cores is not None:
                _check_outputs(out, out_cores, dict(sizes), where)
            return out

        # every argument gets all loop dims (1 where it broadcasts); a dim of size 1 that
        # the loop is longer than is squeezed out and not mapped
        nloop = len(loop_shape)
        prepared, mapped = [], []
        for a, lp in zip(vec, loops):
            a = _reshape(a, (1,) * (nloop - len(lp)) + tuple(shape(a)))
            full_lp = shape(a)[:nloop]
            keep = [full_lp[d] == loop_shape[d] and loop_shape[d] != 1 for d in range(nloop)]
            squeezed = tuple(n for d, n in enumerate(shape(a)) if d >= nloop or keep[d])
            prepared.append(_reshape(a, squeezed))
            mapped.append(keep)
        fn = core_fn
        for d in reversed(range(nloop)):
            fn = vmap(fn, in_axes=tuple(0 if m[d] else None for m in mapped),
                      axis_size=loop_shape[d])
        return fn(*prepared)

    return wrapped


def _reshape(a, new_shape):
    from xlapy.numpy._shape_ops import reshape
    return a if tuple(shape(a)) == tuple(new_shape) else reshape(a, new_shape)


def _check_outputs(out, out_cores, sizes, where):
    outs = out if len(out_cores) > 1 else (out,)
    if len(out_cores) > 1 and not (isinstance(out, tuple) and len(out) == len(out_cores)):
        raise VectorizeError(f"the function must return a tuple of {len(out_cores)} outputs"
                             f"{where}")
    for o, core in zip(outs, out_cores):
        s = tuple(shape(o))
        if len(s) != len(core):
            raise VectorizeError(f"output shape {s} does not match core dimensions {core}"
                                 f"{where}")
        for dim, n in zip(core, s):
            if sizes.setdefault(dim, n) != n:
                raise VectorizeError(f"output shape {s} does not match core dimensions "
                                     f"{core}{where}")
