"""XLA as the oracle: HLO text -> XLA:CPU executable -> outputs (through jaxlib).

The chain (see tests/hlo/generate_corpus.py): XLA's HLO parser, the module proto, an
XlaComputation, its StableHLO form, the cpu client's compile_and_load. Executables are kept
by the text's hash, so a module compiled once runs again on other inputs for free.

Two configurations of XLA:CPU: "default" (what jax.jit uses) and "fast", which compiles
about four times faster (the legacy elemental emitters instead of the MLIR fusion emitters,
LLVM at -O0): the same HLO passes and the same arithmetic, used by the campaigns; a
mismatch found against "fast" is checked again against "default" before it counts.

XLA crashes the process (SIGFPE) when its constant folding divides integers by zero or
INT_MIN by -1, and aborts on a reverse of a map, so `crashes_xla(module)` tells which
modules must not be given to it. Its default configuration alone dies of SIGSEGV on an and/or
of a narrowing signed convert (`crashes_default_xla`): compile_text refuses those with
XlaRejected instead of compiling them, and `default_safe` gives the module without the
outputs that need one.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np

import jax

jax.config.update("jax_platforms", "cpu")

import jax.extend.backend  # noqa: E402

try:  # (jaxlib 0.10's internals: another jaxlib, e.g. a GPU machine's, runs the gpu
    #   campaigns, whose reference is the interpreter, without them)
    import jaxlib._hlo as _hlo
    from jax._src.lib import xla_client as _xc
except ImportError as e:  # pragma: no cover
    _hlo = _xc = None
    _MISSING = f"this jaxlib cannot parse HLO text here ({e})"

FAST = [("xla_cpu_use_fusion_emitters", False), ("xla_backend_optimization_level", 0)]


class XlaRejected(Exception):
    """XLA's parser or compiler refused the module (the generator made something XLA does
    not implement): the program is skipped and counted, not a failure of xlapy."""


_CACHE: OrderedDict[tuple, object] = OrderedDict()
_CACHE_SIZE = 64


def compile_text(text: str, fast: bool = False):
    key = (hashlib.sha256(text.encode()).hexdigest(), fast)
    exe = _CACHE.get(key)
    if exe is not None:
        _CACHE.move_to_end(key)
        return exe
    if _hlo is None:  # pragma: no cover
        raise XlaRejected(_MISSING)
    if not fast:
        from xlapy.hlo.parser import parse
        if crashes_default_xla(parse(text)):
            raise XlaRejected("XLA's default configuration would crash on it "
                              "(and/or of a narrowing signed convert): see default_safe")
    try:
        module = _hlo.hlo_module_from_text(text)
        computation = _hlo.XlaComputation(module.as_serialized_hlo_module_proto())
        mlir = _xc._xla.mlir.xla_computation_to_mlir_module(computation)
        backend = jax.extend.backend.get_backend("cpu")
        devices = _xc._xla.DeviceList(tuple(backend.local_devices()[:1]))
        options = _xc.CompileOptions()
        if fast:
            options.env_option_overrides = FAST
        exe = backend.compile_and_load(str(mlir), devices, options)
    except Exception as e:  # jaxlib raises JaxRuntimeError / ValueError
        raise XlaRejected(f"{type(e).__name__}: {str(e)[:300]}") from None
    _CACHE[key] = exe
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return exe


def run_text(text: str, inputs, fast: bool = False) -> list[np.ndarray]:
    """XLA's flat outputs of the module on `inputs` (one array per parameter)."""
    exe = compile_text(text, fast)
    device = exe.local_devices()[0]
    with jax.enable_x64(True):  # 64-bit inputs stay 64-bit
        buffers = [jax.device_put(np.asarray(x), device) for x in inputs]
        try:
            results = exe.execute_sharded(buffers)
            return [np.asarray(per_device[0])
                    for per_device in results.disassemble_into_single_device_arrays()]
        except jax.errors.JaxRuntimeError as e:  # (UNIMPLEMENTED: a bf16 x bf16 = f32 dot)
            raise XlaRejected(f"{type(e).__name__} running: {str(e)[:300]}") from None


def _constant_only(instr, memo) -> bool:
    """Whether instr's value depends on no parameter (XLA may fold it). An array with no
    elements carries no value, whatever it was made of: a reduce of one is its initial
    value, which XLA folds (u64 remainder(reduce(p: u64[1,0]), ...) of zero by zero:
    SIGFPE, hlo seed 13005895; remainder(~s, s) with s the sum of a 1x0 dynamic-slice of a
    parameter: jax seed 18005373, where jax's own StableHLO -> HLO conversion folds it)."""
    key = id(instr)
    if key not in memo:
        empty = instr.shape.is_array and 0 in tuple(instr.shape.dims)
        memo[key] = empty or (instr.opcode != "parameter" and all(
            _constant_only(o, memo) for o in instr.operands)) or (
            # an integer and/multiply with an operand known to be zero is zero, which XLA
            # folds (u8 divide(iota, and(iota, x)) with one element: 0 / 0, hlo 23002288)
            instr.opcode in ("and", "multiply") and instr.shape.is_array
            and not instr.shape.element_type.is_float
            and any(_known_zero(o) for o in instr.operands))
    return memo[key]


def _known_zero(instr) -> bool:
    """instr is all zeros whatever the inputs: a zero constant, an iota along a dimension
    of size 1, or a broadcast / reshape of one."""
    while instr.opcode in ("broadcast", "reshape", "copy"):
        instr = instr.operands[0]
    if instr.opcode == "constant":
        return instr.literal is not None and not np.asarray(instr.literal).any()
    if instr.opcode == "iota":
        return instr.shape.dims[instr.attrs["iota_dimension"]] <= 1
    return False


def divides_constants(module) -> bool:
    """An integer divide or remainder of constants only, anywhere (see crashes_xla)."""
    for comp in module.computations:
        memo: dict = {}
        for instr in comp.instructions:
            if (instr.opcode in ("divide", "remainder") and instr.shape.is_array
                    and not (instr.shape.element_type.is_float
                             or instr.shape.element_type.is_pred)
                    and _constant_only(instr, memo)):
                return True
    return False


def _empty_slice_at_empty_operand(instr) -> bool:
    """slice(concatenate(..., x, e, ...)) empty along the concatenated dimension and starting
    where an operand e with no elements there begins after others (not at 0): XLA:CPU's
    simplifier aborts the process (`SmallVector unable to grow`, capacity 2^64 - 1; hlo
    seed 19005856: slice={[5:5:2]} of concatenate(f64[0], f64[5], f64[0]); measured: the
    empty operand at 0, or a start inside another operand, compile)."""
    if instr.opcode != "slice" or instr.operands[0].opcode != "concatenate":
        return False
    cat = instr.operands[0]
    d = cat.attrs["dimensions"][0]
    spec = instr.attrs["slice"]
    if spec.starts[d] != spec.limits[d]:
        return False
    offset = 0
    for o in cat.operands:
        size = o.shape.dims[d]
        if size == 0 and offset > 0 and offset == spec.starts[d]:
            return True
        offset += size
    return False


def _swapped_conv_aborts(instr) -> bool:
    """A convolution with base (lhs) dilation whose dilated kernel is larger than the input
    in a padded spatial dimension: XLA:CPU's simplifier swaps its operands and aborts
    verifying the result ("Window dimensions do not match RHS shape"; hlo seed 20002393:
    input 1x3, kernel 3x2, rhs_dilate=2x1, lhs_dilate=1x2, pad=2_2x0_0; measured in child
    processes: no lhs dilation, no padding or an input as large as the kernel compile; so
    does lhs dilation of that dimension alone, which this wider test flags too)."""
    if instr.opcode != "convolution":
        return False
    w = instr.attrs.get("window")
    if w is None or not any(d > 1 for d in w.lhs_dilate):
        return False
    if instr.attrs.get("feature_group_count", 1) != 1 or \
            instr.attrs.get("batch_group_count", 1) != 1:
        return False  # (grouped ones compile: grouped_conv_nan_across_groups, lhs 1x2)
    dn = instr.attrs["dim_labels"]
    lhs, rhs = instr.operands[0].shape, instr.operands[1].shape
    for k, (ld, kd) in enumerate(zip(dn.input_spatial, dn.kernel_spatial)):
        kernel = (rhs.dims[kd] - 1) * w.rhs_dilate[k] + 1
        if kernel > lhs.dims[ld] and (w.pad_low[k] or w.pad_high[k]):
            return True
    return False


def crashes_xla(module) -> bool:
    """An integer divide or remainder of constants only: XLA's constant folding may divide
    by zero (or INT_MIN by -1) and kill the process with SIGFPE (a known XLA departure:
    HLO defines x/0 = -1 and x%0 = x). Or a reverse of a map of several operands: XLA's
    simplifier moves the reverse into the map's operands and aborts the process
    (`Invalid binary instruction opcode map`, hlo seed 11003208: reverse(map(x,
    broadcast(c))) with a map computation it does not inline). Or an empty slice of a
    concatenate at an empty operand (_empty_slice_at_empty_operand: SIGABRT), or a
    convolution its simplifier swaps into an invalid one (_swapped_conv_aborts: SIGABRT)."""
    for comp in module.computations:
        memo: dict = {}
        in_entry = comp is module.entry
        for instr in comp.instructions:
            if (instr.opcode == "reverse" and instr.operands[0].opcode == "map"
                    and len(instr.operands[0].operands) > 1):
                return True
            if _empty_slice_at_empty_operand(instr) or _swapped_conv_aborts(instr):
                return True
            if instr.opcode not in ("divide", "remainder") or not instr.shape.is_array:
                continue
            if instr.shape.element_type.is_float or instr.shape.element_type.is_pred:
                continue
            if not in_entry or _constant_only(instr, memo):
                return True
    return False


def _crashes_default(instr) -> bool:
    if instr.opcode not in ("and", "or") or not instr.shape.is_array:
        return False
    for o in instr.operands:
        if o.opcode == "convert" and o.operands[0].shape.is_array:
            src, dst = o.operands[0].shape.element_type, o.shape.element_type
            if src.kind == dst.kind == "s" and dst.bits < src.bits:
                return True
    return False


def crashes_default_xla(module) -> bool:
    """An and/or whose operand is a convert from a signed integer to a narrower signed one
    (s32 -> s16, s64 -> s8, s16 -> s8 ...): XLA:CPU's default configuration (jaxlib 0.10.2)
    dies of SIGSEGV compiling `or(p1: s16[7], convert(p0: s32[7]))`, whatever the shape and
    the other operand; its fast configuration compiles and runs it (hlo seed 15003384,
    whose module reached the default configuration to explain another output's
    mismatch)."""
    return any(_crashes_default(i) for c in module.computations for i in c.instructions)


def default_safe(module):
    """(text, kept) of the module for XLA's default configuration: the module itself and
    None where it does not crash it; else, for a root tuple of arrays, the module returning
    only the outputs whose computation has no crashing construct, and their indices (the
    parameters stay, so the inputs are the same). XlaRejected where no output is left."""
    if not crashes_default_xla(module):
        return module.to_string(), None
    from xlapy.hlo.ir import Instruction
    from xlapy.hlo.shapes import Shape
    from xlapy.passes.dce import DCE
    root = module.entry.root
    if root.opcode != "tuple" or not all(o.shape.is_array for o in root.operands):
        raise XlaRejected("XLA's default configuration would crash on it "
                          "(and/or of a narrowing signed convert)")

    def keeping(indices):
        m = module.clone()
        r = m.entry.root
        ops = [r.operands[k] for k in indices]
        new = Instruction("tuple", Shape.tuple([o.shape for o in ops]), ops,
                          name="default_safe_root")
        m.entry.add_instruction(new)
        m.entry.root = new
        DCE().run(m)
        return m

    kept = [k for k in range(len(root.operands)) if not crashes_default_xla(keeping([k]))]
    if not kept:
        raise XlaRejected("XLA's default configuration would crash on every output "
                          "(and/or of a narrowing signed convert)")
    return keeping(kept).to_string(), kept


def miscomputes(module) -> bool:
    """A scatter into the result of a gather (XLA:CPU, scattering an f16 update at an
    out-of-bounds index 2..100 into a 2-element one-slice gather of x[0, 0:2, 0], returns
    x[0, 2, 0] at the last position, a value neither HLO's skipped update nor the gather
    has: hlo seed 11008074), a convolution that crops and pads a strided dimension
    (_cropped_and_padded_stride), or a reduce-window with base (lhs) dilation on an operand
    of rank 3 or more: XLA:CPU
    (jaxlib 0.10.2) computes some of these ignoring the dilation, and reads past the end of
    the operand for the positions beyond it (f32[16,8,5,8], window size=2x1x3x1
    stride=2x1x3x1 pad=1_2x2_1x1_2x0_1 lhs_dilate=1x2x1x1, min: elements where HLO's holes
    are, then garbage; small and low-rank ones it computes right). The interpreter, checked
    against XLA on every other module, is the reference for these."""
    for comp in module.computations:
        for instr in comp.instructions:
            w = instr.attrs.get("window")
            if w is None:
                continue
            if (instr.opcode == "reduce-window" and any(d > 1 for d in w.lhs_dilate)
                    and instr.operands[0].shape.rank >= 3):
                return True
            if instr.opcode == "convolution" and _cropped_and_padded_stride(w):
                return True
    return any(i.opcode == "scatter" and i.operands[0].opcode == "gather"
               for comp in module.computations for i in comp.instructions)


def _cropped_and_padded_stride(w) -> bool:
    """A convolution window with a spatial dimension whose low padding is negative, high
    padding positive and stride above 1: XLA:CPU computes some of these wrong (size=1x3
    stride=1x2 pad=0_0x-1_2 on 5 columns: values off by up to 1000 against a NumPy loop and
    the interpreter; pad -1_1, -2_3, -3_4 at stride 2 too, while -1_3 or stride 3 come out
    right; in a larger module the wrong values change from run to run). Stride 1 too (c6,
    hlo 12000697: size=2x2 pad=0_-1x-1_1 on a 2-wide dimension, all-ones operands: XLA 8,
    HLO 4 counted by hand, with and without feature groups). All of them go to the
    interpreter, which is checked against XLA on every other convolution."""
    return any(lo < 0 < hi for lo, hi in zip(w.pad_low, w.pad_high))


def unreliable(module) -> bool:
    """Whether XLA must not be the reference: it would crash, or it computes it wrong."""
    return crashes_xla(module) or miscomputes(module)
