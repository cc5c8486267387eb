"""tf.layers.InputSpec: the dtype, rank and dimensions a layer accepts. A layer whose
`input_spec` is set (one spec, or a list of one per input) checks its inputs against it
when called, raising ValueError (InvalidArgumentError) as TF's layers do."""

from __future__ import annotations

from xlapy.compat.v1 import dtypes
from xlapy.compat.v1.errors import InvalidArgumentError


class InputSpec:
    """dtype, shape (None entries free), ndim, max_ndim, min_ndim, and axes
    ({axis: size} of specific dimensions)."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None,
                 axes=None):
        self.dtype = dtypes.as_dtype(dtype).name if dtype is not None else None
        if shape is not None:
            self.ndim = len(shape)
            self.shape = tuple(shape)
        else:
            self.ndim = ndim
            self.shape = None
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.axes = {int(k): v for k, v in (axes or {}).items()}
        if self.axes and (self.ndim is not None or self.max_ndim is not None):
            top = (self.ndim if self.ndim is not None else self.max_ndim + 1) - 1
            if max(self.axes) > top:
                raise InvalidArgumentError(f"Axis {max(self.axes)} is greater than the maximum "
                                           f"allowed value: {top}")

    def __repr__(self):
        parts = [f"{k}={v}" for k, v in (("dtype", self.dtype), ("shape", self.shape),
                                          ("ndim", self.ndim), ("max_ndim", self.max_ndim),
                                          ("min_ndim", self.min_ndim),
                                          ("axes", self.axes or None)) if v is not None]
        return f"InputSpec({', '.join(parts)})"

    def get_config(self):
        return {"dtype": self.dtype, "shape": self.shape, "ndim": self.ndim,
                "max_ndim": self.max_ndim, "min_ndim": self.min_ndim, "axes": self.axes}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def assert_input_compatibility(input_spec, inputs, layer_name):
    """Raises InvalidArgumentError (a ValueError) when an input does not fit its spec."""
    if input_spec is None:
        return
    specs = input_spec if isinstance(input_spec, (list, tuple)) else [input_spec]
    xs = inputs if isinstance(inputs, (list, tuple)) else [inputs]
    if len(xs) != len(specs):
        raise InvalidArgumentError(f"Layer {layer_name} expects {len(specs)} inputs, but it "
                                   f"received {len(xs)} input tensors.")
    for i, (x, spec) in enumerate(zip(xs, specs)):
        if spec is None:
            continue
        shape = x.shape
        r = shape.ndims
        where = f"Input {i} of layer {layer_name} is incompatible with the layer: "
        if spec.ndim is not None and r != spec.ndim:
            got = shape.as_list() if r is not None else None
            raise InvalidArgumentError(where + f"expected ndim={spec.ndim}, found ndim={r}. "
                                       f"Full shape received: {got}")
        if spec.max_ndim is not None and r is not None and r > spec.max_ndim:
            raise InvalidArgumentError(where + f"expected max_ndim={spec.max_ndim}, found "
                                       f"ndim={r}")
        if spec.min_ndim is not None and r is not None and r < spec.min_ndim:
            raise InvalidArgumentError(where + f"expected min_ndim={spec.min_ndim}, found "
                                       f"ndim={r}. Full shape received: {shape.as_list()}")
        if spec.dtype is not None and x.dtype.name != spec.dtype:
            raise InvalidArgumentError(where + f"expected dtype={spec.dtype}, found "
                                       f"dtype={x.dtype.name}")
        if spec.axes and r is not None:
            for axis, value in spec.axes.items():
                d = shape.dims[axis]
                if value is not None and d is not None and int(d) != int(value):
                    raise InvalidArgumentError(where + f"expected axis {axis} of input shape "
                                               f"to have value {value} but received input "
                                               f"with shape {shape.as_list()}")
        if spec.shape is not None and r is not None:
            for want, got in zip(spec.shape, shape.dims):
                if want is not None and got is not None and int(want) != int(got):
                    raise InvalidArgumentError(where + f"expected shape={spec.shape}, found "
                                               f"shape={shape.as_list()}")
