"""`python -m xlapy run-hlo`: run an HLO module on a backend, like XLA's run_hlo_module.

  python -m xlapy run-hlo FILE [--input IN.npz | --random-inputs [--seed N]]
                               [--output OUT.npz] [--backend cpu|gpu|gpu-emulator|interpreter]
                               [--compare BACKEND] [--rtol R --atol A]

Inputs are the arrays of IN.npz in order (arr_0, arr_1, ... as np.savez writes them), one
per entry parameter (a tuple-shaped parameter takes its leaves in order). Outputs are the
leaves of the result in order. NumPy's npz format cannot hold bfloat16, so bf16 arrays
travel as their uint16 bit patterns both ways (a uint16 input for a bf16 parameter is
reinterpreted; bf16 outputs are written as uint16). With --compare, the module also runs on
BACKEND and the per-output max error is reported; a mismatch exits with status 1.

Under mpirun (`mpirun -n N python -m xlapy run-hlo F.hlo ...`) process r runs as replica r
of N, on the cpu backend by default (its collectives call MPI on the compiled program's
buffers, backends/cpu/runtime/collectives.py) or with --backend interpreter on the reference
interpreter (backends/interpreter/mpi.py); each process takes the same inputs (`{rank}` in
the --input path gives each its own) and writes OUT.npz with `{rank}` replaced (or `.rankR`
added). A failing process aborts the whole job with its error.
"""

from __future__ import annotations

import argparse
import re
import time
import zipfile
import zlib

import numpy as np

from xlapy.backends.base import flatten, get_platform
from xlapy.backends.interpreter import mpi
from xlapy.errors import XlapyError
from xlapy.tools.compare import compare_outputs, random_inputs


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="HLO text file (or StableHLO: .mlir, or MLIR content)")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--input", help="npz file with one array per parameter (arr_0, arr_1, ...)")
    src.add_argument("--random-inputs", action="store_true",
                     help="generate deterministic random inputs")
    p.add_argument("--seed", type=int, default=0, help="seed for --random-inputs")
    p.add_argument("--output", help="write the result leaves to this npz file")
    p.add_argument("--backend", default=None, help="backend to run on (default: cpu, if built)")
    p.add_argument("--compare", metavar="BACKEND", help="also run on BACKEND and compare")
    p.add_argument("--rtol", type=float, default=None, help="relative tolerance for --compare")
    p.add_argument("--atol", type=float, default=None, help="absolute tolerance for --compare")
    p.add_argument("--quiet", action="store_true", help="print only errors and the comparison")


def _load_inputs(path: str) -> list[np.ndarray]:
    try:
        with open(path, "rb") as f:
            magic = f.read(6)
        if not (magic.startswith(b"PK") or magic == b"\x93NUMPY"):
            raise ValueError("not an npz (zip) or npy file")
        loaded = np.load(path, allow_pickle=False)
        if isinstance(loaded, np.ndarray):  # a .npy file: one input
            return [loaded]
        with loaded as z:
            keys = list(z.keys())
            def order(k):
                m = re.fullmatch(r"arr_(\d+)", k)
                return (0, int(m.group(1))) if m else (1, keys.index(k))
            arrays = []
            for k in sorted(keys, key=order):
                a = z[k]
                if not isinstance(a, np.ndarray):
                    raise ValueError(f"member {k} is not a .npy array")
                arrays.append(a)
            return arrays
    except MemoryError:
        raise SystemExit(f"xlapy run-hlo: error: cannot read inputs from {path}: its arrays "
                         "do not fit in memory") from None
    # (what a file that is not a well-formed npz raises: zip, zlib, npy header errors)
    except (OSError, ValueError, EOFError, KeyError, NotImplementedError,
            zipfile.BadZipFile, zlib.error) as e:
        raise SystemExit(f"xlapy run-hlo: error: cannot read inputs from {path}: "
                         f"{str(e) or type(e).__name__}") from None


def _group_for_parameters(arrays: list, shapes) -> list:
    """Regroup flat npz arrays into one value per parameter (tuple params take leaves)."""
    from xlapy.errors import InputError
    leaf_shapes = [leaf for s in shapes for leaf in s.leaves()]
    if len(arrays) != len(leaf_shapes):
        raise InputError(f"the input file has {len(arrays)} arrays, the module's parameters "
                         f"take {len(leaf_shapes)}")
    arrays = [a.view(s.dtype) if s.element_type.name == "bf16" and a.dtype == np.uint16 else a
              for a, s in zip(arrays, leaf_shapes)]  # npz stores bf16 as its bits
    it = iter(arrays)

    def take(shape):
        if shape.is_tuple:
            return tuple(take(s) for s in shape.tuple_shapes)
        return next(it)

    return [take(s) for s in shapes]


def _describe(arr) -> str:
    a = np.asarray(arr)
    flat = a.reshape(-1)
    head = ", ".join(str(x) for x in flat[:6]) + (", ..." if flat.size > 6 else "")
    return f"{a.dtype}{list(a.shape)} [{head}]"


def run(args) -> int:
    if not mpi.launched_by_mpi():
        return _run(args, None)
    comm = mpi.world()
    try:
        return _run(args, comm)
    except (XlapyError, SystemExit) as e:
        if comm.size == 1:
            raise
        mpi.abort(comm, str(e))
        return 1


def _by_rank(path: str, comm) -> str:
    if comm is None:
        return path
    if "{rank}" in path:
        return path.replace("{rank}", str(comm.rank))
    stem = path[:-4] if path.endswith(".npz") else path
    return f"{stem}.rank{comm.rank}.npz"


def _run(args, comm) -> int:
    from xlapy.hlo import parse_module_file as parse_file
    try:
        module = parse_file(args.file)
    except OSError as e:
        raise SystemExit(f"xlapy run-hlo: error: cannot read {args.file}: {e.strerror}") from e
    shapes = [p.shape for p in module.entry.parameters]
    if args.input:
        inputs = _group_for_parameters(_load_inputs(_by_rank(args.input, comm)), shapes)
    elif args.random_inputs or not shapes:
        inputs = random_inputs(shapes, args.seed)
    else:
        raise SystemExit("xlapy run-hlo: error: the module takes parameters: give --input "
                         "IN.npz or --random-inputs")
    platform = get_platform(args.backend)
    if comm is not None and platform.name not in ("interpreter", "cpu"):
        raise SystemExit(f"xlapy run-hlo: error: under mpirun the replicas run on the cpu "
                         f"backend or the interpreter (not {platform.name}): add --backend "
                         "cpu or --backend interpreter")
    t0 = time.perf_counter()
    exe = platform.compiler.compile(module)
    if comm is not None and platform.name == "interpreter":
        mpi.attach(exe.evaluator, comm)
    t1 = time.perf_counter()
    result = flatten(exe.run(*inputs))
    t2 = time.perf_counter()
    if not args.quiet:
        who = "" if comm is None else f"replica {comm.rank} of {comm.size}: "
        print(f"{who}{module.name} on {platform.name}: compile {1e3 * (t1 - t0):.1f} ms, "
              f"run {1e3 * (t2 - t1):.1f} ms")
        for i, r in enumerate(result):
            print(f"  output {i}: {_describe(r)}")
    if args.output:
        np.savez(_by_rank(args.output, comm),
                 *[r.view(np.uint16) if r.dtype.name == "bfloat16" else r for r in result])
    if args.compare:
        other = get_platform(args.compare)
        reference = flatten(other.compiler.compile(module).run(*inputs))
        reports = compare_outputs(reference, result, args.rtol, args.atol)
        print(f"compare {platform.name} against {other.name}:")
        for r in reports:
            print("  " + r.line())
        if not all(r.ok for r in reports):
            return 1
    return 0
