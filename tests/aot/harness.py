"""Building and running C programs around ahead-of-time objects, for the tests.

  outs = run_in_c(toolchain, [(compiled, inputs), ...], tmp_path)

writes each program's header and object, one C99 program that for each of them reads its
arguments from a file, runs it through the C API (with `threads` threads) and writes its
results, links it with the toolchain and runs it once (under qemu for AArch64). Returns
each program's results as NumPy arrays.
"""

from __future__ import annotations

import pathlib

import numpy as np

from xlapy.aot import toolchain

TRIPLES = {"x86_64": "x86_64-pc-linux-gnu", "aarch64": "aarch64-unknown-linux-gnu"}


def toolchain_or_skip(machine: str):
    import pytest
    from xlapy.errors import AotError
    try:
        return toolchain.find(machine)
    except AotError as e:
        pytest.skip(str(e))


def c_main(compiled: list, threads: int = 1) -> str:
    lines = ['#include <stdio.h>', '#include <stdlib.h>', '#include <stdint.h>']
    lines += [f'#include "{c.entry_point}.h"' for c in compiled]
    lines += ["static void* aligned(size_t n) {",
              "  char* p = malloc(n + 64);",
              "  return p ? (void*)(((uintptr_t)p + 63) & ~(uintptr_t)63) : NULL;",
              "}",
              "static FILE* open_in(const char* dir, const char* name, const char* mode) {",
              "  char path[4096];",
              "  snprintf(path, sizeof path, \"%s/%s\", dir, name);",
              "  return fopen(path, mode);",
              "}",
              "int main(int argc, char** argv) {",
              "  if (argc < 2) return 2;"]
    for c in compiled:
        e, M = c.entry_point, c.entry_point.upper()
        n_args, n_res = len(c.signature.args), len(c.signature.results)
        lines += ["  {",
                  f"    FILE* in = open_in(argv[1], \"{e}.in\", \"rb\");",
                  f"    FILE* out = open_in(argv[1], \"{e}.out\", \"wb\");",
                  "    if (!in || !out) return 3;",
                  f"    const void* args[{max(n_args, 1)}];",
                  f"    void* results[{max(n_res, 1)}];",
                  f"    {e}_set_num_threads({threads});"]
        for k in range(n_args):
            lines += [f"    void* a{k} = aligned({M}_ARG{k}_SIZE);",
                      f"    if (fread(a{k}, 1, {M}_ARG{k}_SIZE, in) != {M}_ARG{k}_SIZE) return 4;",
                      f"    args[{k}] = a{k};"]
        for k in range(n_res):
            lines.append(f"    results[{k}] = aligned({M}_RESULT{k}_SIZE);")
        lines.append(f"    {e}(args, results, {M}_TEMP_SIZE ? aligned({M}_TEMP_SIZE) : NULL);")
        for k in range(n_res):
            lines.append(f"    fwrite(results[{k}], 1, {M}_RESULT{k}_SIZE, out);")
        lines += ["    fclose(in);", "    fclose(out);", "  }"]
    lines += ["  return 0;", "}", ""]
    return "\n".join(lines)


def run_in_c(tc, programs: list, workdir: pathlib.Path, threads: int = 1) -> list:
    """[(Compiled, [input arrays])] -> [[result arrays]] computed by one C program."""
    workdir.mkdir(parents=True, exist_ok=True)
    compiled = [c for c, _ in programs]
    libs: list = []
    for c, inputs in programs:
        c.write(header=workdir / f"{c.entry_point}.h", object=workdir / f"{c.entry_point}.o")
        blob = b"".join(np.ascontiguousarray(a, dtype=b.shape.dtype).tobytes()
                        for a, b in zip(inputs, c.signature.args))
        (workdir / f"{c.entry_point}.in").write_bytes(blob)
        libs += [x for x in c.libraries if x not in libs]
    (workdir / "main.c").write_text(c_main(compiled, threads))
    exe = tc.build([workdir / "main.c"], [workdir / f"{c.entry_point}.o" for c in compiled],
                   workdir / "main", libraries=libs, flags=["-I", str(workdir)])
    done = tc.run([exe, workdir])
    assert done.returncode == 0, (done.returncode, done.stderr)
    outs = []
    for c in compiled:
        raw = (workdir / f"{c.entry_point}.out").read_bytes()
        arrays, off = [], 0
        for b in c.signature.results:
            n = b.size
            arrays.append(np.frombuffer(raw[off:off + n], b.shape.dtype).reshape(b.shape.dims))
            off += n
        assert off == len(raw)
        outs.append(arrays)
    return outs
