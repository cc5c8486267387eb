"""tf.keras.utils (TF 1.x / Keras 2.2): to_categorical, normalize, Sequence (batches for
fit_generator), get_file (the Keras cache only: nothing is downloaded here), the custom
object scopes that load_model and model_from_json consult, Progbar, and plot_model (an
UnimplementedError: no graphviz)."""

from __future__ import annotations

import os

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, NotFoundError, UnimplementedError

_GLOBAL_CUSTOM_OBJECTS: dict = {}


def to_categorical(y, num_classes=None, dtype="float32"):
    """Class indices (any shape; a trailing axis of 1 is dropped) -> one-hot rows, as
    Keras: num_classes defaults to max(y) + 1."""
    y = np.array(y, dtype="int")
    input_shape = y.shape
    if input_shape and input_shape[-1] == 1 and len(input_shape) > 1:
        input_shape = tuple(input_shape[:-1])
    y = y.ravel()
    if not num_classes:
        num_classes = int(np.max(y)) + 1
    n = y.shape[0]
    if n and (y.min() < 0 or y.max() >= num_classes):
        raise InvalidArgumentError(f"to_categorical: class indices must be in [0, "
                                   f"{num_classes}), got [{y.min()}, {y.max()}]")
    categorical = np.zeros((n, num_classes), dtype=dtype)
    categorical[np.arange(n), y] = 1
    return np.reshape(categorical, input_shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    """x divided by its `order`-norm along `axis` (zero norms left as 1)."""
    x = np.asarray(x)
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)


class Sequence:
    """Batches by index: subclasses define __len__ (batches per epoch) and
    __getitem__(index) -> (x, y) (or x); on_epoch_end runs after each epoch of
    fit_generator."""

    def __getitem__(self, index):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def on_epoch_end(self):
        pass

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]


def get_file(fname, origin=None, untar=False, md5_hash=None, file_hash=None,
             cache_subdir="datasets", hash_algorithm="auto", extract=False,
             archive_format="auto", cache_dir=None):
    """The path of `fname` in Keras' cache (cache_dir, default ~/.keras, then
    cache_subdir), as Keras' get_file when the file was downloaded before. A file:// origin
    is copied into the cache. Nothing is fetched from the network: a missing file raises
    NotFoundError saying where to put it."""
    import shutil
    if cache_dir is None:
        cache_dir = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"),
                                                                  ".keras")
    base = os.path.expanduser(cache_dir)
    datadir = os.path.join(base, cache_subdir)
    fpath = os.path.join(datadir, fname + ".tar.gz" if untar else fname)
    if not os.path.exists(fpath):
        src = origin[len("file://"):] if isinstance(origin, str) and \
            origin.startswith("file://") else None
        if src is None or not os.path.exists(src):
            raise NotFoundError(f"get_file: {fpath} is not in the Keras cache and xlapy "
                                f"does not download files; download {origin or fname} "
                                f"yourself and put it at {fpath}")
        os.makedirs(datadir, exist_ok=True)
        shutil.copyfile(src, fpath)
    want = file_hash or md5_hash
    if want is not None:
        import hashlib
        algo = hash_algorithm if hash_algorithm not in ("auto", None) else (
            "sha256" if len(want) == 64 else "md5")
        h = hashlib.new(algo)
        with open(fpath, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        if h.hexdigest() != want:
            raise InvalidArgumentError(f"get_file: {fpath} does not match its {algo} hash "
                                       f"{want}")
    if untar or extract:
        import tarfile
        import zipfile
        target = os.path.join(datadir, fname) if untar else datadir
        if tarfile.is_tarfile(fpath):
            if not (untar and os.path.exists(target)):
                with tarfile.open(fpath) as t:
                    t.extractall(datadir, filter="data")
        elif zipfile.is_zipfile(fpath):
            with zipfile.ZipFile(fpath) as z:
                z.extractall(datadir)
        if untar:
            return target
    return fpath


def plot_model(model, to_file="model.png", show_shapes=False, show_layer_names=True,
               rankdir="TB", expand_nested=False, dpi=96):
    raise UnimplementedError("tf.keras.utils.plot_model is not supported by xlapy (it needs "
                             "pydot and graphviz); use model.summary()")


model_to_dot = plot_model


def get_custom_objects() -> dict:
    """The global custom objects (name -> class or function) deserialization looks in."""
    return _GLOBAL_CUSTOM_OBJECTS


class CustomObjectScope:
    """with CustomObjectScope({'MyLayer': MyLayer}): load_model and model_from_json
    find those names (the global custom objects, restored on exit)."""

    def __init__(self, *args):
        self.custom_objects = args
        self.backup = None

    def __enter__(self):
        self.backup = dict(_GLOBAL_CUSTOM_OBJECTS)
        for objects in self.custom_objects:
            _GLOBAL_CUSTOM_OBJECTS.update(objects)
        return self

    def __exit__(self, *args):
        _GLOBAL_CUSTOM_OBJECTS.clear()
        _GLOBAL_CUSTOM_OBJECTS.update(self.backup)


def custom_object_scope(*args):
    return CustomObjectScope(*args)


class Progbar:
    """Keras' progress bar, printed as one line per update (no terminal tricks)."""

    def __init__(self, target, width=30, verbose=1, interval=0.05, stateful_metrics=None,
                 unit_name="step"):
        self.target, self.verbose = target, verbose
        self.seen = 0
        self._values: dict = {}

    def update(self, current, values=None):
        for k, v in values or []:
            self._values[k] = v
        self.seen = current
        if self.verbose:
            parts = " - ".join(f"{k}: {float(np.mean(v)):.4f}"
                               for k, v in self._values.items())
            print(f"{current}/{self.target or '?'}" + (f" - {parts}" if parts else ""))

    def add(self, n, values=None):
        self.update(self.seen + n, values)
