"""Batches from somewhere other than NumPy arrays, for Model.fit / fit_generator /
evaluate_generator / predict_generator: Python generators (steps required), a
keras.utils.Sequence (len(seq) batches, on_epoch_end after each epoch) and tf.data
Datasets (their elements read in the Keras session; steps_per_epoch, or until the data
set ends, which then restarts each epoch)."""

from __future__ import annotations

import itertools

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, OutOfRangeError


def is_source(x) -> bool:
    """A generator, iterator, Sequence or Dataset (not an array or a list of arrays)."""
    from xlapy.compat.v1.data.dataset import Dataset
    from xlapy.compat.v1.keras.utils import Sequence
    if isinstance(x, (Dataset, Sequence)):
        return True
    return hasattr(x, "__next__") and not isinstance(x, (np.ndarray, list, tuple, dict))


def _split(batch):
    if isinstance(batch, (tuple, list)):
        if len(batch) == 3:
            from xlapy.compat.v1.errors import UnimplementedError
            if batch[2] is not None:
                raise UnimplementedError("sample weights from a generator are not supported "
                                         "by xlapy's Keras")
        if len(batch) in (2, 3):
            return batch[0], batch[1]
        if len(batch) == 1:
            return batch[0], None
    return batch, None


class Source:
    """One data source: batches(steps) yields (x, y) for an epoch (or a predict run)."""

    def __init__(self, src, what="fit"):
        from xlapy.compat.v1.data.dataset import Dataset
        from xlapy.compat.v1.keras.utils import Sequence
        self.src, self.what = src, what
        self.is_sequence = isinstance(src, Sequence)
        self.is_dataset = isinstance(src, Dataset)
        self._it = self._next = None
        self._peeked: list = []

    def default_steps(self, steps):
        if steps is not None:
            return int(steps)
        if self.is_sequence:
            return len(self.src)
        if self.is_dataset:
            return None
        raise InvalidArgumentError(f"{self.what}: `steps` (steps_per_epoch) is needed with a "
                                   "generator; steps=None is only valid for a "
                                   "keras.utils.Sequence or a tf.data Dataset")

    def _dataset_next(self):
        from xlapy.compat.v1.keras import backend as K
        if self._it is None:
            self._it = self.src.make_initializable_iterator()
            self._next = self._it.get_next()
            K._raw_session().run(self._it.initializer)
        return K._raw_session().run(self._next)

    def first(self):
        """The first batch's x (to build a model from), without losing it."""
        if self.is_sequence:
            return _split(self.src[0])[0]
        if not self._peeked:
            b = self._dataset_next() if self.is_dataset else next(self.src)
            self._peeked.append(b)
        return _split(self._peeked[0])[0]

    def batches(self, steps):
        """steps batches of (x, y); steps None (a Dataset): until it ends, then it restarts
        for the next call."""
        if self.is_sequence:
            for i in range(steps):
                yield _split(self.src[i % len(self.src)])
            return
        for i in (range(steps) if steps is not None else itertools.count()):
            if self._peeked:
                b = self._peeked.pop(0)
            elif self.is_dataset:
                try:
                    b = self._dataset_next()
                except OutOfRangeError:
                    from xlapy.compat.v1.keras import backend as K
                    K._raw_session().run(self._it.initializer)
                    if steps is None:
                        return
                    b = self._dataset_next()
            else:
                try:
                    b = next(self.src)
                except StopIteration:
                    raise InvalidArgumentError(f"{self.what}: the generator ran out of data "
                                               f"after {i} of {steps} steps") from None
            yield _split(b)

    def epoch_end(self):
        if self.is_sequence:
            self.src.on_epoch_end()


class GeneratorMethods:
    """fit_generator, evaluate_generator, predict_generator (Model's mixin)."""

    def fit_generator(self, generator, steps_per_epoch=None, epochs=1, verbose=1,
                      callbacks=None, validation_data=None, validation_steps=None,
                      class_weight=None, max_queue_size=10, workers=1,
                      use_multiprocessing=False, shuffle=True, initial_epoch=0):
        if class_weight is not None:
            from xlapy.compat.v1.errors import UnimplementedError
            raise UnimplementedError("fit_generator: class_weight is not supported by xlapy's "
                                     "Keras")
        src = Source(generator, "fit_generator")
        steps = src.default_steps(steps_per_epoch)
        self._finish_pending(src.first())
        val = None
        if validation_data is not None:
            if is_source(validation_data):
                vsrc = Source(validation_data, "validation")
                vsteps = vsrc.default_steps(validation_steps)
                val = lambda: self._evaluate_source(vsrc, vsteps)
            else:
                vx, vy = validation_data[0], validation_data[1]
                val = lambda: self.evaluate(vx, vy, verbose=0)

        def epoch(e, rng):
            yield from src.batches(steps)
            src.epoch_end()
        return self._run_epochs(epoch, epochs, verbose, callbacks, val, initial_epoch,
                                {"steps": steps, "samples": None, "batch_size": None})

    def _evaluate_source(self, src, steps):
        self.reset_metrics()
        sums, seen, vals = np.zeros(len(self.metrics_names)), 0, None
        for xb, yb in src.batches(steps):
            n = self._nrows(xb)
            vals = np.atleast_1d(self.test_on_batch(xb, yb, reset_metrics=False))
            sums += vals * n
            seen += n
        src.epoch_end()
        out = self._aggregate(sums, seen, vals).tolist()
        return out[0] if len(out) == 1 else out

    def evaluate_generator(self, generator, steps=None, callbacks=None, max_queue_size=10,
                           workers=1, use_multiprocessing=False, verbose=0):
        src = Source(generator, "evaluate_generator")
        self._finish_pending(src.first())
        self._check_compiled("training/testing")
        return self._evaluate_source(src, src.default_steps(steps))

    def predict_generator(self, generator, steps=None, callbacks=None, max_queue_size=10,
                          workers=1, use_multiprocessing=False, verbose=0):
        src = Source(generator, "predict_generator")
        self._finish_pending(src.first())
        outs = [self.predict_on_batch(xb) for xb, _ in src.batches(src.default_steps(steps))]
        src.epoch_end()
        if outs and isinstance(outs[0], list):      # (several outputs)
            return [np.concatenate(o) for o in zip(*outs)]
        return np.concatenate(outs) if outs else np.zeros((0,))
