"""Which convolutions the cpu backend computes with xlapy's own gemm, and how (the plan
emitters/conv.py follows and gemm_epilogue.py asks about).

A convolution is a sum of products over the kernel's input features and window positions:

    out[b, o.., f] = sum_{i, k..} lhs[b', g*I + i, pos(o, k)..] * rhs[k.., i, f]

so, for each feature group, it is a gemm C[M, N] = A[M, K] . B[K, N] with

    M = the output's batch and spatial positions (its "row dims"),
    K = the kernel's input features and window positions (its "contracting dims"),
    N = the output features of the group.

C is the output seen as a matrix: its row dims, in the output's memory order, collapse
into one index with one stride where they are adjacent in memory; the more-major ones
that do not (NCHW's batch, in front of the features) are looped over, a gemm each.
B is the kernel seen as a matrix, its contracting dims in the kernel's memory order; when
they do not collapse (the input gradient's kernel, "01oi", has the output feature between
them) the emitter copies the kernel into a [K, N] matrix first (it is small).
A is the lhs patch matrix ("im2col"): A[m, k] = lhs at the position of output row m and
window column k, zero in the padding and between lhs-dilated elements. The emitter
materializes it, row- or column-major (whichever reads the lhs along its contiguous
dimension), unless it is a strided view of the lhs already (1x1 windows, and windows that
cover the whole input: a pointwise convolution and its filter gradient are plain gemms).

bf16 and f16 convolutions use the gemm kind of their type (sums in f32, a bf16 / f16
result rounded once at the end). Not planned (the elemental convolution computes them):
other element types,
empty operands, and feature groups of one input feature (depthwise convolutions: those
with features innermost go to emitters/conv_depthwise.py, depthwise_plan, and so does
their filter gradient, filter_grad_plan).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from xlapy.backends.llvm.loops import strides as strides_of
from xlapy.hlo.shapes import Shape

GEMM_TYPES = ("f32", "f64")
HALF_TYPES = ("bf16", "f16")   # the gemm widens them to f32 as it packs; sums in f32


def collapse(dims: list[tuple[int, int]]):
    """(size, stride) of dims [(size, stride)] given major -> minor, as one index, or None
    when they are not one arithmetic progression (size-1 dims are ignored)."""
    dims = [(n, s) for n, s in dims if n != 1]
    if not dims:
        return 1, 1
    size, stride = dims[-1]
    for n, s in reversed(dims[:-1]):
        if s != stride * size:
            return None
        size *= n
    return size, stride


@dataclass(frozen=True)
class ConvPlan:
    t: str
    groups: int              # feature groups (lhs features split) or batch groups
    batch_groups: bool       # True: groups are batch_group_count's
    rows: tuple              # row dims, out memory order: (kind, index, size) kind "b"/"s"
    cols: tuple              # contracting dims, rhs memory order: ("i", 0, size)/("s", j, size)
    m: int                   # rows per gemm (the collapsed inner row dims)
    n: int                   # output features per group
    k: int
    outer: tuple             # row dims looped over (sizes, out strides), major -> minor
    c_strides: tuple         # (row stride, column stride) of C
    b_strides: tuple | None  # (rsb, csb) of the kernel as B, or None: copied to [K, N]
    a_view: tuple | None     # A as a strided view of lhs: (rsa, csa, outer strides) or None
    a_rows_first: bool       # materialized A: [M_total, K] (True) or [K, M_total]

    @property
    def m_total(self) -> int:
        t = self.m
        for n, _ in self.outer:
            t *= n
        return t

    out_t: str = ""
    line_dims: int = 1       # the innermost dims of A one im2col line covers (_line_dims)
    plane: bool = False      # one im2col call builds the lines of the next dim (spatial)

    @property
    def epilogue_ok(self) -> bool:
        """One gemm writes the whole result as a matrix: its tiles are the result's."""
        return self.groups == 1 and not self.outer and self.out_t == self.t

    def flops(self) -> int:
        return 2 * self.groups * self.m_total * self.n * self.k


def conv_plan(instr):
    return plan_for(instr.attrs, instr.operands[0].shape, instr.operands[1].shape, instr.shape)


def plan_for(a: dict, lhs, rhs, out):
    t, out_t = lhs.element_type.name, out.element_type.name
    if rhs.element_type.name != t:
        return None
    if t in GEMM_TYPES:
        if out_t != t:
            return None
    elif t not in HALF_TYPES or out_t not in (t, "f32"):
        return None
    if any(s.layout is not None and getattr(s.layout, "extra", "") for s in (lhs, rhs, out)):
        return None
    if lhs.size == 0 or rhs.size == 0 or out.size == 0:
        return None
    dn, w = a["dim_labels"], a["window"]
    fg, bg = a.get("feature_group_count", 1), a.get("batch_group_count", 1)
    groups = max(fg, bg)
    nsp = len(dn.output_spatial)
    i_per_group = rhs.dims[dn.kernel_input_feature]
    if fg > 1 and i_per_group == 1:
        return None     # depthwise: a gemm of one contracting feature per group
    n_out = out.dims[dn.output_feature]
    n = n_out // groups
    ost, rst, lst = strides_of(out), strides_of(rhs), strides_of(lhs)
    # C: the output's row dims in memory order; features at stride ost[f]
    order = list(reversed(out.minor_to_major))
    rows = []
    for d in order:
        if d == dn.output_batch:
            rows.append(("b", 0, out.dims[d], ost[d]))
        elif d != dn.output_feature:
            rows.append(("s", dn.output_spatial.index(d), out.dims[d], ost[d]))
    # the longest suffix of row dims that collapses is one gemm's M; the rest is looped
    split = len(rows)
    while split > 0 and collapse([(r[2], r[3]) for r in rows[split - 1:]]) is not None:
        split -= 1
    inner = collapse([(r[2], r[3]) for r in rows[split:]])
    m, rs_c = inner
    outer = tuple((r[2], r[3]) for r in rows[:split] if r[2] != 1)
    # B: the kernel's contracting dims in its memory order
    cols = []
    kdims = []
    for d in reversed(rhs.minor_to_major):
        if d == dn.kernel_input_feature:
            cols.append(("i", 0, rhs.dims[d]))
            kdims.append((rhs.dims[d], rst[d]))
        elif d != dn.kernel_output_feature:
            j = dn.kernel_spatial.index(d)
            cols.append(("s", j, rhs.dims[d]))
            kdims.append((rhs.dims[d], rst[d]))
    kc = collapse(kdims)
    k = 1
    for _, _, size in cols:
        k *= size
    b_strides = (kc[1], rst[dn.kernel_output_feature]) if kc is not None else None
    a_view = _lhs_view(dn, w, lhs, lst, rows[split:], outer and rows[:split], cols, nsp)
    rows = tuple((r[0], r[1], r[2]) for r in rows)
    rows_first = _rows_first(dn, lhs, lst, rows, cols)
    lines = {first: _line_dims(dn, w, lst, a_dims(rows, cols, first)) for first in (0, 1)}
    if _line_size(a_dims(rows, cols, rows_first), lines[rows_first]) < MIN_LINE \
            and _line_size(a_dims(rows, cols, not rows_first), lines[not rows_first]) \
            >= 2 * _line_size(a_dims(rows, cols, rows_first), lines[rows_first]):
        rows_first = not rows_first
    return ConvPlan(t=t, out_t=out_t, groups=groups, batch_groups=bg > 1,
                    rows=rows, cols=tuple(cols), m=m, n=n,
                    k=k, outer=outer, c_strides=(rs_c, ost[dn.output_feature]),
                    b_strides=b_strides, a_view=a_view, a_rows_first=rows_first,
                    line_dims=lines[rows_first],
                    plane=_plane(a_dims(rows, cols, rows_first), lines[rows_first]))


def _lhs_dim(dn, kind, j, as_row):
    """The lhs dimension a row dim (as_row) or contracting dim indexes."""
    if kind == "s":
        return dn.input_spatial[j]
    return dn.input_batch if as_row else dn.input_feature


def _lhs_view(dn, w, lhs, lst, inner_rows, outer_rows, cols, nsp):
    """(rsa, csa, outer strides) when A is a strided view of lhs (no padding or dilation,
    and every spatial dim either has one output position or a one-wide window, so that each
    row or column dim moves one lhs dim by a fixed stride), else None."""
    for s in range(nsp):
        if w.pad_low[s] != 0 or w.lhs_dilate[s] != 1 or w.rhs_reversal[s]:
            return None
    out_sizes = {j: size for kind, j, size, *_ in list(inner_rows) + list(outer_rows or [])
                 if kind == "s"}
    row_step, col_step = {}, {}
    for s in range(nsp):
        if out_sizes.get(s, 1) != 1 and w.size[s] != 1:
            return None
        last = (out_sizes.get(s, 1) - 1) * w.stride[s] + (w.size[s] - 1) * w.rhs_dilate[s]
        if last >= lhs.dims[dn.input_spatial[s]]:
            return None
        d = dn.input_spatial[s]
        row_step[s] = w.stride[s] * lst[d]
        col_step[s] = w.rhs_dilate[s] * lst[d]
    rdims = [(size, row_step[j] if kind == "s" else lst[dn.input_batch])
             for kind, j, size, *_ in inner_rows]
    cdims = [(size, col_step[j] if kind == "s" else lst[dn.input_feature])
             for kind, j, size in cols]
    r, c = collapse(rdims), collapse(cdims)
    if r is None or c is None:
        return None
    outer = tuple(row_step[j] if kind == "s" else lst[dn.input_batch]
                  for kind, j, size, *_ in (outer_rows or []) if size != 1)
    return r[1], c[1], outer


def _rows_first(dn, lhs, lst, rows, cols) -> bool:
    """Layout of a materialized A: rows first ([M, K]: its innermost dim is the innermost
    contracting dim) or columns first ([K, M]: the innermost row dim), whichever reads the
    lhs with the smaller stride, non-spatial (no bounds check per element) preferred."""
    def cost(kind, j, as_row):
        return (kind == "s", lst[_lhs_dim(dn, kind, j, as_row)])
    r = [x for x in rows if x[2] != 1]
    c = [x for x in cols if x[2] != 1]
    if not r or not c:
        return True
    return cost(c[-1][0], c[-1][1], False) <= cost(r[-1][0], r[-1][1], True)


# an im2col line shorter than this (elements) is built the other way round (A as [K, M]
# instead of [M, K] or the reverse) where that makes lines at least twice as long: the
# per-line work (its coordinates, bounds) dominates short lines. Measured (CPU time, load
# 7-13, with the ranged line copies of emitters/conv.py): NCHW 8x32x32x32 3x3 stride 2 ->
# 64, lines of 3 (kernel columns) 2.06 ms, of 16 (output columns) 1.75; NCH 16x64x128
# window 5 -> 128, lines of 5 2.97 ms, of 124 2.66
MIN_LINE = 16


def a_dims(rows, cols, rows_first) -> list:
    """The materialized A's dims, major -> minor, size-1 dims left out: (role, kind, j,
    size), role "r" (a row dim) or "c" (a contracting dim)."""
    r = [("r",) + tuple(x[:3]) for x in rows if x[2] != 1]
    c = [("c",) + tuple(x[:3]) for x in cols if x[2] != 1]
    dims = r + c if rows_first else c + r
    return dims or [("c", "i", 0, 1)]


def _line_size(dims, n: int) -> int:
    size = 1
    for d in dims[len(dims) - n:]:
        size *= d[3]
    return size


def _line_dims(dn, w, lst, dims) -> int:
    """How many of A's innermost dims (a_dims) one im2col line covers: the innermost, and
    the more-major ones of its role while their lhs positions continue one arithmetic
    progression, up to and including at most one spatial dim (NHWC's kernel columns and
    input features: a line of kw * C elements read in one run, its valid part one range
    of the spatial dim). A spatial dim in a line has no lhs dilation and, as a kernel dim,
    no reversal."""
    def step(role, kind, j):
        if kind == "b":
            return lst[dn.input_batch]
        if kind == "i":
            return lst[dn.input_feature]
        if w.lhs_dilate[j] != 1 or (role == "c" and w.rhs_reversal[j]):
            return None
        return (w.stride[j] if role == "r" else w.rhs_dilate[j]) * lst[dn.input_spatial[j]]

    role, kind, j, size = dims[-1]
    n, run_size, run_step = 1, size, step(role, kind, j)
    if kind == "s" or run_step is None:
        return 1
    for prev in reversed(dims[:-1]):
        st = step(*prev[:3])
        if prev[0] != role or st is None or st != run_size * run_step:
            break
        n += 1
        run_size *= prev[3]
        if prev[1] == "s":
            break
    return n


def _plane(dims, n: int) -> bool:
    """Whether the dim outside a line of n dims is a spatial dim of the same role: one
    work item of the im2col kernel is then a plane of lines along it (the coordinates of
    the dims further out computed once per plane)."""
    return len(dims) > n and dims[-n - 1][1] == "s" and dims[-n - 1][0] == dims[-1][0]


MAX_FILTER_POSITIONS = 32   # filter-gradient outputs accumulated in registers at once


def _direct_operands(instr):
    """(attrs, lhs, rhs, out shapes, dim labels) of a convolution the direct kernels could
    take (f32 / f64 throughout, nothing empty), else None."""
    if instr.opcode != "convolution":
        return None
    shapes = (instr.operands[0].shape, instr.operands[1].shape, instr.shape)
    t = instr.shape.element_type.name
    if t not in ("f32", "f64") or any(s.element_type.name != t or not s.size for s in shapes):
        return None
    return (instr.attrs,) + shapes + (instr.attrs["dim_labels"],)


def depthwise_plan(instr):
    """(groups, channel multiplier) when instr is a depthwise convolution the direct kernel
    (emitters/conv_depthwise.py) computes, else None: feature groups of one input feature,
    or a single input feature (a grayscale image's first layer: multiplier = features)."""
    got = _direct_operands(instr)
    if got is None:
        return None
    a, lhs, rhs, out, dn = got
    g = a.get("feature_group_count", 1)
    if a.get("batch_group_count", 1) != 1 or rhs.dims[dn.kernel_input_feature] != 1:
        return None
    if g == 1 and lhs.dims[dn.input_feature] != 1:
        return None     # one group of one input feature (an image's first layer) also fits
    ls, rs, os_ = strides_of(lhs), strides_of(rhs), strides_of(out)
    if (ls[dn.input_feature] != 1 and lhs.dims[dn.input_feature] != 1) \
            or os_[dn.output_feature] != 1 or rs[dn.kernel_output_feature] != 1:
        return None
    return g, out.dims[dn.output_feature] // g


def filter_grad_plan(instr):
    """The depthwise filter gradient (batch groups of one lhs batch element and one output
    feature each, as jax.grad emits): the channel count, else None."""
    got = _direct_operands(instr)
    if got is None:
        return None
    a, lhs, rhs, out, dn = got
    g = a.get("batch_group_count", 1)
    if g == 1 or a.get("feature_group_count", 1) != 1 or out.dims[dn.output_batch] != 1 \
            or rhs.dims[dn.kernel_output_feature] != g or lhs.dims[dn.input_batch] != g:
        return None
    n_pos = out.size // g
    ls, rs, os_ = strides_of(lhs), strides_of(rhs), strides_of(out)
    if n_pos > MAX_FILTER_POSITIONS or ls[dn.input_batch] != 1 \
            or rs[dn.kernel_output_feature] != 1 or os_[dn.output_feature] != 1:
        return None
    return g


MAX_ONE_OUTPUT_WINDOW = 64     # window positions of a one-output-feature kernel (unrolled)
MAX_ONE_OUTPUT_FEATURES = 256  # lhs features it reads per position (unrolled vectors)
MAX_FEW_OUTPUTS = 4            # output features the direct kernel computes side by side


def one_output_plan(instr):
    """The lhs feature count when instr has few output features (at most MAX_FEW_OUTPUTS)
    and the direct kernel (emitters/conv_one_output.py) computes it: no groups, the lhs's
    and the kernel's input features innermost (the input gradient of an image's first
    layer, one to four colour channels, as jax.grad emits for NHWC / HWIO), else None."""
    got = _direct_operands(instr)
    if got is None:
        return None
    a, lhs, rhs, _, dn = got
    w = a["window"]
    n_out = rhs.dims[dn.kernel_output_feature]
    if a.get("feature_group_count", 1) != 1 or a.get("batch_group_count", 1) != 1 \
            or n_out > MAX_FEW_OUTPUTS:
        return None
    c = lhs.dims[dn.input_feature]
    n_win = 1
    for size in w.size:
        n_win *= size
    if c < 2 or c > MAX_ONE_OUTPUT_FEATURES or n_win > MAX_ONE_OUTPUT_WINDOW \
            or n_win * c * n_out > MAX_ONE_OUTPUT_WINDOW * MAX_ONE_OUTPUT_FEATURES \
            or strides_of(lhs)[dn.input_feature] != 1 \
            or strides_of(rhs)[dn.kernel_input_feature] != 1:
        return None
    return c


# the depth-blocked form (emitters/conv_kblocked.py): a block of the row-major patch matrix
# of at most this many bytes is built at a time (it stays in the core's L2 cache)
KBLOCK_BYTES = 384 << 10
KBLOCK_MAX_C_BYTES = 512 << 10   # C (every thread has one) stays in cache too
KBLOCK_MIN_DEPTH = 256           # a column-major block's depth at least (gemm_params.KC)


@dataclass(frozen=True)
class KBlockPlan:
    """A convolution with few rows and a deep contraction (a filter gradient: M = input
    features x window, K = batch x output positions) as gemms over blocks of K: kb
    contracting positions of a `run` of positions along which the kernel matrix B is one
    stride (`b_stride`), so every block of B is a strided view of the kernel; `b_outer`:
    the (size, stride) of the kernel's contracting dims outside the run, major -> minor.
    The patch matrix is row-major (rows_first: its im2col lines, of `line` elements, run
    along K, and a block holds whole lines of each row) or column-major (lines along M:
    a block is a range of lines)."""
    kb: int
    line: int
    run: int
    b_stride: int
    b_outer: tuple
    rows_first: bool = True

    @property
    def blocks_per_run(self) -> int:
        return -(-self.run // self.kb)


def kblock_plan(plan, rhs, dn) -> KBlockPlan | None:
    """The KBlockPlan of a gemm convolution's plan, else None: one group, no outer row
    loops, A materialized with its lines along the contracting dims (row-major) or along
    the rows (column-major), f32 / f64, K at least twice M and C small (a filter gradient;
    other convolutions keep emitters/conv.py's row and depth blocks)."""
    if plan is None or plan.a_view or plan.outer or plan.groups != 1 \
            or plan.t not in GEMM_TYPES or plan.out_t != plan.t:
        return None
    es = 8 if plan.t == "f64" else 4
    dims = a_dims(plan.rows, plan.cols, plan.a_rows_first)
    if dims[-1][0] != ("c" if plan.a_rows_first else "r") or plan.k < 2 * plan.m \
            or plan.m * plan.n * es > KBLOCK_MAX_C_BYTES:
        return None
    line = _line_size(dims, plan.line_dims) if plan.a_rows_first else 1
    rst = strides_of(rhs)
    kd = [(size, rst[dn.kernel_input_feature] if kind == "i" else rst[dn.kernel_spatial[j]])
          for kind, j, size in plan.cols]
    split = len(kd)
    while split > 0 and collapse(kd[split - 1:]) is not None:
        split -= 1
    run, b_stride = collapse(kd[split:])
    if run % line:
        return None
    if plan.a_rows_first:
        # blocks of equal size (whole lines) in a run, as large as KBLOCK_BYTES allows
        run_lines = run // line
        n = -(-run_lines // max(KBLOCK_BYTES // (plan.m * line * es), 1))
        kb = -(-run_lines // n) * line
    else:
        # whole depth blocks of the gemm (KBLOCK_MIN_DEPTH = its KC) as KBLOCK_BYTES allows
        most = KBLOCK_BYTES // (plan.m * es) // KBLOCK_MIN_DEPTH * KBLOCK_MIN_DEPTH
        kb = min(max(most, KBLOCK_MIN_DEPTH), run)
    return KBlockPlan(kb=kb, line=line, run=run, b_stride=b_stride,
                      b_outer=tuple((s, st) for s, st in kd[:split] if s != 1),
                      rows_first=plan.a_rows_first)


def batched_plan(instr, plan):
    """(the plan of one batch element's convolution, a stand-in for that convolution with
    .operands[k].shape, .shape, .attrs, .name) when the only rows the plan loops over are
    the batch (NCHW / NCW outputs) and the batch is the lhs's and the output's most-major
    dim (one element's strides are the whole array's), for emitters/conv_batched.py; else
    None. One group, f32 / f64, A materialized."""
    if plan is None or plan.a_view or plan.groups != 1 or len(plan.outer) != 1 \
            or plan.t not in GEMM_TYPES or plan.out_t != plan.t:
        return None
    dn = instr.attrs["dim_labels"]
    lhs, rhs, out = instr.operands[0].shape, instr.operands[1].shape, instr.shape
    if plan.outer[0] != (out.dims[dn.output_batch], strides_of(out)[dn.output_batch]) \
            or lhs.minor_to_major[-1] != dn.input_batch \
            or out.minor_to_major[-1] != dn.output_batch:
        return None

    def one_of(s, d):
        return Shape(s.element_type, tuple(1 if k == d else n for k, n in enumerate(s.dims)),
                     s.layout)
    lhs1, out1 = one_of(lhs, dn.input_batch), one_of(out, dn.output_batch)
    p1 = plan_for(instr.attrs, lhs1, rhs, out1)
    if p1 is None or p1.outer or p1.a_view:
        return None
    one = SimpleNamespace(operands=[SimpleNamespace(shape=lhs1), SimpleNamespace(shape=rhs)],
                          shape=out1, attrs=instr.attrs, name=instr.name)
    return p1, one
