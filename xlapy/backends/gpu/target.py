"""The GPU compiled for: NVIDIA's PTX through LLVM's NVPTX target.

  arch = parse_arch("sm_90")      # -> 90; InputError for anything else
  TRIPLE, DATA_LAYOUT             the module's target triple and data layout

The architecture comes from --gpu_arch (tools), the device present (runtime), or
XLAPY_GPU_ARCH, else sm_80 (the oldest architecture this backend targets: its PTX runs on
every newer GPU through the driver's JIT).
"""

from __future__ import annotations

import os
import re

from xlapy.errors import InputError

TRIPLE = "nvptx64-nvidia-cuda"
DATA_LAYOUT = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
DEFAULT_ARCH = 80
SUPPORTED_ARCHS = (80, 86, 87, 89, 90)
WARP_SIZE = 32


def parse_arch(arch: str | int | None) -> int:
    """sm_80 / sm_90 / 90 -> 90; None: XLAPY_GPU_ARCH or DEFAULT_ARCH."""
    if arch is None:
        arch = os.environ.get("XLAPY_GPU_ARCH") or DEFAULT_ARCH
    if isinstance(arch, int):
        n = arch
    else:
        m = re.fullmatch(r"(?:sm_|compute_)?(\d+)a?", str(arch).strip())
        if m is None:
            raise InputError(f"gpu architecture {arch!r} is not of the form sm_<NN> "
                             f"(supported: {', '.join(f'sm_{a}' for a in SUPPORTED_ARCHS)})")
        n = int(m.group(1))
    if n not in SUPPORTED_ARCHS:
        raise InputError(f"gpu architecture sm_{n} is not supported "
                         f"(supported: {', '.join(f'sm_{a}' for a in SUPPORTED_ARCHS)})")
    return n


def arch_name(arch: int) -> str:
    return f"sm_{arch}"
