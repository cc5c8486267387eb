"""tf.data.experimental and the Dataset methods TF 1.13-1.15 scripts use: apply with
shuffle_and_repeat / map_and_batch / parallel_interleave, AUTOTUNE, shard, list_files,
sample_from_datasets / choose_from_datasets, CsvDataset and make_csv_dataset, Options,
get_single_element."""

import os

import numpy as np
import pytest

import xlapy.compat.v1 as tf
from xlapy.compat.v1.errors import InvalidArgumentError, NotFoundError, UnimplementedError


def first(ds):
    return tf.Session().run(ds.make_one_shot_iterator().get_next())


def all_of(ds):
    nxt, out = ds.make_one_shot_iterator().get_next(), []
    with tf.Session() as s:
        while True:
            try:
                out.append(s.run(nxt))
            except tf.errors.OutOfRangeError:
                return out


def test_apply_transformations_give_the_plain_pipeline():
    exp = tf.data.experimental
    a = tf.data.Dataset.range(10).apply(exp.shuffle_and_repeat(10, 2, seed=3)).apply(
        exp.map_and_batch(lambda v: v * 2, 4, drop_remainder=True)).prefetch(exp.AUTOTUNE)
    b = tf.data.Dataset.range(10).shuffle(10, seed=3).repeat(2).map(lambda v: v * 2).batch(
        4, drop_remainder=True)
    got, want = all_of(a), all_of(b)
    assert len(got) == 5 and all(np.array_equal(x, y) for x, y in zip(got, want))
    assert sorted(np.concatenate(got).tolist()) == sorted(list(range(0, 20, 2)) * 2)
    pi = tf.data.Dataset.range(3).apply(exp.parallel_interleave(
        lambda v: tf.data.Dataset.range(v * 10, v * 10 + 2), cycle_length=2))
    assert [int(v) for v in all_of(pi)] == [0, 10, 1, 11, 20, 21]
    with pytest.raises(InvalidArgumentError, match="must return a Dataset"):
        tf.data.Dataset.range(3).apply(lambda ds: 3)
    with pytest.raises(UnimplementedError, match="ignore_errors"):
        tf.data.Dataset.range(3).apply(exp.ignore_errors())


def test_shard_list_files_and_options(tmp_path):
    assert [int(v) for v in all_of(tf.data.Dataset.range(10).shard(3, 1))] == [1, 4, 7]
    with pytest.raises(InvalidArgumentError, match="shard"):
        all_of(tf.data.Dataset.range(10).shard(3, 3))
    for name in ("b.txt", "a.txt", "c.csv"):
        (tmp_path / name).write_text("x")
    files = all_of(tf.data.Dataset.list_files(str(tmp_path / "*.txt"), shuffle=False))
    assert files == [str(tmp_path / "a.txt").encode(), str(tmp_path / "b.txt").encode()]
    shuffled = all_of(tf.data.Dataset.list_files(str(tmp_path / "*"), seed=1))
    assert sorted(shuffled) == sorted(str(tmp_path / n).encode()
                                      for n in ("a.txt", "b.txt", "c.csv"))
    with pytest.raises(NotFoundError, match="No files matched"):
        tf.data.Dataset.list_files(str(tmp_path / "*.none"))
    opts = tf.data.Options()
    opts.experimental_deterministic = False
    assert [int(v) for v in all_of(tf.data.Dataset.range(3).with_options(opts))] == [0, 1, 2]
    assert int(first(tf.data.Dataset.range(5).skip(2))) == 2
    assert tf.Session().run(tf.data.experimental.get_single_element(
        tf.data.Dataset.from_tensors(np.int32(7)))) == 7


def test_sample_and_choose_from_datasets():
    a, b = tf.data.Dataset.range(50), tf.data.Dataset.range(100, 150)
    got = [int(v) for v in all_of(tf.data.experimental.sample_from_datasets(
        [a, b], weights=[0.8, 0.2], seed=0))]
    assert sorted(got) == list(range(50)) + list(range(100, 150))   # every element once
    first_half = got[:40]
    assert sum(v < 100 for v in first_half) > 24   # mostly from the heavier one early on
    assert [v for v in got if v < 100] == list(range(50))   # each in its own order
    ch = tf.data.experimental.choose_from_datasets(
        [a, b], tf.data.Dataset.from_tensor_slices(np.int64([0, 1, 1, 0, 1])))
    assert [int(v) for v in all_of(ch)] == [0, 100, 101, 1, 102]
    with pytest.raises(InvalidArgumentError, match="types differ"):
        tf.data.experimental.sample_from_datasets(
            [a, tf.data.Dataset.from_tensors(np.float32(1))])


CSV = "x,y,name,label\n1,2.5,a,0\n3,4.5,\"b,c\",1\n5,,c,0\n"


def test_csv_dataset_and_make_csv_dataset(tmp_path):
    path = str(tmp_path / "d.csv")
    with open(path, "w") as f:
        f.write(CSV)
    rows = all_of(tf.data.experimental.CsvDataset(
        path, [tf.int32, [0.0], tf.string, [0]], header=True))
    assert [(int(r[0]), float(r[1]), r[2], int(r[3])) for r in rows] == [
        (1, 2.5, b"a", 0), (3, 4.5, b"b,c", 1), (5, 0.0, b"c", 0)]
    sel = all_of(tf.data.experimental.CsvDataset(path, [[0.0], tf.string], header=True,
                                                 select_cols=[1, 2]))
    assert [r[1] for r in sel] == [b"a", b"b,c", b"c"]
    with pytest.raises(InvalidArgumentError, match="required but missing"):
        all_of(tf.data.experimental.CsvDataset(path, [tf.int32, tf.float32, tf.string,
                                                      tf.int32], header=True))
    ds = tf.data.experimental.make_csv_dataset(str(tmp_path / "*.csv"), batch_size=2,
                                               label_name="label", shuffle=False,
                                               num_epochs=1)
    (feats, label), (feats2, label2) = all_of(ds)
    assert sorted(feats) == ["name", "x", "y"]
    assert feats["x"].dtype == np.int32 and feats["y"].dtype == np.float32
    np.testing.assert_array_equal(feats["x"], [1, 3])
    np.testing.assert_array_equal(feats["name"], np.array([b"a", b"b,c"], object))
    np.testing.assert_array_equal(label, [0, 1])
    np.testing.assert_array_equal(feats2["y"], [0.0])   # the missing value: the default
    with pytest.raises(InvalidArgumentError, match="label_name"):
        tf.data.experimental.make_csv_dataset(path, 2, label_name="nope")
    assert os.path.exists(path)


def test_csv_pipeline_trains_a_classifier(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 2)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int32)
    path = tmp_path / "train.csv"
    path.write_text("a,b,label\n" + "".join(f"{u},{v},{w}\n" for (u, v), w in zip(x, y)))
    ds = tf.data.experimental.make_csv_dataset(str(path), batch_size=50, label_name="label",
                                               shuffle_seed=1)
    feats, label = ds.make_one_shot_iterator().get_next()
    inputs = tf.stack([feats["a"], feats["b"]], axis=1)
    logits = tf.layers.dense(inputs, 2)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=label,
                                                                         logits=logits))
    acc = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1, output_type=tf.int32),
                                          label), tf.float32))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for _ in range(100):
            s.run(train)
        accs = [s.run(acc) for _ in range(4)]
    assert np.mean(accs) > 0.9, accs
