"""`python -m xlapy opt`: run HLO passes on a module and print the result, like XLA's hlo-opt.

  python -m xlapy opt FILE [--passes a,b,... | --pipeline cpu] [--dump-dir DIR]
                           [--format text|dot|html|stablehlo] [--verify] [--list-passes]

--passes runs the named passes in order (see --list-passes); --pipeline cpu runs the cpu
backend's whole pipeline (the default). With --dump-dir, the module after every pass is
written there (module_NNNN.<name>.SSSS.<pipeline>.after_<pass>.txt). The module keeps its
op_name metadata through fusion, so a fused kernel can be traced back to the user's code.
FILE may be StableHLO (.mlir); --format stablehlo prints the result as StableHLO
(`--passes ""` converts without changing the module).
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from xlapy.errors import XlapyError


def pass_registry() -> dict:
    from xlapy.passes import (CSE, DCE, AlgebraicSimplifier, CallInliner, ConstantFolding,
                              FusionInliner, FusionPass, TupleSimplifier,
                              simplification_pipeline)
    return {
        "call-inliner": CallInliner, "fusion-inliner": lambda: FusionInliner(all_fusions=True),
        "algsimp": AlgebraicSimplifier, "constant_folding": ConstantFolding, "cse": CSE,
        "dce": DCE, "tuple-simplifier": TupleSimplifier, "simplification": simplification_pipeline,
        "fusion": FusionPass,
    }


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", help="HLO text file (or StableHLO: .mlir)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--passes", help="comma-separated pass names, run in order")
    g.add_argument("--pipeline", choices=["cpu"], help="a backend's whole pipeline (default cpu)")
    p.add_argument("--dump-dir", help="write the module after every pass into this directory")
    p.add_argument("--format", choices=["text", "dot", "html", "stablehlo"], default="text",
                   help="output format (default text)")
    p.add_argument("--verify", action="store_true", help="run the verifier after every pass")
    p.add_argument("--list-passes", action="store_true", help="list pass names and exit")


def run(args) -> int:
    from xlapy.hlo import parse_module_file as parse_file
    from xlapy.passes import Pipeline
    from xlapy.hlo.dump import render
    registry = pass_registry()
    if args.list_passes:
        print("\n".join(sorted(registry)) + "\n(--pipeline cpu: the cpu backend's pipeline)")
        return 0
    if not args.file:
        raise SystemExit("xlapy opt: error: give an HLO file (or --list-passes)")
    try:
        module = parse_file(args.file)
    except OSError as e:
        raise SystemExit(f"xlapy opt: error: cannot read {args.file}: {e.strerror}") from e
    observers = []
    if args.dump_dir:
        from xlapy.flags import Flags
        from xlapy.hlo.dump import Dumper
        dumper = Dumper(module, Flags(xla_dump_to=args.dump_dir, xla_dump_hlo_pass_re=".*"),
                        backend=args.pipeline or "opt")
        observers.extend(dumper.observers())
    if args.passes is not None:
        names = [n for n in args.passes.split(",") if n]
        unknown = [n for n in names if n not in registry]
        if unknown:
            raise XlapyError(f"unknown pass {', '.join(unknown)}; "
                             f"known: {', '.join(sorted(registry))}")
        Pipeline("opt", [registry[n]() for n in names], verify=args.verify or None,
                 observers=observers).run(module)
    else:
        from xlapy.backends.cpu.passes.pipeline import run_cpu_pipeline
        run_cpu_pipeline(module, observers=observers, verify=args.verify or None)
    if args.format == "stablehlo":
        from xlapy.hlo.stablehlo import to_stablehlo
        sys.stdout.write(to_stablehlo(module))
    else:
        sys.stdout.write(render(module, {"text": "txt"}.get(args.format, args.format)))
    if args.dump_dir:
        print(f"# per-pass dumps written to {pathlib.Path(args.dump_dir)}", file=sys.stderr)
    return 0
