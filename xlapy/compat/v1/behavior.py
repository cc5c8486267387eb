"""The switches every TF1-in-TF2 script begins with: tf.disable_v2_behavior(),
tf.disable_eager_execution(), tf.executing_eagerly(), ...

xlapy.compat.v1 *is* TensorFlow 1.x's graph mode: graphs, sessions and reference variables
are the only behaviour it has. Switching TF 2 behaviour off is therefore what is already
the case (the calls are accepted and change nothing); switching it on (eager execution,
TF 2 behaviour) is not supported and raises UnimplementedError saying so.
"""

from __future__ import annotations

from xlapy.compat.v1.errors import UnimplementedError

_NO_EAGER = ("xlapy.compat.v1 runs TensorFlow 1.x graphs in sessions only; eager execution "
             "is not supported. Build a graph and run it with tf.Session (or use xlapy's "
             "JAX-like frontend, xlapy.jit / xlapy.numpy, for eager array code).")


def disable_v2_behavior():
    """TF 1.x behaviour (graphs, sessions, ref variables, v1 control flow): always on."""


def disable_eager_execution():
    """Graph mode: always on here."""


def disable_resource_variables():
    """Reference variables: the only kind here."""


def disable_v2_tensorshape():
    """TensorShape dims are Dimension objects, as TF 1.x's: always."""


def disable_control_flow_v2():
    """Accepted: control flow is functional While/If here (docs/compat_v1_ops.md)."""


def enable_eager_execution(config=None, device_policy=None, execution_mode=None):
    raise UnimplementedError(_NO_EAGER)


def enable_v2_behavior():
    raise UnimplementedError(_NO_EAGER)


def executing_eagerly():
    """False: ops build graph nodes, which sessions run."""
    return False
