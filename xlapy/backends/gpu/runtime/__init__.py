"""What runs a compiled gpu program, never importing the compiler: the program's thunks
(program.py), the executor that runs them on a device (executor.py), the CUDA driver
through cuda-python (cuda.py), cuBLAS (cublas.py), and the emulator that runs the same
kernels on the host CPU (emulator.py)."""
