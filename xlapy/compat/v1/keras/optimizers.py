"""tf.keras.optimizers (TF 1.x): Keras' names and defaults over tf.train's optimizers."""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError


def SGD(lr=0.01, momentum=0.0, decay=0.0, nesterov=False, learning_rate=None, **kwargs):
    from xlapy.compat.v1.train.optimizers import GradientDescentOptimizer, MomentumOptimizer
    lr = learning_rate if learning_rate is not None else lr
    if momentum:
        return MomentumOptimizer(lr, momentum, use_nesterov=nesterov)
    return GradientDescentOptimizer(lr)


def Adam(lr=0.001, beta_1=0.9, beta_2=0.999, epsilon=None, learning_rate=None, **kwargs):
    from xlapy.compat.v1.train.optimizers import AdamOptimizer
    return AdamOptimizer(learning_rate if learning_rate is not None else lr, beta_1, beta_2,
                         1e-7 if epsilon is None else epsilon)


def RMSprop(lr=0.001, rho=0.9, epsilon=None, learning_rate=None, **kwargs):
    from xlapy.compat.v1.train.optimizers import RMSPropOptimizer
    return RMSPropOptimizer(learning_rate if learning_rate is not None else lr, decay=rho,
                            epsilon=1e-7 if epsilon is None else epsilon)


def Adagrad(lr=0.01, epsilon=None, learning_rate=None, **kwargs):
    from xlapy.compat.v1.train.optimizers import AdagradOptimizer
    return AdagradOptimizer(learning_rate if learning_rate is not None else lr)


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
