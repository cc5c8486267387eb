"""tf.image functions on bounding boxes: crop_and_resize, non_max_suppression (and _v2,
_padded), draw_bounding_boxes, sample_distorted_bounding_box.

crop_and_resize is built from graph ops (the sampling coordinates are computed from the
boxes in the graph, the corner pixels gathered from the flattened image), so it compiles
and differentiates with respect to the image (the gather's segment sum) and the boxes
(through the coordinates, the floors held constant as in TF's CropAndResizeGradBoxes).
Coordinates are TF's: y1 (h - 1) + i (y2 - y1)(h - 1)/(crop_h - 1), the box centre when
crop_h is 1; samples outside [0, h - 1] take extrapolation_value; "nearest" rounds half
away from zero. Boxes are [y1, x1, y2, x2], normalized.

NonMaxSuppressionV3 / V4 (their output sizes depend on the data: executor) follow TF's
greedy selection: candidates with score > score_threshold in descending score order (the
lower index first among equal scores), each kept when its IoU with every kept box is <=
iou_threshold (IoU 0 for an empty box). DrawBoundingBoxes and
SampleDistortedBoundingBoxV2 (random, seeded as TF's random ops) are executor kernels
following TF's C++ (its colour table; its GenerateRandomCrop and overlap test).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import constant_value, make, tensor
from xlapy.compat.v1.ops.array_ops import reshape, zeros_like
from xlapy.compat.v1.ops.gather_ops import gather
from xlapy.compat.v1.ops.index_ops import where
from xlapy.compat.v1.ops.math_ops import (add, cast, ceil, floor, greater, less,
                                          logical_or, maximum, minimum, multiply, realdiv, subtract)
from xlapy.compat.v1.tensor_shape import TensorShape


# ---- crop_and_resize ---------------------------------------------------------------------

def _axis_coords(lo, hi, n_in, n_out):
    """[num_boxes, n_out] source coordinates along one axis."""
    f32 = dtypes.float32
    span = float(n_in - 1)
    if n_out > 1:
        scale = realdiv(multiply(subtract(hi, lo), span), float(n_out - 1))  # TF's order
        steps = tensor(np.arange(n_out, dtype=np.float32)[None, :])
        return add(multiply(lo, span)[:, None], multiply(scale[:, None], steps))
    centre = multiply(multiply(add(lo, hi), 0.5), span)
    return reshape(cast(centre, f32), [-1, 1])


def crop_and_resize(image, boxes, box_ind=None, crop_size=None, method="bilinear",
                    extrapolation_value=0, name=None, box_indices=None):
    """[num_boxes, crop_h, crop_w, depth] float32 crops of the [batch, h, w, depth] image."""
    box_ind = box_ind if box_ind is not None else box_indices
    x, b = tensor(image), cast(tensor(boxes), dtypes.float32)
    bi = cast(tensor(box_ind), dtypes.int32)
    if x.shape.ndims != 4 or any(d is None for d in x.shape.dims[1:]):
        raise InvalidArgumentError(f"crop_and_resize: image must be 4-D with known height, "
                                   f"width and depth, got {x.shape.tf_str()}")
    if b.shape.ndims != 2 or b.shape.dims[1] not in (None, 4):
        raise InvalidArgumentError(f"boxes must be 2-D [num_boxes, 4], got {b.shape.tf_str()}")
    cs = constant_value(crop_size) if hasattr(crop_size, "op") else np.asarray(crop_size)
    if cs is None or np.size(cs) != 2 or np.any(np.asarray(cs) <= 0):
        raise InvalidArgumentError("crop_size must be two positive ints known when the graph "
                                   "is built")
    ch, cw = (int(v) for v in np.reshape(cs, [-1]))
    if method not in ("bilinear", "nearest"):
        raise InvalidArgumentError(f"method must be 'bilinear' or 'nearest', got {method!r}")
    _, h, w, c = x.shape.dims
    with get_default_graph().name_scope(name or "CropAndResize"):
        f = reshape(cast(x, dtypes.float32), [-1, c])
        ys = _axis_coords(b[:, 0], b[:, 2], h, ch)  # [n, ch]
        xs = _axis_coords(b[:, 1], b[:, 3], w, cw)  # [n, cw]
        out_y = logical_or(less(ys, 0.0), greater(ys, float(h - 1)))
        out_x = logical_or(less(xs, 0.0), greater(xs, float(w - 1)))
        base = multiply(bi, h * w)[:, None, None]

        def clamp(v, n):
            return cast(minimum(maximum(v, 0.0), float(n - 1)), dtypes.int32)

        def pick(yi, xi):  # [n, ch] rows and [n, cw] columns -> [n, ch, cw, c] pixels
            idx = add(add(base, multiply(yi, w)[:, :, None]), xi[:, None, :])
            return gather(f, idx)

        if method == "nearest":
            # TF rounds half away from zero: floor(v + 0.5), as v >= 0 where it counts
            out = pick(clamp(floor(add(ys, 0.5)), h), clamp(floor(add(xs, 0.5)), w))
        else:
            y0, x0 = floor(ys), floor(xs)
            ly = subtract(ys, y0)[:, :, None, None]
            lx = subtract(xs, x0)[:, None, :, None]
            yt, yb = clamp(y0, h), clamp(ceil(ys), h)
            xl, xr = clamp(x0, w), clamp(ceil(xs), w)
            tl, tr, bl, br = pick(yt, xl), pick(yt, xr), pick(yb, xl), pick(yb, xr)
            top = add(tl, multiply(subtract(tr, tl), lx))
            bot = add(bl, multiply(subtract(br, bl), lx))
            out = add(top, multiply(subtract(bot, top), ly))
        outside = logical_or(out_y[:, :, None], out_x[:, None, :])[:, :, :, None]
        full = zeros_like(out)  # where() takes same-shaped operands
        return where(logical_or(outside, cast(full, dtypes.bool)),
                     add(full, float(extrapolation_value)), out)


# ---- non_max_suppression -----------------------------------------------------------------

def _iou(a, bs):
    ay0, ay1 = min(a[0], a[2]), max(a[0], a[2])
    ax0, ax1 = min(a[1], a[3]), max(a[1], a[3])
    by0, by1 = np.minimum(bs[:, 0], bs[:, 2]), np.maximum(bs[:, 0], bs[:, 2])
    bx0, bx1 = np.minimum(bs[:, 1], bs[:, 3]), np.maximum(bs[:, 1], bs[:, 3])
    area_a = (ay1 - ay0) * (ax1 - ax0)
    area_b = (by1 - by0) * (bx1 - bx0)
    ih = np.maximum(np.minimum(ay1, by1) - np.maximum(ay0, by0), 0)
    iw = np.maximum(np.minimum(ax1, bx1) - np.maximum(ax0, bx0), 0)
    inter = ih * iw
    with np.errstate(invalid="ignore", divide="ignore"):
        iou = inter / (area_a + area_b - inter)
    return np.where((area_a <= 0) | (area_b <= 0), 0.0, iou)


def _nms(boxes, scores, max_out, iou_thr, score_thr):
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise InvalidArgumentError(f"boxes must be of shape [num_boxes, 4], got "
                                   f"{list(boxes.shape)}")
    if scores.shape != (boxes.shape[0],):
        raise InvalidArgumentError("scores has incompatible shape")
    if not 0.0 <= float(iou_thr) <= 1.0:
        raise InvalidArgumentError("iou_threshold must be in [0, 1]")
    max_out = int(max_out)
    if max_out < 0:
        raise InvalidArgumentError("max_output_size must be non-negative")
    cand = [i for i in np.argsort(-scores.astype(np.float64), kind="stable")
            if scores[i] > score_thr]
    kept: list = []
    for i in cand:
        if len(kept) >= max_out:
            break
        if not kept or np.all(_iou(boxes[i], boxes[kept]) <= iou_thr):
            kept.append(int(i))
    return np.asarray(kept, np.int32)


def _nms_infer(op):
    n = constant_value(op.inputs[2])
    return [(dtypes.int32, TensorShape([None]))] if n is None or op.type == "NonMaxSuppressionV3"\
        else [(dtypes.int32, TensorShape([int(n)])), (dtypes.int32, TensorShape([]))]


@register_op("NonMaxSuppressionV3", infer=_nms_infer, lowering=None)
def _nms_v3(m, boxes, scores, max_output_size, iou_threshold, score_threshold):
    return _nms(boxes, scores, max_output_size, iou_threshold, score_threshold)


def _nms_v4_infer(op):
    n = constant_value(op.inputs[2])
    return [(dtypes.int32, TensorShape([None if n is None else int(n)])),
            (dtypes.int32, TensorShape([]))]


@register_op("NonMaxSuppressionV4", infer=_nms_v4_infer, attrs=("pad_to_max_output_size",),
             lowering=None)
def _nms_v4(m, boxes, scores, max_output_size, iou_threshold, score_threshold,
            pad_to_max_output_size=False):
    kept = _nms(boxes, scores, max_output_size, iou_threshold, score_threshold)
    n = len(kept)
    if pad_to_max_output_size:
        kept = np.concatenate([kept, np.zeros(int(max_output_size) - n, np.int32)])
    return kept, np.asarray(n, np.int32)


not_differentiable("NonMaxSuppressionV3", "NonMaxSuppressionV4")


def _nms_inputs(boxes, scores, max_output_size, iou_threshold, score_threshold):
    return [cast(tensor(boxes), dtypes.float32), cast(tensor(scores), dtypes.float32),
            cast(tensor(max_output_size), dtypes.int32),
            cast(tensor(iou_threshold), dtypes.float32),
            cast(tensor(score_threshold), dtypes.float32)]


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5,
                        score_threshold=float("-inf"), name=None):
    """int32 indices of the boxes kept, best score first (at most max_output_size)."""
    return make("NonMaxSuppressionV3", _nms_inputs(boxes, scores, max_output_size,
                                                   iou_threshold, score_threshold),
                name=name or "non_max_suppression")


non_max_suppression_v2 = non_max_suppression


def non_max_suppression_padded(boxes, scores, max_output_size, iou_threshold=0.5,
                               score_threshold=float("-inf"), pad_to_max_output_size=False,
                               name=None):
    """(indices, number of valid indices); padded with zeros to max_output_size on request."""
    op_out = make("NonMaxSuppressionV4", _nms_inputs(boxes, scores, max_output_size,
                                                     iou_threshold, score_threshold),
                  {"pad_to_max_output_size": bool(pad_to_max_output_size)},
                  name=name or "non_max_suppression_padded")
    return op_out


# ---- draw_bounding_boxes -----------------------------------------------------------------

COLOR_TABLE = np.array([[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1],
                        [0.5, 0, 0.5, 1], [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1],
                        [0, 1, 1, 1], [1, 0, 1, 1]], np.float32)


def _draw_infer(op):
    x, b = op.inputs[0], op.inputs[1]
    if x.shape.ndims not in (None, 4) or b.shape.ndims not in (None, 3):
        raise InvalidArgumentError("draw_bounding_boxes: images must be 4-D and boxes 3-D")
    if x.shape.ndims == 4 and x.shape.dims[3] not in (None, 1, 3, 4):
        raise InvalidArgumentError("Channel depth should be either 1 (GRY), 3 (RGB), or 4 "
                                   "(RGBA)")
    return [(x.dtype, x.shape)]


@register_op("DrawBoundingBoxes", infer=_draw_infer)
def _draw(m, images, boxes):
    """Each box's outline in TF's rules (corners truncated to ints after scaling by size - 1,
    lines outside the image dropped, the rest clamped; inverted boxes skipped), the later
    box winning where outlines cross: one mask per box, so it compiles."""
    nb, h, w, depth = images.shape
    if boxes.shape[0] != nb:
        raise InvalidArgumentError("boxes and images must have the same batch size")
    n = boxes.shape[1]
    colors = COLOR_TABLE.copy()
    if depth == 1:
        colors[:, 0] = 1
    colors = colors[np.arange(max(n, 1)) % len(colors), :depth].astype(images.dtype)
    f = m.astype(boxes, np.float32)

    def edge(i, size):
        return m.astype(f[:, :, i, None, None] * np.float32(size - 1), np.int32)
    y0, x0, y1, x1 = edge(0, h), edge(1, w), edge(2, h), edge(3, w)  # [b, n, 1, 1]
    y0c, x0c = m.maximum(y0, 0), m.maximum(x0, 0)
    y1c, x1c = m.minimum(y1, h - 1), m.minimum(x1, w - 1)
    rows = m.arange(h, dtype=np.int32)[:, None]
    cols = m.arange(w, dtype=np.int32)[None, :]
    valid = (y0 <= y1) & (x0 <= x1) & (y1c >= 0) & (x1c >= 0) & (y0c < h) & (x0c < w)
    in_cols = (cols >= x0c) & (cols <= x1c)
    in_rows = (rows >= y0c) & (rows <= y1c)
    mask = valid & (((y0 >= 0) & (rows == y0) & in_cols) | ((y1 < h) & (rows == y1) & in_cols)
                    | ((x0 >= 0) & (cols == x0) & in_rows) | ((x1 < w) & (cols == x1) & in_rows))
    k = m.arange(n, dtype=np.int32)[None, :, None, None]
    last = m.max(m.where(mask, k, -1), axis=1) if n else m.full((nb, h, w), -1, np.int32)
    color = m.take(m.asarray(colors), m.maximum(last, 0), axis=0)  # [b, h, w, depth]
    return m.where((last >= 0)[..., None], color, images)


not_differentiable("DrawBoundingBoxes")


def draw_bounding_boxes(images, boxes, name=None, colors=None):
    """Draws the outlines of boxes [batch, num_boxes, 4] on float images, TF's colours."""
    if colors is not None:
        raise InvalidArgumentError("draw_bounding_boxes: custom colors are TF 2's "
                                   "(draw_bounding_boxes_v2); not supported")
    return make("DrawBoundingBoxes", [tensor(images), cast(tensor(boxes), dtypes.float32)],
                name=name or "draw_bounding_boxes")


# ---- sample_distorted_bounding_box -------------------------------------------------------

def _random_crop(rng, w, h, min_rel, max_rel, ar):
    f = np.float32
    min_area, max_area = f(min_rel) * f(w) * f(h), f(max_rel) * f(w) * f(h)
    height = int(np.rint(np.sqrt(min_area / f(ar))))
    max_height = int(np.rint(np.sqrt(max_area / f(ar))))
    if int(np.rint(max_height * f(ar))) > w:
        max_height = int((w + 0.5 - 1e-7) / f(ar))
    max_height = min(max_height, h)
    height = min(height, max_height)
    if height < max_height:
        height += int(rng.integers(0, max_height - height + 1))
    width = int(np.rint(height * f(ar)))
    area = float(width * height)
    if area < min_area:
        height += 1
        width = int(np.rint(height * f(ar)))
        area = float(width * height)
    if area > max_area:
        height -= 1
        width = int(np.rint(height * f(ar)))
        area = float(width * height)
    if area < min_area or area > max_area or width > w or height > h or width <= 0 \
            or height <= 0:
        return None
    y = int(rng.integers(0, h - height)) if height < h else 0
    x = int(rng.integers(0, w - width)) if width < w else 0
    return y, x, y + height, x + width


def _covers(crop, objects, min_covered):
    y0, x0, y1, x1 = crop
    if (y1 - y0) * (x1 - x0) < 1:
        return False
    for oy0, ox0, oy1, ox1 in objects:
        area = (oy1 - oy0) * (ox1 - ox0)
        if area < 1:
            continue
        ih = max(min(y1, oy1) - max(y0, oy0), 0)
        iw = max(min(x1, ox1) - max(x0, ox0), 0)
        if ih * iw / area >= min_covered:
            return True
    return False


_SDBB_ATTRS = ("aspect_ratio_range", "area_range", "max_attempts",
               "use_image_if_no_bounding_boxes")


def _sdbb_infer(op):
    it = op.inputs[0].dtype
    return [(it, TensorShape([3])), (it, TensorShape([3])),
            (dtypes.float32, TensorShape([1, 1, 4]))]


@register_op("SampleDistortedBoundingBoxV2", infer=_sdbb_infer, attrs=_SDBB_ATTRS, rng=True,
             lowering=None)
def _sdbb(m, rng, image_size, bounding_boxes, min_object_covered,
          aspect_ratio_range=(0.75, 1.33), area_range=(0.05, 1.0), max_attempts=100,
          use_image_if_no_bounding_boxes=False):
    size = np.reshape(image_size, [-1])
    if size.shape != (3,):
        raise InvalidArgumentError("image_size must be 1-D of 3 elements [height, width, "
                                   "channels]")
    h, w = int(size[0]), int(size[1])
    bb = np.reshape(np.asarray(bounding_boxes, np.float32), [-1, 4])
    if bb.shape[0] == 0:
        if not use_image_if_no_bounding_boxes:
            raise InvalidArgumentError("No bounding boxes provided as input. One must enable "
                                       "use_image_if_no_bounding_boxes if you wish to not "
                                       "provide any bounding boxes.")
        bb = np.array([[0, 0, 1, 1]], np.float32)
    if np.any((bb < 0) | (bb > 1)):
        raise InvalidArgumentError("All bounding box coordinates must be in [0.0, 1.0]")
    objects = [(int(b[0] * h), int(b[1] * w), int(b[2] * h), int(b[3] * w)) for b in bb]
    crop = None
    for _ in range(int(max_attempts)):
        ar = rng.uniform(aspect_ratio_range[0], aspect_ratio_range[1])
        cand = _random_crop(rng, w, h, area_range[0], area_range[1], ar)
        if cand is not None and _covers(cand, objects, float(min_object_covered)):
            crop = cand
            break
    if crop is None:
        crop = (0, 0, h, w)
    y0, x0, y1, x1 = crop
    dt = np.asarray(image_size).dtype
    begin = np.array([y0, x0, 0], dt)
    size_out = np.array([y1 - y0, x1 - x0, -1], dt)
    box = np.array([[[y0 / h, x0 / w, y1 / h, x1 / w]]], np.float32)
    return begin, size_out, box


not_differentiable("SampleDistortedBoundingBoxV2")


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None,
                                  min_object_covered=0.1, aspect_ratio_range=None,
                                  area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """(begin, size, bboxes): a random crop of the image covering at least
    min_object_covered of one of the boxes, for tf.slice(image, begin, size)."""
    from xlapy.compat.v1.ops.random_ops import get_seed
    s1, s2 = get_seed(seed)
    if seed2 is not None:
        s2 = seed2
    attrs = {"seed": s1, "seed2": s2,
             "aspect_ratio_range": tuple(aspect_ratio_range or (0.75, 1.33)),
             "area_range": tuple(area_range or (0.05, 1.0)),
             "max_attempts": int(max_attempts or 100),
             "use_image_if_no_bounding_boxes": bool(use_image_if_no_bounding_boxes)}
    for k in ("aspect_ratio_range", "area_range"):
        lo, hi = attrs[k]
        if not 0 < lo <= hi:
            raise InvalidArgumentError(f"{k} must be positive and increasing, got "
                                       f"{list(attrs[k])}")
    return make("SampleDistortedBoundingBoxV2",
                [tensor(image_size), cast(tensor(bounding_boxes), dtypes.float32),
                 cast(tensor(min_object_covered), dtypes.float32)], attrs,
                name=name or "sample_distorted_bounding_box")


sample_distorted_bounding_box_v2 = sample_distorted_bounding_box
