"""function.Defun: Python functions as graph functions (tensorflow.python.framework.function).

    @function.Defun(tf.float32, tf.float32, compiled=True)
    def mulop(x1, x2):
        return x1 * x2
    r = mulop(x, y)

xlapy inlines the function: each call builds its body in the caller's graph under the name
scope of the function (`mulop/mul`), which is what TF's runtime did to non-compiled calls
and what XLA does to compiled ones. The graph's function library (as_graph_def().library)
records each function once with its attributes; with compiled=True those are
_XlaCompile=True, _XlaScope (the enclosing jit scope's, else b"function_<name>") and
_XlaSeparateCompiledGradients, and the body's ops carry them too, so they form their own
cluster and their gradients follow jit_scope's rules. Gradients flow through the body's
ops; python_grad_func(op, *grads) or grad_func (a Defun taking inputs + output gradients)
replace them, as in TF.
"""

from __future__ import annotations

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError
from xlapy.compat.v1.framework import Tensor, convert_to_tensor, get_default_graph
from xlapy.compat.v1.op_registry import register_gradient, register_op


def _outputs_infer(op):
    n = op.get_attr("num_outputs")
    return [(t.dtype, t.shape) for t in op.inputs[:n]]


@register_op("DefunOutputs", infer=_outputs_infer, attrs=("num_outputs",))
def _defun_outputs(m, *values, num_outputs=1):
    """The outputs of a function with a Python gradient: its first num_outputs inputs,
    passed through; the rest are the function's inputs, for the gradient."""
    out = tuple(values[:num_outputs])
    return out if num_outputs > 1 else out[0]


class _GradOp:
    """What python_grad_func receives as `op`: the call's inputs and outputs."""

    def __init__(self, op, n_out):
        self.inputs = list(op.inputs[n_out:])
        self.outputs = list(op.outputs)
        self.name = op.name
        self.type = op.get_attr("func_name")
        self.graph = op.graph

    def get_attr(self, name):
        raise InvalidArgumentError(f"Defun call '{self.name}' has no attr named '{name}'")


@register_gradient("DefunOutputs")
def _defun_outputs_grad(op, *grads):
    n = op.get_attr("num_outputs")
    fn = op.get_attr("grad_fn")
    in_grads = fn(_GradOp(op, n), *grads)
    in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
    if len(in_grads) != len(op.inputs) - n:
        raise InvalidArgumentError(f"the gradient of function {op.get_attr('func_name')} "
                                   f"returned {len(in_grads)} gradients for "
                                   f"{len(op.inputs) - n} inputs")
    return [None] * n + in_grads


def _current_xla_scope(graph):
    scope = None
    for frame in graph._attr_stack:
        scope = frame.get("_XlaScope", scope)
    return scope


class _DefinedFunction:
    def __init__(self, func, input_types, func_name=None, grad_func=None,
                 python_grad_func=None, out_names=None, **kwargs):
        self._func = func
        self._input_types = [dtypes.as_dtype(t) for t in input_types]
        self._name = func_name or func.__name__
        self._grad_func = grad_func
        self._python_grad_func = python_grad_func
        self._out_names = out_names
        self._compiled = bool(kwargs.pop("compiled", False))
        self._separate = bool(kwargs.pop("separate_compiled_gradients", False))
        kwargs.pop("noinline", None)
        kwargs.pop("shape_func", None)
        if kwargs:
            raise InvalidArgumentError(f"Defun: unknown keyword arguments {sorted(kwargs)}")

    name = property(lambda self: self._name)
    python_grad_func = property(lambda self: self._python_grad_func)
    grad_func_name = property(lambda self: self._grad_func.name if self._grad_func else None)

    def _attrs(self, graph) -> dict:
        if not self._compiled:
            return {}
        scope = _current_xla_scope(graph)
        return {"_XlaCompile": True, "_XlaSeparateCompiledGradients": self._separate,
                "_XlaScope": scope if scope is not None else f"function_{self._name}".encode()}

    def __call__(self, *args, **kwargs):
        name = kwargs.pop("name", None)
        if kwargs:
            raise InvalidArgumentError(f"function {self._name} takes positional arguments, "
                                       f"got {sorted(kwargs)}")
        if self._input_types and len(args) != len(self._input_types):
            raise InvalidArgumentError(f"function {self._name} takes {len(self._input_types)} "
                                       f"argument(s), got {len(args)}")
        graph = get_default_graph()
        attrs = self._attrs(graph)
        library = graph.__dict__.setdefault("_functions", {})
        library.setdefault(self._name, dict(attrs))
        types = self._input_types or [None] * len(args)
        inputs = [convert_to_tensor(a, dtype=t) for a, t in zip(args, types)]
        from xlapy.compat.v1.ops.array_ops import identity
        with graph.name_scope(name or self._name), graph._attr_scope(attrs):
            body_args = [identity(x) for x in inputs]
            out = self._func(*body_args)
            if out is None:
                raise InvalidArgumentError(f"function {self._name} returned None; a Defun "
                                           "must return a tensor or a list of tensors")
            single = not isinstance(out, (list, tuple))
            outs = [convert_to_tensor(o) for o in ([out] if single else out)]
            if self._python_grad_func or self._grad_func:
                grad = self._python_grad_func or self._call_grad_func
                op = graph.create_op("DefunOutputs", outs + inputs,
                                     {"num_outputs": len(outs), "grad_fn": grad,
                                      "func_name": self._name})
                outs = list(op.outputs)
        return outs[0] if single else outs

    def _call_grad_func(self, op, *grads):
        return self._grad_func(*op.inputs, *grads)


class Defun:
    """Decorator: @Defun(*input_types, func_name=, grad_func=, python_grad_func=,
    out_names=, compiled=, noinline=, separate_compiled_gradients=)."""

    def __init__(self, *input_types, **kwargs):
        self._input_types = input_types
        self._kwargs = kwargs

    def __call__(self, func):
        if not callable(func):
            raise InvalidArgumentError(f"Defun decorates a function, got {func!r}")
        return _DefinedFunction(func, self._input_types, **self._kwargs)


def is_tensor(x) -> bool:
    return isinstance(x, Tensor)
