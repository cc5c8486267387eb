"""jit_scope's attributes as TensorFlow's jit.py sets them, checked the way TF's own
jit_test.py checks them, through TF's import paths (xlapy.compat.v1.python.*) and
tf.test.TestCase: bytes scope names counted per graph, nested scopes keeping the outer id,
compile_ops predicates, gradients inheriting the scope (separate_compiled_gradients), and
Defun(compiled=True) functions."""

import numpy as np

from xlapy.compat.v1.contrib.compiler import jit
from xlapy.compat.v1.python.framework import (constant_op, function, op_def_registry, ops,
                                              random_seed)
from xlapy.compat.v1.python.ops import (gradients, init_ops, math_ops, random_ops,
                                        variable_scope, variables)
from xlapy.compat.v1.python.platform import test


def enable_jit_nonstateful(node_def):
    op_def = op_def_registry.get(node_def.op)
    if op_def is None:
        raise ValueError(f"Unregistered op being created: {node_def}")
    return not op_def.is_stateful


class JitScopeTest(test.TestCase):
    def compute(self, use_jit, compute_fn):
        random_seed.set_random_seed(1234)
        with self.session(graph=ops.Graph()) as sess:
            with jit.experimental_jit_scope(use_jit):
                r = compute_fn()
            sess.run(variables.global_variables_initializer())
            return r, sess.run(r)

    def test_compile_ops_predicate(self):
        def create_ops():
            with variable_scope.variable_scope(
                    "root", initializer=init_ops.random_uniform_initializer(-0.1, 0.1, seed=2)):
                return random_ops.random_uniform((1,), minval=-10, maxval=10, seed=1)
        off_t, off_1 = self.compute(False, create_ops)
        _, off_2 = self.compute(False, create_ops)
        pred_t, pred_1 = self.compute(enable_jit_nonstateful, create_ops)
        _, pred_2 = self.compute(enable_jit_nonstateful, create_ops)
        on_t, _ = self.compute(True, create_ops)
        self.assertIs(off_t.op.get_attr("_XlaCompile"), False)
        sampler = "root/random_uniform/RandomUniform"
        self.assertIs(pred_t.graph.get_operation_by_name(sampler).get_attr("_XlaCompile"),
                      False)
        self.assertIs(on_t.graph.get_operation_by_name(sampler).get_attr("_XlaCompile"), True)
        self.assertIs(pred_t.op.get_attr("_XlaCompile"), True)
        self.assertIs(on_t.op.get_attr("_XlaCompile"), True)
        # the random op never compiles, so its values do not depend on the scope
        self.assertAllClose(off_1, off_2)
        self.assertAllClose(pred_1, pred_2)
        self.assertAllClose(off_1, pred_1)

    def test_scope_ids_are_bytes_per_graph_and_nested_scopes_keep_theirs(self):
        for _ in range(2):  # a second graph counts from 0 again
            with self.session(graph=ops.Graph()):
                with jit.experimental_jit_scope(True):
                    a1 = constant_op.constant(1)
                with jit.experimental_jit_scope(True):
                    a2 = constant_op.constant(1)
                    with jit.experimental_jit_scope(True):
                        a3 = constant_op.constant(1)
                        with jit.experimental_jit_scope(True):
                            a4 = constant_op.constant(1)
                        a5 = constant_op.constant(1)
                with jit.experimental_jit_scope(True):
                    a6 = constant_op.constant(1)
            got = [a.op.get_attr("_XlaScope") for a in (a1, a2, a3, a4, a5, a6)]
            self.assertEqual(got, [b"jit_scope_0", b"jit_scope_1", b"jit_scope_1",
                                   b"jit_scope_1", b"jit_scope_1", b"jit_scope_2"])
            self.assertIs(a1.op.get_attr("_XlaSeparateCompiledGradients"), False)

    def test_variable_initializers_with_a_predicate(self):
        def create_ops():
            with variable_scope.variable_scope(
                    "root", initializer=init_ops.random_uniform_initializer(-0.1, 0.1, seed=2)):
                return variable_scope.get_variable("var", (1,))
        _, off_1 = self.compute(False, create_ops)
        _, off_2 = self.compute(False, create_ops)
        _, pred_1 = self.compute(enable_jit_nonstateful, create_ops)
        self.assertAllClose(off_1, off_2)
        self.assertAllClose(off_1, pred_1)

    def test_defun_scope(self):
        with self.session(graph=ops.Graph()):
            @function.Defun(compiled=True, noinline=True)
            def mulop(x1, x2):
                return x1 * x2
            r = mulop(constant_op.constant(1.0), constant_op.constant(2.0))
            attrs = r.graph.as_graph_def().library.function[0].attr
            self.assertIs(attrs["_XlaCompile"].b, True)
            self.assertEqual(attrs["_XlaScope"].s, b"function_mulop")
        with self.session(graph=ops.Graph()):
            with jit.experimental_jit_scope(True):
                @function.Defun(compiled=True, noinline=True)
                def mulop2(x1, x2):
                    return x1 * x2
                r = mulop2(constant_op.constant(1.0), constant_op.constant(2.0))
            attrs = r.graph.as_graph_def().library.function[0].attr
            self.assertEqual(attrs["_XlaScope"].s, b"jit_scope_0")


class GradientScopeTest(test.TestCase):
    def test_gradients_of_compiled_ops_are_compiled(self):
        with self.cached_session() as sess:
            x = constant_op.constant([[3.0]])
            y_nc = math_ops.matmul(x, x, name="not_compiled")
            with jit.experimental_jit_scope():
                y_c = math_ops.matmul(y_nc, y_nc, name="compiled")
            x_grad = gradients.gradients([y_c], [x])[0]
            names = [op.name for op in x.graph.get_operations()]
            c_ops = [x.graph.get_operation_by_name(n) for n in names
                     if "gradients/compiled" in n]
            nc_ops = [x.graph.get_operation_by_name(n) for n in names
                      if "gradients/not_compiled" in n]
            self.assertGreater(len(c_ops), 0)
            self.assertGreater(len(nc_ops), 0)
            for op in c_ops:
                self.assertIs(op.get_attr("_XlaCompile"), True)
            for op in nc_ops:
                with self.assertRaisesRegex(ValueError, "[Nn]o attr named"):
                    op.get_attr("_XlaCompile")
            self.assertAllClose([[108.0]], sess.run(x_grad))  # d/dx x^4 = 4 x^3

    def _two_scopes(self, separate):
        with jit.experimental_jit_scope(True, separate_compiled_gradients=separate):
            a1 = constant_op.constant([[1.0]])
            a1t = math_ops.matmul(a1, a1)
        with jit.experimental_jit_scope(True, separate_compiled_gradients=separate):
            a2 = constant_op.constant([[1.0]])
            a2t = math_ops.matmul(a2, a2)
        g1 = gradients.gradients(a1t, a1, name="GA")[0].op.inputs[0]
        g2 = gradients.gradients(a2t, a2, name="GB")[0].op.inputs[0]
        self.assertIs(g1.op.get_attr("_XlaCompile"), True)
        self.assertIs(g2.op.get_attr("_XlaCompile"), True)
        return g1.op.get_attr("_XlaScope"), g2.op.get_attr("_XlaScope")

    def test_gradient_scope_names(self):
        with self.session(graph=ops.Graph()):
            self.assertEqual(self._two_scopes(False), (b"jit_scope_0", b"jit_scope_1"))
        with self.session(graph=ops.Graph()):
            self.assertEqual(self._two_scopes(True),
                             (b"jit_scope_0_grad_GA", b"jit_scope_1_grad_GB"))

    def test_defun_gradients(self):
        for separate, want in ((False, b"jit_scope_0"), (True, b"jit_scope_0_grad_GA")):
            with self.session(graph=ops.Graph()) as sess:
                with jit.experimental_jit_scope(True):
                    @function.Defun(compiled=True, noinline=True,
                                    separate_compiled_gradients=separate)
                    def mulop(x1, x2):
                        return x1 * x2
                    x = constant_op.constant(1.0)
                    r = mulop(x, x)
                    g_r = gradients.gradients(r, x, name="GA")[0]
                attrs = r.graph.as_graph_def().library.function[0].attr
                self.assertEqual(attrs["_XlaScope"].s, b"jit_scope_0")
                grad_op = g_r.op.inputs[0].op
                self.assertIs(grad_op.get_attr("_XlaCompile"), True)
                self.assertEqual(grad_op.get_attr("_XlaScope"), want)
                self.assertAllClose([1.0, 1.0, 2.0], sess.run([x, r, g_r]))


class DefunTest(test.TestCase):
    def test_python_grad_func_and_typed_inputs(self):
        import xlapy.compat.v1 as tf

        def clipped_grad(op, grad):
            return [tf.clip_by_value(grad, -1.0, 1.0) if hasattr(tf, "clip_by_value") else
                    tf.minimum(tf.maximum(grad, -1.0), 1.0)]

        @function.Defun(tf.float32, python_grad_func=clipped_grad)
        def cube(x):
            return x * x * x
        x = tf.constant([0.5, 2.0])
        y = cube(x)
        g = tf.gradients(tf.reduce_sum(y), x)[0]
        with self.session() as sess:
            self.assertAllClose(sess.run(y), [0.125, 8.0])
            self.assertAllClose(sess.run(g), [1.0, 1.0])  # the custom gradient, clipped
        self.assertEqual(y.op.type, "DefunOutputs")
        self.assertEqual(cube.name, "cube")
        with self.assertRaisesRegex(ValueError, "takes 1 argument"):
            cube(x, x)

    def test_compiled_defun_is_its_own_cluster(self):
        import xlapy.compat.v1 as tf

        @function.Defun(compiled=True)
        def affine(x, w):
            return tf.matmul(x, w) + 1.0
        x = tf.placeholder(tf.float32, [None, 2])
        w = tf.constant(np.eye(2, dtype=np.float32))
        y = tf.nn.relu(affine(x, w))
        with self.session() as sess:
            summary = sess.cluster_summary(y, {x: np.ones((1, 2))})
            self.assertIn("1 cluster(s)", summary)
            self.assertAllClose(sess.run(y, {x: [[1.0, -3.0]]}), [[2.0, 0.0]])
