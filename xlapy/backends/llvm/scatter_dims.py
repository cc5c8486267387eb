"""scatter's dimension numbers, read once for the emitters of every target.

  update dims = scatter dims (not in update_window_dims: they run over the index batch)
                + window dims (update_window_dims, in order onto the operand's window dims)
  operand window dims = the operand dims neither inserted_window_dims nor
                        input_batching_dims (those have window size 1)
  index batch dims    = the dims of the indices but index_vector_dim
"""

from __future__ import annotations

from dataclasses import dataclass

from xlapy.hlo.ir import Instruction

_LISTS = ("update_window_dims", "inserted_window_dims", "input_batching_dims",
          "scatter_indices_batching_dims", "scatter_dims_to_operand_dims")


@dataclass(frozen=True)
class ScatterDims:
    window_dims: list           # update_window_dims
    inserted: list              # inserted_window_dims
    in_batch: list              # input_batching_dims
    idx_batch: list             # scatter_indices_batching_dims
    index_map: list             # scatter_dims_to_operand_dims
    ivd: int                    # index_vector_dim
    rank: int                   # the operands' rank
    scatter_dims: list          # update dims that are not window dims
    window_operand_dims: list   # operand dims the window dims map onto, in order
    idx_batch_dims: list        # dims of the indices but index_vector_dim
    sizes: list                 # the window size along each operand dim

    @classmethod
    def of(cls, instr: Instruction) -> ScatterDims:
        """Of scatter(operands.., indices, updates..)."""
        a = instr.attrs
        window_dims, inserted, in_batch, idx_batch, index_map = (list(a.get(k, ()))
                                                                 for k in _LISTS)
        ivd = a["index_vector_dim"]
        n = (len(instr.operands) - 1) // 2
        rank = instr.operands[0].shape.rank
        u0 = instr.operands[n + 1].shape
        idx_rank = instr.operands[n].shape.rank
        window_operand_dims = [d for d in range(rank) if d not in inserted and d not in in_batch]
        sizes = [1] * rank
        for d, ud in zip(window_operand_dims, window_dims):
            sizes[d] = u0.dims[ud]
        return cls(window_dims, inserted, in_batch, idx_batch, index_map, ivd, rank,
                   [d for d in range(u0.rank) if d not in window_dims], window_operand_dims,
                   [d for d in range(idx_rank) if d != ivd], sizes)
