"""Launch dimensions of the kernels (pure arithmetic, tested without a GPU).

  loop kernels       one thread per output element: blocks of up to 256 threads, as many
                     blocks as the elements need (a grid's x dimension allows 2**31 - 1)
  row reductions     one block per output row; the block's threads stride over the row
                     (ROW_THREADS, fewer for short rows, always whole warps)
  transposes         32x32 tiles, blocks of 32x8 threads
"""

from __future__ import annotations

from typing import NamedTuple

from xlapy.backends.gpu.target import WARP_SIZE
from xlapy.errors import LoweringError

MAX_BLOCK = 256
ROW_THREADS = 256
MAX_GRID_X = 2**31 - 1
TILE = 32
TILE_ROWS = 8


class LaunchDims(NamedTuple):
    grid: tuple[int, int, int]
    block: tuple[int, int, int]

    @property
    def threads(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2] * \
            self.block[0] * self.block[1] * self.block[2]


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def loop_launch(n_elements: int) -> LaunchDims:
    """One thread per element (at least one thread: a kernel of an empty output runs and
    does nothing)."""
    n = max(n_elements, 1)
    block = min(MAX_BLOCK, _ceil_div(n, WARP_SIZE) * WARP_SIZE)
    grid = _ceil_div(n, block)
    if grid > MAX_GRID_X:
        raise LoweringError(f"a kernel of {n_elements} elements needs {grid} blocks, more "
                            f"than a grid's {MAX_GRID_X}")
    return LaunchDims((grid, 1, 1), (block, 1, 1))


def row_threads(row_length: int) -> int:
    """Threads per block of a row reduction: whole warps, at most ROW_THREADS, no more
    warps than the row has elements for."""
    warps = min(ROW_THREADS // WARP_SIZE, max(1, _ceil_div(row_length, WARP_SIZE)))
    return warps * WARP_SIZE


def row_launch(rows: int, row_length: int) -> LaunchDims:
    if rows > MAX_GRID_X:
        raise LoweringError(f"a row reduction of {rows} rows needs more blocks than a grid's "
                            f"{MAX_GRID_X}")
    return LaunchDims((max(rows, 1), 1, 1), (row_threads(row_length), 1, 1))


def transpose_launch(batch: int, rows: int, cols: int) -> LaunchDims:
    """Tiles of TILE x TILE over the (rows, cols) of each batch element: grid (tiles along
    cols, tiles along rows, batch), blocks of TILE x TILE_ROWS threads."""
    return LaunchDims((_ceil_div(cols, TILE), _ceil_div(rows, TILE), max(batch, 1)),
                      (TILE, TILE_ROWS, 1))
