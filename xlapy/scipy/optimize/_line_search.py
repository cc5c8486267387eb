"""A line search for the strong Wolfe conditions (Nocedal and Wright, Numerical
Optimization, algorithms 3.5 and 3.6), as one lax.while_loop that makes one function and
gradient evaluation per iteration.

The loop is in one of two phases. Bracketing tries steps start, 2 start, 4 start, ...
until a step satisfies both conditions (done), violates sufficient decrease or stops
decreasing (zoom into [previous, this]), or has a non-negative slope (zoom into
[this, previous]). Zooming tries a point inside [lo, hi] (the cubic through lo, hi and the
previously discarded end when that minimizer is safely inside, else the quadratic through
lo and hi, else the midpoint) and shrinks the interval, keeping at `lo` the best point
that satisfies sufficient decrease. It fails when the interval gets shorter than 1e-5
(1e-10 in double precision), after 30 zoom steps, or when bracketing runs out of
`maxiter` steps.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

import xlapy.numpy as xnp
from xlapy import lax

ZOOM_MAX = 30

# line search status: why it stopped
OK, ZOOM_FAILED, MAXITER = 0, 1, 3


class LineSearchResult(NamedTuple):
    failed: object   # bool: no step satisfying the strong Wolfe conditions was found
    status: object   # OK, ZOOM_FAILED or MAXITER
    a: object        # the step (0 when failed)
    f: object        # f(x + a p)
    g: object        # grad f(x + a p)
    nfev: object     # function (and gradient) evaluations


def _cubic_min(a, fa, da, b, fb, c, fc):
    """The minimizer of the cubic with value fa and slope da at a through (b, fb), (c, fc)
    (NaN when it has none)."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    rb, rc = fb - fa - da * db, fc - fa - da * dc
    k3 = (dc * dc * rb - db * db * rc) / denom
    k2 = (db * db * db * rc - dc * dc * dc * rb) / denom
    return a + (-k2 + xnp.sqrt(k2 * k2 - 3.0 * k3 * da)) / (3.0 * k3)


def _quad_min(a, fa, da, b, fb):
    """The minimizer of the quadratic with value fa and slope da at a through (b, fb)."""
    db = b - a
    curv = (fb - fa - da * db) / (db * db)
    return a - da / (2.0 * curv)


def _inside(x, lo, hi, margin):
    left, right = xnp.minimum(lo, hi), xnp.maximum(lo, hi)
    m = margin * (right - left)
    return (x > left + m) & (x < right - m)


def _pick(mask, new: dict, old: dict) -> dict:
    return {k: xnp.where(mask, new[k], old[k]) if k in new else v for k, v in old.items()}


def line_search(value_and_grad, x, p, f0, g0, start, c1=1e-4, c2=0.9, maxiter=10):
    """A step a > 0 along the descent direction p from x (with f(x) = f0, grad f(x) = g0)
    satisfying f(x + a p) <= f0 + c1 a p.g0 and |p.grad f(x + a p)| <= c2 |p.g0|."""
    dtype = x.dtype
    d0 = xnp.dot(g0, p)
    tiny = 1e-10 if np.dtype(dtype).itemsize >= 8 else 1e-5

    def scalar(v):
        return xnp.asarray(v, dtype)

    zero = scalar(0.0)
    s = dict(zoom=xnp.asarray(False), done=xnp.asarray(False), failed=xnp.asarray(False),
             status=xnp.asarray(OK, np.int32), i=xnp.asarray(0, np.int32),
             j=xnp.asarray(0, np.int32), nfev=xnp.asarray(0, np.int32),
             a_prev=zero, f_prev=f0, d_prev=d0,
             a_lo=zero, f_lo=f0, d_lo=d0, a_hi=zero, f_hi=f0, d_hi=d0, a_rec=zero, f_rec=f0,
             a=zero, f=f0, g=g0)

    def go_on(s):
        return ~(s["done"] | s["failed"])

    def step(s):
        lo, hi = s["a_lo"], s["a_hi"]
        cubic = _cubic_min(lo, s["f_lo"], s["d_lo"], hi, s["f_hi"], s["a_rec"], s["f_rec"])
        quad = _quad_min(lo, s["f_lo"], s["d_lo"], hi, s["f_hi"])
        use_cubic = (s["j"] > 0) & _inside(cubic, lo, hi, 0.2)
        use_quad = ~use_cubic & _inside(quad, lo, hi, 0.1)
        a_zoom = xnp.where(use_cubic, cubic, xnp.where(use_quad, quad, (lo + hi) / 2.0))
        a_grow = xnp.where(s["i"] == 0, start, 2.0 * s["a_prev"])
        a = xnp.where(s["zoom"], a_zoom, a_grow).astype(dtype)
        f, g = value_and_grad(x + a * p)
        f = f.astype(dtype)
        d = xnp.dot(g, p)
        no_decrease = f > f0 + c1 * a * d0
        flat = xnp.abs(d) <= -c2 * d0
        here = dict(a=a, f=f, g=g)

        # bracketing
        up = no_decrease | ((f >= s["f_prev"]) & (s["i"] > 0))
        b_done = ~up & flat
        down = ~up & ~b_done & (d >= 0.0)
        b_next = ~(up | b_done | down)
        # zooming
        z_hi = no_decrease | (f >= s["f_lo"])
        z_done = ~z_hi & flat
        z_flip = ~z_hi & ~z_done & (d * (hi - lo) >= 0.0)
        z_lo = ~z_hi & ~z_done

        zoom, new = s["zoom"], dict(s)
        new["nfev"] = s["nfev"] + 1
        # bracketing: a zoom interval, the accepted step or the next trial
        enter = ~zoom & (up | down)
        b_lo = {k: xnp.where(up, s[k + "_prev"], v) for k, v in (("a", a), ("f", f), ("d", d))}
        b_hi = {k: xnp.where(up, v, s[k + "_prev"]) for k, v in (("a", a), ("f", f), ("d", d))}
        new = _pick(enter, dict(a_lo=b_lo["a"], f_lo=b_lo["f"], d_lo=b_lo["d"],
                                a_hi=b_hi["a"], f_hi=b_hi["f"], d_hi=b_hi["d"],
                                a_rec=(b_lo["a"] + b_hi["a"]) / 2.0,
                                f_rec=(b_lo["f"] + b_hi["f"]) / 2.0,
                                zoom=xnp.asarray(True), j=xnp.asarray(0, np.int32)), new)
        new = _pick(~zoom & b_next, dict(a_prev=a, f_prev=f, d_prev=d, i=s["i"] + 1), new)
        # zooming: shrink [lo, hi]; rec is the end point dropped last
        new = _pick(zoom & z_hi, dict(a_hi=a, f_hi=f, d_hi=d, a_rec=hi, f_rec=s["f_hi"]), new)
        new = _pick(zoom & z_flip, dict(a_hi=lo, f_hi=s["f_lo"], d_hi=s["d_lo"], a_rec=hi,
                                        f_rec=s["f_hi"]), new)
        new = _pick(zoom & z_lo & ~z_flip, dict(a_rec=lo, f_rec=s["f_lo"]), new)
        new = _pick(zoom & z_lo, dict(a_lo=a, f_lo=f, d_lo=d), new)
        new["j"] = xnp.where(zoom, s["j"] + 1, new["j"])

        accepted = xnp.where(zoom, z_done, b_done)
        new = _pick(accepted, dict(here, done=xnp.asarray(True)), new)
        out_of_steps = ~zoom & b_next & (s["i"] + 1 >= maxiter)
        stuck = ~accepted & new["zoom"] & (
            (xnp.abs(new["a_hi"] - new["a_lo"]) <= tiny) | (new["j"] >= ZOOM_MAX))
        new["status"] = xnp.where(out_of_steps, MAXITER,
                                  xnp.where(stuck, ZOOM_FAILED, s["status"])).astype(np.int32)
        new["failed"] = out_of_steps | stuck
        return new

    s = lax.while_loop(go_on, step, s)
    ok = s["done"]
    return LineSearchResult(failed=~ok, status=s["status"], a=xnp.where(ok, s["a"], zero),
                            f=xnp.where(ok, s["f"], f0), g=xnp.where(ok, s["g"], g0),
                            nfev=s["nfev"])
