"""Batching rule of conv_general_dilated (primitives/conv.py): the batch folds into a
dimension the convolution already has, so a batched convolution is one convolution.

With n the batch size, N/C the lhs batch/feature dims, O the kernel's output features,
G/B the feature/batch group counts ("a [x, y] b" means a dim of size x*y, x major):
  lhs batched only, B = 1    N' = [n, N]; the output's N splits back into (n, N)
  lhs batched only, B > 1    N' = [B, n, N/B] (every batch group holds its members of all
                             n), the output's N/B splits into (n, N/B)
  rhs batched only, G = B = 1  O' = [n, O]; the output's features split into (n, O)
  rhs batched only, groups k = max(G, B) > 1
                             O' = [k, n, O/k], the output's features regrouped into
                             [n, k * O/k]
  both batched, B = 1        C' = [n, C] with G' = n*G feature groups, O' = [n, O]: member
                             b's features only meet member b's kernels
  both batched, B > 1        N' = [n, N] with B' = n*B batch groups, O' = [n, O]
(JAX's rule, written out in the same terms.)
"""

from __future__ import annotations

from xlapy.frontend.core import bind
from xlapy.frontend.primitives.conv import conv_general_dilated_p
from xlapy.frontend.primitives.shapes import reshape
from xlapy.frontend.batching.trace import moveaxis, shape_of


def _merge(x, src: int, dst: int):
    """Axis src merged into axis dst (dst numbered without src), src major."""
    x = moveaxis(x, src, dst)
    s = list(shape_of(x))
    s[dst:dst + 2] = [s[dst] * s[dst + 1]]
    return reshape(x, s)


def _split(x, axis: int, k: int):
    """Axis `axis` split into (k, size // k)."""
    s = list(shape_of(x))
    s[axis:axis + 1] = [k, s[axis] // k]
    return reshape(x, s)


def _group_merge(x, bdim: int, d: int, k: int):
    """The batch axis folded into logical dim d split in k groups: [k, n, size/k]."""
    x = moveaxis(x, bdim, 0)
    x = _split(x, d + 1, k)             # [n, .., k, size/k, ..]
    x = _merge(x, 0, d + 1)             # [.., k, n * size/k, ..]
    return _merge(x, d, d)              # [.., k * n * size/k, ..]


@conv_general_dilated_p.def_batch
def _conv(frame, vals, dims, **params):
    (lhs, rhs), (bl, br) = vals, dims
    ls, rs, os_ = params["dimension_numbers"]
    G, B = params["feature_group_count"], params["batch_group_count"]

    def conv(l, r, **changes):
        return bind(conv_general_dilated_p, l, r, **dict(params, **changes))

    if bl is not None and br is not None:
        n = shape_of(lhs)[bl]
        r = _merge(rhs, br, rs[0])
        if B > 1:
            out = conv(_merge(lhs, bl, ls[0]), r, batch_group_count=B * n)
        else:
            out = conv(_merge(lhs, bl, ls[1]), r, feature_group_count=G * n)
        return _split(out, os_[1], n), os_[1]
    if bl is not None:
        n = shape_of(lhs)[bl]
        l = _merge(lhs, bl, ls[0]) if B == 1 else _group_merge(lhs, bl, ls[0], B)
        return _split(conv(l, rhs), os_[0], n), os_[0]
    n = shape_of(rhs)[br]
    k = max(G, B)
    if k == 1:
        return _split(conv(lhs, _merge(rhs, br, rs[0])), os_[1], n), os_[1]
    out = conv(lhs, _group_merge(rhs, br, rs[0], k))   # features [k, n, O/k]
    f = os_[1]
    out = _split(_split(out, f, k), f + 1, n)           # [.., k, n, O/k, ..]
    out = moveaxis(out, f + 1, f)                       # [.., n, k, O/k, ..]
    return _merge(out, f + 1, f + 1), f
