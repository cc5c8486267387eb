"""C and C++ compilers for the machines objects are generated for, and a way to run what
they build: the host's gcc/g++, and for AArch64 on another host Debian's cross compilers
under qemu-user. Tests, examples and benchmarks build real programs with these.

  tc = find("aarch64")              Toolchain, or raises AotError saying what is missing
  exe = tc.build(["main.cc"], ["model.o"], "main", libraries=["-lpthread"])
  out = tc.run([exe, "arg"])        subprocess.CompletedProcess (text)

The packages: gcc g++ (host), gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user
(AArch64); `make aot-toolchains` installs the missing ones on Debian.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
from dataclasses import dataclass, field

from xlapy.errors import AotError

HOST = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(),
                                                   platform.machine().lower())
PACKAGES = {"x86_64": "gcc g++", "aarch64": "gcc-aarch64-linux-gnu g++-aarch64-linux-gnu "
                                            "qemu-user"}
_CROSS = {"x86_64": "x86_64-linux-gnu-", "aarch64": "aarch64-linux-gnu-"}


@dataclass
class Toolchain:
    machine: str
    cc: str
    cxx: str
    runner: list = field(default_factory=list)   # e.g. qemu-aarch64 -L sysroot
    strip: str | None = None

    def stripped_size(self, exe) -> int | None:
        """Bytes of a stripped copy of the executable `exe` (None without strip)."""
        if self.strip is None:
            return None
        import os
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "stripped")
            done = subprocess.run([self.strip, "-o", out, str(exe)], capture_output=True)
            return os.path.getsize(out) if done.returncode == 0 else None

    def build(self, sources: list, objects: list, output, libraries=(), flags=(),
              cxx: bool | None = None) -> str:
        """Compile and link sources (.c or .cc) with objects into the executable `output`."""
        if cxx is None:
            cxx = any(str(s).endswith((".cc", ".cpp", ".cxx")) for s in sources)
        std = ["-std=c++11"] if cxx else ["-std=c99"]
        cmd = [self.cxx if cxx else self.cc, "-O2", *std, "-Wall", "-Werror", *flags,
               *map(str, sources), *map(str, objects), "-o", str(output), *libraries]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise AotError(f"{' '.join(cmd)} failed:\n{done.stderr.strip()}")
        return str(output)

    def run(self, argv: list, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
        return subprocess.run(self.runner + [str(a) for a in argv], capture_output=True,
                              text=True, timeout=timeout, **kw)


def find(machine: str) -> Toolchain:
    """The compilers (and runner) for programs of `machine` (x86_64 or aarch64)."""
    if machine == HOST:
        cc, cxx, runner = shutil.which("gcc"), shutil.which("g++"), []
        strip = shutil.which("strip")
    else:
        prefix = _CROSS.get(machine)
        if prefix is None:
            raise AotError(f"no toolchain known for {machine}")
        cc, cxx = shutil.which(prefix + "gcc"), shutil.which(prefix + "g++")
        strip = shutil.which(prefix + "strip")
        qemu = shutil.which(f"qemu-{machine}") or shutil.which(f"qemu-{machine}-static")
        runner = [qemu, "-L", f"/usr/{prefix[:-1]}"] if qemu else None
        if runner is None:
            raise AotError(f"qemu-{machine} not found (package qemu-user; `make "
                           "aot-toolchains` installs it)")
    if not cc or not cxx:
        raise AotError(f"no C/C++ compiler for {machine} (packages {PACKAGES[machine]}; `make "
                       "aot-toolchains` installs them)")
    return Toolchain(machine, cc, cxx, runner, strip)
