"""xlapy.tree_util / xlapy.tree against jax.tree_util / jax.tree: the same leaves, order,
structure equality, key paths (keystr), errors, custom nodes, and jit / grad taking
registered nodes."""

from __future__ import annotations

import collections
import dataclasses
import functools

import jax
import numpy as np
import pytest

import xlapy as xp
import xlapy.numpy as xnp
from xlapy import tree_util as xtu
from xlapy.errors import XlapyError

jtu = jax.tree_util
Point = collections.namedtuple("Point", ["x", "y"])

TREES = [
    1,
    None,
    (),
    [],
    {},
    (1, 2.0),
    (1,),
    [1, [2, [3, None]], ()],
    {"b": 1, "a": [2, 3], "c": {"z": 4, "y": None}},
    {3: "x", 1: "y"},
    Point(1, (2, 3)),
    [Point(None, 1), {"k": Point(2, 3)}],
    collections.OrderedDict([("b", 1), ("a", 2)]),
    collections.defaultdict(list, {"b": 1, "a": 2}),
    (np.ones(2), {"w": np.zeros((2, 2)), "b": None}),
]


@pytest.mark.parametrize("tree", TREES, ids=lambda t: repr(t)[:40])
def test_leaves_and_structure_match_jax(tree):
    xl, xd = xtu.tree_flatten(tree)
    jl, jd = jtu.tree_flatten(tree)
    assert len(xl) == len(jl) and all(a is b for a, b in zip(xl, jl))
    assert xd.num_leaves == jd.num_leaves and xd.num_nodes == jd.num_nodes
    rebuilt = xtu.tree_unflatten(xd, xl)
    assert type(rebuilt) is type(tree)
    assert jtu.tree_structure(rebuilt) == jd
    # key paths print as JAX's
    xp_paths = [xtu.keystr(p) for p, _ in xtu.tree_flatten_with_path(tree)[0]]
    jp_paths = [jtu.keystr(p) for p, _ in jtu.tree_flatten_with_path(tree)[0]]
    assert xp_paths == jp_paths


def test_structure_equality_and_hash():
    a = xtu.tree_structure({"a": 1, "b": (2, 3)})
    b = xtu.tree_structure({"b": (5, 6), "a": 4})
    c = xtu.tree_structure({"a": 1, "b": [2, 3]})
    assert a == b and hash(a) == hash(b) and a != c
    assert xtu.tree_structure(Point(1, 2)) != xtu.tree_structure((1, 2))
    assert repr(xtu.tree_structure((1, {"b": 2, "a": [3, None]}))) == \
        repr(jtu.tree_structure((1, {"b": 2, "a": [3, None]})))
    assert repr(xtu.tree_structure((1,))) == repr(jtu.tree_structure((1,)))
    assert xtu.treedef_is_leaf(xtu.tree_structure(3))
    assert not xtu.treedef_is_leaf(xtu.tree_structure(None))
    assert xtu.treedef_children(xtu.tree_structure((1, [2, 3])))[1] == \
        xtu.tree_structure([0, 0])
    assert xtu.treedef_tuple([xtu.tree_structure(1), xtu.tree_structure([1])]) == \
        xtu.tree_structure((1, [2]))


def test_tree_map_several_trees_and_is_leaf():
    t1 = {"a": 1, "b": (2, None)}
    t2 = {"b": (20, None), "a": 10}
    got = xtu.tree_map(lambda x, y: x + y, t1, t2)
    assert got == jtu.tree_map(lambda x, y: x + y, t1, t2) == {"a": 11, "b": (22, None)}
    # rest trees may go deeper than the first one's leaves
    got = xtu.tree_map(lambda x, y: (x, y), [1, 2], [(3, 4), {"k": 5}])
    assert got == [(1, (3, 4)), (2, {"k": 5})]
    is_pair = lambda x: isinstance(x, tuple) and len(x) == 2
    tree = [(1, 2), [(3, 4)]]
    assert xtu.tree_map(lambda p: p[0] * p[1], tree, is_leaf=is_pair) == \
        jtu.tree_map(lambda p: p[0] * p[1], tree, is_leaf=is_pair) == [2, [12]]
    assert xtu.tree_leaves(tree, is_leaf=is_pair) == [(1, 2), (3, 4)]
    assert xtu.tree_map(lambda x: x, None) is None


@pytest.mark.parametrize("a, b", [((1, 2), (1, 2, 3)), ({"a": 1}, {"b": 1}), ([1], (1,)),
                                  (Point(1, 2), (1, 2))])
def test_structure_mismatch_errors(a, b):
    with pytest.raises(ValueError):
        jtu.tree_map(lambda x, y: x, a, b)
    with pytest.raises(XlapyError, match="structure mismatch"):
        xtu.tree_map(lambda x, y: x, a, b)


def test_unflatten_with_wrong_leaf_count():
    d = xtu.tree_structure((1, 2))
    with pytest.raises(XlapyError, match="needs 2 leaves, got 1"):
        xtu.tree_unflatten(d, [1])


def test_reduce_all_transpose():
    assert xtu.tree_reduce(lambda a, b: a + b, [1, (2, 3)]) == 6
    assert xtu.tree_reduce(lambda a, b: a + b, [], 0) == 0
    assert xtu.tree_all([True, (1, 0)]) is False and xtu.tree_all([]) is True
    outer = xtu.tree_structure([0, 0])
    inner = xtu.tree_structure((0, {"a": 0}))
    tree = [(1, {"a": 2}), (3, {"a": 4})]
    assert xtu.tree_transpose(outer, inner, tree) == jtu.tree_transpose(
        jtu.tree_structure([0, 0]), jtu.tree_structure((0, {"a": 0})), tree)
    assert xtu.all_leaves([1, np.ones(2)]) and not xtu.all_leaves([1, (2,)])


def test_jax_tree_short_names():
    tree = {"a": [1, 2], "b": (3,)}
    assert xp.tree.map(lambda x: x * 2, tree) == jax.tree.map(lambda x: x * 2, tree)
    assert xp.tree.leaves(tree) == jax.tree.leaves(tree)
    assert xp.tree.reduce(max, tree) == jax.tree.reduce(max, tree)
    assert xp.tree.all(tree) == jax.tree.all(tree)
    leaves, d = xp.tree.flatten(tree)
    assert xp.tree.unflatten(d, leaves) == tree and xp.tree.structure(tree) == d
    paths = [xtu.keystr(p) for p, _ in xp.tree.leaves_with_path(tree)]
    assert paths == ["['a'][0]", "['a'][1]", "['b'][0]"]
    assert xp.tree.map_with_path(lambda p, x: xtu.keystr(p), [7]) == ["[0]"]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        xp.tree.nope  # noqa: B018


# ---- custom nodes --------------------------------------------------------------------------

@xtu.register_pytree_node_class
class Box:
    def __init__(self, value, label):
        self.value, self.label = value, label

    def tree_flatten(self):
        return (self.value,), self.label

    @classmethod
    def tree_unflatten(cls, label, children):
        return cls(children[0], label)


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b


xtu.register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))


@dataclasses.dataclass
class Layer:
    w: object
    b: object
    name: str = dataclasses.field(default="dense", metadata={"static": True})


xtu.register_dataclass(Layer)


def test_custom_nodes_flatten_and_rebuild():
    tree = {"box": Box(np.ones(2), "lbl"), "pair": Pair(1, [2, 3])}
    leaves, d = xtu.tree_flatten(tree)
    assert len(leaves) == 4
    back = xtu.tree_unflatten(d, [10, 20, 30, 40])
    assert back["box"].value == 10 and back["box"].label == "lbl"
    assert back["pair"].a == 20 and back["pair"].b == [30, 40]
    assert xtu.tree_structure(Box(1, "x")) != xtu.tree_structure(Box(1, "y"))
    assert [xtu.keystr(p) for p, _ in xtu.tree_flatten_with_path(tree)[0]] == [
        "['box'][<flat index 0>]", "['pair'][<flat index 0>]", "['pair'][<flat index 1>][0]",
        "['pair'][<flat index 1>][1]"]
    jtree = {"box": 0, "pair": JaxPair(1, [2, 3])}
    assert [jtu.keystr(p) for p, _ in jtu.tree_flatten_with_path(jtree)[0]][1:] == [
        "['pair'][<flat index 0>]", "['pair'][<flat index 1>][0]", "['pair'][<flat index 1>][1]"]


class JaxPair(Pair):
    pass


jtu.register_pytree_node(JaxPair, lambda p: ((p.a, p.b), None), lambda _, c: JaxPair(*c))


def test_register_dataclass_matches_jax():
    @dataclasses.dataclass
    class JLayer:
        w: object
        b: object
        name: str = dataclasses.field(default="dense", metadata={"static": True})
    jtu.register_dataclass(JLayer, data_fields=["w", "b"], meta_fields=["name"])
    x = Layer(1, 2)
    jx = JLayer(1, 2)
    assert xtu.tree_leaves(x) == jtu.tree_leaves(jx) == [1, 2]
    assert [xtu.keystr(p) for p, _ in xtu.tree_flatten_with_path(x)[0]] == \
        [jtu.keystr(p) for p, _ in jtu.tree_flatten_with_path(jx)[0]]
    assert xtu.tree_structure(Layer(1, 2, "a")) != xtu.tree_structure(Layer(1, 2, "b"))
    y = xtu.tree_map(lambda v: v * 10, x)
    assert isinstance(y, Layer) and (y.w, y.b, y.name) == (10, 20, "dense")


def test_partial_is_a_pytree():
    def f(a, b, *, c):
        return a * b + c
    p = xtu.Partial(f, np.float32(2.0), c=np.float32(1.0))
    leaves = xtu.tree_leaves(p)
    assert len(leaves) == 2
    q = xtu.tree_map(lambda v: v * 3, p)
    assert isinstance(q, xtu.Partial) and q(np.float32(1.0)) == 9.0  # 6 * 1 + 3
    jp = jtu.Partial(f, np.float32(2.0), c=np.float32(1.0))
    assert len(jtu.tree_leaves(jp)) == len(leaves)
    # a Partial passes through jit as a value: its function is static
    out = xp.jit(lambda g, x: g(x))(p, np.float32(3.0))
    assert float(out) == 7.0


def test_jit_and_grad_take_registered_nodes():
    params = {"l1": Layer(np.ones((2, 3), np.float32), np.zeros(3, np.float32)),
              "aux": Box(np.float32(2.0), "scale"), "p": Pair(np.float32(1.0), None)}

    def loss(params, x):
        l1 = params["l1"]
        y = xnp.tanh(x @ l1.w + l1.b) * params["aux"].value + params["p"].a
        return xnp.sum(y ** 2)

    x = np.arange(4, dtype=np.float32).reshape(2, 2) / 4
    got = xp.jit(loss)(params, x)
    ref = loss(params, x)
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    g = xp.jit(xp.grad(loss))(params, x)
    assert isinstance(g["l1"], Layer) and isinstance(g["aux"], Box) and g["aux"].label == "scale"

    @dataclasses.dataclass
    class JL:
        w: object
        b: object
    jtu.register_dataclass(JL, data_fields=["w", "b"], meta_fields=[])

    @jtu.register_pytree_node_class
    class JBox(Box):
        pass

    class JPair(Pair):
        pass
    jtu.register_pytree_node(JPair, lambda p: ((p.a, p.b), None), lambda _, c: JPair(*c))
    jparams = {"l1": JL(params["l1"].w, params["l1"].b), "aux": JBox(np.float32(2.0), "scale"),
               "p": JPair(np.float32(1.0), None)}

    def jloss(params, x):
        l1 = params["l1"]
        y = jax.numpy.tanh(x @ l1.w + l1.b) * params["aux"].value + params["p"].a
        return jax.numpy.sum(y ** 2)
    jg = jax.grad(jloss)(jparams, x)
    np.testing.assert_allclose(g["l1"].w, jg["l1"].w, rtol=1e-5)
    np.testing.assert_allclose(g["l1"].b, jg["l1"].b, rtol=1e-5)
    np.testing.assert_allclose(g["aux"].value, jg["aux"].value, rtol=1e-5)
    np.testing.assert_allclose(g["p"].a, jg["p"].a, rtol=1e-5)


def test_jit_names_leaves_of_custom_nodes_in_errors():
    def f(layer):
        if layer.b.sum() > 0:
            return layer.w
        return layer.w
    with pytest.raises(XlapyError, match=r"argument 'layer' \(layer\.b\)"):
        xp.jit(f)(Layer(np.ones(2), np.ones(2)))


def test_reregistering_is_an_error():
    with pytest.raises(XlapyError, match="already registered"):
        xtu.register_pytree_node(Pair, lambda p: ((), None), lambda _, c: Pair(0, 0))


def test_missing_attribute():
    assert not hasattr(xtu, "tree_nope")
    with pytest.raises(AttributeError, match="no attribute 'tree_nope'"):
        xtu.tree_nope  # noqa: B018


def test_functools_partial_is_a_leaf():
    p = functools.partial(max, 1)
    assert xtu.tree_leaves(p) == [p] and jtu.tree_leaves(p) == [p]


_Reg = collections.namedtuple("_Reg", ["value", "meta"])
xtu.register_pytree_node(_Reg, lambda r: ((r.value,), r.meta), lambda meta, c: _Reg(c[0], meta))


def test_registered_namedtuple_uses_its_own_rule():
    """A namedtuple registered as a node (as example_libraries' OptimizerState) flattens and
    rebuilds by its registered functions, not as a plain namedtuple."""
    r = _Reg(np.ones(2), "static")
    leaves, d = xtu.tree_flatten(r)
    assert len(leaves) == 1
    back = xtu.tree_unflatten(d, [np.zeros(2)])
    assert isinstance(back, _Reg) and back.meta == "static" and back.value.sum() == 0
    out = xp.jit(lambda t: _Reg(t.value * 2, t.meta))(r)
    assert out.meta == "static" and np.asarray(out.value).tolist() == [2.0, 2.0]
