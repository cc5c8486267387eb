"""The cpu backend's emitters: HLO (after the cpu passes) -> LLVM IR.

  program.py       one function per non-fused computation: buffers, kernels, control flow
  kernels.py       elemental instructions and loop fusions (the target-independent loop
                   kernel of backends/llvm in the cpu ABI, kernel_abi.py; column kernels)
  registry.py      dedicated emitters by opcode and custom-call target:
  gemm.py          dot through xlapy's own gemm (gemm_kernel.py: its parts gemm_params,
                   gemm_ir, gemm_micro, gemm_packing, gemm_driver) or BLAS; gemm_epilogue.py,
                   gemm_update.py for the fusions the cpu passes form around gemms
  conv.py          convolution through the own gemm (im2col in cache-sized row blocks;
                   passes/conv_plan.py); conv_depthwise.py: direct depthwise kernels
  sort.py, scatter.py, select_and_scatter.py, lapack.py (the cholesky opcode),
  lapack_calls.py (JAX's LAPACK custom-calls), fft.py (the fft opcode)   (routine.py:
                   their helpers)
  collectives.py            the collectives as MPI calls (runtime/collectives.py)
  dynamic_update_slice.py   writes only the update when in place (while-loop stacks)
  host_callback.py          xlapy_host_callback: a call into Python (runtime/host_callback.py)

The dedicated emitters register themselves when imported, and are imported when a program
first needs one (registry.emitter_for); registry.load_all() imports them all.
"""
