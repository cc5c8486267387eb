"""tf.test: TestCase (unittest with TF's array assertions and sessions) and main.

    class MyTest(tf.test.TestCase):
        def testAdd(self):
            with self.test_session() as sess:
                self.assertAllClose(sess.run(tf.add(1.0, 2.0)), 3.0)

    if __name__ == "__main__":
        tf.test.main()

Each test starts with a fresh default graph (setUp resets it, as TF's TestCase did).
tf.test.mock is unittest.mock; tf.test.Benchmark times ops (run_op_benchmark) and reports
(report_benchmark, logged; written as a JSON line to $TEST_REPORT_FILE_PREFIX<name> when that
is set, where TF wrote a BenchmarkEntries proto).
"""

from __future__ import annotations

import contextlib
import inspect
import json
import logging
import os
import tempfile
import time
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
        from xlapy.compat.v1.framework import reset_default_graph  # (deferred until used)
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
        from xlapy.compat.v1.framework import get_default_graph  # (deferred until used)
        from xlapy.compat.v1.session import Session  # (deferred until used)
        sess = Session(graph=graph if graph is not None else get_default_graph(),
                       config=config)
        with sess.graph.as_default(), sess.as_default():
            yield sess
        sess.close()

    test_session = _NotATest(session)

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """One Session per test, reused by every cached_session() call in it."""
        from xlapy.compat.v1.framework import get_default_graph  # (deferred until used)
        from xlapy.compat.v1.session import Session  # (deferred until used)
        g = graph if graph is not None else get_default_graph()
        if self._cached is None or self._cached.graph is not g:
            self._cached = Session(graph=g, config=config)
        with g.as_default(), self._cached.as_default():
            yield self._cached

    def evaluate(self, tensors):
        from xlapy.compat.v1.session import get_default_session  # (deferred until used)
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
    from xlapy.compat.v1.session import get_default_session  # (deferred until used)
    sess = get_default_session()
    if sess is None:
        from xlapy.compat.v1.errors import InvalidArgumentError  # (deferred until used)
        raise InvalidArgumentError("compute_gradient needs a default session: call it inside "
                                   "`with tf.Session():` (or a TestCase's session())")
    return sess


def compute_gradient(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                     init_targets=None, extra_feed_dict=None):
    """(theoretical, numerical) Jacobians of y with respect to x, each [x size, y size]
    (lists of them when x is a list): tf.gradients' against central differences of step
    `delta`, evaluated in the default session at x_init_value (random by default)."""
    from xlapy.compat.v1.gradients import gradients  # (deferred until used)
    from xlapy.compat.v1.ops.array_ops import placeholder  # (deferred until used)
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


class Benchmark:
    """A benchmark: subclasses define benchmark* methods that time work and call
    report_benchmark (or run_op_benchmark, which times a session run and reports it)."""

    def _get_name(self, overwrite_name=None):
        """overwrite_name, else "<Class>.<the benchmark* method on the stack>"."""
        if overwrite_name:
            return overwrite_name
        for frame in inspect.stack():
            if frame.frame.f_locals.get("self") is self and \
                    frame.function.startswith("benchmark"):
                return f"{type(self).__name__}.{frame.function}"
        return type(self).__name__

    def report_benchmark(self, iters=None, cpu_time=None, wall_time=None, throughput=None,
                         extras=None, name=None, metrics=None):
        """Report a benchmark's numbers: logged at INFO, and appended as a JSON line to
        $TEST_REPORT_FILE_PREFIX<name> when that variable is set."""
        name = self._get_name(overwrite_name=name)
        entry = {"name": name, "iters": iters, "cpu_time": cpu_time, "wall_time": wall_time,
                 "throughput": throughput, "extras": dict(extras or {}),
                 "metrics": list(metrics or [])}
        logging.getLogger("xlapy.compat.v1.test").info(
            "Benchmark [%s] iters: %s, wall_time: %s, cpu_time: %s, throughput: %s, "
            "extras: %s", name, iters, wall_time, cpu_time, throughput, entry["extras"])
        prefix = os.environ.get("TEST_REPORT_FILE_PREFIX")
        if prefix:
            path = prefix + name.replace("/", "__")
            with open(path, "a") as f:
                f.write(json.dumps(entry, default=str) + "\n")
        return entry

    def run_op_benchmark(self, sess, op_or_tensor, feed_dict=None, burn_iters=2,
                         min_iters=10, store_trace=False, store_memory_usage=True,
                         name=None, extras=None, mbs=0):
        """Run op_or_tensor burn_iters times untimed, then min_iters times timed; report
        and return {"iters", "wall_time" (the median seconds per run), "extras", "name",
        "throughput" (mbs / wall_time, MB/s)}. store_trace=True adds the last run's trace
        (Chrome trace format) to extras["full_trace_chrome_format"]."""
        for _ in range(int(burn_iters)):
            sess.run(op_or_tensor, feed_dict=feed_dict)
        deltas = []
        for _ in range(int(min_iters)):
            start = time.time()
            sess.run(op_or_tensor, feed_dict=feed_dict)
            deltas.append(time.time() - start)
        extras = dict(extras) if extras is not None else {}
        if store_trace:
            from xlapy.compat.v1.protos import RunMetadata, RunOptions  # (only for traces)
            from xlapy.compat.v1.python.client.timeline import Timeline  # (likewise)
            meta = RunMetadata()
            sess.run(op_or_tensor, feed_dict=feed_dict,
                     options=RunOptions(trace_level=RunOptions.FULL_TRACE),
                     run_metadata=meta)
            extras["full_trace_chrome_format"] = \
                Timeline(meta.step_stats).generate_chrome_trace_format()
        median = float(np.median(deltas)) if deltas else 0.0
        values = {"iters": int(min_iters), "wall_time": median, "extras": extras,
                  "name": name, "throughput": mbs / median if median > 0 else 0.0}
        self.report_benchmark(**values)
        return values

    def evaluate(self, tensors):
        from xlapy.compat.v1.session import get_default_session  # (sessions import test)
        return get_default_session().run(tensors)


__all__ = ["Benchmark", "TestCase", "compute_gradient", "compute_gradient_error",
           "get_temp_dir", "gpu_device_name", "is_built_with_cuda", "is_gpu_available",
           "main"]  # (and mock, imported on first use: __getattr__)


def __getattr__(name):
    """tf.test.mock, imported on first use: unittest.mock imports asyncio (about 25 ms of
    every `import xlapy.compat.v1`, and its teardown at exit, when this module was eager)."""
    if name == "mock":
        from unittest import mock  # (see above)
        return mock
    raise AttributeError(f"module 'xlapy.compat.v1.test' has no attribute '{name}'")
