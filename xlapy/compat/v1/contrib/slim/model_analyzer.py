"""slim.model_analyzer: a table of a model's variables and their sizes."""

from __future__ import annotations

import numpy as np

__all__ = ["analyze_ops", "analyze_vars"]


def analyze_vars(variables, print_info=False):
    """(total_size, total_bytes) of `variables` (elements and bytes); with print_info,
    prints TF's table (name, shape, size and bytes of each variable, then the totals)."""
    if print_info:
        print("---------")
        print("Variables: name (type shape) [size]")
        print("---------")
    total_size = total_bytes = 0
    for var in variables:
        dims = var.shape.as_list() if var.shape.ndims is not None else []
        size = int(np.prod(dims)) if dims else 1
        nbytes = size * np.dtype(var.dtype.base_dtype.np).itemsize
        total_size += size
        total_bytes += nbytes
        if print_info:
            print(var.name, f"({var.dtype.base_dtype.name} {'x'.join(map(str, dims))})",
                  f"[{size}, bytes: {nbytes}]")
    if print_info:
        print(f"Total size of variables: {total_size}")
        print(f"Total bytes of variables: {total_bytes}")
    return total_size, total_bytes


def analyze_ops(graph, print_info=False):
    """(total_size, total_bytes) of the outputs of graph's ops whose shapes are known."""
    if print_info:
        print("---------")
        print("Operations: name -> (type shapes) [size]")
        print("---------")
    total_size = total_bytes = 0
    for op in graph.get_operations():
        op_size = op_bytes = 0
        shapes = []
        for out in op.outputs:
            shapes.append(out.shape.as_list() if out.shape.ndims is not None else None)
            if out.shape.is_fully_defined():
                n = int(np.prod(out.shape.as_list())) if out.shape.ndims else 1
                op_size += n
                op_bytes += n * np.dtype(out.dtype.base_dtype.np).itemsize \
                    if out.dtype.base_dtype.np is not None else 0
        total_size += op_size
        total_bytes += op_bytes
        if print_info:
            print(op.name, "->", f"({op.type} {shapes})", f"[{op_size}, bytes: {op_bytes}]")
    return total_size, total_bytes
