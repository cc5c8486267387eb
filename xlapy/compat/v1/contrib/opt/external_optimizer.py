"""tf.contrib.opt.ExternalOptimizerInterface and ScipyOptimizerInterface: minimize a loss
over variables with an optimizer outside the graph (scipy.optimize.minimize).

The variables are packed into one flat float64 vector. Each evaluation the optimizer asks
for runs the loss and its gradient (or a constraint and its gradient) in the session with
the variables fed that vector's values (the variables themselves are not written); once
the optimizer returns, one run assigns the result to the variables. Equality constraints
are tensors that must be 0 at the solution, inequality constraints tensors that must be
>= 0; var_to_bounds maps a variable to (lower, upper), scalars or arrays broadcast to its
shape (None or +-inf: unbounded). A gradient tf.gradients cannot give (a tensor that does
not depend on a variable) counts as 0.

minimize(session, feed_dict, fetches, step_callback, loss_callback): step_callback(x)
gets the packed vector after each iteration of the optimizer, loss_callback(*fetches) the
values of `fetches` at each loss evaluation.
"""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1 import logging
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import convert_to_tensor
from xlapy.compat.v1.gradients import gradients
from xlapy.compat.v1.ops.array_ops import concat, placeholder, reshape, zeros_like
from xlapy.compat.v1.session import get_default_session
from xlapy.compat.v1.variables import trainable_variables


def _shape(var):
    shape = var.get_shape()
    if not shape.is_fully_defined():
        raise InvalidArgumentError(f"External optimizers need fully defined variable shapes; "
                                   f"{var.name} has shape {shape.tf_str()}")
    return tuple(shape.as_list())


def _grads(tensor, var_list):
    return [g if g is not None else zeros_like(v.value())
            for v, g in zip(var_list, gradients(tensor, var_list))]


def _pack(tensors):
    flat = [reshape(t, [-1]) for t in tensors]
    return flat[0] if len(flat) == 1 else concat(flat, 0)


class ExternalOptimizerInterface:
    """The base of optimizers running outside the graph: a subclass implements _minimize
    (see the module doc)."""

    def __init__(self, loss, var_list=None, equalities=None, inequalities=None,
                 var_to_bounds=None, **optimizer_kwargs):
        self._loss = convert_to_tensor(loss)
        if self._loss.shape.ndims not in (None, 0):
            raise InvalidArgumentError(f"The loss must be a scalar, got shape "
                                       f"{self._loss.shape.tf_str()}")
        self._equalities = [convert_to_tensor(t) for t in (equalities or [])]
        self._inequalities = [convert_to_tensor(t) for t in (inequalities or [])]
        self._vars = list(trainable_variables() if var_list is None else var_list)
        if not self._vars:
            raise InvalidArgumentError("No variables to optimize.")
        for v in self._vars:
            if not hasattr(v, "_ref"):
                raise InvalidArgumentError(f"var_list must hold Variables, got {v!r}")
        self._shapes = [_shape(v) for v in self._vars]
        sizes = [int(np.prod(s, dtype=np.int64)) for s in self._shapes]
        ends = np.cumsum([0] + sizes)
        self._slices = [slice(int(a), int(b)) for a, b in zip(ends[:-1], ends[1:])]

        self._packed_bounds = None
        if var_to_bounds is not None:
            unknown = [v for v in var_to_bounds if v not in self._vars]
            if unknown:
                raise InvalidArgumentError(f"var_to_bounds names variables that are not "
                                           f"optimized: {[v.name for v in unknown]}")
            lows, highs = [], []
            for v, shape in zip(self._vars, self._shapes):
                lo, hi = var_to_bounds.get(v, (-np.inf, np.inf))
                lo = -np.inf if lo is None else lo
                hi = np.inf if hi is None else hi
                try:
                    lows.extend(np.broadcast_to(np.asarray(lo, np.float64), shape).ravel())
                    highs.extend(np.broadcast_to(np.asarray(hi, np.float64), shape).ravel())
                except ValueError:
                    raise InvalidArgumentError(f"The bounds of {v.name} do not broadcast to "
                                               f"its shape {list(shape)}") from None
            self._packed_bounds = list(zip(lows, highs))

        self._update_placeholders = [placeholder(v.dtype, s) for v, s in
                                     zip(self._vars, self._shapes)]
        self._var_updates = [v.assign(p) for v, p in
                             zip(self._vars, self._update_placeholders)]
        self.optimizer_kwargs = optimizer_kwargs
        self._packed_var = _pack([v.value() for v in self._vars])
        self._packed_loss_grad = _pack(_grads(self._loss, self._vars))
        self._packed_equality_grads = [_pack(_grads(t, self._vars))
                                       for t in self._equalities]
        self._packed_inequality_grads = [_pack(_grads(t, self._vars))
                                         for t in self._inequalities]

    def minimize(self, session=None, feed_dict=None, fetches=None, step_callback=None,
                 loss_callback=None, **run_kwargs):
        """Run the external optimizer from the variables' values and assign its result to
        them (see the module doc)."""
        if session is None:
            session = get_default_session()
            if session is None:
                raise InvalidArgumentError("minimize() needs a session: pass one or call it "
                                           "inside `with session.as_default()`")
        feed_dict = dict(feed_dict or {})
        fetches = list(fetches or [])
        loss_callback = loss_callback or (lambda *values: None)
        step_callback = step_callback or (lambda xk: None)

        loss_grad = self._eval_func([self._loss, self._packed_loss_grad], session, feed_dict,
                                    fetches, loss_callback)
        eq = [self._eval_func(t, session, feed_dict, fetches) for t in self._equalities]
        eq_grad = [self._eval_func(t, session, feed_dict, fetches)
                   for t in self._packed_equality_grads]
        ineq = [self._eval_func(t, session, feed_dict, fetches) for t in self._inequalities]
        ineq_grad = [self._eval_func(t, session, feed_dict, fetches)
                     for t in self._packed_inequality_grads]
        initial = np.asarray(session.run(self._packed_var), np.float64)
        packed = self._minimize(initial_val=initial, loss_grad_func=loss_grad,
                                equality_funcs=eq, equality_grad_funcs=eq_grad,
                                inequality_funcs=ineq, inequality_grad_funcs=ineq_grad,
                                packed_bounds=self._packed_bounds,
                                step_callback=step_callback,
                                optimizer_kwargs=self.optimizer_kwargs)
        packed = np.asarray(packed)
        values = {p: packed[s].reshape(shape).astype(v.dtype.as_numpy_dtype)
                  for p, s, shape, v in zip(self._update_placeholders, self._slices,
                                            self._shapes, self._vars)}
        session.run(self._var_updates, feed_dict=values, **run_kwargs)

    def _minimize(self, initial_val, loss_grad_func, equality_funcs, equality_grad_funcs,
                  inequality_funcs, inequality_grad_funcs, packed_bounds, step_callback,
                  optimizer_kwargs):
        """Minimize from the packed vector initial_val; returns the packed solution.
        loss_grad_func(x) -> [loss, packed gradient]; the constraint functions give a
        constraint's value (or packed gradient) at x."""
        raise NotImplementedError("A subclass of ExternalOptimizerInterface implements "
                                  "_minimize")

    def _eval_func(self, tensors, session, feed_dict, fetches, callback=None):
        """x -> the values of tensors (a list, or one tensor) with the variables fed x."""
        single = not isinstance(tensors, list)
        tensors = [tensors] if single else tensors
        n = len(tensors)

        def eval_func(x):
            x = np.asarray(x)
            feed = {v: x[s].reshape(shape).astype(v.dtype.as_numpy_dtype)
                    for v, s, shape in zip(self._vars, self._slices, self._shapes)}
            feed.update(feed_dict)
            values = session.run(tensors + fetches, feed_dict=feed)
            if callback is not None:
                callback(*values[n:])
            return values[0] if single else values[:n]
        return eval_func


class ScipyOptimizerInterface(ExternalOptimizerInterface):
    """Minimizes with scipy.optimize.minimize: method (default 'L-BFGS-B'), options and the
    other keyword arguments of minimize go through optimizer_kwargs; jac, bounds,
    constraints and callback are set from the interface's arguments."""

    _DEFAULT_METHOD = "L-BFGS-B"

    def _minimize(self, initial_val, loss_grad_func, equality_funcs, equality_grad_funcs,
                  inequality_funcs, inequality_grad_funcs, packed_bounds, step_callback,
                  optimizer_kwargs):
        def loss_grad(x):
            loss, grad = loss_grad_func(x)
            return float(loss), np.asarray(grad, np.float64)

        kwargs = dict(optimizer_kwargs)
        method = kwargs.pop("method", self._DEFAULT_METHOD)
        constraints = [{"type": "eq", "fun": f, "jac": j}
                       for f, j in zip(equality_funcs, equality_grad_funcs)]
        constraints += [{"type": "ineq", "fun": f, "jac": j}
                        for f, j in zip(inequality_funcs, inequality_grad_funcs)]
        fixed = {"jac": True, "callback": step_callback, "method": method,
                 "constraints": constraints, "bounds": packed_bounds}
        for k in fixed:
            if k in kwargs:
                if k == "bounds":
                    raise InvalidArgumentError("Bounds must be set using the var_to_bounds "
                                               "argument")
                raise InvalidArgumentError(f"Optimizer keyword arg '{k}' is set automatically "
                                           f"and cannot be injected manually")
        fixed.update(kwargs)
        # (SciPy loads only when an external minimization runs: it is large, and
        # xlapy.compat.v1 does not need it otherwise)
        import scipy.optimize
        result = scipy.optimize.minimize(loss_grad, initial_val, **fixed)
        lines, args = ["Optimization terminated with:", "  Message: %s",
                       "  Objective function value: %f"], [result.message, result.fun]
        if "nit" in result:
            lines.append("  Number of iterations: %d")
            args.append(result.nit)
        if "nfev" in result:
            lines.append("  Number of functions evaluations: %d")
            args.append(result.nfev)
        logging.info("\n".join(lines), *args)
        return result["x"]


__all__ = ["ExternalOptimizerInterface", "ScipyOptimizerInterface"]
