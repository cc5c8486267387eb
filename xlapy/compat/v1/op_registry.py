"""The op registry: every op type is registered once, with all its rules in one place.

    @register_op("MatMul", infer=matmul_shape, attrs=("transpose_a", "transpose_b"))
    def _matmul(m, a, b, transpose_a=False, transpose_b=False):
        ...                        # m is numpy (executor) or xlapy.numpy (XLA lowering)

    @register_gradient("MatMul")
    def _matmul_grad(op, grad):    # builds gradient ops in the graph; one entry per input
        ...

Rules of an OpDef:
  infer        (op) -> [(DType, TensorShape)] for each output; raises on bad inputs.
  kernel       the executor's NumPy kernel: kernel(numpy, *input_values, **attrs).
  lowering     the XLA rule: lowering(xlapy.numpy, *values, **attrs), evaluated while the
               cluster is traced by the xlapy frontend. By default the kernel itself (written
               once against the array module `m`); None when the op has no XLA lowering
               (it then stays in the executor).
  attrs        the op attributes passed to kernel and lowering as keyword arguments.
  ref_inputs   inputs that are variable references (Assign, ApplyAdam): the kernel gets the
               variable's current value and returns the new value of each ref input; the
               op's output is the new value of the first. ref_reads=False: the kernel does
               not read the current value (Assign), so it may be uninitialized.
  const_inputs inputs that must be compile-time constants under XLA (shapes, axes): their
               values become part of the compiled cluster's cache key.
  rng          the kernel takes a numpy.random.Generator after `m` (random ops).
  stateful     never constant-folded, never deduplicated (random ops, py_func, variables).
  extra        per-type hooks of ops that call functions (While, If: control_flow_ops.py):
               "can_lower"(op) -> whether this op's functions can be lowered (a loop body
               with a random op cannot); "executor"(session, op) -> a callable running the
               op in the executor on its input values (it needs the session to run the
               functions' ops).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from xlapy.compat.v1.errors import NotFoundError

_DEFAULT = object()


@dataclass
class OpDef:
    type: str
    infer: Callable
    kernel: Callable | None = None
    lowering: Callable | None = None
    attrs: tuple = ()
    ref_inputs: tuple = ()
    ref_reads: bool = True
    const_inputs: tuple = ()
    rng: bool = False
    stateful: bool = False
    grad: Callable | None = None
    not_differentiable: bool = False
    doc: str = ""
    extra: dict = field(default_factory=dict)


_REGISTRY: dict[str, OpDef] = {}


def register_op(op_type: str, *, infer, attrs=(), lowering=_DEFAULT, ref_inputs=(),
                ref_reads=True, const_inputs=(), rng=False, stateful=False):
    """Decorator registering `kernel` as op_type's executor kernel (see module doc)."""
    def deco(kernel):
        if op_type in _REGISTRY:
            raise RuntimeError(f"op {op_type} registered twice")
        low = kernel if lowering is _DEFAULT else lowering
        _REGISTRY[op_type] = OpDef(op_type, infer, kernel, low, tuple(attrs), tuple(ref_inputs),
                                   ref_reads, tuple(const_inputs), rng,
                                   stateful or rng or bool(ref_inputs),
                                   doc=(kernel.__doc__ or "") if kernel else "")
        return kernel
    return deco


def register_gradient(op_type: str):
    def deco(fn):
        get_op_def(op_type).grad = fn
        return fn
    return deco


def not_differentiable(*op_types: str) -> None:
    for t in op_types:
        get_op_def(t).not_differentiable = True


def get_op_def(op_type: str) -> OpDef:
    d = _REGISTRY.get(op_type)
    if d is None:
        raise NotFoundError(f"Op type not registered '{op_type}'")
    return d


def registered_ops() -> dict:
    return dict(_REGISTRY)


def has_lowering(op_type: str) -> bool:
    d = _REGISTRY.get(op_type)
    return d is not None and d.lowering is not None


def op_has_lowering(op) -> bool:
    """Whether this very op can be compiled (its type has a lowering, and for ops calling
    functions, every op of those functions has one too)."""
    d = get_op_def(op.type)
    if d.rng:  # drawn on the host, passed to the compiled cluster (jit/launch.HostRandom),
        return d.extra.get("host_random", True)  # unless an op def opts out
    if d.lowering is None:
        return False
    check = d.extra.get("can_lower")
    return check is None or bool(check(op))


def kernel_attrs(op) -> dict:
    """The attrs an op's kernel and lowering receive."""
    d = get_op_def(op.type)
    return {k: op._attrs[k] for k in d.attrs if k in op._attrs}
