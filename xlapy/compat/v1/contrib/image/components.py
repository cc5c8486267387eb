"""tf.contrib.image.connected_components: the 4-connected components of equal non-zero
pixels of each image, as TF 1.15 labels them.

A component is a set of pixels of one image, all holding the same non-zero value (for
strings: non-empty), joined through their neighbours above, below, left and right. The
ids are int64, consecutive from 1 over the whole batch in the order in which the
components' first pixels come (batch, then row, then column); zero pixels get 0.

The op (ImageConnectedComponents, [batch, h, w] -> int64 [batch, h, w], already numbered
consecutively) runs in the executor: the labelling is a graph search whose steps depend on
the data (SciPy's connected components of the graph of equal neighbours).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import get_default_graph
from xlapy.compat.v1.op_registry import not_differentiable, register_op
from xlapy.compat.v1.ops._common import make, tensor


def _components_infer(op):
    x = op.inputs[0]
    if x.shape.ndims not in (None, 3):
        raise InvalidArgumentError(f"Shape must be rank 3 but is rank {x.shape.ndims} for "
                                   f"'{op.name}' (op: '{op.type}')")
    return [(dtypes.int64, x.shape)]


def _labels(images: np.ndarray) -> np.ndarray:
    # SciPy is loaded only when the kernel runs (as the other executor kernels using it)
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    x = np.asarray(images)
    n = x.size
    if n == 0:
        return np.zeros(x.shape, np.int64)
    if x.dtype.kind == "O":  # strings: the non-empty ones
        fg = np.frompyfunc(bool, 1, 1)(x).astype(bool)
    else:
        fg = x != np.zeros((), x.dtype)
    idx = np.arange(n).reshape(x.shape)
    edges = []
    for a, b in ((np.s_[:, 1:, :], np.s_[:, :-1, :]), (np.s_[:, :, 1:], np.s_[:, :, :-1])):
        join = fg[a] & (x[a] == x[b])  # equal non-zero neighbours (a NaN joins nothing)
        edges.append((idx[a][join], idx[b][join]))
    rows = np.concatenate([e[0] for e in edges])
    cols = np.concatenate([e[1] for e in edges])
    graph = coo_matrix((np.ones(len(rows), np.int8), (rows, cols)), shape=(n, n))
    _, comp = connected_components(graph, directed=False)
    comp = comp.reshape(-1)
    fg_flat = fg.reshape(-1)
    roots, first = np.unique(comp[fg_flat], return_index=True)  # first: in row-major order
    order = np.empty(len(roots), np.int64)
    order[np.argsort(first, kind="stable")] = np.arange(1, len(roots) + 1)
    out = np.zeros(n, np.int64)
    out[fg_flat] = order[np.searchsorted(roots, comp[fg_flat])]
    return out.reshape(x.shape)


@register_op("ImageConnectedComponents", infer=_components_infer, lowering=None)
def _connected_components(m, images):
    """Consecutive int64 ids of the components of equal non-zero neighbours."""
    return _labels(images)


not_differentiable("ImageConnectedComponents")


def connected_components(images):
    """int64 ids of the connected components of equal non-zero pixels of [h, w] or [batch,
    h, w] images: 1 to n over the batch, by each component's first pixel in row-major order;
    0 for zero pixels."""
    with get_default_graph().name_scope("connected_components"):
        x = tensor(images)
        r = x.shape.ndims
        if r == 2:
            return make("ImageConnectedComponents", [x[None]])[0]
        if r == 3:
            return make("ImageConnectedComponents", [x])
        raise InvalidArgumentError(f"Images should have rank 2 (HW) or 3 (NHW), got shape "
                                   f"{x.shape.tf_str()}")
