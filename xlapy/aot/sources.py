"""What ahead-of-time compilation starts from, made into one HLO module with the names of
its arguments and results.

  from_hlo(text_or_path)                   HLO text as JAX or XLA dump it
  from_function(fn, *example_args)         a jitted xlapy function (or a plain one, jitted
                                           here); the examples' shapes and dtypes (arrays or
                                           anything with .shape and .dtype, or "f32[2,3]")
                                           fix the program
  graph.from_graph(graph, config, session) a compat.v1 graph with a tf2xla config

Arguments are the entry's parameter leaves, results the root's leaves, in order.
"""

from __future__ import annotations

import inspect
import pathlib
import re
from dataclasses import dataclass, field

import numpy as np

from xlapy.errors import AotError
from xlapy.hlo import parse
from xlapy.hlo.ir import Instruction, Module
from xlapy.hlo.shapes import Shape


@dataclass
class Program:
    module: Module
    arg_names: list              # a C identifier or None, per argument
    result_names: list           # the same per result
    variables: list = field(default_factory=list)   # (name, argument, result) read-write
    source: str = ""             # what it was compiled from (the header says)


def c_identifier(name: str) -> str | None:
    """A C identifier from a name ("Arg_0.1" -> "Arg_0", "x.3" -> "x", "layer/w" ->
    "layer_w"), None when nothing usable is left."""
    name = re.sub(r"\.\d+$", "", name)
    out = re.sub(r"[^A-Za-z0-9_]", "_", name).strip("_")
    if not out:
        return None
    return "_" + out if out[0].isdigit() else out


def unique_names(names: list) -> list:
    """Names used once stay; repeated ones (and None) become None."""
    seen: dict = {}
    for n in names:
        if n is not None:
            seen[n] = seen.get(n, 0) + 1
    return [n if n is not None and seen[n] == 1 else None for n in names]


def argument_leaves(module: Module) -> list[Shape]:
    return [s for p in module.entry.parameters for s in p.shape.leaves()]


def check_interface(module: Module) -> None:
    """Arguments and results an object can take and give: arrays (no tokens)."""
    for p in module.entry.parameters:
        if any(s.is_token for s in p.shape.leaves()):
            raise AotError(f"parameter {p.name} of {module.name} is a token: ahead-of-time "
                           "programs take arrays only")
    if any(s.is_token for s in module.entry.root.shape.leaves()):
        raise AotError(f"the result of {module.name} holds a token: ahead-of-time programs "
                       "return arrays only")


def from_hlo(source, arg_names=None, result_names=None) -> Program:
    path = None
    if isinstance(source, pathlib.Path) or (isinstance(source, str) and "\n" not in source
                                             and source.strip().endswith((".hlo", ".txt"))):
        path = pathlib.Path(source)
        try:
            text = path.read_text()
        except OSError as e:
            raise AotError(f"cannot read the HLO file {path}: {e.strerror}") from None
    else:
        text = source
    module = parse(text, str(path) if path else "<hlo>")
    check_interface(module)
    names = []
    for p in module.entry.parameters:
        base = c_identifier(p.name)
        k = len(p.shape.leaves())
        names += [base] if k == 1 or base is None else [f"{base}_{j}" for j in range(k)]
    n_results = len(module.entry.root.shape.leaves())
    return Program(module, _given(arg_names, names, "arg_names"),
                   _given(result_names, [None] * n_results, "result_names"),
                   source=f"HLO module {module.name}" + (f" ({path.name})" if path else ""))


def _given(given, default: list, what: str) -> list:
    if given is None:
        return unique_names(default)
    given = list(given)
    if len(given) != len(default):
        raise AotError(f"{what} has {len(given)} names for {len(default)} arrays")
    for n in given:
        if n is not None and c_identifier(n) != n:
            raise AotError(f"{what}: '{n}' is not a C identifier")
    return unique_names(given)


def example_array(x):
    """An argument that fixes a shape and dtype: an array, anything with .shape and
    .dtype, or an HLO shape string "f32[2,3]" (neither of the last two allocates)."""
    if isinstance(x, str):
        shape = _shape_spec(x)
        return np.broadcast_to(np.zeros((), shape.dtype), shape.dims)
    if not isinstance(x, np.ndarray) and hasattr(x, "shape") and hasattr(x, "dtype"):
        return np.broadcast_to(np.zeros((), np.dtype(x.dtype)), tuple(x.shape))
    return x


def _shape_spec(text: str) -> Shape:
    from xlapy.hlo.parser import parse_shape
    try:
        shape = parse_shape(text.strip())
    except Exception as e:
        raise AotError(f"example argument '{text}': not an array shape like f32[2,3] "
                       f"({str(e).splitlines()[0]})") from None
    if not shape.is_array:
        raise AotError(f"example argument '{text}': not an array shape like f32[2,3]")
    return shape


def from_function(fn, example_args, arg_names=None, result_names=None) -> Program:
    # (imported here: `import xlapy.aot` does not load the frontend)
    from xlapy.frontend import pytree
    from xlapy.frontend.jit import JitFunction, jit
    jitted = fn if isinstance(fn, JitFunction) else jit(fn)
    args = [example_array(a) for a in example_args]
    lowered = jitted.lower(*args)
    module = lowered.module
    embed_constants(module, lowered.extra_consts)
    check_interface(module)
    try:
        params = [p.name for p in inspect.signature(jitted.fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    static = set(jitted.static_argnums)
    names = []
    for i, a in enumerate(args):
        if i in static:
            continue
        base = params[i] if i < len(params) else f"arg{i}"
        k = len(pytree.flatten(a)[0])
        names += [base] if k == 1 else [f"{base}_{j}" for j in range(k)]
    n_args = len(argument_leaves(module))
    names = (names + [None] * n_args)[:n_args]
    n_results = len(module.entry.root.shape.leaves())
    return Program(module, _given(arg_names, names, "arg_names"),
                   _given(result_names, [None] * n_results, "result_names"),
                   source=f"function {jitted.__name__}")


def embed_constants(module: Module, consts: list) -> None:
    """jit passes large captured constants as trailing parameters (frontend/lowering.py); an
    object carries them in its read-only data instead (the weights of a model)."""
    if not consts:
        return
    entry = module.entry
    first = len(entry.parameters) - len(consts)
    for p, value in zip(entry.parameters[first:], consts):
        arr = np.array(value, dtype=p.shape.dtype, copy=True)
        c = entry.add_instruction(Instruction("constant", p.shape, literal=arr),
                                  name=f"constant_{p.name}")
        p.replace_all_uses_with(c)
        entry.instructions.remove(p)
        p.parent = None
        module.release_name(p.name)
    del entry.parameters[first:]
