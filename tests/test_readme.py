"""The README's Python examples run as written (each block in a fresh namespace, from the
repository root), and the five-line jit + grad example really trains."""

import os
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def test_readme_has_the_five_line_example_first():
    assert BLOCKS, "no python blocks in the README"
    first = [line for line in BLOCKS[0].splitlines() if line.strip()]
    assert len(first) == 5
    assert "xp.jit" in BLOCKS[0] and "xp.grad" in BLOCKS[0]


@pytest.mark.parametrize("k", range(len(BLOCKS)))
def test_readme_block_runs(k, capsys):
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        namespace: dict = {}
        exec(compile(BLOCKS[k], f"README.md block {k}", "exec"), namespace)
    finally:
        os.chdir(cwd)
    if k == 0:  # the training example: the loss went down from its starting value
        loss, w, x, y = (namespace[n] for n in ("loss", "w", "x", "y"))
        import numpy as np
        start = float(loss(np.zeros_like(w), x, y))
        assert float(loss(w, x, y)) < 0.5 * start
