"""The cpu backend's runtime: what compiled programs call and how they are called.

  loader.py        object code into this process (MCJIT), symbols resolved lazily by name
  blas.py          BLAS/LAPACK for generated code (NumPy's OpenBLAS, scipy's LAPACK)
  threadpool.py    xlapy's thread pool (xlapy_parallel_for), built from LLVM IR
  launch.py        xlapy_launch: runs a one-kernel program without an entry of its own
  trampoline.py    the cheap native call from Python into compiled code
  output_pool.py   recycled output buffers
  collectives.py   MPI calls for the collectives (wrappers in LLVM IR, plans);
                   mpi_watchdog.py ends a job stuck in MPI past XLAPY_MPI_TIMEOUT

The runtime never imports the compiler or the emitters. Importing the package registers
every runtime library's symbols (loaded lazily, when first used).
"""

from xlapy.backends.cpu.runtime import blas, collectives, launch, loader, threadpool
