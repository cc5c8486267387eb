"""TF_XLA_FLAGS, the environment variable TensorFlow read its XLA options from.

    TF_XLA_FLAGS="--tf_xla_auto_jit=2 --tf_xla_clustering_debug --xla_generate_hlo_graph=.*"

  --tf_xla_auto_jit=N          -1 off, 0 use the session's global_jit_level, 1/2 on (also
                               "single-gpu(N)", as TF accepted)
  --tf_xla_min_cluster_size=N  auto-clustering drops clusters with fewer ops (default 4, TF's)
  --tf_xla_max_cluster_size=N  never grow a cluster beyond N ops
  --tf_xla_clustering_debug    log the cluster summary of every new execution plan
  --tf_xla_cpu_global_jit      accepted (auto-jit always applies to this CPU runtime)
  --tf_xla_enable_lazy_compilation=B
                               on (the default, as TF's): an auto-clustered cluster runs its
                               first execution of a signature on the executor and compiles
                               on the second (LAZY_THRESHOLD), so a cluster run only once
                               (an evaluation at the end) is never compiled
  --tf_xla_strict              xlapy: raise instead of leaving out an op that cannot compile
                               or falling back when a cluster fails to compile
  --xla_*                      passed to the compiler as XLAPY_FLAGS (dumps: --xla_dump_to,
                               --xla_generate_hlo_graph=REGEX, ...)
Unknown --tf_xla_* flags raise InvalidArgumentError naming the known ones.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field

from xlapy.compat.v1.errors import InvalidArgumentError


@dataclass(frozen=True)
class TfXlaFlags:
    auto_jit: int = 0
    min_cluster_size: int = 4
    max_cluster_size: int = 1 << 30
    clustering_debug: bool = False
    cpu_global_jit: bool = False
    strict: bool = False
    lazy_compilation: bool | None = None   # None: LAZY_DEFAULT
    xla_flags: tuple = field(default_factory=tuple)


_BOOL = {"": True, "1": True, "true": True, "0": False, "false": False}
_NAMES = {"tf_xla_auto_jit": "auto_jit", "tf_xla_min_cluster_size": "min_cluster_size",
          "tf_xla_max_cluster_size": "max_cluster_size",
          "tf_xla_clustering_debug": "clustering_debug",
          "tf_xla_cpu_global_jit": "cpu_global_jit", "tf_xla_strict": "strict",
          "tf_xla_enable_lazy_compilation": "lazy_compilation"}
_BOOLEANS = ("clustering_debug", "cpu_global_jit", "strict", "lazy_compilation")

# Lazy compilation (TF's DeviceCompilationProfiler in lazy mode): a cluster compiles a
# signature once it has been asked to run it LAZY_THRESHOLD times; before, its ops run on
# the executor. LAZY_DEFAULT applies when TF_XLA_FLAGS does not say (tests/compat turns
# it off, so that a test's first run checks the compiled code).
LAZY_THRESHOLD = 2
LAZY_DEFAULT = True


def lazy_compilation(flags: TfXlaFlags) -> bool:
    return LAZY_DEFAULT if flags.lazy_compilation is None else flags.lazy_compilation


def parse(text: str) -> TfXlaFlags:
    values: dict = {}
    passthrough = []
    for tok in shlex.split(text or ""):
        if not tok.startswith("--"):
            raise InvalidArgumentError(f"TF_XLA_FLAGS: expected --name[=value], got '{tok}'")
        name, eq, value = tok[2:].partition("=")
        if name.startswith("xla_"):
            passthrough.append(tok)
            continue
        if name not in _NAMES:
            raise InvalidArgumentError(f"TF_XLA_FLAGS: unknown flag --{name}; known: "
                                       f"{', '.join('--' + n for n in _NAMES)} and --xla_* "
                                       "(passed to the compiler)")
        key = _NAMES[name]
        if key in _BOOLEANS:
            if value.lower() not in _BOOL:
                raise InvalidArgumentError(f"TF_XLA_FLAGS: --{name} takes true or false, got "
                                           f"'{value}'")
            values[key] = _BOOL[value.lower()]
        else:
            m = re.fullmatch(r"(?:single-gpu\()?(-?\d+)\)?", value)
            if not m:
                raise InvalidArgumentError(f"TF_XLA_FLAGS: --{name} takes an integer, got "
                                           f"'{value}'")
            values[key] = int(m.group(1))
    return TfXlaFlags(**values, xla_flags=tuple(passthrough))


_cache: dict = {}


def tf_xla_flags() -> TfXlaFlags:
    """The flags in the environment now (parsed once per distinct value)."""
    text = os.environ.get("TF_XLA_FLAGS", "")
    f = _cache.get(text)
    if f is None:
        f = _cache[text] = parse(text)
    return f
