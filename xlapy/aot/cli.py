"""python -m xlapy aot: compile a program ahead of time into an object file and a header,
as tfcompile does (its flag names where it has one).

  python -m xlapy aot --hlo model.hlo --cpp_class ns::Model \\
      --out_header model.h --out_function_object model.o [--target_triple ...]
  python -m xlapy aot --function model.py:step --args f32[1,784] f32[784,10] ...
  python -m xlapy aot --graph model.py:build --config model.config.pbtxt ...

Input (one of):
  --hlo FILE            HLO text (as JAX or XLA dump it)
  --function FILE:NAME  a function in a Python file (jitted or not), compiled for the
                        argument shapes given by --args (HLO shapes: f32[1,784] s32[] ...)
  --graph FILE:NAME     a compat.v1 Graph in a Python file (NAME is a Graph, or a function
                        returning a Graph or (Graph, Session)); --config is the tf2xla
                        Config (text format) naming feeds, fetches and variables; the
                        session, when given, supplies the values of constant variables
Then link:  g++ main.cc model.o -lpthread -lm   (the header says which libraries it needs)
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import sys

from xlapy.errors import AotError


def add_arguments(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--hlo", metavar="FILE", help="HLO text file")
    src.add_argument("--function", metavar="FILE:NAME",
                     help="a Python function, compiled for --args")
    src.add_argument("--graph", metavar="FILE:NAME", help="a compat.v1 graph (with --config)")
    p.add_argument("--args", nargs="*", default=[], metavar="SHAPE",
                   help="argument shapes of --function, e.g. f32[1,784]")
    p.add_argument("--config", metavar="FILE", help="tf2xla Config (text format) for --graph")
    p.add_argument("--cpp_class", default=None,
                   help="the generated C++ class, with namespaces: ns1::ns2::Name")
    p.add_argument("--entry_point", default=None,
                   help="the C function that runs the program (default: the class path in "
                        "lower case, '_'-joined)")
    p.add_argument("--target_triple", default=None,
                   help="LLVM target triple: x86_64-pc-linux-gnu, aarch64-unknown-linux-gnu "
                        "(default: this host's)")
    p.add_argument("--target_cpu", default=None,
                   help="LLVM CPU name (default generic; 'native' is this host's CPU)")
    p.add_argument("--target_features", default=None,
                   help="LLVM features, e.g. +avx2,+fma or +neon")
    p.add_argument("--max_threads", type=int, default=None,
                   help="most threads the object can run on (default 4; 1: no thread pool); "
                        "it starts single-threaded, ENTRY_set_num_threads(n) switches")
    p.add_argument("--out_header", metavar="FILE", help="write the C/C++ header here")
    p.add_argument("--out_function_object", "--out_object", dest="out_object", metavar="FILE",
                   help="write the object file here")
    p.add_argument("--out_metadata_object", metavar="FILE",
                   help="write an object with the program's signature and HLO text here")
    p.add_argument("--sizes", action="store_true",
                   help="print the object's code and data sizes per part")


def _load(spec: str, flag: str):
    """FILE:NAME -> the attribute NAME of the Python file FILE."""
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise AotError(f"{flag} {spec}: expected FILE.py:NAME")
    file = pathlib.Path(path)
    if not file.is_file():
        raise AotError(f"{flag} {spec}: no file {file}")
    module_spec = importlib.util.spec_from_file_location(f"xlapy_aot_user_{file.stem}", file)
    module = importlib.util.module_from_spec(module_spec)
    sys.path.insert(0, str(file.parent.resolve()))
    try:
        module_spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    if not hasattr(module, name):
        raise AotError(f"{flag} {spec}: {file} defines no '{name}'")
    return getattr(module, name)


def run(args) -> int:
    import xlapy.aot as aot
    kw = dict(cpp_class=args.cpp_class, entry_point=args.entry_point,
              target_triple=args.target_triple, target_cpu=args.target_cpu,
              target_features=args.target_features)
    if args.max_threads is not None:
        kw["max_threads"] = args.max_threads
    if (args.args and not args.function) or (args.config and not args.graph):
        raise AotError("--args goes with --function, --config with --graph")
    if args.hlo:
        compiled = aot.compile(pathlib.Path(args.hlo), **kw)
    elif args.function:
        compiled = aot.compile(_load(args.function, "--function"), *args.args, **kw)
    else:
        if not args.config:
            raise AotError("--graph needs --config (the tf2xla Config naming feeds and "
                           "fetches)")
        made = _load(args.graph, "--graph")
        if callable(made) and type(made).__name__ != "Graph":
            made = made()
        graph, session = made if isinstance(made, tuple) else (made, None)
        compiled = aot.compile(graph, config=pathlib.Path(args.config), session=session, **kw)
    compiled.write(header=args.out_header, object=args.out_object,
                   metadata=args.out_metadata_object)
    if args.sizes or not (args.out_header or args.out_object or args.out_metadata_object):
        print(report(compiled))
    return 0


def report(compiled) -> str:
    """The object's sizes: sections, and code per part."""
    s = compiled.sizes()
    lines = [f"{compiled.signature.cpp_class} ({compiled.entry_point}) for "
             f"{compiled.target.describe()}",
             f"  text {s['text']}  rodata {s['rodata']}  data {s['data']}  bss {s['bss']} "
             f"bytes; temp {compiled.signature.temp_size} bytes at run time"]
    for part, size in sorted(compiled.code.part_sizes().items(), key=lambda kv: -kv[1]):
        lines.append(f"  code {part:10s} {size:8d}")
    lines.append(f"  link with: {' '.join(compiled.libraries) or '(nothing else)'}")
    return "\n".join(lines)
