"""The cpu backend's HLO level: its pass pipeline (pipeline.py) and the passes and plans
that decide how the emitters compute things (which dots are gemms, which fusions are
column kernels or gemm epilogues, which operands a kernel may overwrite). Nothing here
emits LLVM IR."""
