"""tf.test: TestCase (unittest with TF's array assertions and sessions) and main.

    class MyTest(tf.test.TestCase):
        def testAdd(self):
            with self.test_session() as sess:
                self.assertAllClose(sess.run(tf.add(1.0, 2.0)), 3.0)

    if __name__ == "__main__":
        tf.test.main()

Each test starts with a fresh default graph (setUp resets it, as TF's TestCase did).
"""

from __future__ import annotations

import contextlib
import tempfile
import unittest

import numpy as np

from xlapy.compat.v1.errors import OpError


class _NotATest:
    """A method that test loaders must not collect although its name starts with "test"
    (TestCase.test_session): on the class it is not callable, on an instance it is the
    bound method."""

    def __init__(self, fn):
        self._fn = fn

    def __get__(self, obj, cls=None):
        return self if obj is None else self._fn.__get__(obj, cls)


class TestCase(unittest.TestCase):
    def setUp(self):
        from xlapy.compat.v1.framework import reset_default_graph
        reset_default_graph()
        self._cached = None

    def tearDown(self):
        if self._cached is not None:
            self._cached.close()
            self._cached = None

    # ---- sessions --------------------------------------------------------------------------
    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """A Session on `graph` (default: the default graph), made the default session and
        its graph the default graph inside the block."""
        from xlapy.compat.v1.framework import get_default_graph
        from xlapy.compat.v1.session import Session
        sess = Session(graph=graph if graph is not None else get_default_graph(),
                       config=config)
        with sess.graph.as_default(), sess.as_default():
            yield sess
        sess.close()

    test_session = _NotATest(session)

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """One Session per test, reused by every cached_session() call in it."""
        from xlapy.compat.v1.framework import get_default_graph
        from xlapy.compat.v1.session import Session
        g = graph if graph is not None else get_default_graph()
        if self._cached is None or self._cached.graph is not g:
            self._cached = Session(graph=g, config=config)
        with g.as_default(), self._cached.as_default():
            yield self._cached

    def evaluate(self, tensors):
        from xlapy.compat.v1.session import get_default_session
        sess = get_default_session()
        if sess is None:
            with self.session() as s:
                return s.run(tensors)
        return sess.run(tensors)

    def get_temp_dir(self) -> str:
        if not hasattr(self, "_tmp"):
            self._tmp = tempfile.mkdtemp(prefix="xlapy_test_")
        return self._tmp

    # ---- assertions ------------------------------------------------------------------------
    def _value(self, x):
        if hasattr(x, "op") or hasattr(x, "_to_tensor"):
            return np.asarray(self.evaluate(x))
        return np.asarray(x)

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
        if isinstance(a, dict) and isinstance(b, dict):
            self.assertEqual(set(a), set(b), msg)
            for k in a:
                self.assertAllClose(a[k], b[k], rtol, atol, msg)
            return
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and \
                len(a) == len(b) and any(isinstance(v, (list, tuple, np.ndarray, dict))
                                         for v in a):
            for x, y in zip(a, b):
                self.assertAllClose(x, y, rtol, atol, msg)
            return
        a, b = self._value(a), self._value(b)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=msg or "",
                                   equal_nan=True)

    def assertAllEqual(self, a, b, msg=None):
        a, b = self._value(a), self._value(b)
        self.assertEqual(a.shape, b.shape, msg or f"shapes differ: {a.shape} vs {b.shape}")
        np.testing.assert_array_equal(a, b, err_msg=msg or "")

    def assertNear(self, f1, f2, err, msg=None):
        self.assertTrue(abs(f1 - f2) <= err, msg or f"{f1} != {f2} +/- {err}")

    def assertArrayNear(self, farray1, farray2, err, msg=None):
        self.assertEqual(len(farray1), len(farray2), msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg)

    def assertShapeEqual(self, np_array, tf_tensor, msg=None):
        self.assertEqual(list(np.shape(np_array)), tf_tensor.get_shape().as_list(), msg)

    def assertAllInRange(self, target, lower_bound, upper_bound):
        t = self._value(target)
        self.assertTrue(np.all((t >= lower_bound) & (t <= upper_bound)),
                        f"values outside [{lower_bound}, {upper_bound}]")

    def assertAllGreater(self, a, comparison_target):
        self.assertTrue(np.all(self._value(a) > comparison_target))

    def assertAllLess(self, a, comparison_target):
        self.assertTrue(np.all(self._value(a) < comparison_target))

    def assertRaisesOpError(self, expected_err_re_or_predicate):
        return self.assertRaisesRegex(OpError, expected_err_re_or_predicate)

    def assertRaisesWithPredicateMatch(self, exception_type, predicate):
        if isinstance(predicate, str):
            return self.assertRaisesRegex(exception_type, predicate)

        test = self

        class _Ctx:
            def __enter__(self):
                return self

            def __exit__(self, typ, value, tb):
                test.assertIsNotNone(typ, f"{exception_type.__name__} not raised")
                test.assertTrue(issubclass(typ, exception_type), f"raised {typ}")
                test.assertTrue(predicate(value), f"predicate rejected {value!r}")
                return True
        return _Ctx()


def main(argv=None):
    """Run the tests of the calling __main__ module (unittest.main)."""
    return unittest.main(argv=argv)


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None) -> bool:
    return False


def is_built_with_cuda() -> bool:
    return False


def gpu_device_name() -> str:
    return ""


def get_temp_dir() -> str:
    return tempfile.mkdtemp(prefix="xlapy_test_")


def _gradient_session():
    from xlapy.compat.v1.session import get_default_session
    sess = get_default_session()
    if sess is None:
        from xlapy.compat.v1.errors import InvalidArgumentError
        raise InvalidArgumentError("compute_gradient needs a default session: call it inside "
                                   "`with tf.Session():` (or a TestCase's session())")
    return sess


def compute_gradient(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                     init_targets=None, extra_feed_dict=None):
    """(theoretical, numerical) Jacobians of y with respect to x, each [x size, y size]
    (lists of them when x is a list): tf.gradients' against central differences of step
    `delta`, evaluated in the default session at x_init_value (random by default)."""
    from xlapy.compat.v1.gradients import gradients
    from xlapy.compat.v1.ops.array_ops import placeholder
    sess = _gradient_session()
    if init_targets is not None:
        sess.run(init_targets)
    many = isinstance(x, (list, tuple))
    xs = list(x) if many else [x]
    shapes = list(x_shape) if many else [x_shape]
    inits = list(x_init_value) if many and x_init_value is not None else [x_init_value] * len(xs)
    rng = np.random.default_rng(0)
    values = [np.asarray(v, t.dtype.np) if v is not None else
              rng.uniform(-1, 1, s).astype(t.dtype.np) for t, s, v in zip(xs, shapes, inits)]
    y_size = int(np.prod(y_shape, dtype=np.int64))
    dy = placeholder(y.dtype, list(y_shape))
    grads = gradients(y, xs, grad_ys=dy)
    feed = dict(extra_feed_dict or {})
    feed.update(zip(xs, values))
    out = []
    for i, (t, v) in enumerate(zip(xs, values)):
        theo = np.zeros([v.size, y_size], np.float64)
        for j in range(y_size):
            onehot = np.zeros(y_size, y.dtype.np)
            onehot[j] = 1
            g = grads[i]
            if g is not None:
                theo[:, j] = np.asarray(sess.run(g, {**feed, dy: onehot.reshape(y_shape)}),
                                        np.float64).reshape(-1)
        num = np.zeros([v.size, y_size], np.float64)
        flat = v.reshape(-1)
        for k in range(v.size):
            hi, lo = flat.copy(), flat.copy()
            hi[k] += delta
            lo[k] -= delta
            yh = np.asarray(sess.run(y, {**feed, t: hi.reshape(v.shape)}), np.float64)
            yl = np.asarray(sess.run(y, {**feed, t: lo.reshape(v.shape)}), np.float64)
            num[k] = ((yh - yl) / (2 * delta)).reshape(-1)
        out.append((theo, num))
    return out if many else out[0]


def compute_gradient_error(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                           init_targets=None, extra_feed_dict=None):
    """The largest absolute difference between compute_gradient's two Jacobians."""
    res = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets,
                           extra_feed_dict)
    pairs = res if isinstance(res, list) else [res]
    return max(float(np.max(np.abs(a - b))) if a.size else 0.0 for a, b in pairs)
