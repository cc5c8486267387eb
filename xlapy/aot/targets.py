"""The machine an ahead-of-time object is generated for: `--target_triple`, `--target_cpu`
and `--target_features` checked against LLVM's own tables, and what the emitters take from
them (backends/cpu/target.Emission: vector widths, self-contained code).

  t = resolve(triple, cpu, features)    AotTarget; AotError listing the valid values
  tm = t.target_machine()               LLVM TargetMachine for the object (PIC)

Triples: any LLVM knows whose machine is x86_64 or aarch64 (x86_64-pc-linux-gnu,
aarch64-unknown-linux-gnu, ...); the host's by default. CPU: `generic` by default, as
tfcompile (the object runs on every machine of that architecture), `native` for this host's
CPU and features (same architecture only), or a name from LLVM's list for the
architecture. The thread pool needs Linux (futex); on other systems the object runs
single-threaded.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import llvmlite.binding as llvm

from xlapy.backends.cpu import codegen
from xlapy.backends.cpu.target import (Emission, Target, llvm_tables, prefers_wide_vectors,
                                      widest_vector_bits)
from xlapy.errors import AotError

# machine -> the triple documented for it (others of the same machine work too)
SUPPORTED = {"x86_64": "x86_64-pc-linux-gnu", "aarch64": "aarch64-unknown-linux-gnu"}
_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}


@dataclass(frozen=True)
class AotTarget:
    target: Target          # triple, CPU, features as LLVM takes them
    machine: str            # x86_64 | aarch64
    vector_bits: int        # widest vector registers
    prefer_vector_width: int | None

    @property
    def threads_supported(self) -> bool:
        return "linux" in self.target.triple

    def emission(self) -> Emission:
        return Emission(self.target, self.vector_bits, self.prefer_vector_width)

    def target_machine(self):
        """Position-independent code with the default code model: the object links into
        executables (PIE by default on Debian) and shared libraries alike."""
        t = self.target
        return llvm.Target.from_triple(t.triple).create_target_machine(
            cpu=t.cpu, features=t.features, opt=3, reloc="pic", codemodel="default")

    def describe(self) -> str:
        return (f"{self.target.triple}, cpu {self.target.cpu}"
                + (f", features {self.target.features}" if self.target.features else ""))


@functools.lru_cache(maxsize=None)
def init_all() -> None:
    """Every LLVM target llvmlite carries (cross-compilation needs more than the host's)."""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    llvm.initialize_native_asmparser()


def host_triple() -> str:
    init_all()
    return llvm.get_process_triple()


def machine_of(triple: str) -> str:
    m = triple.split("-")[0].lower()
    return _ALIASES.get(m, m)


def _valid_triples() -> str:
    return ", ".join(SUPPORTED.values())


def resolve(triple: str | None = None, cpu: str | None = None,
            features: str | None = None) -> AotTarget:
    init_all()
    triple = (triple or host_triple()).strip()
    machine = machine_of(triple)
    if machine not in SUPPORTED:
        raise AotError(f"--target_triple={triple}: xlapy generates code for x86_64 and "
                       f"aarch64 only; valid triples: {_valid_triples()}")
    try:
        with codegen.llvm_lock():
            llvm.Target.from_triple(triple)
    except RuntimeError as e:
        raise AotError(f"--target_triple={triple}: LLVM does not know it ({e}); valid "
                       f"triples: {_valid_triples()}") from None
    cpu = (cpu or "generic").strip()
    features = (features or "").strip()
    if cpu == "native":
        host = host_triple()
        if machine_of(host) != machine:
            raise AotError(f"--target_cpu=native means this host's CPU "
                           f"({llvm.get_host_cpu_name()}, {machine_of(host)}), not a "
                           f"{machine} one; name a CPU for {triple}")
        cpu = llvm.get_host_cpu_name()
        host_features = llvm.get_host_cpu_features().flatten()
        features = ",".join(filter(None, [host_features, features]))
    else:
        cpus, known = _llvm_tables(triple)
        if cpu != "generic" and cpu not in cpus:
            raise AotError(f"--target_cpu={cpu} is not a CPU LLVM knows for {machine}; "
                           f"valid: generic, native, {', '.join(sorted(cpus))}")
        for f in filter(None, (x.strip() for x in features.split(","))):
            if f[0] not in "+-" or f[1:] not in known:
                raise AotError(f"--target_features: '{f}' is not '+name' or '-name' with a "
                               f"feature LLVM knows for {machine}; valid names: "
                               f"{', '.join(sorted(known))}")
    target = Target(triple, cpu, features)
    bits = _vector_bits(target)
    wide = prefers_wide_vectors(cpu, bits >= 512) if machine == "x86_64" else False
    return AotTarget(target, machine, bits, 512 if wide else None)


def _llvm_tables(triple: str) -> tuple[frozenset, frozenset]:
    try:
        return llvm_tables(triple)
    except RuntimeError as e:
        raise AotError(str(e)) from None


@functools.lru_cache(maxsize=None)
def _vector_bits(target: Target) -> int:
    """The target's widest vector registers (target.widest_vector_bits)."""
    t = AotTarget(target, machine_of(target.triple), 0, None)
    with codegen.llvm_lock():
        return widest_vector_bits(t.target_machine(), target.triple)
