"""tf.nn.safe_embedding_lookup_sparse against a per-row NumPy definition of TF's: invalid
ids and non-positive weights pruned, empty rows zero or default_id's embedding, rank-3
sparse ids; and the gradient into the embedding table."""

import numpy as np
import pytest

import xlapy.compat.v1 as tf

from .helpers import assert_close

R = np.random.default_rng(17)
PARAMS = R.standard_normal((10, 4)).astype(np.float32)
# [2, 3, 4] sparse ids: rows (flattened) 0, 2, 3 and 5 have entries; row 3 only invalid ones
IDX = np.array([[0, 0, 0], [0, 0, 1], [0, 0, 3], [0, 2, 0], [1, 0, 0], [1, 0, 2],
                [1, 2, 1], [1, 2, 3]], np.int64)
IDS = np.array([1, 4, -1, 7, -3, 2, 9, 4], np.int64)
WTS = np.array([0.5, 2.0, 1.0, -1.0, 1.0, 0.0, 1.5, 0.25], np.float32)


def _ref(combiner, weights, default_id):
    out = np.zeros((6, 4), np.float64)
    for r in range(6):
        sel = [k for k in range(len(IDS)) if IDX[k, 0] * 3 + IDX[k, 1] == r and IDS[k] >= 0
               and (weights is None or combiner == "sum" or weights[k] > 0)]
        if not sel:
            if default_id is not None:
                out[r] = PARAMS[default_id]
            continue
        w = np.ones(len(sel)) if weights is None else weights[sel].astype(np.float64)
        s = (PARAMS[IDS[sel]] * w[:, None]).sum(0)
        out[r] = s if combiner == "sum" else s / w.sum() if combiner == "mean" else \
            s / np.sqrt((w ** 2).sum())
    return out.reshape(2, 3, 4).astype(np.float32)


@pytest.mark.parametrize("combiner", ["mean", "sqrtn", "sum"])
def test_safe_embedding_lookup_sparse_against_definition(combiner):
    sp = tf.SparseTensor(IDX, IDS, [2, 3, 4])
    spw = tf.SparseTensor(IDX, WTS, [2, 3, 4])
    p = tf.constant(PARAMS)
    outs = {"w": tf.nn.safe_embedding_lookup_sparse(p, sp, spw, combiner=combiner),
            "now": tf.nn.safe_embedding_lookup_sparse([p], sp, None, combiner=combiner),
            "dflt": tf.nn.safe_embedding_lookup_sparse(p, sp, spw, combiner=combiner,
                                                       default_id=3)}
    c = R.standard_normal((2, 3, 4)).astype(np.float32)
    grad = tf.gradients(tf.reduce_sum(outs["w"] * c), p)[0]
    with tf.Session() as s:
        got, g = s.run([outs, tf.convert_to_tensor(grad)])
    assert_close(got["w"], _ref(combiner, WTS, None), 1e-5, 1e-5)
    assert_close(got["now"], _ref(combiner, None, None), 1e-5, 1e-5)
    assert_close(got["dflt"], _ref(combiner, WTS, 3), 1e-5, 1e-5)
    # the gradient of a linear map: its transpose applied to c, row by row
    eps = np.zeros_like(PARAMS)
    for i in range(10):
        for j in range(4):
            e = np.zeros_like(PARAMS)
            e[i, j] = 1.0
            saved = PARAMS.copy()
            PARAMS[:] = e
            eps[i, j] = (_ref(combiner, WTS, None) * c).sum()
            PARAMS[:] = saved
    assert_close(g, eps, 1e-5, 1e-5)
