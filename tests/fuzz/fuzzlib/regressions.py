"""Regression cases: a shrunk failing module and its inputs, kept forever in
tests/fuzz/regressions/ and run by tests/fuzz/test_regressions.py.

  NAME.hlo   the module; its first lines are `//` comments (XLA's and xlapy's parsers
             skip them): what failed and what was fixed
  NAME.npz   inputs arr_0, arr_1, ... (one per parameter) and XLA's outputs out_0, ...;
             bf16 arrays are stored as their uint16 bits (npz cannot hold bfloat16) and
             read back by the parameter's / output's type in the module

`reference` in the comments says where the outputs came from: "xla" (XLA:CPU's default
configuration) or "interpreter" (modules XLA cannot run, see xla.crashes_xla).
"""

from __future__ import annotations

import io
import pathlib
import re

import ml_dtypes
import numpy as np

from xlapy.backends.base import flatten
from xlapy.hlo.parser import parse

HERE = pathlib.Path(__file__).resolve().parents[1] / "regressions"
BF16 = np.dtype(ml_dtypes.bfloat16)


def _stored(a):
    a = np.asarray(a)
    return a.view(np.uint16) if a.dtype == BF16 else a


def _restore(a, dtype):
    return a.view(BF16) if dtype == BF16 and a.dtype == np.uint16 else a


def write(name: str, text: str, inputs, outputs, comment: str, reference: str = "xla",
          directory: pathlib.Path = HERE) -> pathlib.Path:
    directory.mkdir(parents=True, exist_ok=True)
    header = "".join(f"// {line}\n" for line in comment.strip().splitlines())
    header += f"// reference: {reference}\n"
    body = re.sub(r"^(//[^\n]*\n)*", "", text)
    path = directory / f"{name}.hlo"
    path.write_text(header + body if body.endswith("\n") else header + body + "\n")
    arrays = {f"arr_{i}": _stored(x) for i, x in enumerate(inputs)}
    arrays.update({f"out_{i}": _stored(y) for i, y in enumerate(outputs)})
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    (directory / f"{name}.npz").write_bytes(buf.getvalue())
    return path


def load(path: pathlib.Path):
    """(text, inputs, outputs, comment lines) of a regression case."""
    text = path.read_text()
    module = parse(text)
    comment = [line[2:].strip() for line in text.splitlines() if line.startswith("//")]
    with np.load(path.with_suffix(".npz"), allow_pickle=False) as z:
        n_in = len([k for k in z.files if k.startswith("arr_")])
        n_out = len([k for k in z.files if k.startswith("out_")])
        in_types = [p.shape.dtype for p in module.entry.parameters]
        out_types = [s.dtype for s in module.entry.root.shape.leaves()]
        inputs = [_restore(z[f"arr_{i}"], in_types[i]) for i in range(n_in)]
        outputs = [_restore(z[f"out_{i}"], out_types[i]) for i in range(n_out)]
    return text, inputs, outputs, comment


def cases(directory: pathlib.Path = HERE) -> list[pathlib.Path]:
    return sorted(directory.glob("*.hlo"))


__all__ = ["HERE", "cases", "flatten", "load", "write"]
