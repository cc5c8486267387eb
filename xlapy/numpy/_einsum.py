"""einsum and tensordot, lowered to dot_general + reduce_sum + transpose.

einsum(subscripts, *operands): NumPy's string form ("ij,jk->ik", "...ij,...jk->...ik",
implicit output "ij,jk" = "ij,jk->ik": the labels appearing once, sorted, after the
broadcast '...' dims). Plan:
  1. per operand: a label repeated within it takes the diagonal (transpose the repeats
     last, merge them, strided slice: no gather); a size-1 dim that broadcasts against a
     larger one (NumPy allows it for any label) is squeezed away; labels used nowhere else
     are summed;
  2. operands are contracted pairwise left to right with dot_general: shared labels still
     needed later (or in the output) are batch dims, the others are contracted;
  3. leftover labels are summed and the result transposed to the output order.
Operands are promoted to their common dtype (np.result_type). `optimize` is accepted and
ignored (left-to-right order). The sublist form einsum(a, [0, 1], b, [1, 2]) is not supported.

tensordot(a, b, axes=2): axes an int N (last N of a with first N of b) or a pair of axis
sequences; result dims: a's free dims then b's, as NumPy.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.frontend.precision import canonicalize as canonicalize_precision
from xlapy.frontend.primitives import shapes as S
from xlapy.numpy._core import asarray, normalize_axis, promote, shape


def _parse(subscripts: str, ndims: list):
    s = subscripts.replace(" ", "")
    if "->" in s:
        lhs, out = s.split("->", 1)
        if "->" in out:
            raise XlapyError(f"einsum: subscripts {subscripts!r} have more than one '->'")
    else:
        lhs, out = s, None
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise XlapyError(f"einsum: subscripts {subscripts!r} name {len(terms)} operand(s) but "
                         f"{len(ndims)} were given")
    n_ell = 0
    for t, nd in zip(terms, ndims):
        if "..." in t:
            n_ell = max(n_ell, nd - len(t.replace("...", "")))
    ell = [f"...{i}" for i in range(n_ell)]

    def labels(term, nd, where):
        if term.count("...") > 1 or "." in term.replace("...", ""):
            raise XlapyError(f"einsum: bad ellipsis in {where} {term!r} of {subscripts!r}")
        for c in term.replace("...", ""):
            if not c.isalpha():
                raise XlapyError(f"einsum: invalid subscript {c!r} in {subscripts!r} (labels "
                                 "are letters)")
        if "..." in term:
            a, b = term.split("...")
            k = nd - len(a) - len(b) if nd is not None else n_ell
            if k < 0:
                raise XlapyError(f"einsum: {where} {term!r} has more labels than the operand "
                                 f"has dims ({nd})")
            return list(a) + ell[n_ell - k:] + list(b)
        if nd is not None and len(term) != nd:
            raise XlapyError(f"einsum: {where} {term!r} has {len(term)} labels but the operand "
                             f"has {nd} dims")
        return list(term)

    ins = [labels(t, nd, f"operand {i}") for i, (t, nd) in enumerate(zip(terms, ndims))]
    if out is None:
        counts = {}
        for lab in ins:
            for c in lab:
                counts[c] = counts.get(c, 0) + 1
        outs = ell + sorted(c for c, k in counts.items() if k == 1 and not c.startswith("..."))
    else:
        outs = labels(out, None, "output")
        if n_ell and "..." not in out:
            raise XlapyError(f"einsum: the operands of {subscripts!r} have '...' dims, so the "
                             "output needs '...' too (NumPy rule)")
        if len(set(outs)) != len(outs):
            raise XlapyError(f"einsum: output subscripts of {subscripts!r} repeat a label")
        seen = {c for lab in ins for c in lab}
        for c in outs:
            if c not in seen:
                raise XlapyError(f"einsum: output label {c!r} of {subscripts!r} does not "
                                 "appear in any operand")
    return ins, outs


def _diagonal(x, labels):
    """Take the diagonal over every label repeated in one operand."""
    while True:
        rep = next((c for c in labels if labels.count(c) > 1), None)
        if rep is None:
            return x, labels
        pos = [i for i, c in enumerate(labels) if c == rep]
        rest = [i for i in range(len(labels)) if i not in pos]
        s = shape(x)
        n = s[pos[0]]
        x = S.transpose(x, rest + pos)
        k = len(pos)
        x = S.reshape(x, tuple(s[i] for i in rest) + (n ** k,))
        step = sum(n ** j for j in range(k))
        m = len(rest)
        if n:
            x = S.slice_(x, [0] * m + [0], [s[i] for i in rest] + [(n - 1) * step + 1],
                         [1] * m + [step])
        labels = [labels[i] for i in rest] + [rep]


def _sum_labels(x, labels, drop):
    axes = [i for i, c in enumerate(labels) if c in drop]
    if not axes:
        return x, labels
    return S.reduce_sum(x, axes), [c for c in labels if c not in drop]


def einsum(subscripts, *operands, optimize=None, dtype=None, precision=None,
           preferred_element_type=None):
    """np.einsum (string form)."""
    if not isinstance(subscripts, str):
        raise XlapyError("einsum: only the string form einsum('ij,jk->ik', a, b) is supported")
    if not operands:
        raise XlapyError("einsum: needs at least one operand")
    ops = [asarray(o) for o in operands]
    if dtype is not None or preferred_element_type is not None:
        ops = promote(*ops, dtype=dtype or preferred_element_type)
    else:
        ops = promote(*ops)
    prec = canonicalize_precision(precision, "einsum")
    ins, out = _parse(subscripts, [len(shape(o)) for o in ops])
    sizes = {}  # a label's size; size-1 dims broadcast against it (as NumPy allows)
    for o, lab in zip(ops, ins):
        for c, n in zip(lab, shape(o)):
            m = sizes.get(c)
            if m is None or m == 1:
                sizes[c] = n
            elif n not in (1, m):
                raise XlapyError(f"einsum: label {c!r} has size {m} and {n} in {subscripts!r} "
                                 f"(operand shapes {[list(shape(o)) for o in ops]})")
    # 1. per-operand: diagonals, broadcast squeezes, private sums
    prepared = []
    for i, (o, lab) in enumerate(zip(ops, ins)):
        o, lab = _diagonal(o, list(lab))
        squeeze = [j for j, c in enumerate(lab) if shape(o)[j] == 1 and sizes[c] != 1]
        if squeeze:
            o = S.reshape(o, tuple(n for j, n in enumerate(shape(o)) if j not in squeeze))
            lab = [c for j, c in enumerate(lab) if j not in squeeze]
        others = set(out).union(*[set(ins[k]) for k in range(len(ins)) if k != i])
        o, lab = _sum_labels(o, lab, {c for c in lab if c not in others})
        prepared.append((o, lab))
    # 2. pairwise contraction, left to right
    cur, cl = prepared[0]
    for i in range(1, len(prepared)):
        nxt, nl = prepared[i]
        later = set(out).union(*[set(p[1]) for p in prepared[i + 1:]])
        cur, cl = _sum_labels(cur, cl, {c for c in cl if c not in nl and c not in later})
        nxt, nl = _sum_labels(nxt, nl, {c for c in nl if c not in cl and c not in later})
        shared = [c for c in cl if c in nl]
        batch = [c for c in shared if c in later]
        contract = [c for c in shared if c not in later]
        dn = ((tuple(cl.index(c) for c in contract), tuple(nl.index(c) for c in contract)),
              (tuple(cl.index(c) for c in batch), tuple(nl.index(c) for c in batch)))
        cur = S.dot_general(cur, nxt, dn, precision=prec)
        cl = batch + [c for c in cl if c not in shared] + [c for c in nl if c not in shared]
    # 3. leftovers and output order
    cur, cl = _sum_labels(cur, cl, {c for c in cl if c not in out})
    return S.transpose(cur, [cl.index(c) for c in out])


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """np.tensordot."""
    prec = canonicalize_precision(precision, "tensordot")
    if preferred_element_type is not None:
        a, b = promote(asarray(a), asarray(b), dtype=preferred_element_type)
    else:
        a, b = promote(asarray(a), asarray(b))
    sa, sb = shape(a), shape(b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > len(sa) or n > len(sb):
            raise XlapyError(f"tensordot: axes={n} is out of range for shapes {list(sa)} and "
                             f"{list(sb)}")
        ax_a, ax_b = list(range(len(sa) - n, len(sa))), list(range(n))
    else:
        try:
            ax_a, ax_b = axes
        except (TypeError, ValueError):
            raise XlapyError(f"tensordot: axes must be an int or a pair of axis lists, got "
                             f"{axes!r}") from None
        ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
        if len(ax_a) != len(ax_b):
            raise XlapyError(f"tensordot: axes {axes!r} name {len(ax_a)} axes of a but "
                             f"{len(ax_b)} of b")
        ax_a = [normalize_axis(x, len(sa)) for x in ax_a]
        ax_b = [normalize_axis(x, len(sb)) for x in ax_b]
    for i, j in zip(ax_a, ax_b):
        if sa[i] != sb[j]:
            raise XlapyError(f"tensordot: shape mismatch: axis {i} of {list(sa)} ({sa[i]}) vs "
                             f"axis {j} of {list(sb)} ({sb[j]})")
    return S.dot_general(a, b, ((tuple(ax_a), tuple(ax_b)), ((), ())), precision=prec)
