"""Profiling options: the option dict of ProfileOptionBuilder checked and turned into an
Options object, its printout (the report's "Options" block), and the "Doc:" lines that
explain the view and the selected columns.

The option dict's keys and their defaults when missing are TF's (max_depth 10, the regex
lists empty, select empty, output 'stdout'). Values TF would ignore or only complain about
on stderr (an unknown select or order_by attribute, a malformed output) raise
InvalidArgumentError here."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from xlapy.compat.v1.errors import InvalidArgumentError

ROOT = "_TFProfRoot"  # the name of every view's root node
SCOPE_PARENT = "_TFScopeParent"  # the op type of a name scope that is no op itself

ORDER_BY = ("name", "bytes", "peak_bytes", "residual_bytes", "output_bytes", "micros",
            "accelerator_micros", "cpu_micros", "params", "float_ops", "occurrence")
SELECTABLE = ("bytes", "micros", "params", "float_ops", "tensor_value", "device", "op_types",
              "occurrence", "input_shapes", "accelerator_micros", "cpu_micros", "peak_bytes",
              "residual_bytes", "output_bytes")
COMMANDS = ("scope", "graph", "code", "op")
OUTPUT_TYPES = ("timeline", "stdout", "file", "pprof", "none")
_INT_OPTIONS = ("max_depth", "min_bytes", "min_peak_bytes", "min_residual_bytes",
                "min_output_bytes", "min_micros", "min_accelerator_micros", "min_cpu_micros",
                "min_params", "min_float_ops", "min_occurrence", "step")
_LIST_OPTIONS = ("account_type_regexes", "start_name_regexes", "trim_name_regexes",
                 "show_name_regexes", "hide_name_regexes")


@dataclass
class Options:
    max_depth: int = 10
    min_bytes: int = 0
    min_peak_bytes: int = 0
    min_residual_bytes: int = 0
    min_output_bytes: int = 0
    min_micros: int = 0
    min_accelerator_micros: int = 0
    min_cpu_micros: int = 0
    min_params: int = 0
    min_float_ops: int = 0
    min_occurrence: int = 0
    step: int = -1
    order_by: str = "name"
    account_type_regexes: list = field(default_factory=list)
    start_name_regexes: list = field(default_factory=list)
    trim_name_regexes: list = field(default_factory=list)
    show_name_regexes: list = field(default_factory=list)
    hide_name_regexes: list = field(default_factory=list)
    account_displayed_op_only: bool = False
    select: frozenset = frozenset()
    output_type: str = "stdout"
    output_options: dict = field(default_factory=dict)

    def to_string(self) -> str:
        """The options as the report prints them, one "-name value" line each."""
        lines = [f"{'-' + k:<28}{getattr(self, k)}" for k in _INT_OPTIONS]
        lines.append(f"{'-order_by':<28}{self.order_by}")
        lines += [f"{'-' + k:<28}{','.join(getattr(self, k))}" for k in _LIST_OPTIONS]
        lines.append(f"{'-account_displayed_op_only':<28}"
                     f"{'true' if self.account_displayed_op_only else 'false'}")
        lines.append(f"{'-select':<28}{','.join(sorted(self.select))}")
        kv = ",".join(f"{k}={v}" for k, v in sorted(self.output_options.items()))
        lines.append(f"{'-output':<28}{self.output_type}:{kv}")
        return "\n".join(lines) + "\n"


def _parse_output(text: str):
    """'stdout', 'none', 'file:outfile=PATH', 'timeline:outfile=PATH', 'pprof:outfile=PATH'
    -> (output type, {key: value})."""
    if not text:
        return "stdout", {}
    kind, sep, rest = text.partition(":")
    if kind not in OUTPUT_TYPES:
        raise InvalidArgumentError(f"Unknown output type: {kind!r} in output option "
                                   f"{text!r}; valid types: {', '.join(OUTPUT_TYPES)}")
    opts = {}
    for item in (s for s in rest.split(",") if s):
        key, eq, value = item.partition("=")
        if not eq or not key or not value:
            raise InvalidArgumentError(f"output option {text!r}: expected "
                                       f"'{kind}:key=value,...', got {item!r}")
        if key != "outfile" or kind in ("stdout", "none"):
            raise InvalidArgumentError(f"Unrecognized output option {key!r} for output type "
                                       f"{kind!r}")
        opts[key] = value
    if kind in ("timeline", "file", "pprof") and "outfile" not in opts:
        raise InvalidArgumentError(f"output type {kind!r} needs an output file: "
                                   f"'{kind}:outfile=PATH'")
    return kind, opts


def _check_regexes(name: str, values) -> list:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise InvalidArgumentError(f"option {name} must be a list of regular expressions, "
                                   f"got {values!r}")
    out = []
    for v in values:
        if not isinstance(v, str):
            raise InvalidArgumentError(f"option {name}: {v!r} is not a string")
        try:
            re.compile(v)
        except re.error as e:
            raise InvalidArgumentError(f"option {name}: bad regular expression {v!r}: {e}") \
                from None
        out.append(v)
    return out


def build_options(options) -> Options:
    """The Options of an option dict (ProfileOptionBuilder.build() or a pre-built one)."""
    if not isinstance(options, dict):
        raise TypeError(f"profiler options must be a dict (e.g. ProfileOptionBuilder"
                        f".float_operation()), got {type(options).__name__}")
    o = Options()
    for k in _INT_OPTIONS:
        if k in options:
            v = options[k]
            if isinstance(v, bool) or not hasattr(v, "__index__"):
                raise InvalidArgumentError(f"option {k} must be an integer, got {v!r}")
            setattr(o, k, v.__index__())
    o.order_by = options.get("order_by", "name")
    if o.order_by not in ORDER_BY:
        raise InvalidArgumentError(f"Unknown order_by {o.order_by!r}; one of: "
                                   f"{', '.join(ORDER_BY)}")
    for k in _LIST_OPTIONS:
        setattr(o, k, _check_regexes(k, options.get(k, [])))
    o.account_displayed_op_only = bool(options.get("account_displayed_op_only", False))
    select = options.get("select", [])
    if isinstance(select, str):
        select = [select]
    for s in select:
        if s not in SELECTABLE:
            raise InvalidArgumentError(f"Unknown select attribute {s!r}; one of: "
                                       f"{', '.join(SELECTABLE)}")
    o.select = frozenset(select)
    o.output_type, o.output_options = _parse_output(options.get("output", "stdout"))
    dump = options.get("dump_to_file", "")
    if dump:  # TF's deprecated spelling of output='file:outfile=...'
        o.output_type, o.output_options = "file", {"outfile": dump}
    return o


# ---- the "Doc:" block ----------------------------------------------------------------------

_VIEW_DOC = {
    "scope": "scope: nodes are the graph's operations, nested by their name scopes (like "
             "directories).",
    "graph": "graph: nodes are the graph's operations, each under the operations that "
             "consume its outputs.",
    "code": "code: nodes are the lines of Python code that created the operations, nested "
            "by call stack.",
    "op": "op: nodes are operation types (MatMul, Conv2D, ...); each sums the graph nodes of "
          "its type.",
}
_SELECT_DOC = {
    "bytes": "requested bytes: memory the operation's outputs take (estimated from the "
             "static shapes of the ops that ran).",
    "micros": "total execution time: accelerator time plus cpu time.\n"
              "cpu execution time: from the start to the end of the op on the host.\n"
              "accelerator execution time: time of the op on an accelerator (GPU).",
    "params": "param: number of parameters (elements of the variables).",
    "float_ops": "flops: number of float operations, by the per-op-type rules of the "
                 "profiler (operations of other types count 0).",
    "tensor_value": "tensor_value: not supported.",
    "device": "device: the device the op ran on.",
    "op_types": "op_types: the op's types: kernel type, device and types from the op log.",
    "occurrence": "occurrence: how many times the nodes ran and are defined.",
    "input_shapes": "input shape: the shapes of the input tensors.",
    "accelerator_micros": "accelerator execution time: time of the op on an accelerator.",
    "cpu_micros": "cpu execution time: from the start to the end of the op on the host.",
    "peak_bytes": "peak bytes: the most memory the op holds at a time.",
    "residual_bytes": "residual bytes: memory not released when the op ends.",
    "output_bytes": "output bytes: size of the op's outputs.",
}


def query_doc(cmd: str, opts: Options) -> str:
    helps = [_SELECT_DOC[s] for s in sorted(opts.select)]
    return f"\nDoc:\n{_VIEW_DOC[cmd]}\n" + "\n".join(helps) + "\n\n"


_COMPILED: dict = {}


def full_match(regex: str, text: str) -> bool:
    r = _COMPILED.get(regex)
    if r is None:
        r = _COMPILED[regex] = re.compile(regex)
    return r.fullmatch(text) is not None


def matches_any(regexes, text: str) -> bool:
    return any(full_match(r, text) for r in regexes)
