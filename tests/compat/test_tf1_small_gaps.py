"""Small TF 1.15 gaps: Graph.gradient_override_map onto op types' own gradients (the
straight-through Sign of binarized networks), tf.Module, tf.estimator.inputs.pandas_input_fn
and tf.linalg.LinearOperator{FullMatrix,Diag,Identity}. Values against NumPy in the executor
and under auto-jit (ON_1), gradients by hand, and the error cases."""

import importlib.util
import sys

import numpy as np
import pytest

import xlapy.compat.v1 as tf

from .helpers import all_compiled, assert_close, run_both, run_executor_and_xla_cpu

R = np.random.default_rng(1115)
XV = np.array([-1.5, -0.25, 0.0, 0.5, 2.0], np.float32)
UP = np.array([1.0, -2.0, 3.0, 0.5, -1.0], np.float32)   # the upstream gradient


# ---- gradient_override_map ---------------------------------------------------------------------

@tf.RegisterGradient("SmallGapsClippedSTE")
def _clipped_ste(op, grad):
    # straight-through, zero where |x| > 1 (BinaryNet's hard-tanh estimator)
    return grad * tf.cast(tf.abs(op.inputs[0]) <= 1.0, grad.dtype)


@tf.RegisterGradient("SmallGapsTripleGrad")
def _triple(op, grad):
    return 3.0 * grad


def test_straight_through_sign_executor_and_jit():
    def build():
        x = tf.placeholder(tf.float32, [5])
        g = tf.get_default_graph()
        with g.gradient_override_map({"Sign": "Identity"}):   # an op type's own gradient
            ste = tf.sign(x)
        with g.gradient_override_map({"Sign": "SmallGapsClippedSTE"}):
            clipped = tf.sign(x)
            with g.gradient_override_map({"Identity": "SmallGapsTripleGrad"}):
                tripled = tf.identity(x)       # the inner map adds Identity; Sign stays
                clipped2 = tf.sign(x)
        plain = tf.sign(x)   # outside the maps: Sign's own gradient (none, or TF's zeros)
        build.plain = tf.gradients(tf.reduce_sum(plain * UP), x)[0]
        fetches = [ste, tf.gradients(tf.reduce_sum(ste * UP), x)[0]]
        fetches += [tf.gradients(tf.reduce_sum(t * UP), x)[0]
                    for t in (clipped, tripled, clipped2)]
        return fetches, {x: XV}
    ex, xla, sess, fetches, feed = run_both(build)
    clip = UP * (np.abs(XV) <= 1)
    for got in (ex, xla):
        assert_close(got, [np.sign(XV), UP, clip, 3 * UP, clip])
    if build.plain is not None:   # the maps did not leak onto the later Sign
        assert_close(sess.run(build.plain, feed), np.zeros(5, np.float32))
    all_compiled(sess, fetches, feed)   # the overridden gradients compiled, not left out


def test_override_onto_a_not_differentiable_type_and_errors():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [3])
        with g.gradient_override_map({"Square": "StopGradient"}):
            y = tf.square(x)
        assert tf.gradients(y, x) == [None]   # no gradient flows, as TF's
        with g.gradient_override_map({"Square": "SmallGapsNoSuchName"}):
            z = tf.square(x)
        with pytest.raises(LookupError, match="SmallGapsNoSuchName"):
            tf.gradients(z, x)
        with g.gradient_override_map({"Square": "Placeholder"}):   # a type without one
            w = tf.square(x)
        with pytest.raises(LookupError, match="'Placeholder'"):
            tf.gradients(w, x)
    # an op type's own gradient is registered under its name already (KeyError, as TF's)
    with pytest.raises(KeyError, match="Registering two gradient with name 'Identity'"):
        tf.RegisterGradient("Identity")(lambda op, grad: grad)


# ---- tf.Module ---------------------------------------------------------------------------------

class Dense(tf.Module):
    def __init__(self, n_in, n_out, name=None):
        super().__init__(name=name)
        r = np.random.default_rng(10 * n_in + n_out)   # the same values in every graph
        with self.name_scope:
            self.w = tf.Variable(r.standard_normal((n_in, n_out)).astype(np.float32),
                                 name="w")
            self.b = tf.Variable(r.standard_normal(n_out).astype(np.float32), name="b")

    @tf.Module.with_name_scope
    def __call__(self, x):
        return tf.nn.relu(tf.matmul(x, self.w) + self.b)


class TwoLayerMLP(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        with self.name_scope:
            self.hidden = Dense(3, 4, name="hidden")
            self.out = Dense(4, 2, name="out")
            self.scale = tf.Variable(1.5, name="scale")
            self.steps = tf.Variable(0, trainable=False, name="steps")
            self.extra = [self.hidden.w, {"z": self.out}]   # seen again: yielded once

    @tf.Module.with_name_scope
    def __call__(self, x):
        return self.scale * self.out(self.hidden(x))


def test_module_two_layers_collection_order_and_scopes():
    def build():
        m = TwoLayerMLP()
        x = tf.placeholder(tf.float32, [2, 3])
        y = m(x)
        build.m, build.y = m, y
        return y, {x: XIN}
    XIN = R.standard_normal((2, 3)).astype(np.float32)
    ex, xla, sess, _, _ = run_both(build)
    m = build.m
    assert m.name == "two_layer_mlp" and Dense(1, 1).name == "dense"
    # attributes by name (extra, hidden, out, scale, steps), nests flattened, the module's
    # own leaves before its submodules' (out: met first, in extra), each object once
    names = [v.name for v in m.trainable_variables]
    assert names == ["two_layer_mlp/hidden/w:0", "two_layer_mlp/scale:0",
                     "two_layer_mlp/out/b:0", "two_layer_mlp/out/w:0",
                     "two_layer_mlp/hidden/b:0"], names
    assert [v.name for v in m.variables] == names[:2] + ["two_layer_mlp/steps:0"] + names[2:]
    assert [v.name for v in m.hidden.trainable_variables] == ["two_layer_mlp/hidden/b:0",
                                                             "two_layer_mlp/hidden/w:0"]
    assert m.submodules == (m.out, m.hidden) and m.hidden.submodules == ()
    assert [p for p, _ in m._flatten(predicate=lambda v: isinstance(v, tf.Module),
                                     with_path=True)] == [("extra", 1, "z"), ("hidden",),
                                                          ("out",)]
    assert build.y.op.name.startswith("two_layer_mlp/")
    w = sess.run(m.trainable_variables)
    hw, scale, ob, ow, hb = w
    want = scale * np.maximum(np.maximum(XIN @ hw + hb, 0) @ ow + ob, 0)
    for got in (ex, xla):
        assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_module_names_unique_and_errors():
    with tf.Graph().as_default():
        a, b = tf.Module(name="blk"), tf.Module(name="blk")
        assert (a.name, b.name) == ("blk", "blk")
        with a.name_scope as s1, b.name_scope as s2:
            pass
        assert (s1, s2) == ("blk/", "blk_1/")
        with b.name_scope:
            assert tf.constant(1.0, name="c").op.name == "blk_1/c"
        assert tf.Module().name == "module"
        for bad in ("has space", "1x", "a/b", 3):
            with pytest.raises(ValueError, match="not a valid module name"):
                tf.Module(name=bad)


# ---- pandas_input_fn ---------------------------------------------------------------------------

HAS_PANDAS = importlib.util.find_spec("pandas") is not None


def test_pandas_input_fn_without_pandas(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)   # import pandas fails, as if absent
    with pytest.raises(ImportError, match="pandas") as e:
        tf.estimator.inputs.pandas_input_fn(x=None, shuffle=False)
    assert isinstance(e.value, TypeError)   # TF raised TypeError here


@pytest.mark.skipif(not HAS_PANDAS, reason="pandas is not installed in this environment")
def test_pandas_input_fn_values_and_errors():
    import pandas as pd  # (optional: this test only runs where pandas is)
    x = pd.DataFrame({"a": np.arange(5, dtype=np.float32), "b": np.arange(5, 10)},
                     index=np.arange(100, 105))
    y = pd.Series(np.arange(-5, 0), index=x.index)
    with tf.Graph().as_default():
        feats, target = tf.estimator.inputs.pandas_input_fn(x, y, batch_size=2,
                                                            shuffle=False)()
        with tf.Session() as s:
            first = s.run([feats, target])
            rest = [s.run([feats, target]) for _ in range(2)]
            with pytest.raises(tf.errors.OutOfRangeError):
                s.run(target)
    assert sorted(first[0]) == ["a", "b"]
    assert_close(first[0]["a"], np.float32([0, 1]))
    assert_close(first[0]["b"], np.array([5, 6]))
    assert_close(first[1], np.array([-5, -4]))
    assert_close(rest[-1][1], np.array([-1]))   # the last, partial batch
    ydf = pd.DataFrame({"t1": np.arange(5.0), "t2": np.arange(5.0) * 2}, index=x.index)
    with tf.Graph().as_default():
        feats, target = tf.estimator.inputs.pandas_input_fn(x, ydf, batch_size=5,
                                                            shuffle=True)()
        with tf.Session() as s:
            fv, tv = s.run([feats, target])
    assert sorted(tv) == ["t1", "t2"]
    order = np.argsort(fv["a"])
    assert_close(tv["t2"][order], np.arange(5.0) * 2)   # rows stay paired when shuffled
    with pytest.raises(TypeError, match="shuffle must be provided"):
        tf.estimator.inputs.pandas_input_fn(x, y)
    with pytest.raises(ValueError, match="Index for x and y are mismatched"):
        tf.estimator.inputs.pandas_input_fn(x, pd.Series(np.arange(5)), shuffle=False)
    with pytest.raises(ValueError, match="Cannot use name a for target column"):
        tf.estimator.inputs.pandas_input_fn(x, y, shuffle=False, target_column="a")
    with pytest.raises(TypeError, match="target_column must be a string"):
        tf.estimator.inputs.pandas_input_fn(x, y, shuffle=False, target_column=1)


# ---- LinearOperators ---------------------------------------------------------------------------

A = (R.standard_normal((2, 3, 3)) + 3 * np.eye(3)).astype(np.float32)
SPD = (A @ np.swapaxes(A, -1, -2) + np.eye(3)).astype(np.float32)
D = np.float32([[1.5, -2.0, 0.5], [3.0, 0.25, -1.0]])
XM = R.standard_normal((2, 3, 2)).astype(np.float32)
XT = R.standard_normal((2, 2, 3)).astype(np.float32)   # for adjoint_arg
V = R.standard_normal((2, 3)).astype(np.float32)


def _apply(op, a):
    """The methods of a LinearOperator, and NumPy's values for its dense matrix a."""
    at = np.swapaxes(a, -1, -2)
    return {
        "dense": (op.to_dense(), a),
        "matmul": (op.matmul(XM), a @ XM),
        "matmul_adj": (op.matmul(XM, adjoint=True), at @ XM),
        "matmul_adj_arg": (op.matmul(XT, adjoint_arg=True), a @ np.swapaxes(XT, -1, -2)),
        "matvec": (op.matvec(V), np.einsum("bij,bj->bi", a, V)),
        "matvec_adj": (op.matvec(V, adjoint=True), np.einsum("bji,bj->bi", a, V)),
        "solve": (op.solve(XM), np.linalg.solve(a, XM)),
        "solve_adj": (op.solve(XM, adjoint=True), np.linalg.solve(at, XM)),
        "solvevec": (op.solvevec(V), np.linalg.solve(a, V[..., None])[..., 0]),
        "det": (op.determinant(), np.linalg.det(a)),
        "logabsdet": (op.log_abs_determinant(), np.linalg.slogdet(a)[1]),
        "diag_part": (op.diag_part(), np.diagonal(a, axis1=-2, axis2=-1)),
        "trace": (op.trace(), np.trace(a, axis1=-2, axis2=-1)),
        "adjoint": (op.adjoint().to_dense(), at),
        "H_matvec": (op.H.matvec(V), np.einsum("bji,bj->bi", a, V)),
    }


def _operators():
    return {
        "full": (tf.linalg.LinearOperatorFullMatrix(tf.constant(A)), A),
        "full_spd": (tf.linalg.LinearOperatorFullMatrix(tf.constant(SPD),
                                                        is_self_adjoint=True,
                                                        is_positive_definite=True), SPD),
        "diag": (tf.linalg.LinearOperatorDiag(tf.constant(D)),
                 np.einsum("bi,ij->bij", D, np.eye(3, dtype=np.float32))),
        "identity": (tf.linalg.LinearOperatorIdentity(3, batch_shape=[2]),
                     np.broadcast_to(np.eye(3, dtype=np.float32), (2, 3, 3))),
    }


def test_linear_operators_against_numpy_executor_and_jit():
    def build():
        return {f"{k}.{m}": t for k, (op, a) in _operators().items()
                for m, (t, _) in _apply(op, a).items()}, None
    # every op on XLA_CPU (so each must lower), and under auto-jit
    ex, xla_cpu = run_executor_and_xla_cpu(build)
    _, jit, *_ = run_both(build)
    with tf.Graph().as_default():
        want = {f"{k}.{m}": w for k, (op, a) in _operators().items()
                for m, (_, w) in _apply(op, a).items()}
    for got in (ex, xla_cpu, jit):
        for k, w in want.items():
            assert_close(got[k], np.asarray(w, np.float32), rtol=2e-4, atol=2e-4, what=k)


def test_linear_operator_properties_and_gradient():
    with tf.Graph().as_default():
        ops = _operators()
        full, diag, ident = ops["full"][0], ops["diag"][0], ops["identity"][0]
        assert full.shape.as_list() == [2, 3, 3] and full.dtype == tf.float32
        assert diag.shape.as_list() == [2, 3, 3] and diag.batch_shape.as_list() == [2]
        assert ident.shape.as_list() == [2, 3, 3] and ident.domain_dimension == 3
        assert diag.is_self_adjoint and diag.adjoint() is diag   # real diagonal
        assert ident.is_positive_definite and ident.adjoint() is ident
        assert full.is_square and full.adjoint() is not full
        rect = tf.linalg.LinearOperatorFullMatrix(np.ones((2, 3), np.float32))
        assert rect.shape.as_list() == [2, 3] and rect.is_square is False
        # d log|det A| / dA = inv(A)^T; d det(diag) / d diag_i = prod of the others
        m = tf.constant(A[0])
        g_full = tf.gradients(tf.linalg.LinearOperatorFullMatrix(m).log_abs_determinant(),
                              m)[0]
        d = tf.constant(D[0])
        g_diag = tf.gradients(tf.linalg.LinearOperatorDiag(d).determinant(), d)[0]
        r = tf.linalg.LinearOperatorFullMatrix(tf.constant(np.float32([[1, 2], [3, 4]])))
        with tf.Session() as s:
            gf, gd, rv = s.run([g_full, g_diag, r.matmul(np.float32([[1], [1]]))])
    assert_close(gf, np.linalg.inv(A[0]).T, rtol=1e-4, atol=1e-5)
    assert_close(gd, np.float32([D[0, 1] * D[0, 2], D[0, 0] * D[0, 2], D[0, 0] * D[0, 1]]))
    assert_close(rv, np.float32([[3], [7]]))


def test_linear_operator_complex_adjoint():
    c = (R.standard_normal((2, 2)) + 1j * R.standard_normal((2, 2))).astype(np.complex64)
    with tf.Graph().as_default():
        full = tf.linalg.LinearOperatorFullMatrix(c)
        cd = tf.linalg.LinearOperatorDiag(c[0])
        assert cd.is_self_adjoint is None   # a complex diagonal need not be
        with tf.Session() as s:
            adj, mv, dadj = s.run([full.adjoint().to_dense(),
                                   full.matvec(c[1], adjoint=True),
                                   cd.H.to_dense()])
    assert_close(adj, c.conj().T)
    assert_close(mv, c.conj().T @ c[1], rtol=1e-5, atol=1e-5)
    assert_close(dadj, np.diag(c[0].conj()))


def test_linear_operator_errors():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="Argument matrix must have dtype"):
            tf.linalg.LinearOperatorFullMatrix(np.ones((2, 2), np.int32))
        with pytest.raises(ValueError, match="at least 2 dimensions"):
            tf.linalg.LinearOperatorFullMatrix(np.ones(3, np.float32))
        with pytest.raises(ValueError, match="at least 1 dimension"):
            tf.linalg.LinearOperatorDiag(np.float32(2.0))
        with pytest.raises(ValueError, match="Only square diagonal"):
            tf.linalg.LinearOperatorDiag(D, is_square=False)
        with pytest.raises(ValueError, match="always non-singular"):
            tf.linalg.LinearOperatorFullMatrix(A, is_positive_definite=True,
                                               is_non_singular=False)
        with pytest.raises(ValueError, match="must be non-negative"):
            tf.linalg.LinearOperatorIdentity(-1)
        with pytest.raises(ValueError, match="num_rows must be a 0-D"):
            tf.linalg.LinearOperatorIdentity(2.5)
        full = tf.linalg.LinearOperatorFullMatrix(A)
        with pytest.raises(ValueError, match="not compatible"):
            full.matmul(np.ones((2, 4, 1), np.float32))
        with pytest.raises(ValueError, match="not compatible"):
            full.matvec(np.ones((2, 2), np.float32))
        with pytest.raises(TypeError, match="Expected argument to have dtype float32"):
            full.matmul(np.ones((2, 3, 1), np.float64))
        with pytest.raises(ValueError, match="use matvec"):
            full.matmul(np.ones(3, np.float32))
        with pytest.raises(TypeError, match="composition"):
            full.matmul(full)
        rect = tf.linalg.LinearOperatorFullMatrix(np.ones((2, 3), np.float32))
        with pytest.raises(NotImplementedError, match="expected to not be square"):
            rect.determinant()
        with pytest.raises(NotImplementedError, match="expected to not be square"):
            rect.solve(np.ones((2, 1), np.float32))
        with pytest.raises(ValueError, match="is_square=True but the shape"):
            tf.linalg.LinearOperatorFullMatrix(np.ones((2, 3), np.float32), is_square=True)
