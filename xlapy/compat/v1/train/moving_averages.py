"""tf.train.ExponentialMovingAverage: shadow variables tracking moving averages.

    ema = tf.train.ExponentialMovingAverage(0.999, num_updates=global_step)
    with tf.control_dependencies([train_op]):
        train_op = ema.apply(tf.trainable_variables())     # shadow -= (1 - d)(shadow - var)
    saver = tf.train.Saver(ema.variables_to_restore())      # evaluation with the averages

The decay d is `decay`, or min(decay, (1 + n) / (10 + n)) with num_updates n. A Variable's
shadow starts at the variable's initial value; a Tensor's starts at zero and is debiased
(zero_debias, as TF always did for tensors): biased -= (1 - d)(biased - x), step += 1,
shadow = biased / (1 - d^step). The shadows are non-trainable global variables named
`<var>/<name>` in the MOVING_AVERAGE_VARIABLES collection.
"""

from __future__ import annotations

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import (GraphKeys, Tensor, convert_to_tensor,
                                       get_default_graph)
from xlapy.compat.v1.ops.array_ops import group, zeros
from xlapy.compat.v1.ops.math_ops import (cast, divide, minimum, multiply, pow, subtract)
from xlapy.compat.v1.variables import Variable, trainable_variables


class ExponentialMovingAverage:
    def __init__(self, decay, num_updates=None, zero_debias=False,
                 name="ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict = {}  # var or tensor -> shadow Variable

    name = property(lambda self: self._name)

    def apply(self, var_list=None):
        """Create the shadows of var_list (default: the trainable variables) and return the
        op that updates them all."""
        graph = get_default_graph()
        var_list = trainable_variables() if var_list is None else list(var_list)
        for v in var_list:
            dt = v.dtype
            if not dt.is_floating:
                raise InvalidArgumentError(f"The variables must be half, float, or double: "
                                           f"{getattr(v, 'name', v)}")
            if v in self._averages:
                raise InvalidArgumentError(f"Moving average already computed for: "
                                           f"{v.name}")
        new = []
        for v in var_list:
            is_var = hasattr(v, "_ref")
            base = v.op.name
            with graph.name_scope(None):
                if is_var:
                    shadow = Variable(v.initialized_value, trainable=False,
                                      name=f"{base}/{self._name}")
                else:
                    t = convert_to_tensor(v)
                    shadow = Variable(lambda t=t: zeros(t.shape.as_list(), t.dtype),
                                      trainable=False, name=f"{base}/{self._name}")
            graph.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, shadow)
            self._averages[v] = shadow
            new.append(v)
        with graph.name_scope(self._name) as scope:
            decay = self._decay_tensor()
            updates = [self._update(v, self._averages[v], decay) for v in new]
            return group(*updates, name=scope)

    def _decay_tensor(self):
        d = convert_to_tensor(self._decay, dtype=dtypes.float32, name="decay")
        if self._num_updates is not None:
            n = cast(convert_to_tensor(self._num_updates), dtypes.float32)
            d = minimum(d, divide(1.0 + n, 10.0 + n))
        return d

    def _update(self, v, shadow, decay):
        graph = get_default_graph()
        value = convert_to_tensor(v)
        with graph.name_scope(v.op.name):
            d = cast(decay, shadow.dtype)
            one_minus = subtract(1.0, d)
            if hasattr(v, "_ref") and not self._zero_debias:
                return shadow.assign_sub(multiply(subtract(shadow, value), one_minus)).op
            return self._debiased_update(value, shadow, d, one_minus)

    def _debiased_update(self, value: Tensor, shadow, d, one_minus):
        graph = get_default_graph()
        with graph.name_scope(None):
            biased = Variable(lambda: zeros(value.shape.as_list(), value.dtype),
                              trainable=False, name=f"{shadow.op.name}/biased")
            step = Variable(lambda: zeros([], value.dtype), trainable=False,
                            name=f"{shadow.op.name}/local_step")
        b = biased.assign_sub(multiply(subtract(biased, value), one_minus))
        s = step.assign_add(1.0)
        unbiased = divide(b, subtract(1.0, pow(d, s)))
        return shadow.assign(unbiased).op

    def average(self, var):
        return self._averages.get(var)

    def average_name(self, var) -> str:
        return f"{var.op.name}/{self._name}"

    def variables_to_restore(self, moving_avg_variables=None) -> dict:
        """{checkpoint name: Variable} restoring each moving average into its variable and
        every other global variable as itself."""
        graph = get_default_graph()
        if moving_avg_variables is None:
            moving_avg_variables = trainable_variables() + \
                graph.get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES)
        averaged = set(moving_avg_variables)
        shadows = set(self._averages.values())
        out = {}
        for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES):
            if v in shadows:
                continue
            out[self.average_name(v) if v in averaged else v.op.name] = v
        return out
