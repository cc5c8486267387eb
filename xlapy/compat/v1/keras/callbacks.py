"""tf.keras.callbacks (TF 1.x Keras' behaviour): Callback, History (what fit returns),
EarlyStopping, ModelCheckpoint, LambdaCallback, LearningRateScheduler, ReduceLROnPlateau,
CSVLogger, TerminateOnNaN.

Model.fit calls on_train_begin/end, on_epoch_begin/end(epoch, logs) and
on_batch_begin/end(batch, logs); the epoch logs hold the epoch's mean loss and metrics and,
with validation data, val_loss and the val_ metrics; a callback stops training by setting
model.stop_training = True. The learning-rate callbacks read and set model.optimizer.lr, a
variable (tf.keras.backend.get_value / set_value), as Keras' optimizers have.
ModelCheckpoint saves weights (save_weights_only=True, an .npz file) or, by default, the
whole model (Model.save: HDF5 in Keras' layout, Sequential models; others raise at the
first save rather than silently saving weights only).
"""

from __future__ import annotations

import csv
import sys

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError


class Callback:
    def __init__(self):
        self.validation_data = None
        self.model = None
        self.params: dict = {}

    def set_params(self, params) -> None:
        self.params = params

    def set_model(self, model) -> None:
        self.model = model

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_batch_begin(self, batch, logs=None):
        pass

    def on_batch_end(self, batch, logs=None):
        pass

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    on_train_batch_begin = on_batch_begin
    on_train_batch_end = on_batch_end


class CallbackList:
    """The callbacks of one fit call, called in order."""

    def __init__(self, callbacks):
        self.callbacks = list(callbacks)
        for c in self.callbacks:
            if not isinstance(c, Callback) and not hasattr(c, "on_epoch_end"):
                raise InvalidArgumentError(f"callbacks must be tf.keras.callbacks.Callback "
                                           f"instances, got {c!r}")

    def __getattr__(self, name):
        if not name.startswith("on_") and name not in ("set_model", "set_params"):
            raise AttributeError(name)

        def call(*args):
            for c in self.callbacks:
                getattr(c, name)(*args)
        return call


class History(Callback):
    """history: each epoch log's values by key; epoch: the epoch indices."""

    def __init__(self):
        super().__init__()
        self.history: dict = {}
        self.epoch: list = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)


def _monitor_op(mode, monitor, who):
    if mode not in ("auto", "min", "max"):
        print(f"{who} mode {mode} is unknown, fallback to auto mode.", file=sys.stderr)
        mode = "auto"
    if mode == "max" or (mode == "auto" and ("acc" in monitor or
                                             monitor.startswith("fmeasure"))):
        return np.greater
    return np.less


def _warn_missing(who, monitor, logs):
    print(f"{who} conditioned on metric `{monitor}` which is not available. Available "
          f"metrics are: {','.join(sorted(logs or {}))}", file=sys.stderr)


class EarlyStopping(Callback):
    """Stop when `monitor` has not improved by more than min_delta for `patience` epochs;
    restore_best_weights puts back the weights of the best epoch when it stops."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto",
                 baseline=None, restore_best_weights=False):
        super().__init__()
        self.monitor = monitor
        self.patience = int(patience)
        self.verbose = verbose
        self.baseline = baseline
        self.restore_best_weights = restore_best_weights
        self.monitor_op = _monitor_op(mode, monitor, "EarlyStopping")
        self.min_delta = abs(min_delta) * (1 if self.monitor_op is np.greater else -1)
        self.wait = self.stopped_epoch = 0
        self.best_weights = None

    def on_train_begin(self, logs=None):
        self.wait = self.stopped_epoch = 0
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = np.inf if self.monitor_op is np.less else -np.inf
        self.best_weights = None

    def on_epoch_end(self, epoch, logs=None):
        current = (logs or {}).get(self.monitor)
        if current is None:
            _warn_missing("Early stopping", self.monitor, logs)
            return
        if self.monitor_op(current - self.min_delta, self.best):
            self.best = current
            self.wait = 0
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = epoch
                self.model.stop_training = True
                if self.restore_best_weights and self.best_weights is not None:
                    if self.verbose > 0:
                        print("Restoring model weights from the end of the best epoch.")
                    self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1:05d}: early stopping")


class ModelCheckpoint(Callback):
    """Save the weights after every `period` epochs to filepath formatted with the epoch
    (1-based) and the epoch's logs ('w.{epoch:02d}-{val_loss:.2f}.npz'); save_best_only
    saves only when `monitor` improved."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=False, mode="auto", period=1, save_freq="epoch"):
        super().__init__()
        self.save_weights_only = bool(save_weights_only)
        self.filepath = str(filepath)
        self.monitor = monitor
        self.verbose = verbose
        self.save_best_only = save_best_only
        self.period = int(period)
        self.monitor_op = _monitor_op(mode, monitor, "ModelCheckpoint")
        self.best = np.inf if self.monitor_op is np.less else -np.inf
        self.epochs_since_last_save = 0

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        self.epochs_since_last_save += 1
        if self.epochs_since_last_save < self.period:
            return
        self.epochs_since_last_save = 0
        try:
            path = self.filepath.format(epoch=epoch + 1, **logs)
        except KeyError as e:
            raise InvalidArgumentError(f"Failed to format this callback filepath: "
                                       f"\"{self.filepath}\". Reason: the logs have no "
                                       f"{e}") from None
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                _warn_missing("Can save best model only with", self.monitor, logs)
                return
            if not self.monitor_op(current, self.best):
                if self.verbose > 0:
                    print(f"\nEpoch {epoch + 1:05d}: {self.monitor} did not improve from "
                          f"{self.best:.5f}")
                return
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1:05d}: {self.monitor} improved from "
                      f"{self.best:.5f} to {current:.5f}, saving model to {path}")
            self.best = current
        elif self.verbose > 0:
            print(f"\nEpoch {epoch + 1:05d}: saving model to {path}")
        if self.save_weights_only:
            self.model.save_weights(path, overwrite=True)
        else:
            self.model.save(path, overwrite=True)


class LambdaCallback(Callback):
    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_batch_begin=None,
                 on_batch_end=None, on_train_begin=None, on_train_end=None, **kwargs):
        super().__init__()
        for name, fn in (("on_epoch_begin", on_epoch_begin), ("on_epoch_end", on_epoch_end),
                         ("on_batch_begin", on_batch_begin), ("on_batch_end", on_batch_end),
                         ("on_train_begin", on_train_begin), ("on_train_end", on_train_end)):
            if fn is not None:
                setattr(self, name, fn)


def _lr_of(model, who):
    lr = getattr(model.optimizer, "lr", None)
    if lr is None:
        raise InvalidArgumentError(f'{who}: Optimizer must have a "lr" attribute (use '
                                   f"tf.keras.optimizers, whose lr is a variable)")
    return lr


class LearningRateScheduler(Callback):
    """lr = schedule(epoch, lr) (or schedule(epoch)) at the start of every epoch."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        from xlapy.compat.v1.keras import backend as K
        var = _lr_of(self.model, "LearningRateScheduler")
        try:
            lr = self.schedule(epoch, float(K.get_value(var)))
        except TypeError:
            lr = self.schedule(epoch)
        if not isinstance(lr, (float, int, np.floating, np.integer)):
            raise InvalidArgumentError('The output of the "schedule" function should be '
                                       "float.")
        K.set_value(var, lr)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1:05d}: LearningRateScheduler setting learning rate to "
                  f"{lr}.")

    def on_epoch_end(self, epoch, logs=None):
        from xlapy.compat.v1.keras import backend as K
        if logs is not None:
            logs["lr"] = float(K.get_value(_lr_of(self.model, "LearningRateScheduler")))


class ReduceLROnPlateau(Callback):
    """lr *= factor (not below min_lr) when `monitor` has not improved for `patience`
    epochs, then `cooldown` epochs without counting."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0, **kwargs):
        super().__init__()
        if factor >= 1.0:
            raise InvalidArgumentError("ReduceLROnPlateau does not support a factor >= 1.0.")
        self.monitor = monitor
        self.factor = float(factor)
        self.min_lr = float(min_lr)
        self.min_delta = float(kwargs.pop("epsilon", min_delta))
        self.patience = int(patience)
        self.verbose = verbose
        self.cooldown = int(cooldown)
        self.mode = mode
        self._reset()

    def _reset(self):
        op = _monitor_op(self.mode, self.monitor, "Learning Rate Plateau Reducing")
        if op is np.less:
            self.monitor_op = lambda a, b: np.less(a, b - self.min_delta)
            self.best = np.inf
        else:
            self.monitor_op = lambda a, b: np.greater(a, b + self.min_delta)
            self.best = -np.inf
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        from xlapy.compat.v1.keras import backend as K
        logs = logs if logs is not None else {}
        var = _lr_of(self.model, "ReduceLROnPlateau")
        logs["lr"] = float(K.get_value(var))
        current = logs.get(self.monitor)
        if current is None:
            _warn_missing("Reduce LR on plateau", self.monitor, logs)
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self.monitor_op(current, self.best):
            self.best = current
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = float(K.get_value(var))
                if old > self.min_lr:
                    new = max(old * self.factor, self.min_lr)
                    K.set_value(var, new)
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1:05d}: ReduceLROnPlateau reducing learning "
                              f"rate to {new}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


class CSVLogger(Callback):
    """One row per epoch (epoch, then the logs' keys in sorted order)."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename = str(filename)
        self.sep = separator
        self.append = append
        self._file = self._writer = None
        self.keys = None

    def on_train_begin(self, logs=None):
        import os
        header_done = self.append and os.path.exists(self.filename) and \
            os.path.getsize(self.filename) > 0
        self._file = open(self.filename, "a" if self.append else "w", newline="")
        self._header_done = header_done

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
        if self._writer is None:
            self._writer = csv.DictWriter(self._file, fieldnames=["epoch"] + self.keys,
                                          delimiter=self.sep)
            if not self._header_done:
                self._writer.writeheader()
        row = {"epoch": epoch}
        row.update((k, logs.get(k, "NA")) for k in self.keys)
        self._writer.writerow(row)
        self._file.flush()

    def on_train_end(self, logs=None):
        if self._file is not None:
            self._file.close()
        self._file = self._writer = None


class TerminateOnNaN(Callback):
    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and (np.isnan(loss) or np.isinf(loss)):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True
