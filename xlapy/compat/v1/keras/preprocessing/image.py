"""tf.keras.preprocessing.image.ImageDataGenerator for NumPy images: flow(x, y) batches
with rescale, horizontal/vertical flips, width/height shifts (whole pixels, the border
repeated as fill_mode='nearest') and featurewise/samplewise centering and std
normalization (fit). The other augmentations (rotation, zoom, shear, brightness, ZCA,
...) raise UnimplementedError naming the argument."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, UnimplementedError

_UNSUPPORTED = {"zca_whitening": False, "rotation_range": 0, "brightness_range": None,
                "shear_range": 0.0, "zoom_range": 0.0, "channel_shift_range": 0.0,
                "cval": 0.0}


class ImageDataGenerator:
    def __init__(self, featurewise_center=False, samplewise_center=False,
                 featurewise_std_normalization=False, samplewise_std_normalization=False,
                 zca_whitening=False, zca_epsilon=1e-6, rotation_range=0,
                 width_shift_range=0.0, height_shift_range=0.0, brightness_range=None,
                 shear_range=0.0, zoom_range=0.0, channel_shift_range=0.0,
                 fill_mode="nearest", cval=0.0, horizontal_flip=False, vertical_flip=False,
                 rescale=None, preprocessing_function=None, data_format=None,
                 validation_split=0.0, dtype=None):
        given = dict(zca_whitening=zca_whitening, rotation_range=rotation_range,
                     brightness_range=brightness_range, shear_range=shear_range,
                     zoom_range=zoom_range, channel_shift_range=channel_shift_range, cval=cval)
        for k, default in _UNSUPPORTED.items():
            v = given[k]
            if (v is not None and np.any(np.asarray(v) != default)) if default is not None \
                    else v is not None:
                raise UnimplementedError(f"ImageDataGenerator({k}={v!r}) is not supported by "
                                         f"xlapy's Keras (rescale, flips, shifts and "
                                         f"centering/normalization are)")
        if fill_mode != "nearest":
            raise UnimplementedError(f"ImageDataGenerator(fill_mode={fill_mode!r}) is not "
                                     f"supported by xlapy's Keras (only 'nearest')")
        if validation_split:
            raise UnimplementedError("ImageDataGenerator(validation_split=...) is not "
                                     "supported by xlapy's Keras")
        self.data_format = data_format or "channels_last"
        if self.data_format not in ("channels_last", "channels_first"):
            raise InvalidArgumentError(f"`data_format` should be `\"channels_last\"` or "
                                       f"`\"channels_first\"`. Received: {data_format}")
        self.channel_axis, self.row_axis, self.col_axis = (
            (3, 1, 2) if self.data_format == "channels_last" else (1, 2, 3))
        self.featurewise_center = featurewise_center
        self.samplewise_center = samplewise_center
        self.featurewise_std_normalization = featurewise_std_normalization
        self.samplewise_std_normalization = samplewise_std_normalization
        self.width_shift_range, self.height_shift_range = width_shift_range, height_shift_range
        self.horizontal_flip, self.vertical_flip = horizontal_flip, vertical_flip
        self.rescale = rescale
        self.preprocessing_function = preprocessing_function
        self.dtype = dtype or "float32"
        self.mean = self.std = None

    def fit(self, x, augment=False, rounds=1, seed=None):
        """The per-channel mean and std of x (rank 4) for featurewise_center /
        featurewise_std_normalization."""
        if augment:
            raise UnimplementedError("ImageDataGenerator.fit(augment=True) is not supported "
                                     "by xlapy's Keras")
        x = np.asarray(x, dtype=self.dtype)
        if x.ndim != 4:
            raise InvalidArgumentError(f"Input to `.fit()` should have rank 4. Got array with "
                                       f"shape: {x.shape}")
        axes = (0, self.row_axis, self.col_axis)
        shape = [1, 1, 1]
        shape[self.channel_axis - 1] = x.shape[self.channel_axis]
        if self.featurewise_center:
            self.mean = np.reshape(np.mean(x, axis=axes), shape)
            x = x - self.mean
        if self.featurewise_std_normalization:
            self.std = np.reshape(np.std(x, axis=axes), shape)

    def standardize(self, x):
        """One image (or a batch), as Keras: preprocessing_function, rescale, samplewise
        then featurewise centering / normalization."""
        if self.preprocessing_function:
            x = self.preprocessing_function(x)
        x = np.asarray(x, self.dtype)
        if self.rescale:
            x = x * self.rescale
        ch = self.channel_axis - 1 if x.ndim == 3 else self.channel_axis
        if self.samplewise_center:
            x = x - np.mean(x, keepdims=True, axis=ch)
        if self.samplewise_std_normalization:
            x = x / (np.std(x, keepdims=True, axis=ch) + 1e-6)
        if self.featurewise_center:
            if self.mean is None:
                raise InvalidArgumentError("This ImageDataGenerator specifies "
                                           "`featurewise_center`, but it hasn't been fit on "
                                           "any training data. Fit it first by calling "
                                           "`.fit(numpy_data)`.")
            x = x - self.mean
        if self.featurewise_std_normalization:
            if self.std is None:
                raise InvalidArgumentError("This ImageDataGenerator specifies "
                                           "`featurewise_std_normalization`, but it hasn't "
                                           "been fit on any training data. Fit it first by "
                                           "calling `.fit(numpy_data)`.")
            x = x / (self.std + 1e-6)
        return x

    @staticmethod
    def _shift_amount(r, size, rng):
        if not r:
            return 0
        if isinstance(r, (int, np.integer)) or not np.isscalar(r):   # pixels: choice
            t = float(rng.choice(np.asarray(r) if not np.isscalar(r) else int(r)))
            t *= rng.choice([-1, 1])
        else:
            t = rng.uniform(-r, r)
        if np.max(r) < 1:
            t *= size
        return int(round(t))

    def get_random_transform(self, img_shape, seed=None, rng=None):
        rng = rng or np.random.default_rng(seed)
        r, c = self.row_axis - 1, self.col_axis - 1
        return {"tx": self._shift_amount(self.height_shift_range, img_shape[r], rng),
                "ty": self._shift_amount(self.width_shift_range, img_shape[c], rng),
                "flip_horizontal": bool(self.horizontal_flip and rng.random() < 0.5),
                "flip_vertical": bool(self.vertical_flip and rng.random() < 0.5)}

    def apply_transform(self, x, params):
        """One image [h, w, c] (or channels_first): out[i, j] = x[i + tx, j + ty] with the
        indices clamped to the image (Keras' shift matrix, fill_mode 'nearest'), then the
        flips."""
        r, c = self.row_axis - 1, self.col_axis - 1
        for axis, t in ((r, params.get("tx", 0)), (c, params.get("ty", 0))):
            if t:
                idx = np.clip(np.arange(x.shape[axis]) + t, 0, x.shape[axis] - 1)
                x = np.take(x, idx, axis=axis)
        if params.get("flip_horizontal"):
            x = np.flip(x, c)
        if params.get("flip_vertical"):
            x = np.flip(x, r)
        return x

    def random_transform(self, x, seed=None):
        return self.apply_transform(x, self.get_random_transform(x.shape, seed))

    def flow(self, x, y=None, batch_size=32, shuffle=True, sample_weight=None, seed=None,
             save_to_dir=None, save_prefix="", save_format="png", subset=None):
        if save_to_dir is not None or subset is not None:
            raise UnimplementedError("ImageDataGenerator.flow: save_to_dir and subset are not "
                                     "supported by xlapy's Keras")
        return NumpyArrayIterator(x, y, self, batch_size, shuffle, sample_weight, seed)

    def flow_from_directory(self, *args, **kwargs):
        raise UnimplementedError("ImageDataGenerator.flow_from_directory is not supported by "
                                 "xlapy's Keras (no image decoding); load the images into "
                                 "arrays and use flow")


class NumpyArrayIterator:
    """Batches of (transformed x, y) forever, in a new order each epoch when shuffle; a
    keras.utils.Sequence too (len = batches per epoch, [i] = batch i)."""

    def __init__(self, x, y, gen, batch_size=32, shuffle=True, sample_weight=None, seed=None):
        x = np.asarray(x)
        if x.ndim != 4:
            raise InvalidArgumentError(f"Input data in `NumpyArrayIterator` should have rank "
                                       f"4. You passed an array with shape {x.shape}")
        if y is not None and len(x) != len(y):
            raise InvalidArgumentError(f"`x` (images tensor) and `y` (labels) should have the "
                                       f"same length. Found: x.shape = {x.shape}, y.shape = "
                                       f"{np.asarray(y).shape}")
        self.x, self.y = x, None if y is None else np.asarray(y)
        self.sample_weight = None if sample_weight is None else np.asarray(sample_weight)
        self.gen, self.batch_size, self.shuffle = gen, int(batch_size), shuffle
        self.n = len(x)
        self.rng = np.random.default_rng(seed)
        self.batch_index = 0
        self._order()

    def _order(self):
        self.index_array = self.rng.permutation(self.n) if self.shuffle else np.arange(self.n)

    def __len__(self):
        return (self.n + self.batch_size - 1) // self.batch_size

    def on_epoch_end(self):
        self._order()

    def __getitem__(self, i):
        if i >= len(self):
            raise InvalidArgumentError(f"Asked to retrieve element {i}, but the Sequence has "
                                       f"length {len(self)}")
        return self._batch(self.index_array[self.batch_size * i:self.batch_size * (i + 1)])

    def _batch(self, idx):
        g = self.gen
        xs = np.stack([g.standardize(g.apply_transform(
            self.x[j], g.get_random_transform(self.x[j].shape, rng=self.rng)))
            for j in idx]).astype(g.dtype)
        out = (xs,) if self.y is None else (xs, self.y[idx])
        if self.sample_weight is not None:
            out += (self.sample_weight[idx],)
        return out[0] if len(out) == 1 else out

    def __iter__(self):
        return self

    def __next__(self):
        if self.batch_index >= len(self):
            self.batch_index = 0
            self._order()
        i = self.batch_index
        self.batch_index += 1
        return self[i]

    next = __next__


def img_to_array(img, data_format=None, dtype="float32"):
    x = np.asarray(img, dtype=dtype)
    if x.ndim == 2:
        x = x[:, :, None] if (data_format or "channels_last") == "channels_last" else x[None]
    return x


def array_to_img(*args, **kwargs):
    raise UnimplementedError("array_to_img needs PIL, which xlapy's Keras does not use")


load_img = array_to_img
