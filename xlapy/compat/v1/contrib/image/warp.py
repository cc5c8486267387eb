"""tf.contrib.image's warps: dense_image_warp (each pixel read back along a flow field,
bilinearly), interpolate_spline (polyharmonic splines through scattered points) and
sparse_image_warp (a dense flow interpolated from moved control points), as TF 1.15
computes them.

dense_image_warp(image, flow): output[b, y, x] = image[b, y - flow[b, y, x, 0],
x - flow[b, y, x, 1]], read bilinearly between the four pixels around the point; a point
outside the image takes the value of the nearest edge (the cell's lower corner is clamped to
[0, size - 2], its weight to [0, 1]). All graph ops (gathers of the flattened image, floors,
clamps), so it compiles under XLA and is differentiable with respect to the image and the
flow (the flow's gradient is that of the interpolation weights: 0 where a weight is clamped,
and, as TF's maximum, where a weight is exactly 0).

interpolate_spline(train_points, train_values, query_points, order): the function
f(x) = sum_i w_i phi(|x - c_i|) + v . [x, 1] through (c_i, f_i), phi(r) = r^order (odd
order) or r^order log r (even order), its weights solving the square system of the
interpolation conditions and sum_i w_i [c_i, 1] = 0 (regularization_weight added to the
diagonal of the phi block), one system per batch element. sparse_image_warp interpolates the
control points' displacements (dest - source, at dest) into a dense flow by such a spline
and warps the image by it: (warped image, dense flow).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import Tensor, get_default_graph
from xlapy.compat.v1.ops._common import tensor
from xlapy.compat.v1.ops.array_ops import (concat, expand_dims, ones_like, reshape, shape,
                                           transpose)
from xlapy.compat.v1.ops.diag_ops import matrix_diag_part
from xlapy.compat.v1.ops.gather_ops import gather
from xlapy.compat.v1.ops.linalg_ops import matrix_solve
from xlapy.compat.v1.ops.manip_ops import range_
from xlapy.compat.v1.ops.math_ops import (add, cast, floor, log, matmul, maximum, minimum,
                                          multiply, pow, reduce_sum, sqrt, square, subtract)

_EPSILON = 1e-10


def _static_dims(x: Tensor, what: str, names: str):
    dims = x.shape.dims
    if dims is None or len(dims) != len(names.split()):
        raise InvalidArgumentError(f"{what} must be {len(names.split())}-D [{names}], got "
                                   f"shape {x.shape.tf_str()}")
    return dims


def _interpolate_bilinear(grid: Tensor, query_points: Tensor) -> Tensor:
    """grid [b, h, w, c] read at the (y, x) points of query_points [b, ..., 2] (grid
    coordinates, clamped to the grid's edge cells): [b, ..., c]."""
    b, h, w, c = _static_dims(grid, "the grid", "batch height width channels")
    if h is None or w is None or c is None:
        raise InvalidArgumentError(f"dense_image_warp needs the height, width and channels of "
                                   f"the image when the graph is built, got "
                                   f"{grid.shape.tf_str()}")
    if h < 2:
        raise InvalidArgumentError("Grid height must be at least 2.")
    if w < 2:
        raise InvalidArgumentError("Grid width must be at least 2.")
    qt, gt = query_points.dtype, grid.dtype
    lo, hi = [], []
    alphas = []
    for axis, size in ((0, h), (1, w)):
        q = query_points[..., axis]
        fl = minimum(maximum(tensor(np.zeros((), qt.np)), floor(q)),
                     tensor(np.asarray(size - 2, qt.np)))
        i0 = cast(fl, dtypes.int32)
        lo.append(i0)
        hi.append(add(i0, 1))
        a = cast(subtract(q, fl), gt)
        a = minimum(maximum(tensor(np.zeros((), gt.np)), a), tensor(np.ones((), gt.np)))
        alphas.append(expand_dims(a, -1))
    flat = reshape(grid, [-1, c])
    extra = (query_points.shape.ndims or 3) - 2  # the query dimensions after the batch
    if b is not None:
        starts = tensor(np.arange(b, dtype=np.int32) * np.int32(h * w))
    else:
        starts = multiply(range_(shape(grid)[0]), h * w)
    starts = reshape(starts, [-1] + [1] * extra)

    def pick(yi, xi):
        return gather(flat, add(starts, add(multiply(yi, w), xi)))

    top_left, top_right = pick(lo[0], lo[1]), pick(lo[0], hi[1])
    bottom_left, bottom_right = pick(hi[0], lo[1]), pick(hi[0], hi[1])
    top = add(multiply(alphas[1], subtract(top_right, top_left)), top_left)
    bottom = add(multiply(alphas[1], subtract(bottom_right, bottom_left)), bottom_left)
    return add(multiply(alphas[0], subtract(bottom, top)), top)


def dense_image_warp(image, flow, name="dense_image_warp"):
    """image [batch, h, w, c] warped by flow [batch, h, w, 2]: output[b, y, x] =
    image[b, y - flow[..., 0], x - flow[..., 1]], bilinearly (see the module doc)."""
    with get_default_graph().name_scope(name or "dense_image_warp"):
        image, flow = tensor(image), tensor(flow)
        if image.shape.ndims != 4:
            raise InvalidArgumentError(f"Grid must be 4 dimensional. Received size: "
                                       f"{image.shape.tf_str()}")
        fd = flow.shape.dims
        if fd is None or len(fd) != 4 or fd[3] not in (None, 2):
            raise InvalidArgumentError(f"flow must be [batch, height, width, 2], got "
                                       f"{flow.shape.tf_str()}")
        if not flow.shape.is_compatible_with(image.shape.as_list()[:3] + [2]):
            raise InvalidArgumentError(f"flow {flow.shape.tf_str()} does not match the image "
                                       f"{image.shape.tf_str()}")
        _, h, w, _ = image.shape.dims
        if h is None or w is None:
            raise InvalidArgumentError(f"dense_image_warp needs the height and width of the "
                                       f"image when the graph is built, got "
                                       f"{image.shape.tf_str()}")
        ys, xs = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
        grid = tensor(np.stack([ys, xs], axis=2)[None].astype(flow.dtype.np))
        return _interpolate_bilinear(image, subtract(grid, flow))


# ---- polyharmonic splines --------------------------------------------------------------------

def _phi(r2: Tensor, order: int) -> Tensor:
    """The radial basis function of the squared distances r2."""
    eps = tensor(np.asarray(_EPSILON, r2.dtype.np))
    if order == 1:
        return sqrt(maximum(r2, eps))
    if order == 2:
        return multiply(multiply(0.5, r2), log(maximum(r2, eps)))
    if order == 4:
        return multiply(multiply(0.5, square(r2)), log(maximum(r2, eps)))
    r2 = maximum(r2, eps)
    if order % 2 == 0:
        return multiply(multiply(0.5, pow(r2, 0.5 * order)), log(r2))
    return pow(r2, 0.5 * order)


def _cross_squared_distances(x: Tensor, y: Tensor) -> Tensor:
    """[b, n, m]: |x_i - y_j|^2 as |x_i|^2 - 2 x_i.y_j + |y_j|^2."""
    xx = expand_dims(reduce_sum(square(x), 2), 2)
    yy = expand_dims(reduce_sum(square(y), 2), 1)
    return add(subtract(xx, multiply(2.0, matmul(x, y, adjoint_b=True))), yy)


def _pairwise_squared_distances(x: Tensor) -> Tensor:
    xxt = matmul(x, x, adjoint_b=True)
    sq = expand_dims(matrix_diag_part(xxt), 2)
    from_rows = subtract(sq, multiply(2.0, xxt))
    return add(from_rows, transpose(sq, [0, 2, 1]))


def interpolate_spline(train_points, train_values, query_points, order,
                       regularization_weight=0.0, name="interpolate_spline"):
    """The polyharmonic spline of the given order through (train_points [b, n, d],
    train_values [b, n, k]) evaluated at query_points [b, m, d]: [b, m, k]."""
    with get_default_graph().name_scope(name or "interpolate_spline"):
        c, f, q = tensor(train_points), tensor(train_values), tensor(query_points)
        b, n, d = _static_dims(c, "train_points", "batch n d")
        k = _static_dims(f, "train_values", "batch n k")[2]
        _static_dims(q, "query_points", "batch m d")
        if None in (b, n, d, k):
            raise InvalidArgumentError(f"interpolate_spline needs the shapes of train_points "
                                       f"and train_values when the graph is built, got "
                                       f"{c.shape.tf_str()} and {f.shape.tf_str()}")
        if not isinstance(order, (int, np.integer)) or order < 1:
            raise InvalidArgumentError(f"order must be a positive int, got {order!r}")
        dt = c.dtype.np
        # the system [[phi(|c_i - c_j|) + reg I, C1], [C1^T, 0]] [w; v] = [f; 0], C1 = [c, 1]
        a = _phi(_pairwise_squared_distances(c), int(order))
        if regularization_weight > 0:
            a = add(a, tensor((regularization_weight * np.eye(n))[None].astype(dt)))
        c1 = concat([c, ones_like(c[..., :1])], 2)  # [b, n, d + 1]
        left = concat([a, transpose(c1, [0, 2, 1])], 1)
        right = concat([c1, tensor(np.zeros((b, d + 1, d + 1), dt))], 1)
        lhs = concat([left, right], 2)
        rhs = concat([f, tensor(np.zeros((b, d + 1, k), f.dtype.np))], 1)
        wv = matrix_solve(lhs, rhs)
        w, v = wv[:, :n, :], wv[:, n:, :]
        rbf = matmul(_phi(_cross_squared_distances(q, c), int(order)), w)
        linear = matmul(concat([q, ones_like(q[..., :1])], 2), v)
        return add(rbf, linear)


def _boundary_points(h, w, per_edge):
    """The (y, x) points on the image's border of a (per_edge + 2)^2 grid."""
    ys, xs = np.meshgrid(np.linspace(0, h - 1, per_edge + 2), np.linspace(0, w - 1,
                                                                           per_edge + 2),
                         indexing="ij")
    edge = (xs == 0) | (xs == w - 1) | (ys == 0) | (ys == h - 1)
    return np.stack([ys[edge], xs[edge]], axis=-1)


def sparse_image_warp(image, source_control_point_locations, dest_control_point_locations,
                      interpolation_order=2, regularization_weight=0.0, num_boundary_points=0,
                      name="sparse_image_warp"):
    """image [b, h, w, c] warped so that the pixels at the source control points ([b, n, 2],
    (y, x)) move to the dest points: (warped image, dense flow [b, h, w, 2]).
    num_boundary_points > 0 pins that many points per edge (and the corners) in place."""
    with get_default_graph().name_scope(name or "sparse_image_warp"):
        image = tensor(image)
        src = tensor(source_control_point_locations)
        dest = tensor(dest_control_point_locations)
        b, h, w, _ = _static_dims(image, "image", "batch height width channels")
        if None in (b, h, w):
            raise InvalidArgumentError(f"sparse_image_warp needs the batch size, height and "
                                       f"width of the image when the graph is built, got "
                                       f"{image.shape.tf_str()}")
        flows = subtract(dest, src)
        if num_boundary_points > 0:
            pts = _boundary_points(h, w, num_boundary_points - 1)
            dt = dest.dtype.np
            dest = concat([dest, tensor(np.broadcast_to(pts, (b,) + pts.shape).astype(dt))], 1)
            flows = concat([flows, tensor(np.zeros((b, len(pts), 2), dt))], 1)
        ys, xs = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
        grid = np.stack([ys, xs], axis=-1).reshape(1, h * w, 2)
        grid = tensor(np.broadcast_to(grid, (b, h * w, 2)).astype(image.dtype.np))
        dense = reshape(interpolate_spline(dest, flows, grid, interpolation_order,
                                           regularization_weight), [b, h, w, 2])
        return dense_image_warp(image, dense), dense
