"""tf.keras.optimizers (TF 1.x): Keras' names and defaults over tf.train's optimizers. The
learning rate is a variable ("Adam/lr", ...), the optimizer's `lr` (and `learning_rate`),
so tf.keras.backend.set_value and the learning-rate callbacks can change it between steps
without rebuilding or recompiling the training step."""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError


def _value(lr_var):
    return lr_var._keras_initial


def _lr_variable(kind, value):
    import numpy as np
    from xlapy.compat.v1.framework import get_default_graph
    from xlapy.compat.v1.variables import Variable
    with get_default_graph().name_scope(kind):
        v = Variable(np.float32(value), trainable=False, name="lr")
    v._keras_optimizer_var = True
    v._keras_initial = float(value)
    return v


def _keras(opt, lr_var, decay=0.0, config=None):
    """Keras' attributes on a tf.train optimizer: lr, and with decay > 0 the step counter
    `iterations` (compile has minimize advance it) and the decayed rate
    lr / (1 + decay * iterations) that the update uses, as Keras' optimizers."""
    opt.lr = opt.learning_rate = lr_var
    opt.decay = float(decay)
    if config is not None:     # (Model.save's optimizer_config)
        name, cfg = config
        opt._keras_config = {"class_name": name, "config": {**cfg, "decay": float(decay)}}
        opt.get_config = lambda: dict(opt._keras_config["config"])
    if decay:
        import numpy as np
        from xlapy.compat.v1 import dtypes
        from xlapy.compat.v1.framework import get_default_graph
        from xlapy.compat.v1.ops.math_ops import cast
        from xlapy.compat.v1.variables import Variable
        with get_default_graph().name_scope(type(opt).__name__.replace("Optimizer", "")):
            it = Variable(np.int64(0), trainable=False, name="iterations")
        it._keras_optimizer_var = True
        opt.iterations = it
        attr = "_lr_v" if hasattr(opt, "_lr_v") else "_learning_rate"
        setattr(opt, attr, lambda: lr_var / (1.0 + np.float32(decay) *
                                             cast(it, dtypes.float32)))
    return opt


def SGD(lr=0.01, momentum=0.0, decay=0.0, nesterov=False, learning_rate=None, **kwargs):
    from xlapy.compat.v1.train.optimizers import GradientDescentOptimizer, MomentumOptimizer
    lr = _lr_variable("SGD", learning_rate if learning_rate is not None else lr)
    cfg = ("SGD", {"lr": float(_value(lr)), "momentum": float(momentum),
                   "nesterov": bool(nesterov)})
    if momentum:
        return _keras(MomentumOptimizer(lr, momentum, use_nesterov=nesterov), lr, decay, cfg)
    return _keras(GradientDescentOptimizer(lr), lr, decay, cfg)


def Adam(lr=0.001, beta_1=0.9, beta_2=0.999, epsilon=None, decay=0.0, learning_rate=None,
         **kwargs):
    from xlapy.compat.v1.train.optimizers import AdamOptimizer
    v = _lr_variable("Adam", learning_rate if learning_rate is not None else lr)
    return _keras(AdamOptimizer(v, beta_1, beta_2, 1e-7 if epsilon is None else epsilon), v,
                  decay, ("Adam", {"lr": float(_value(v)), "beta_1": float(beta_1),
                                   "beta_2": float(beta_2), "epsilon": epsilon,
                                   "amsgrad": bool(kwargs.get("amsgrad", False))}))


def RMSprop(lr=0.001, rho=0.9, epsilon=None, decay=0.0, learning_rate=None, **kwargs):
    from xlapy.compat.v1.train.optimizers import RMSPropOptimizer
    v = _lr_variable("RMSprop", learning_rate if learning_rate is not None else lr)
    return _keras(RMSPropOptimizer(v, decay=rho, epsilon=1e-7 if epsilon is None else epsilon),
                  v, decay, ("RMSprop", {"lr": float(_value(v)), "rho": float(rho),
                                         "epsilon": epsilon}))


def Adagrad(lr=0.01, epsilon=None, decay=0.0, learning_rate=None, **kwargs):
    from xlapy.compat.v1.train.optimizers import AdagradOptimizer
    v = _lr_variable("Adagrad", learning_rate if learning_rate is not None else lr)
    return _keras(AdagradOptimizer(v), v, decay,
                  ("Adagrad", {"lr": float(_value(v)), "epsilon": epsilon}))


_BY_NAME = {"sgd": SGD, "adam": Adam, "rmsprop": RMSprop, "adagrad": Adagrad}


def get(identifier):
    if isinstance(identifier, str):
        f = _BY_NAME.get(identifier.lower())
        if f is None:
            raise InvalidArgumentError(f"Unknown optimizer: {identifier!r} (known: "
                                       f"{', '.join(sorted(_BY_NAME))})")
        return f()
    if not hasattr(identifier, "minimize"):
        raise InvalidArgumentError(f"Could not interpret optimizer identifier: "
                                   f"{identifier!r}")
    return identifier


def serialize(optimizer):
    return dict(getattr(optimizer, "_keras_config", None) or {})


def deserialize(config, custom_objects=None):
    """An optimizer from {'class_name': 'Adam', 'config': {...}} (Model.save's
    optimizer_config)."""
    name = config["class_name"]
    f = {"SGD": SGD, "Adam": Adam, "RMSprop": RMSprop, "Adagrad": Adagrad}.get(name) or \
        (custom_objects or {}).get(name)
    if f is None:
        raise InvalidArgumentError(f"Unknown optimizer: {name}")
    cfg = dict(config.get("config", {}))
    cfg.pop("name", None)
    if "learning_rate" in cfg and "lr" not in cfg:
        cfg["lr"] = cfg.pop("learning_rate")
    return f(**cfg)
