"""Shared by the op tests: build a graph, run it in the executor and compiled."""

import contextlib

import numpy as np

import xlapy.compat.v1 as tf

from .conftest import jit_config


def run_both(build, feed=None, fetch_key=None, seed=None):
    """build() -> (fetches, feed dict built from its placeholders, or None). Runs the graph
    once in the executor and once with auto-jit; returns (executor values, XLA values, the
    XLA session, the XLA graph's fetches)."""
    out = []
    for cfg in (None, jit_config()):
        g = tf.Graph()
        with g.as_default():
            if seed is not None:
                tf.set_random_seed(seed)
            fetches, fd = build()
            sess = tf.Session(graph=g, config=cfg)
            if tf.global_variables():
                sess.run(tf.global_variables_initializer())
            out.append((sess.run(fetches, fd), sess, fetches, fd))
    return out[0][0], out[1][0], out[1][1], out[1][2], out[1][3]


def run_executor_and_xla_cpu(build):
    """build() -> (fetches, feed). Builds the graph twice, once as it is and once with every
    op placed on XLA_CPU (so each op must lower), and runs each in a session; returns
    [executor values, XLA_CPU values]."""
    out = []
    for xla in (False, True):
        g = tf.Graph()
        with g.as_default(), (tf.device("/device:XLA_CPU:0") if xla
                              else contextlib.nullcontext()):
            fetches, feed = build()
        with g.as_default():
            out.append(tf.Session(graph=g).run(fetches, feed))
    return out


def assert_close(got, want, rtol=1e-5, atol=1e-6, what=""):
    if isinstance(want, dict):
        for k in want:
            assert_close(got[k], want[k], rtol, atol, f"{what}{k}: ")
        return
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want), what
        for i, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, rtol, atol, f"{what}[{i}] ")
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}shape {got.shape} != {want.shape}"
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def single_cluster(sess, fetches, feed) -> str:
    s = sess.cluster_summary(fetches, feed)
    assert s.startswith("XLA clustering: 1 cluster(s)"), s
    return s


def all_compiled(sess, fetches, feed) -> str:
    """Every op the fetches need is in a cluster (but for a few left to the executor as
    too small a cluster) and every cluster compiles (runs the fetches once, failing on a
    cluster falling back to the executor)."""
    import logging
    s = sess.cluster_summary(fetches, feed)
    left = s.split("not clustered:")[1].split("  kept ")[0] if "not clustered:" in s else ""
    left = [line for line in left.splitlines() if line.strip()]
    assert all("min_cluster_size" in line for line in left) and len(left) <= 8, s
    records: list = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append
    log = logging.getLogger("xlapy.compat.v1.jit")
    log.addHandler(handler)
    try:
        sess.run(fetches, feed)
    finally:
        log.removeHandler(handler)
    failed = [r.getMessage() for r in records if "executor instead" in r.getMessage()]
    assert not failed, failed
    return s


def rand_sparse(shape, nnz, rng, dtype=np.float32, ordered=True):
    """A random SparseTensor's parts drawn from rng: (indices int64 [nnz, rank], values
    [nnz], the dense array), the indices distinct (row-major order unless not ordered)."""
    size = int(np.prod(shape))
    flat = np.sort(rng.choice(size, nnz, replace=False)) if nnz else np.zeros(0, np.int64)
    if not ordered:
        flat = rng.permutation(flat)
    idx = np.stack(np.unravel_index(flat, shape), 1).astype(np.int64).reshape(nnz, len(shape))
    vals = rng.uniform(-2, 2, nnz).astype(dtype)
    dense = np.zeros(shape, dtype)
    dense[tuple(idx.T)] = vals
    return idx, vals, dense
