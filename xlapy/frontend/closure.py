"""closure_convert (jax.closure_convert): a function's closed-over values made explicit.

    converted, consts = closure_convert(fun, *example_args)
    converted(*args, *consts) == fun(*args)

fun is traced once on the shapes and dtypes of example_args; the values it captured (the
constants of its graph: traced values of an enclosing jit or grad, and arrays) are
returned, and `converted` evaluates the traced graph with them given as trailing
arguments. Functions with custom derivatives (custom_vjp) need this to differentiate
with respect to what a user function closes over: the constants become operands.
"""

from __future__ import annotations

from xlapy.frontend import pytree
from xlapy.frontend.core import get_aval
from xlapy.frontend.graph import eval_graph, make_graph


def closure_convert(fun, *example_args):
    """(converted, consts) with converted(*args, *consts) == fun(*args)."""
    flat, in_tree = pytree.flatten(example_args)
    avals = [get_aval(x) for x in flat]

    def flat_fun(*leaves):
        return fun(*pytree.unflatten(in_tree, list(leaves)))

    graph, consts, out_tree = make_graph(flat_fun, avals)
    n = len(consts)

    def converted(*args):
        args, cs = args[:len(args) - n], args[len(args) - n:]
        leaves, tree = pytree.flatten(tuple(args))
        if tree != in_tree:
            from xlapy.errors import XlapyError
            raise XlapyError(f"closure_convert: the converted function of "
                             f"{getattr(fun, '__name__', 'fun')} expects arguments shaped "
                             f"as {in_tree}, got {tree}")
        return pytree.unflatten(out_tree, eval_graph(graph, list(cs), leaves))

    return converted, list(consts)
