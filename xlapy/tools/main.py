"""`python -m xlapy COMMAND ...`: the command line.

Commands:
  run-hlo   run an HLO module on a backend (like XLA's run_hlo_module)
  opt       run HLO passes and print the module (like XLA's hlo-opt)
  aot       compile ahead of time into an object file and a C/C++ header (like tfcompile)

Errors the user can cause (bad files, wrong inputs) print one line and exit non-zero;
set XLAPY_TRACEBACK=1 to see the Python traceback as well.
"""

from __future__ import annotations

import argparse
import os
import sys

from xlapy.errors import XlapyError


def _parser() -> argparse.ArgumentParser:
    from xlapy.tools import opt, run_hlo
    p = argparse.ArgumentParser(prog="python -m xlapy", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run-hlo", help="run an HLO module", description=run_hlo.__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    run_hlo.add_arguments(r)
    r.set_defaults(func=run_hlo.run)
    o = sub.add_parser("opt", help="run HLO passes and print the result", description=opt.__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    opt.add_arguments(o)
    o.set_defaults(func=opt.run)
    from xlapy.aot import cli as aot_cli
    a = sub.add_parser("aot", help="compile ahead of time (object file + header)",
                       description=aot_cli.__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    aot_cli.add_arguments(a)
    a.set_defaults(func=aot_cli.run)
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except XlapyError as e:
        if os.environ.get("XLAPY_TRACEBACK"):
            raise
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"xlapy {args.command}: {first}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
