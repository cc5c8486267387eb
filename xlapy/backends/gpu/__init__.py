"""The gpu backend: HLO -> LLVM IR -> PTX (LLVM's NVPTX target, libdevice), run through
the CUDA driver (cuda-python) with cuBLAS; `pip install xlapy[gpu]` installs them.

Layers, each importing only from those below it (tests/test_layering.py checks them):

  compiler.py      one compilation: pipeline, emission, PTX; the in-memory cache
  executable.py    running a program (arguments, results)
  emitters/        HLO -> LLVM IR: kernel ABI, launch dims, row reductions, the program
  passes/          the gpu HLO pipeline
  runtime/         the program's thunks and their executor, the CUDA driver and cuBLAS
                   (cuda.py, cublas.py), the host emulator; never imports the compiler
  codegen.py       LLVM IR -> PTX (libdevice linked, NVVMReflect)
  target.py        the architecture compiled for

Executables return DeviceArrays from run_device (xp.jit's call: results stay on the
device) and NumPy arrays from run; platform.device_put(x) puts an array on the device.

Without a GPU, compile_program (and `python -m xlapy compile --backend gpu`) still makes
PTX; GpuPlatform() raises a clear error; the emulator platform runs the kernels on the CPU.
"""

from xlapy.backends.base import Platform, register_platform
from xlapy.backends.gpu.compiler import GpuCompiler


class GpuPlatform(Platform):
    """The CUDA GPU (device 0). Raises XlapyError naming the reason when there is none."""
    name = "gpu"

    def __init__(self):
        from xlapy.backends.gpu.runtime import cuda  # here: the driver is loaded on demand
        context = cuda.default_context()             # raises when no GPU / no cuda-python
        self.context = context
        self.compiler = GpuCompiler(context.device_for, arch=context.arch)

    def device_put(self, x):
        """x (a NumPy array) copied into the GPU's memory: a DeviceArray."""
        from xlapy.backends.gpu.runtime.device_array import DeviceArray  # with the runtime
        return DeviceArray.from_host(self.context, x)


class GpuEmulatorPlatform(Platform):
    """The same programs with their kernels run on the host CPU (runtime/emulator.py): the
    index arithmetic, warp-level reductions, launches and thunks tested without a GPU;
    math is xlapy's own there instead of libdevice's."""
    name = "gpu-emulator"

    def __init__(self):
        from xlapy.backends.gpu.runtime.emulator import (  # host LLVM: on demand
            EmulatedDevice, emulated_context)
        self.context = emulated_context()
        self.compiler = GpuCompiler(lambda program: EmulatedDevice(program.llvm_ir),
                                    emulate=True, platform_name=self.name)

    device_put = GpuPlatform.device_put


register_platform("gpu", GpuPlatform)
register_platform("gpu-emulator", GpuEmulatorPlatform)
