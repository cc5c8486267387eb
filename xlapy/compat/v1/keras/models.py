"""tf.keras.models (TF 1.x graph mode): Sequential, the functional Model and subclassed
Models (layers as attributes, call(inputs) built on the first fit / predict / call), with
compile, fit (NumPy arrays, tf.data Datasets, generators, Sequences), evaluate, predict,
the *_on_batch and *_generator methods, summary, get/set/save/load_weights, and for
Sequential models save / load_model (HDF5, Keras' layout) and to_json / model_from_json
(keras/saving.py).

The model's ops go into the default graph and run in the Keras session
(tf.keras.backend.get_session(); set_session gives one of your own, e.g. with an XLA jit
level in its ConfigProto). fit runs one session call per batch, feeding the learning
phase True (Dropout, BatchNormalization).
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError
from xlapy.compat.v1.keras import backend as K
from xlapy.compat.v1.keras import losses as L
from xlapy.compat.v1.keras import optimizers as O
from xlapy.compat.v1.keras.callbacks import History
from xlapy.compat.v1.keras.model_summary import SummaryMethods as _SummaryMethods
from xlapy.compat.v1.keras.saving import SavingMethods
from xlapy.compat.v1.keras.training_generators import GeneratorMethods, is_source


class Model(GeneratorMethods, SavingMethods, _SummaryMethods):
    """Model(inputs, outputs): the graph between an Input and the tensors layers made. A
    subclass that defines call(inputs) (its layers as attributes) is built on the first
    data it sees: an Input of that shape, then call."""

    def __init__(self, inputs=None, outputs=None, name=None, **kwargs):
        inputs = kwargs.pop("input", inputs)
        outputs = kwargs.pop("output", outputs)
        if isinstance(inputs, (list, tuple)) and len(inputs) == 1:
            inputs = inputs[0]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        # several inputs or outputs: the lists (in the model's order); _inputs / _outputs
        # are then their first tensors (the graph, "built")
        self._multi_ins = list(inputs) if isinstance(inputs, (list, tuple)) else None
        self._multi_outs = list(outputs) if isinstance(outputs, (list, tuple)) else None
        self._inputs = inputs[0] if self._multi_ins else inputs
        self._outputs = outputs[0] if self._multi_outs else outputs
        self.name = name or ("model" if type(self) is Model else
                             __import__("xlapy.compat.v1.ops._common", fromlist=["x"])
                             .snake_case(type(self).__name__))
        self._compiled = False
        self._layers: list = []
        self.optimizer = self.loss = None
        self.metrics_names: list = []
        self._pending_compile = None
        self.stop_training = False
        self.trainable = kwargs.pop("trainable", True)

    def _is_subclassed(self) -> bool:
        return type(self).call is not Model.call

    def call(self, inputs, training=None, mask=None):
        raise NotImplementedError("Model.call: subclass Model and define call(inputs)")

    def __call__(self, inputs, *args, **kwargs):
        """A subclassed model: call(inputs) on a tensor (built on the first call)."""
        if not self._is_subclassed():
            from xlapy.compat.v1.errors import UnimplementedError
            raise UnimplementedError("calling a functional or Sequential model on a tensor is "
                                     "not supported by xlapy's Keras")
        from xlapy.compat.v1.framework import convert_to_tensor
        return self.call(convert_to_tensor(inputs), *args, **kwargs)

    # ---- structure -----------------------------------------------------------------------------
    @property
    def inputs(self):
        if getattr(self, "_multi_ins", None) is not None:
            return list(self._multi_ins)
        return [self._inputs] if self._inputs is not None else []

    @property
    def outputs(self):
        if getattr(self, "_multi_outs", None) is not None:
            return list(self._multi_outs)
        return [self._outputs] if self._outputs is not None else []

    input = property(lambda self: self.inputs if len(self.inputs) > 1 else self._inputs)
    output = property(lambda self: self.outputs if len(self.outputs) > 1 else self._outputs)

    def _is_multi(self) -> bool:
        return len(self.inputs) > 1 or len(self.outputs) > 1

    @property
    def input_names(self) -> list:
        """The Input placeholders' names (the keys of x given as a dict)."""
        return [t.op.name for t in self.inputs]

    @property
    def output_names(self) -> list:
        """The names of the layers that made the outputs (the keys of y, loss, metrics
        and loss_weights given as dicts)."""
        calls = K._CALLS.get(self._outputs.graph, []) if self._outputs is not None else []
        names = []
        for t in self.outputs:
            layer = next((layer for layer, outs in reversed(calls)
                          if any(o is t for o in outs)), None)
            names.append(layer.name if layer is not None else t.op.name)
        return names

    def _ensure_built(self, x=None):
        if self._outputs is not None:
            return
        if not self._is_subclassed():
            raise InvalidArgumentError(f"model {self.name} has no outputs yet")
        if x is None:
            raise InvalidArgumentError("This model has not yet been built: call it on data "
                                       "(fit, predict) first")
        from xlapy.compat.v1.keras.layers import Input
        x = np.asarray(x)
        dtype = "float32" if x.dtype.kind == "f" or x.dtype == np.float64 else str(x.dtype)
        self._inputs = Input(shape=x.shape[1:], name="input", dtype=dtype)
        self._outputs = self.call(self._inputs)

    def build(self, input_shape):
        """A subclassed model: an Input of input_shape ([batch] + shape), then call."""
        if self._outputs is None:
            from xlapy.compat.v1.keras.layers import Input
            shape = list(input_shape)
            self._inputs = Input(shape=shape[1:], batch_size=shape[0], name="input")
            self._outputs = self.call(self._inputs)

    def _finish_pending(self, x):
        self._ensure_built(x)
        pending = self._pending_compile
        if pending is not None:
            self._pending_compile = None
            optimizer, loss, metrics, kwargs = pending
            self.compile(optimizer, loss, metrics, **kwargs)

    @property
    def layers(self) -> list:
        """The layers, in the order they were called (a functional Model: the Keras layers
        between its input and its output)."""
        if self._layers or self._outputs is None:
            return list(self._layers)
        return K._layers_between(self.inputs, self.outputs)

    def _layer_weights(self, attr: str, whole_graph) -> list:
        """Each layer's `attr` weights once, in layer order. A functional Model: those of
        its Keras layers, then the graph's other variables that no Keras layer owns (raw tf
        variables the model may use), leaving out the optimizer's."""
        if not self._layers:
            layers = self.layers if self._outputs is not None else []
            owned = {id(w) for layer, _ in K._CALLS.get(self._outputs.graph, [])
                     for w in layer.weights} if self._outputs is not None else set()
            skip = owned | self._optimizer_variables()
            out = []
            for layer in layers:
                out += [w for w in getattr(layer, attr) if all(w is not o for o in out)]
            return out + [v for v in whole_graph() if id(v) not in skip
                          and not getattr(v, "_keras_optimizer_var", False)]
        out = []
        for layer in self._layers:
            out += [w for w in getattr(layer, attr) if all(w is not o for o in out)]
        return out

    @property
    def weights(self) -> list:
        from xlapy.compat.v1.variables import global_variables
        return self._layer_weights("weights", global_variables)

    @property
    def trainable_weights(self) -> list:
        from xlapy.compat.v1.variables import trainable_variables
        return self._layer_weights("trainable_weights", trainable_variables)

    def _optimizer_variables(self) -> set:
        """ids of the optimizer's variables (slots, beta powers): not model weights."""
        opt = self.optimizer
        return {id(v) for v in opt.variables()} if hasattr(opt, "variables") else set()

    def count_params(self) -> int:
        return int(sum(np.prod(w.shape.as_list()) for w in self.weights))

    # ---- training -----------------------------------------------------------------------------
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None,
                sample_weight_mode=None, weighted_metrics=None, target_tensors=None,
                **kwargs):
        from xlapy.compat.v1 import dtypes
        from xlapy.compat.v1.ops.math_ops import reduce_mean
        from xlapy.compat.v1.ops.array_ops import placeholder
        if loss is None:
            raise InvalidArgumentError("compile needs a loss")
        if self._outputs is None and (self._is_subclassed() or isinstance(self, Sequential)):
            self._pending_compile = (optimizer, loss, metrics, dict(
                loss_weights=loss_weights, sample_weight_mode=sample_weight_mode,
                weighted_metrics=weighted_metrics, target_tensors=target_tensors, **kwargs))
            self._compiled = True        # (built by fit with the data's shape)
            return
        self._ensure_built()
        self._compile_args = {"loss": loss, "metrics": list(metrics or []) if not
                              isinstance(metrics, dict) else metrics,
                              "loss_weights": loss_weights}
        g = self._outputs.graph
        with g.as_default():
            self.optimizer = O.get(optimizer)
            outs, names = self.outputs, self.output_names
            multi = len(outs) > 1
            if multi and len(set(names)) != len(names):
                raise InvalidArgumentError(f"The model's outputs must come from layers of "
                                           f"different names, got {names}")
            losses = _per_output(loss, names, "loss", missing=None)
            weights = _per_output(loss_weights, names, "loss_weights", missing=1.0)
            if isinstance(metrics, dict) or (
                    isinstance(metrics, (list, tuple)) and metrics and
                    all(isinstance(m, (list, tuple)) for m in metrics)):
                per_metrics = _per_output(metrics, names, "metrics", missing=[])
            else:
                per_metrics = [list(metrics or [])] * len(outs)
            per_metrics = [m if isinstance(m, (list, tuple)) else [m] for m in per_metrics]
            if all(fn is None for fn in losses):
                raise InvalidArgumentError("compile: no output has a loss")
            # (index of the output, its target placeholder, its loss function)
            self._target_list = []
            self.metrics_names = ["loss"]
            self._metric_tensors = []
            out_losses = []
            for k, (out, name, fn, w) in enumerate(zip(outs, names, losses, weights)):
                if fn is None:      # (as Keras: an output left out of a loss dict)
                    continue
                fn = L.get(fn)
                sparse = fn is L.sparse_categorical_crossentropy
                rank = out.shape.ndims
                # (sparse targets: one class index per output row, [batch, (time,)] 1)
                shape = ([None] * (rank - 1 if rank and rank > 2 else 1) + [1]) if sparse \
                    else out.shape.as_list() if rank is not None else None
                target = placeholder(dtypes.int64 if sparse else out.dtype, shape,
                                     name=f"{name}_target" if multi else
                                     f"{self.name}_target")
                self._target_list.append((k, target, fn))
                per = reduce_mean(fn(target, out))
                out_losses.append(per * np.float32(w) if multi or w != 1.0 else per)
                if multi:
                    self.metrics_names.append(f"{name}_loss")
                    self._metric_tensors.append(per)
            self._targets, self._loss_fn = self._target_list[0][1:]
            self._total_loss = out_losses[0]
            for x in out_losses[1:]:
                self._total_loss = self._total_loss + x
            from xlapy.compat.v1.framework import GraphKeys
            # the layers' regularization losses (weights', activity's), and those in the
            # graph's collection that no Keras layer made (tf.layers' in a Lambda, ...)
            owned = {id(x) for layer, _ in K._CALLS.get(g, []) for x in layer.losses}
            reg = [x for layer in self.layers for x in layer.losses] + [
                x for x in g.get_collection(GraphKeys.REGULARIZATION_LOSSES)
                if id(x) not in owned]
            if reg:
                from xlapy.compat.v1.ops.math_ops import add_n
                self._total_loss = self._total_loss + add_n(reg)
            from xlapy.compat.v1.keras import metrics as M
            self._stateful_metrics = []     # (index in metrics_names, Metric object)
            for k, target, fn in self._target_list:
                out, prefix = outs[k], f"{names[k]}_" if multi else ""
                for m in per_metrics[k]:
                    mobj = m if isinstance(m, M.Metric) else None
                    if isinstance(m, str) and m not in ("accuracy", "acc"):
                        got = M.get(m)
                        mobj = got if isinstance(got, M.Metric) else None
                    if mobj is not None:     # (its state: reset each epoch, reported whole)
                        self._stateful_metrics.append((len(self.metrics_names), mobj))
                        t, mname = mobj(target, out), mobj.name
                    elif m in ("accuracy", "acc"):
                        t, mname = L.accuracy_for(fn, target, out), "acc"
                    else:
                        mfn = M.get(m)
                        t = reduce_mean(mfn(target, out))
                        mname = getattr(mfn, "name", None) or getattr(mfn, "__name__",
                                                                      "metric")
                    self.metrics_names.append(prefix + mname)
                    self._metric_tensors.append(t)
            from xlapy.compat.v1.framework import control_dependencies
            updates = [u for layer in self._layers for u in getattr(layer, "updates", [])] \
                if self._layers else g.get_collection(GraphKeys.UPDATE_OPS)
            # the layers' updates (batch norm's moving averages) run in the same step, as
            # Keras' training function; not as control dependencies of minimize, which
            # would reach the optimizer's slot initializers
            self._train_op = self.optimizer.minimize(
                self._total_loss, var_list=self.trainable_weights,
                global_step=getattr(self.optimizer, "iterations", None))
            if updates:
                from xlapy.compat.v1.ops.array_ops import group
                self._train_op = group(self._train_op, *updates)
            cons = [(v, fn) for layer in self.layers
                    for v, fn in layer.__dict__.get("_keras_constraints", [])]
            if cons:      # (applied after the update, as Keras)
                from xlapy.compat.v1.ops.array_ops import group
                with control_dependencies([self._train_op]):
                    self._train_op = group(*[v.assign(fn(v)) for v, fn in cons])
            mvars = self._metric_variables()
            if mvars:
                from xlapy.compat.v1.variables import variables_initializer
                self._reset_metrics_op = variables_initializer(mvars, name="reset_metrics")
            self._initialized = False
        self._compiled = True
        self.loss = loss

    def _metric_variables(self) -> list:
        return [v for _, m in getattr(self, "_stateful_metrics", []) for v in m.variables]

    def reset_metrics(self):
        """Zero the state of the metric objects compile got (as Keras between epochs)."""
        if getattr(self, "_reset_metrics_op", None) is not None:
            self._session().run(self._reset_metrics_op)

    def _aggregate(self, sums, seen, last):
        """The epoch's values: per-batch metrics averaged over the examples, metric objects'
        (whose state spans the epoch) as their last value."""
        out = sums / max(seen, 1)
        for i, _ in getattr(self, "_stateful_metrics", []):
            if last is not None:
                out[i] = last[i]
        return out

    def _session(self):
        with self._outputs.graph.as_default():
            s = K.get_session()
            if not getattr(self, "_initialized", False):
                from xlapy.compat.v1.misc_api import report_uninitialized_variables
                from xlapy.compat.v1.variables import global_variables, variables_initializer
                names = {n.decode() if isinstance(n, bytes) else n
                         for n in s.run(report_uninitialized_variables())}
                todo = [v for v in global_variables() + self._metric_variables()
                        if v.op.name in names]
                if todo:
                    s.run(variables_initializer(todo))
                self._initialized = True
        return s

    def _targets_of(self, y, which=0):
        k, target, loss_fn = self._target_list[which]
        y = np.asarray(y)
        if loss_fn is L.sparse_categorical_crossentropy:
            rank = target.shape.ndims
            return y.reshape(y.shape[:rank - 1] + (1,) if rank > 2 else (-1, 1)).astype(
                np.int64)
        want = target.shape
        if want.ndims is not None and y.ndim == want.ndims - 1 and want.dims[-1] == 1:
            y = y[..., None]     # (as Keras: targets (n,) for outputs (n, 1))
        return y.astype(self.outputs[k].dtype.as_numpy_dtype)

    def _x_list(self, x) -> list:
        """x as a list of arrays in the model's input order (a list, or a dict by the
        Input names)."""
        return _standardize(x, self.input_names, "input")

    def _y_list(self, y) -> list:
        """y as a list of arrays, one per output that has a loss (a list in the model's
        output order, or a dict by output name)."""
        names = self.output_names
        with_loss = [names[k] for k, _, _ in self._target_list]
        if isinstance(y, (list, tuple)) and len(names) > 1 and len(y) == len(names) and \
                len(with_loss) < len(names):
            y = [y[k] for k, _, _ in self._target_list]
        return _standardize(y, with_loss, "target")

    def _nrows(self, x) -> int:
        """The number of examples in x (an array, or several inputs' arrays)."""
        if isinstance(x, dict) or (len(self.inputs) > 1 and isinstance(x, (list, tuple))) or (
                isinstance(x, (list, tuple)) and len(x) == 1 and
                isinstance(x[0], np.ndarray)):
            x = self._x_list(x)[0]
        return len(x)

    def _check_compiled(self, what):
        if not self._compiled:
            raise InvalidArgumentError(f"You must compile your model before {what}.")

    def _feed(self, x, y=None, training=False):
        fd = {t: np.asarray(a, t.dtype.as_numpy_dtype)
              for t, a in zip(self.inputs, self._x_list(x))}
        phase = K.learning_phase()
        if not isinstance(phase, int):
            fd[phase] = training
        if y is not None:
            for i, a in enumerate(self._y_list(y)):
                fd[self._target_list[i][1]] = self._targets_of(a, i)
        return fd

    def train_on_batch(self, x, y, sample_weight=None, class_weight=None, reset_metrics=True):
        self._finish_pending(x)
        self._check_compiled("training/testing")
        s = self._session()
        with self._outputs.graph.as_default():
            out = s.run([self._train_op, self._total_loss] + self._metric_tensors,
                        self._feed(x, y, True))[1:]
        if reset_metrics:
            self.reset_metrics()
        return out[0] if len(out) == 1 else out

    def test_on_batch(self, x, y, reset_metrics=True):
        self._finish_pending(x)
        self._check_compiled("training/testing")
        s = self._session()
        with self._outputs.graph.as_default():
            out = s.run([self._total_loss] + self._metric_tensors, self._feed(x, y))
        if reset_metrics:
            self.reset_metrics()
        return out[0] if len(out) == 1 else out

    def predict_on_batch(self, x):
        self._finish_pending(x)
        s = self._session()
        with self._outputs.graph.as_default():
            return s.run(self.outputs if len(self.outputs) > 1 else self._outputs,
                         self._feed(x))

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose=1, callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, steps_per_epoch=None, validation_steps=None,
            **kwargs):
        """Train for epochs - initial_epoch epochs; returns the History (also
        model.history). validation_split takes the last fraction of x, y (before
        shuffling), as Keras; a callback stops training with model.stop_training = True.
        x may also be a tf.data Dataset of (x, y), a generator or a keras.utils.Sequence
        (as fit_generator; steps_per_epoch)."""
        if is_source(x):
            if y is not None:
                raise InvalidArgumentError("`y` argument is not supported when using a "
                                           "dataset, generator or Sequence as input")
            return self.fit_generator(x, steps_per_epoch, epochs, verbose, callbacks,
                                      validation_data, validation_steps, class_weight,
                                      shuffle=shuffle, initial_epoch=initial_epoch)
        self._finish_pending(x)
        self._check_compiled("training/testing")
        if x is None or y is None:
            raise InvalidArgumentError("fit needs x and y arrays (xlapy's Keras takes NumPy "
                                       "data, Datasets, generators and Sequences)")
        if class_weight is not None or sample_weight is not None:
            from xlapy.compat.v1.errors import UnimplementedError
            raise UnimplementedError("fit: class_weight and sample_weight are not supported "
                                     "by xlapy's Keras")
        xs = [np.asarray(a) for a in self._x_list(x)]
        ys = [np.asarray(a) for a in self._y_list(y)]
        _same_lengths(xs, "input")
        _same_lengths(ys, "target")
        if len(xs[0]) != len(ys[0]):
            raise InvalidArgumentError(f"Input arrays should have the same number of samples "
                                       f"as target arrays. Found {len(xs[0])} input samples "
                                       f"and {len(ys[0])} target samples.")
        if validation_split and validation_data is None:
            if not 0.0 < validation_split < 1.0:
                raise InvalidArgumentError(f"validation_split must be in (0, 1), got "
                                           f"{validation_split}")
            k = int(len(xs[0]) * (1 - validation_split))
            validation_data = ([a[k:] for a in xs], [a[k:] for a in ys])
            xs, ys = [a[:k] for a in xs], [a[:k] for a in ys]
        one_x, one_y = len(xs) == 1, len(ys) == 1
        n = len(xs[0])
        val = None
        bs = int(batch_size or 32)
        if validation_data is not None:
            if len(validation_data) == 3:
                from xlapy.compat.v1.errors import UnimplementedError
                raise UnimplementedError("fit: validation sample weights are not supported")
            if len(validation_data) != 2:
                raise InvalidArgumentError("When passing validation_data, it must contain 2 "
                                           "(x_val, y_val) items")
            vx, vy = validation_data
            val = lambda: self.evaluate(vx, vy, batch_size=bs, verbose=0)

        def epoch(e, rng):
            order = rng.permutation(n) if shuffle else np.arange(n)
            for start in range(0, n, bs):
                idx = order[start:start + bs]
                xb, yb = [a[idx] for a in xs], [a[idx] for a in ys]
                yield xb[0] if one_x else xb, yb[0] if one_y else yb
        return self._run_epochs(epoch, epochs, verbose, callbacks, val, initial_epoch,
                                {"batch_size": bs, "steps": None, "samples": n})

    def _run_epochs(self, epoch_batches, epochs, verbose, callbacks, val, initial_epoch,
                    params):
        """The training loop: epoch_batches(epoch, rng) yields the (x, y) batches of an
        epoch; val() the validation metrics (or None)."""
        import sys
        import time
        from xlapy.compat.v1.keras.callbacks import CallbackList
        self._check_compiled("training/testing")
        self.history = History()
        cbs = CallbackList(list(callbacks or []) + [self.history])
        cbs.set_model(self)
        do_val = val is not None
        cbs.set_params({**params, "epochs": epochs, "verbose": verbose,
                        "do_validation": do_val,
                        "metrics": self.metrics_names + (
                            ["val_" + n for n in self.metrics_names] if do_val else [])})
        self.stop_training = False
        rng = np.random.default_rng(0)
        cbs.on_train_begin({})
        for epoch in range(initial_epoch, epochs):
            t0 = time.perf_counter()
            cbs.on_epoch_begin(epoch, {})
            self.reset_metrics()
            sums, seen, vals = np.zeros(len(self.metrics_names)), 0, None
            for b, (xb, yb) in enumerate(epoch_batches(epoch, rng)):
                batch_logs = {"batch": b, "size": self._nrows(xb)}
                cbs.on_batch_begin(b, batch_logs)
                vals = np.atleast_1d(self.train_on_batch(xb, yb, reset_metrics=False))
                batch_logs.update(zip(self.metrics_names, vals.tolist()))
                cbs.on_batch_end(b, batch_logs)
                sums += vals * self._nrows(xb)
                seen += self._nrows(xb)
                if self.stop_training:
                    break
            logs = dict(zip(self.metrics_names, self._aggregate(sums, seen, vals).tolist()))
            if do_val:
                v = np.atleast_1d(val())
                logs.update({"val_" + n: float(a) for n, a in zip(self.metrics_names, v)})
            cbs.on_epoch_end(epoch, logs)
            if verbose:
                print(f"Epoch {epoch + 1}/{epochs}", file=sys.stdout)
                parts = " - ".join(f"{k}: {v:.4f}" for k, v in logs.items())
                print(f"{seen}/{seen} - {time.perf_counter() - t0:.0f}s - {parts}",
                      file=sys.stdout)
            if self.stop_training:
                break
        cbs.on_train_end({})
        return self.history

    def evaluate(self, x=None, y=None, batch_size=None, verbose=1, sample_weight=None,
                 steps=None, **kwargs):
        if is_source(x):
            return self.evaluate_generator(x, steps, verbose=verbose)
        self._finish_pending(x)
        self._check_compiled("training/testing")
        xs = [np.asarray(a) for a in self._x_list(x)]
        ys = [np.asarray(a) for a in self._y_list(y)]
        bs = int(batch_size or 32)
        s = self._session()
        self.reset_metrics()
        sums, seen, vals = np.zeros(len(self.metrics_names)), 0, None
        with self._outputs.graph.as_default():
            for start in range(0, len(xs[0]), bs):
                vals = s.run([self._total_loss] + self._metric_tensors,
                             self._feed([a[start:start + bs] for a in xs],
                                        [a[start:start + bs] for a in ys]))
                n = len(xs[0][start:start + bs])
                sums += np.asarray(vals, np.float64) * n
                seen += n
        out = self._aggregate(sums, seen, vals).tolist()
        if verbose:
            print(" - ".join(f"{k}: {v:.4f}" for k, v in zip(self.metrics_names, out)))
        return out[0] if len(out) == 1 else out

    def predict(self, x, batch_size=None, verbose=0, steps=None, **kwargs):
        if is_source(x):
            return self.predict_generator(x, steps, verbose=verbose)
        self._finish_pending(x)
        xs = [np.asarray(a) for a in self._x_list(x)]
        bs = int(batch_size or 32)
        s = self._session()
        with self._outputs.graph.as_default():
            outs = [s.run(self.outputs, self._feed([a[i:i + bs] for a in xs]))
                    for i in range(0, len(xs[0]), bs)]
        res = [np.concatenate(o) if outs else np.zeros((0,) + tuple(t.shape.as_list()[1:]))
               for t, o in zip(self.outputs, zip(*outs) if outs else [()] * len(self.outputs))]
        return res if len(res) > 1 else res[0]

    def predict_classes(self, x, batch_size=32, verbose=0):
        """Sequential (TF 1.x): the argmax class, or output > 0.5 for one output unit."""
        p = self.predict(x, batch_size)
        return p.argmax(-1) if p.shape[-1] > 1 else (p > 0.5).astype(np.int32)

    def predict_proba(self, x, batch_size=32, verbose=0):
        """Sequential (TF 1.x): predict, warning (as Keras) if outside [0, 1]."""
        p = self.predict(x, batch_size)
        if p.min() < 0.0 or p.max() > 1.0:
            import warnings
            warnings.warn("Network returning invalid probability values. The last layer "
                          "might not normalize predictions into probabilities (like softmax "
                          "or sigmoid would).", stacklevel=2)
        return p

    # ---- weights ------------------------------------------------------------------------------
    def get_weights(self) -> list:
        return list(self._session().run(self.weights))

    def set_weights(self, weights) -> None:
        ws = self.weights
        if len(weights) != len(ws):
            raise InvalidArgumentError(f"set_weights: the model has {len(ws)} weights, "
                                       f"{len(weights)} given")
        s = self._session()
        with self._outputs.graph.as_default():
            for w, v in zip(ws, weights):
                w.load(np.asarray(v), s)

    def save_weights(self, filepath, overwrite=True, save_format=None) -> None:
        """The weights in an .npz file (xlapy's format, by weight name)."""
        vals = self.get_weights()
        with open(filepath, "wb") as f:
            np.savez(f, **{w.op.name: v for w, v in zip(self.weights, vals)})

    def load_weights(self, filepath, by_name=False) -> None:
        with np.load(filepath, allow_pickle=False) as z:
            names = [w.op.name for w in self.weights]
            missing = [n for n in names if n not in z.files]
            if missing:
                raise InvalidArgumentError(f"load_weights: {filepath} lacks {missing}")
            self.set_weights([z[n] for n in names])


def _per_output(value, names, what, missing):
    """compile's loss / loss_weights / metrics argument, one entry per output: a dict by
    output name (missing outputs get `missing`), a list in the outputs' order, or one
    value for all."""
    if isinstance(value, dict):
        unknown = [k for k in value if k not in names]
        if unknown:
            raise InvalidArgumentError(f"Unknown entry in {what} dictionary: {unknown[0]!r}. "
                                       f"Only expected the following keys: {names}")
        return [value.get(n, missing) for n in names]
    if isinstance(value, (list, tuple)):
        if len(value) != len(names):
            raise InvalidArgumentError(f"When passing a list as {what}, it should have one "
                                       f"entry per model output. The model has "
                                       f"{len(names)} outputs, but you passed {what}="
                                       f"{list(value)!r}")
        return list(value)
    return [missing if value is None else value] * len(names)


def _standardize(data, names, what) -> list:
    """Model data (x or y) as a list of arrays in the order of `names`: from a dict by
    name, a list, or (one name) the array itself."""
    if isinstance(data, dict):
        missing = [n for n in names if n not in data]
        if missing:
            raise InvalidArgumentError(f"No data provided for {missing[0]!r}. Need data for "
                                       f"each key in: {names}")
        return [data[n] for n in names]
    if len(names) == 1:
        if isinstance(data, (list, tuple)) and len(data) == 1 and \
                isinstance(data[0], np.ndarray):
            return [data[0]]
        return [data]
    if not isinstance(data, (list, tuple)) or len(data) != len(names):
        got = f"{len(data)} arrays" if isinstance(data, (list, tuple)) else \
            f"a single array of shape {np.shape(data)}"
        raise InvalidArgumentError(f"Error when checking model {what}: the list of Numpy "
                                   f"arrays that you are passing to your model is not the "
                                   f"size the model expected. Expected to see "
                                   f"{len(names)} array(s) ({names}), but instead got {got}")
    return list(data)


def _same_lengths(arrays, what) -> None:
    lens = {len(a) for a in arrays}
    if len(lens) > 1:
        raise InvalidArgumentError(f"All {what} arrays (x) should have the same number of "
                                   f"samples. Got array lengths: {[len(a) for a in arrays]}")


class Sequential(Model):
    """A stack of layers, each applied to the previous one's output; the first layer's
    input_shape (or the first fit/predict data) fixes the input placeholder."""

    def __init__(self, layers=None, name=None):
        super().__init__(name=name or "sequential")
        for layer in layers or []:
            self.add(layer)

    def add(self, layer) -> None:
        if not callable(layer) or not hasattr(layer, "weights"):
            raise InvalidTypeError(f"The added layer must be an instance of class Layer. "
                                   f"Found: {layer!r}")
        from xlapy.compat.v1.keras.core_layers import InputLayer
        if isinstance(layer, InputLayer):
            if self._outputs is not None or self._layers:
                raise InvalidArgumentError("An InputLayer must be the first layer of a "
                                           "Sequential model")
            from xlapy.compat.v1.keras.layers import Input
            shape = layer._batch_input_shape
            self._inputs = self._outputs = Input(shape=shape[1:], batch_size=shape[0],
                                                 dtype=layer._input_dtype, name=layer.name)
            self._input_layer = layer
            return
        self._layers.append(layer)
        if self._outputs is not None:
            self._apply(layer)
        elif getattr(layer, "_batch_input_shape", None) is not None:
            from xlapy.compat.v1.keras.layers import Input
            shape = layer._batch_input_shape
            self._inputs = Input(shape=shape[1:], batch_size=shape[0],
                                 name=f"{layer.name}_input")
            self._outputs = self._inputs
            self._apply(layer)

    def _apply(self, layer):
        self._outputs = layer(self._outputs)
        layer._keras_output_shape = tuple(self._outputs.shape.as_list()) \
            if self._outputs.shape.ndims is not None else None

    def _ensure_built(self, x=None):
        if self._outputs is not None:
            return
        if x is None:
            raise InvalidArgumentError("This model has not yet been built: give the first "
                                       "layer an input_shape, or call fit/predict first")
        from xlapy.compat.v1.keras.layers import Input
        x = np.asarray(x)
        self._inputs = Input(shape=x.shape[1:], name="input")
        self._outputs = self._inputs
        for layer in self._layers:
            self._apply(layer)

    def pop(self) -> None:
        if not self._layers:
            raise InvalidTypeError("There are no layers in the model.")
        if self._outputs is not None:
            from xlapy.compat.v1.errors import UnimplementedError
            raise UnimplementedError("Sequential.pop after the model was built is not "
                                     "supported by xlapy's Keras")
        self._layers.pop()


from xlapy.compat.v1.keras.saving import (clone_model, load_model,  # noqa: E402,F401
                                          model_from_config, model_from_json, save_model)
