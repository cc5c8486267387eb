"""The gpu's kernel ABI (its backends/llvm KernelTarget):

  ptx_kernel void kernel(ptr out_0, ..., ptr in_0, ...)

one thread per output element: the thread's global index g = ctaid.x * ntid.x + tid.x is
the physical linear index it computes ([g, min(g + 1, n)), `linear_index`); math calls go to
libdevice's __nv_* functions where libdevice has the function (codegen.py links it in),
else to xlapy's own math library (logistic).

The emulator (runtime/emulator.py) compiles the same kernel for the host with the special
registers read from globals it sets, so the index arithmetic runs on a CPU too.
"""

from __future__ import annotations

from llvmlite import ir

from xlapy.backends.llvm import types as T
from xlapy.backends.llvm.kernel_target import KernelFunction
from xlapy.backends.llvm.math import math_function

I32 = ir.IntType(32)

# math.py name -> libdevice base name (f32 adds "f": __nv_expf)
LIBDEVICE = {"exp": "exp", "expm1": "expm1", "log": "log", "log1p": "log1p", "tanh": "tanh",
             "erf": "erf", "sin": "sin", "cos": "cos", "tan": "tan", "cbrt": "cbrt",
             "sqrt": "sqrt", "rsqrt": "rsqrt", "pow": "pow", "atan2": "atan2",
             "fmod": "fmod"}  # fmod: HLO's float remainder (not in math.py)


def sreg(b: ir.IRBuilder, name: str) -> ir.Value:
    """A special register (tid.x, ctaid.x, ntid.x, nctaid.x, ...) as i32."""
    full = f"llvm.nvvm.read.ptx.sreg.{name}"
    module = b.module
    fn = module.globals.get(full)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(I32, []), full)
    return b.call(fn, [])


def new_kernel(module: ir.Module, name: str, n_pointers: int) -> tuple[ir.Function, ir.IRBuilder]:
    fn = ir.Function(module, ir.FunctionType(T.VOID, [T.PTR] * n_pointers), name)
    fn.calling_convention = "ptx_kernel"
    fn.attributes.add("nounwind")
    for a in fn.args:
        a.add_attribute("noalias")
    return fn, ir.IRBuilder(fn.append_basic_block("entry"))


def libdevice_math(module: ir.Module, name: str, ty: ir.Type) -> ir.Function:
    """libdevice's function for a math.py name and a scalar f32/f64 type; xlapy's own where
    libdevice has none."""
    base = LIBDEVICE.get(name)
    if base is None or isinstance(ty, ir.VectorType):
        return math_function(module, name, ty)
    fname = f"__nv_{base}{'f' if isinstance(ty, ir.FloatType) else ''}"
    existing = module.globals.get(fname)
    if existing is not None:
        return existing
    arity = 2 if name in ("pow", "atan2", "fmod") else 1
    return ir.Function(module, ir.FunctionType(ty, [ty] * arity), fname)


class GpuKernelTarget:
    """backends/llvm's KernelTarget for the gpu: one element per thread."""
    linear_index = True

    def __init__(self, use_libdevice: bool = True):
        self.math_function = libdevice_math if use_libdevice else None
        self._n = 0

    def for_elements(self, n: int) -> "GpuKernelTarget":
        self._n = n
        return self

    def kernel_function(self, module: ir.Module, name: str, n_pointers: int) -> KernelFunction:
        fn, b = new_kernel(module, name, n_pointers)
        start = global_thread_index(b)
        end = b.select(b.icmp_signed("<", start, ir.Constant(T.I64, self._n)),
                       b.add(start, ir.Constant(T.I64, 1)), start)
        return KernelFunction(fn, list(fn.args), b, start, end)


def global_thread_index(b: ir.IRBuilder) -> ir.Value:
    """ctaid.x * ntid.x + tid.x as i64."""
    ctaid = b.zext(sreg(b, "ctaid.x"), T.I64)
    ntid = b.zext(sreg(b, "ntid.x"), T.I64)
    tid = b.zext(sreg(b, "tid.x"), T.I64)
    return b.add(b.mul(ctaid, ntid, flags=["nuw", "nsw"]), tid, flags=["nuw", "nsw"])
