"""Ahead-of-time compilation, as tfcompile: a program becomes one object file and a header,
linked into a C or C++ program that runs it with no Python, NumPy or BLAS.

    import xlapy.aot
    c = xlapy.aot.compile(step, np.zeros((1, 784), np.float32), cpp_class="mnist::Model",
                          target_triple="aarch64-unknown-linux-gnu")
    c.write(header="model.h", object="model.o")
    # g++ main.cc model.o -lpthread -lm

`source` is an HLO module (text, or a path ending in .hlo / .txt), a function (jitted or
not) with example arguments, or a compat.v1 Graph with `config` (a tf2xla Config: text,
path or parsed) and `session` (for the values of variables that become constants). The
command line is `python -m xlapy aot` (cli.py) with tfcompile's flag names.

Modules: targets.py (triple, CPU, features), sources.py and graph.py (the inputs), driver.py
(the object), runtime_ir.py (its C entry and thread switch), header.py (C API and C++
class), config.py (tf2xla text format), elf.py (sizes and symbols), toolchain.py (building
and running C/C++ programs: tests, examples, benchmarks).
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass

from xlapy.aot import driver, graph as graph_mod, header as header_mod, sources, targets
from xlapy.aot.config import Config, parse_config
from xlapy.errors import AotError

DEFAULT_MAX_THREADS = 4


@dataclass
class Compiled:
    """One compiled program: object code, header, and what they were made from."""
    object: bytes
    header: str
    signature: header_mod.Signature
    target: targets.AotTarget
    code: driver.ObjectCode
    program: sources.Program

    @property
    def entry_point(self) -> str:
        return self.signature.entry_point

    @property
    def libraries(self) -> list:
        """Linker flags the object needs beyond the C library (-lpthread, -lm)."""
        return list(self.code.libraries)

    def sizes(self) -> dict:
        """Bytes of code and data: text, rodata, data, bss (the ELF sections)."""
        return self.code.info.sizes()

    def metadata_object(self) -> bytes:
        """An object defining `const char ENTRY_signature[]` and `ENTRY_hlo[]`: the
        program's signature and its optimized HLO text (tfcompile's --out_metadata_object
        holds the program shape)."""
        return driver.metadata_object(self.signature.entry_point,
                                      self.signature.logical_signature(),
                                      self.code.optimized.to_string(), self.target)

    def write(self, header=None, object=None, metadata=None) -> None:
        for path, data in ((header, self.header.encode()), (object, self.object),
                           (metadata, self.metadata_object() if metadata else None)):
            if path is not None:
                pathlib.Path(path).write_bytes(data)


def _default_names(cpp_class: str | None, entry_point: str | None) -> tuple[str, str]:
    if cpp_class is None:
        cpp_class = "XlapyProgram"
    parts = cpp_class.split("::")
    if not all(sources.c_identifier(p) == p for p in parts):
        raise AotError(f"--cpp_class={cpp_class}: expected ns1::ns2::Name, each part a C++ "
                       "identifier")
    if entry_point is None:
        entry_point = "_".join(parts).lower()
    if sources.c_identifier(entry_point) != entry_point:
        raise AotError(f"--entry_point={entry_point}: not a C identifier")
    return cpp_class, entry_point


def load_program(source, example_args=(), config=None, session=None, arg_names=None,
                 result_names=None) -> sources.Program:
    """The Program (HLO module and names) of any source compile() takes."""
    if config is not None or type(source).__name__ == "Graph":
        if config is None:
            raise AotError("a compat.v1 graph needs a tf2xla config (config=...)")
        if isinstance(config, (str, pathlib.Path)):
            text = str(config)
            path = pathlib.Path(text) if "\n" not in text and "{" not in text else None
            config = parse_config(path.read_text() if path else text,
                                  str(path) if path else "<config>")
        if not isinstance(config, Config):
            raise AotError(f"config must be tf2xla text, a path or a Config, got "
                           f"{type(config).__name__}")
        return graph_mod.from_graph(source, config, session)
    if isinstance(source, (str, pathlib.Path)):
        if example_args:
            raise AotError("an HLO module takes no example arguments")
        return sources.from_hlo(source, arg_names, result_names)
    if callable(source):
        return sources.from_function(source, example_args, arg_names, result_names)
    raise AotError(f"cannot compile a {type(source).__name__}: give HLO text or a path, a "
                   "function with example arguments, or a compat.v1 graph with a config")


def compile(source, *example_args, config=None, session=None, cpp_class: str | None = None,
            entry_point: str | None = None, target_triple: str | None = None,
            target_cpu: str | None = None, target_features: str | None = None,
            max_threads: int = DEFAULT_MAX_THREADS, arg_names=None,
            result_names=None) -> Compiled:
    """Compile `source` ahead of time (see the module docstring). cpp_class names the C++
    class (ns1::ns2::Name, default XlapyProgram); entry_point the C function (default: the
    class path in lower case joined by '_'); target_* the machine (targets.py: the host's
    triple and `generic` CPU by default); max_threads the most threads the object can run
    on (1: no thread pool in it at all); arg_names / result_names override the names of
    the named accessors."""
    if not isinstance(max_threads, int) or isinstance(max_threads, bool) or max_threads < 1:
        raise AotError(f"max_threads must be a positive integer, got {max_threads!r}")
    cpp_class, entry_point = _default_names(cpp_class, entry_point)
    target = targets.resolve(target_triple, target_cpu, target_features)
    program = load_program(source, example_args, config, session, arg_names, result_names)
    code = driver.build_object(program.module, target, entry_point, max_threads)
    module = program.module
    args = [header_mod.Buffer(s, n) for s, n in zip(sources.argument_leaves(module),
                                                    program.arg_names)]
    results = [header_mod.Buffer(s, n) for s, n in zip(module.entry.root.shape.leaves(),
                                                       program.result_names)]
    variables = [header_mod.Variable(*v) for v in program.variables]
    threads = max_threads > 1 and target.threads_supported
    sig = header_mod.Signature(
        entry_point, cpp_class, args, results, code.temp_size, variables,
        [f"Compiled from: {program.source}",
         f"Target: {target.describe()}",
         f"Threads: {f'up to {max_threads}' if threads else 'one (no pool)'}"
         + (f"; link with {' '.join(code.libraries)}" if code.libraries else "")])
    return Compiled(code.data, header_mod.write_header(sig), sig, target, code, program)
