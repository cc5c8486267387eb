"""tf.data, host-side: from_tensor_slices / from_tensors / range with shuffle, batch,
repeat, take, skip; one-shot and initializable iterators (state per session and per
iterator, OutOfRangeError at the end), and a training loop fed by get_next whose step
compiles into one cluster."""

import collections

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import (FailedPreconditionError, InvalidArgumentError,
                                    OutOfRangeError)

from .conftest import jit_config


def _drain(sess, t):
    out = []
    while True:
        try:
            out.append(sess.run(t))
        except OutOfRangeError as e:
            assert "End of sequence" in str(e)
            return out


def test_pipeline_shapes_order_and_end_of_sequence():
    x = np.arange(14, dtype=np.float32).reshape(7, 2)
    ds = tf.data.Dataset.from_tensor_slices({"x": x, "y": np.arange(7)}).batch(3).repeat(2)
    assert ds.output_types == {"x": tf.float32, "y": tf.int64}
    assert ds.output_shapes["x"].as_list() == [None, 2]
    el = ds.make_one_shot_iterator().get_next()
    got = _drain(tf.Session(), el)
    assert [len(b["y"]) for b in got] == [3, 3, 1, 3, 3, 1]
    np.testing.assert_array_equal(np.concatenate([b["x"] for b in got]), np.concatenate([x, x]))
    dropped = tf.data.Dataset.from_tensor_slices(x).batch(3, drop_remainder=True)
    assert dropped.output_shapes.as_list() == [3, 2]
    r = tf.data.Dataset.range(10).skip(2).take(5).make_one_shot_iterator().get_next()
    assert _drain(tf.Session(), r) == [2, 3, 4, 5, 6]
    pair = tf.data.Dataset.from_tensors(([1.0, 2.0], 3)).repeat(2)
    a, b = pair.make_one_shot_iterator().get_next()
    assert a.dtype == tf.float32 and b.dtype == tf.int32 and a.shape.as_list() == [2]
    assert len(_drain(tf.Session(), a)) == 2


def test_shuffle_is_a_seeded_buffered_shuffle():
    tf.set_random_seed(4)
    base = tf.data.Dataset.from_tensor_slices(np.arange(20))
    full = base.shuffle(20).repeat(2).make_one_shot_iterator().get_next()
    small = base.shuffle(2, seed=1).make_one_shot_iterator().get_next()
    same = base.shuffle(20, seed=2, reshuffle_each_iteration=False).repeat(2)
    same_t = same.make_one_shot_iterator().get_next()
    sess = tf.Session()
    v = _drain(sess, full)
    assert sorted(v[:20]) == list(range(20)) and v[:20] != list(range(20))
    assert v[20:] != v[:20] and sorted(v[20:]) == list(range(20))
    s = _drain(sess, small)
    # a buffer of 2: the k-th output is one of the first k + 2 inputs
    assert sorted(s) == list(range(20)) and all(v <= k + 1 for k, v in enumerate(s))
    assert s != list(range(20))
    w = _drain(sess, same_t)
    assert w[:20] == w[20:]
    assert _drain(tf.Session(), full) == v  # graph + op seeds: the same order per session


def test_iterator_state_is_per_session_and_initializer_restarts():
    it = tf.data.Dataset.range(3).make_initializable_iterator()
    nxt = it.get_next()
    s1, s2 = tf.Session(), tf.Session()
    with pytest.raises(FailedPreconditionError, match="not been initialized"):
        s1.run(nxt)
    s1.run(it.initializer)
    s2.run(it.initializer)
    assert s1.run(nxt) == 0 and s1.run(nxt) == 1 and s2.run(nxt) == 0
    s1.run(it.initializer)
    assert _drain(s1, nxt) == [0, 1, 2]


def test_training_from_a_dataset_compiles_the_step():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((64, 3)).astype(np.float32)
    Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)
    Batch = collections.namedtuple("Batch", ["x", "y"])
    ds = tf.data.Dataset.from_tensor_slices(Batch(X, Y)).shuffle(64, seed=3).batch(16).repeat()
    batch = tf.data.make_one_shot_iterator(ds).get_next()
    assert isinstance(batch, Batch)
    w = tf.Variable(tf.zeros([3, 1]))
    loss = tf.reduce_mean(tf.square(tf.matmul(batch.x, w) - batch.y))
    step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    sess = tf.Session(config=jit_config())
    sess.run(tf.global_variables_initializer())
    summary = sess.cluster_summary([step, loss])
    assert summary.startswith("XLA clustering: 1 cluster(s)"), summary
    assert "IteratorGetNext" in summary.split("not clustered")[1]
    for _ in range(200):
        _, lv = sess.run([step, loss])
    assert lv < 1e-4


def test_map_runs_graph_functions_with_captures():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    scale = tf.Variable(2.0)
    offset = tf.placeholder(tf.float32, [])
    ds = (tf.data.Dataset.from_tensor_slices((x, np.arange(6)))
          .map(lambda a, i: {"v": a * scale + offset, "even": tf.equal(i % 2, 0)})
          .batch(4)
          .map(lambda d: (tf.reduce_sum(d["v"], 1), tf.cast(d["even"], tf.int32))))
    assert ds.output_types == (tf.float32, tf.int32)
    assert ds.output_shapes[0].as_list() == [None]
    it = ds.make_initializable_iterator()
    s, e = it.get_next()
    sess = tf.Session(config=jit_config())
    # the tensors map functions read are evaluated when the iterator starts, as TF's
    sess.run([tf.global_variables_initializer(), it.initializer], {offset: 1.0})
    got = _drain(sess, [s, e])
    np.testing.assert_allclose(np.concatenate([g[0] for g in got]), (x * 2 + 1).sum(1))
    np.testing.assert_array_equal(np.concatenate([g[1] for g in got]), [1, 0, 1, 0, 1, 0])
    sess.run(scale.assign(0.0))
    sess.run(it.initializer, {offset: 3.0})
    np.testing.assert_allclose(sess.run(s), [6.0] * 4)


def test_from_structure_zip_concatenate_filter_from_generator():
    train = tf.data.Dataset.from_tensor_slices((np.arange(6, dtype=np.float32),
                                                np.arange(6) % 2))
    val = tf.data.Dataset.zip((tf.data.Dataset.range(3).map(lambda i: tf.cast(i, tf.float32)),
                               tf.data.Dataset.from_tensors(np.int64(1)).repeat()))
    it = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
    v, lab = it.get_next()
    init_train, init_val = it.make_initializer(train), it.make_initializer(val)
    sess = tf.Session()
    with pytest.raises(FailedPreconditionError):
        sess.run(v)
    sess.run(init_train)
    assert [tuple(map(float, r)) for r in _drain(sess, [v, lab])] == \
        [(i, i % 2) for i in range(6)]
    sess.run(init_val)
    assert [tuple(map(float, r)) for r in _drain(sess, [v, lab])] == [(0, 1), (1, 1), (2, 1)]
    with pytest.raises(InvalidArgumentError, match="not compatible"):
        it.make_initializer(tf.data.Dataset.range(3))

    both = train.concatenate(train).filter(lambda a, b: tf.greater(a, 3.5))
    assert _drain(sess, both.make_one_shot_iterator().get_next()[0]) == [4, 5, 4, 5]

    def gen(n):
        for i in range(n):
            yield {"x": [i, i + 1], "s": i * 0.5}
    g = tf.data.Dataset.from_generator(gen, {"x": tf.int32, "s": tf.float32},
                                       {"x": [2], "s": []}, args=(3,)).batch(2)
    assert g.output_shapes["x"].as_list() == [None, 2]
    out = _drain(sess, g.make_one_shot_iterator().get_next())
    np.testing.assert_array_equal(out[0]["x"], [[0, 1], [1, 2]])
    assert out[1]["s"].dtype == np.float32 and out[1]["s"].tolist() == [1.0]
    bad = tf.data.Dataset.from_generator(lambda: iter([[1, 2, 3]]), tf.int32, [2])
    with pytest.raises(InvalidArgumentError, match="shape"):
        sess.run(bad.make_one_shot_iterator().get_next())


def test_map_with_random_augmentation_keeps_static_shapes():
    tf.set_random_seed(0)
    imgs = (np.random.default_rng(0).random((10, 6, 6, 3)) * 255).astype(np.uint8)

    def augment(im, label):
        im = tf.image.convert_image_dtype(im, tf.float32)
        return tf.image.random_flip_left_right(tf.random_crop(im, [4, 4, 3])), label
    ds = tf.data.Dataset.from_tensor_slices((imgs, np.arange(10))).map(augment).batch(4)
    assert ds.output_shapes[0].as_list() == [None, 4, 4, 3]
    x, y = ds.make_one_shot_iterator().get_next()
    sess = tf.Session()
    seen = []
    for _ in range(3):
        xv, yv = sess.run([x, y])
        for img, lab in zip(xv, yv):
            src = imgs[lab].astype(np.float32) / 255
            windows = [src[i:i + 4, j:j + 4] for i in range(3) for j in range(3)]
            assert any(np.allclose(img, w) or np.allclose(img, w[:, ::-1]) for w in windows)
        seen += list(yv)
    assert seen == list(range(10))


def test_placeholder_sources_are_read_when_the_initializer_runs():
    feats = tf.placeholder(tf.float32, [None, 2])
    labels = tf.placeholder(tf.int64, [None])
    ds = tf.data.Dataset.from_tensor_slices((feats, labels)).batch(2)
    assert ds.output_shapes[0].as_list() == [None, 2] and ds.output_types[1] == tf.int64
    it = ds.make_initializable_iterator()
    x, y = it.get_next()
    one = tf.data.Dataset.from_tensors(feats).make_initializable_iterator()
    sess = tf.Session()
    a = np.arange(10, dtype=np.float32).reshape(5, 2)
    sess.run(it.initializer, {feats: a, labels: np.arange(5)})
    got = _drain(sess, [x, y])
    np.testing.assert_array_equal(np.concatenate([g[0] for g in got]), a)
    sess.run(it.initializer, {feats: a[:1], labels: [7]})   # new data, same graph
    np.testing.assert_array_equal(sess.run(y), [7])
    sess.run(one.initializer, {feats: a})
    np.testing.assert_array_equal(sess.run(one.get_next()), a)
    with pytest.raises(InvalidArgumentError, match="same first dimension"):
        sess.run(it.initializer, {feats: a, labels: [1]})
        sess.run(x)
    with pytest.raises(InvalidArgumentError, match="must feed"):
        sess.run(it.initializer, {labels: [1]})


def test_padded_batch_unbatch_and_text_lines(tmp_path):
    import gzip
    seqs = [[1, 2], [3], [4, 5, 6], [7]]
    ds = tf.data.Dataset.from_generator(lambda: iter(seqs), tf.int32, [None])
    pb = ds.padded_batch(2, [None], padding_values=-1)
    fixed = ds.padded_batch(3, [4], drop_remainder=True)
    assert pb.output_shapes.as_list() == [None, None] and fixed.output_shapes.as_list() == [3, 4]
    sess = tf.Session()
    got = _drain(sess, pb.make_one_shot_iterator().get_next())
    np.testing.assert_array_equal(got[0], [[1, 2], [3, -1]])
    np.testing.assert_array_equal(got[1], [[4, 5, 6], [7, -1, -1]])
    f = _drain(sess, fixed.make_one_shot_iterator().get_next())
    assert len(f) == 1
    np.testing.assert_array_equal(f[0], [[1, 2, 0, 0], [3, 0, 0, 0], [4, 5, 6, 0]])
    ub = tf.data.Dataset.from_tensor_slices(np.arange(6).reshape(3, 2)).unbatch()
    assert _drain(sess, ub.make_one_shot_iterator().get_next()) == list(range(6))
    (tmp_path / "a.txt").write_text("first line\nsecond\n")
    with gzip.open(tmp_path / "b.txt.gz", "wt") as fh:
        fh.write("zipped\r\n")
    lines = tf.data.TextLineDataset([str(tmp_path / "a.txt")]).repeat(2)
    assert lines.output_types == tf.string
    assert [bytes(v) for v in _drain(sess, lines.make_one_shot_iterator().get_next())] == \
        [b"first line", b"second"] * 2
    z = tf.data.TextLineDataset(str(tmp_path / "b.txt.gz"), compression_type="GZIP")
    assert [bytes(v) for v in _drain(sess, z.make_one_shot_iterator().get_next())] == \
        [b"zipped"]
    with pytest.raises(tf.errors.NotFoundError):
        sess.run(tf.data.TextLineDataset("/nonexistent/x").make_one_shot_iterator().get_next())


def test_flat_map_and_interleave_in_tf_order():
    base = tf.data.Dataset.from_tensor_slices(np.array([1, 2, 3, 4], np.int64))
    il = base.interleave(lambda x: tf.data.Dataset.from_tensors(x).repeat(x), cycle_length=2,
                         block_length=2)
    fm = base.flat_map(lambda x: tf.data.Dataset.from_tensor_slices(
        tf.fill([tf.cast(x, tf.int32)], x * 10)))
    rr = base.interleave(lambda x: tf.data.Dataset.range(x), cycle_length=3)
    scale = tf.placeholder(tf.int64, [])
    fed = base.flat_map(lambda x: tf.data.Dataset.from_tensors(x * scale)).take(scale)
    it = fed.make_initializable_iterator()
    sess = tf.Session()
    # orders as TF 2.21's compat.v1 gives them
    assert _drain(sess, il.make_one_shot_iterator().get_next()) == \
        [1, 2, 2, 3, 3, 3, 4, 4, 4, 4]
    assert _drain(sess, fm.make_one_shot_iterator().get_next()) == \
        [10, 20, 20, 30, 30, 30, 40, 40, 40, 40]
    assert _drain(sess, rr.make_one_shot_iterator().get_next()) == \
        [0, 0, 0, 1, 1, 0, 2, 1, 2, 3]
    sess.run(it.initializer, {scale: 3})
    assert _drain(sess, it.get_next()) == [3, 6, 9]
    with pytest.raises(InvalidArgumentError, match="must return a Dataset"):
        base.flat_map(lambda x: x)


def test_read_decode_images_in_a_pipeline(tmp_path):
    pytest.importorskip("PIL")
    from PIL import Image
    rng = np.random.default_rng(2)
    imgs = [(rng.random((4, 5, 3)) * 255).astype(np.uint8) for _ in range(3)]
    paths = []
    for i, im in enumerate(imgs):
        p = str(tmp_path / f"im{i}.png")
        Image.fromarray(im).save(p)
        paths.append(p)
    Image.fromarray(imgs[0]).save(str(tmp_path / "im.jpg"), quality=95)
    ds = tf.data.Dataset.from_tensor_slices(paths).map(
        lambda f: tf.image.convert_image_dtype(tf.image.decode_png(tf.read_file(f), 3),
                                               tf.float32)).batch(3)
    batch = ds.make_one_shot_iterator().get_next()
    assert batch.shape.as_list() == [None, None, None, 3]
    sess = tf.Session()
    np.testing.assert_allclose(sess.run(batch), np.stack(imgs) / 255.0, rtol=1e-6)
    gray = tf.image.decode_image(tf.io.read_file(paths[1]), channels=1)
    jpg = tf.image.decode_jpeg(tf.read_file(str(tmp_path / "im.jpg")))
    gv, jv = sess.run([gray, jpg])
    want_gray = np.asarray(Image.fromarray(imgs[1]).convert("L"))[:, :, None]
    np.testing.assert_array_equal(gv, want_gray)
    np.testing.assert_array_equal(jv, np.asarray(Image.open(str(tmp_path / "im.jpg"))))
    out = str(tmp_path / "sub" / "back.png")
    sess.run(tf.write_file(out, tf.image.encode_png(tf.constant(imgs[2]))))
    np.testing.assert_array_equal(np.asarray(Image.open(out)), imgs[2])
    with pytest.raises(tf.errors.NotFoundError):
        sess.run(tf.read_file(str(tmp_path / "missing.png")))
    with pytest.raises(InvalidArgumentError, match="not a valid image"):
        sess.run(tf.image.decode_png(tf.constant(b"not a png")))


def test_feedable_iterator_switches_between_training_and_validation():
    """Iterator.from_string_handle: the TF 1.x way to switch one input pipeline between a
    one-shot training iterator and an initializable validation one by feeding a handle."""
    train = tf.data.Dataset.range(5).repeat()
    val = tf.data.Dataset.range(100, 103)
    handle = tf.placeholder(tf.string, shape=[])
    it = tf.data.Iterator.from_string_handle(handle, train.output_types, train.output_shapes)
    nxt = it.get_next() * 2
    train_it = train.make_one_shot_iterator()
    val_it = val.make_initializable_iterator()
    other = tf.data.Dataset.from_tensors(np.zeros([2], np.float32)).make_one_shot_iterator()
    with tf.Session() as s:
        th, vh, oh = s.run([train_it.string_handle(), val_it.string_handle(),
                            other.string_handle()])
        assert isinstance(th, bytes) and th != vh
        assert [s.run(nxt, {handle: th}) for _ in range(3)] == [0, 2, 4]
        with pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
            s.run(nxt, {handle: vh})
        s.run(val_it.initializer)
        assert [s.run(nxt, {handle: vh}) for _ in range(3)] == [200, 202, 204]
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(nxt, {handle: vh})
        assert s.run(nxt, {handle: th}) == 6   # the training iterator went on
        with pytest.raises(InvalidArgumentError, match="incompatible"):
            s.run(nxt, {handle: oh})
        with pytest.raises(InvalidArgumentError, match="not the string handle"):
            s.run(nxt, {handle: b"nonsense"})
    with pytest.raises(InvalidArgumentError, match="must be a string tensor"):
        tf.data.Iterator.from_string_handle(tf.constant(1), train.output_types)


def test_fill_of_a_list_holding_an_int64_tensor():
    d = tf.data.Dataset.range(1, 4).map(lambda n: tf.fill([n], n)).padded_batch(
        3, padded_shapes=[None])
    got = tf.Session().run(d.make_one_shot_iterator().get_next())
    np.testing.assert_array_equal(got, [[1, 0, 0], [2, 2, 0], [3, 3, 3]])
