"""HLO -> LLVM IR for the gpu: the kernel ABI (kernel_abi.py), launch dimensions
(launch.py), row reductions (reduction.py), and the program of thunks (program.py)."""
