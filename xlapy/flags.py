"""Debug and tuning flags, read from the XLAPY_FLAGS environment variable with XLA's names.

  XLAPY_FLAGS="--xla_dump_to=/tmp/dump --xla_dump_hlo_as_text"

Unknown flags raise an XlapyError naming them (a typo should not be silently ignored).
`flags()` re-reads the environment each time it is called, so tests can set it.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field

from xlapy.errors import XlapyError


@dataclass
class Flags:
    xla_dump_to: str | None = None
    xla_dump_hlo_as_text: bool = False
    xla_dump_hlo_as_dot: bool = False
    xla_dump_hlo_as_html: bool = False
    xla_dump_hlo_pass_re: str | None = None
    # dumps print literals of more than printer.LARGE_CONSTANT elements as {...}, as XLA's
    # (a model's weights printed value by value cost a minute per dump)
    xla_dump_large_constants: bool = False
    xla_disable_hlo_passes: list[str] = field(default_factory=list)
    xla_generate_hlo_graph: str | None = None
    xla_hlo_profile: bool = False
    xla_cpu_parallel_codegen_split_count: int = 0  # 0: one part per core, at most 8
    # denormals flushed to zero while compiled cpu code runs, as XLA's CPU runtime does
    # (backends/llvm/fpmode.py); false: IEEE gradual underflow, as NumPy. xlapy's flag,
    # named after XLA's --xla_gpu_ftz
    xla_cpu_ftz: bool = True
    # 3x3 and 5x5 stride-1 convolutions by Winograd's F(2x2, 3x3) and F(1x2, 5x5)
    # (passes/winograd_plan.py); false: the im2col gemm path. xlapy's flag
    xla_cpu_winograd: bool = True


_BOOL = {"true": True, "1": True, "false": False, "0": False}


def parse_flags(text: str) -> Flags:
    f = Flags()
    for tok in shlex.split(text or ""):
        if not tok.startswith("--"):
            raise XlapyError(f"XLAPY_FLAGS: expected --name[=value], got '{tok}'")
        name, _, value = tok[2:].partition("=")
        if not hasattr(f, name):
            known = ", ".join("--" + k for k in Flags.__dataclass_fields__)
            raise XlapyError(f"XLAPY_FLAGS: unknown flag --{name}; known flags: {known}")
        current = getattr(f, name)
        if isinstance(current, bool):
            if value and value.lower() not in _BOOL:
                raise XlapyError(f"XLAPY_FLAGS: --{name} takes true or false, got '{value}'")
            setattr(f, name, _BOOL.get(value.lower(), True) if value else True)
        elif isinstance(current, int):
            try:
                setattr(f, name, int(value))
            except ValueError:
                raise XlapyError(f"XLAPY_FLAGS: --{name} takes an integer, got '{value}'") \
                    from None
        elif isinstance(current, list):
            setattr(f, name, [v for v in value.split(",") if v])
        else:
            setattr(f, name, value)
    return f


def flags() -> Flags:
    return parse_flags(os.environ.get("XLAPY_FLAGS", ""))
