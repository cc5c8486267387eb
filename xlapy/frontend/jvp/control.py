"""JVP rules of primitives/control.py: each control-flow primitive becomes the same
primitive over its sub-graphs' JVPs (forward mode needs no trip count, so unlike reverse
mode it works through while_loop too).

  cond   a cond with the same index whose branches return (outputs, output tangents): each
         branch is its graph evaluated under its own JVP trace; the tangents of the
         operands that have one are extra operands. Every float output gets a tangent
         (zeros where a branch has none), so the branches agree on their outputs.
  while  a while over (carry, tangents of the float carries): the body is the body graph's
         JVP (the body constants' tangents are captured by it); the condition reads the
         primal carry only. Every float carry carries a tangent (zeros to start when the
         initial value has none: a body may make it nonzero).
  scan   a scan over (carry, carry tangents) and (xs, tangents of the xs that have one);
         the ys gain their tangents; with save_carries, the saved entering carries gain
         the entering carry tangents.
"""

from __future__ import annotations

from xlapy.frontend.forward import jvp_call
from xlapy.frontend.graph import eval_graph
from xlapy.frontend.jvp.rules import instantiate
from xlapy.frontend.primitives import control as C
from xlapy.frontend.primitives.basic import is_float


def _float_positions(avals) -> list:
    return [j for j, a in enumerate(avals) if is_float(a.dtype)]


def _spread(n: int, positions, values) -> list:
    out = [None] * n
    for j, v in zip(positions, values):
        out[j] = v
    return out


def _cond_rule(primals, tangents, branches, const_counts):
    index, args, targs = primals[0], list(primals[1:]), list(tangents[1:])
    nconsts, nargs = sum(const_counts), len(args)
    diff = [j for j, t in enumerate(targs) if t is not None]
    out_avals = branches[0].out_avals
    fo = _float_positions(out_avals)

    def make(k):
        g, start, n = branches[k], sum(const_counts[:k]), const_counts[k]

        def branch(*vals):
            ops = list(vals[:nargs])
            ts = _spread(nargs, diff, vals[nargs:])
            outs, touts = jvp_call(
                lambda *o: eval_graph(g, list(o[start:start + n]), list(o[nconsts:])), ops, ts)
            return list(outs) + [touts[j] for j in fo]
        return branch

    res = C.cond_flat(index, [make(k) for k in range(len(branches))],
                      args + [targs[j] for j in diff])
    n = len(out_avals)
    return list(res[:n]), _spread(n, fo, res[n:])


C.cond_p.def_jvp(_cond_rule)


def _while_rule(primals, tangents, cond_graph, body_graph, cond_nconsts, body_nconsts):
    n0, n1 = cond_nconsts, cond_nconsts + body_nconsts
    cc, bc, init = list(primals[:n0]), list(primals[n0:n1]), list(primals[n1:])
    bct, init_t = list(tangents[n0:n1]), list(tangents[n1:])
    nk, nb = len(init), len(bc)
    fk = _float_positions(body_graph.out_avals)

    def cond_fn(*c):
        return eval_graph(cond_graph, cc, list(c[:nk]))[0]

    def body_fn(*c):
        ts = _spread(nk, fk, c[nk:])
        outs, touts = jvp_call(lambda *v: eval_graph(body_graph, list(v[:nb]), list(v[nb:])),
                               bc + list(c[:nk]), bct + ts)
        return list(outs) + [touts[j] for j in fk]

    t0 = [instantiate(init_t[j], init[j]) for j in fk]
    res = C.while_flat(cond_fn, body_fn, init + t0)
    return list(res[:nk]), _spread(nk, fk, res[nk:])


C.while_p.def_jvp(_while_rule)


def _scan_rule(primals, tangents, body, num_consts, num_carry, length, reverse, save_carries):
    consts, init, xs = C._scan_split(primals, num_consts, num_carry)
    ct, it, xt = C._scan_split(tangents, num_consts, num_carry)
    nk, nc, nx = num_carry, num_consts, len(xs)
    ny = len(body.outputs) - nk
    fk = _float_positions(body.out_avals[:nk])
    fy = _float_positions(body.out_avals[nk:])
    fx = [j for j, t in enumerate(xt) if t is not None]

    def body_fn(carry, x):
        k, tk = list(carry[:nk]), _spread(nk, fk, carry[nk:])
        xv, tx = list(x[:nx]), _spread(nx, fx, x[nx:])
        outs, touts = jvp_call(lambda *v: eval_graph(body, list(v[:nc]), list(v[nc:])),
                               consts + k + xv, ct + tk + tx)
        new_carry = list(outs[:nk]) + [touts[j] for j in fk]
        ys = list(outs[nk:]) + [touts[nk + j] for j in fy]
        if save_carries:  # the entering carry (the residuals of reverse mode) and its tangent
            ys += k + [tk[j] for j in fk]
        return new_carry, ys

    t0 = [instantiate(it[j], init[j]) for j in fk]
    carry, ys = C.scan_flat(body_fn, init + t0, xs + [xt[j] for j in fx], length, reverse)
    out = list(carry[:nk]) + list(ys[:ny])
    t_out = _spread(nk, fk, carry[nk:]) + _spread(ny, fy, ys[ny:ny + len(fy)])
    if save_carries:
        rest = ys[ny + len(fy):]
        out += list(rest[:nk])
        t_out += _spread(nk, fk, rest[nk:])
    return out, t_out


C.scan_p.def_jvp(_scan_rule)
