"""Which convolutions the cpu backend computes with Winograd's minimal filtering
(emitters/conv_winograd.py), and the transform matrices it uses.

F(m x m, r x r) computes an m x m tile of outputs of an r x r kernel from an n x n tile of
the input (n = m + r - 1) with n^2 products instead of m^2 r^2:

    Y = A^T [ (G g G^T) * (B^T d B) ] A        (* elementwise)

Summed over the input features, the n^2 elementwise products become n^2 gemms
[tiles, C] x [C, K], so a 3x3 convolution does 16 / 36 = 0.44x of the direct method's
multiply-adds with F(2x2, 3x3). The matrices come from Toom-Cook interpolation at the given
points (and infinity): A^T and G from the points, B^T solved so that the identity holds,
checked exactly in rational arithmetic when a convolution first needs them (computing all
of them took 10 ms CPU, which every process importing the cpu backend paid when it was done
at import).

Taken (winograd_plan): f32, bf16 or f16 (TYPES), two spatial dims, a 3x3 (or 5x5: below)
window (or one spatial dim, a window of 3 or 5, at least MIN_FEATURES_1D input and output
features: F(2, 3) and F(2, 5), emitted as the two-dim form of a size-1 first dim, as_2d),
stride 1, no dilation, one group, any padding (negative too), kernel reversal, any
dim_labels and layouts the gemm path (conv_plan) takes, except one to four output
features (the direct kernel of conv_one_output.py is faster there), at least
MIN_INPUT_FEATURES input features, MIN_TILES tiles and MIN_FLOPS of direct work (measured
below);
XLAPY_FLAGS=--xla_cpu_winograd=false turns it off.

Which algorithm: measured against an f64 reference, as the largest error over the
tolerance 1e-4 + 1e-4 |ref| the convolution tests use (SAME padding, standard-normal input
and kernel as in the tests, so |ref| reaches 100-225), the compiled code against the gemm
path (its own error):
  F(2x2, 3x3): 4x16x16 C=K=64 0.20 (gemm path 0.33); 2x16x16 C=K=256 0.79 (0.49);
  F(2x2, 5x5), the CNN's conv2 shapes 10x14x14 C=32 K=64 and C=64 K=32: 2.1 and 2.7 (0.44
    and 0.53): over the tolerance (it took the 50x14x14x32 -> 64 layer from 10.4 to 4.9 ms);
  F(1x2, 5x5) (Winograd along the second spatial dim, the direct sum along the first: 30
    products per 2 outputs instead of 50), same shapes: 0.63 and 0.79, its largest
    absolute error below the gemm path's (9.2e-5 and 1.4e-4 against 1.4e-4 and 2.5e-4).
    Used for 5x5 windows (the error grows with C: at most MAX_FEATURES[5] input features,
    only 32 and 64 were measured on the compiled code).
  F(2, 5), one spatial dim (NWC 16x128xC -> 128, SAME, standard-normal data, three seeds):
    C=32 0.36-0.37, C=64 0.59-0.62 (gemm path 0.17-0.22), C=128 0.85-1.28 (0.25): at most
    MAX_FEATURES_1D[5] = 64; other points did not help at C=128 (0, +-1, +-1/2: 1.11-1.21;
    0, +-1, 2, -1/2: 0.69-1.31; 0, +-1, 1/2, -2: 0.76-0.85). F(2, 3): C=32-256 0.04-0.23,
    as the gemm path's.
  F(2x2, 3x3) at 2x8x8 C=K=512: 0.97 (0.48); 1x8x8 C=1024 K=256: 1.00 (0.70): at the
    tolerance, so 3x3 windows take it up to MAX_FEATURES[3] = 256 input features.
A numpy model of the same f32 arithmetic (kernel scaled by 1/sqrt(9C)): C=K=64 direct
0.007, F(2x2, 3x3) 0.014, F(4x4, 3x3) 0.22-0.24; C=K=256 0.014, 0.029 and 0.48-0.61 (points
+-1/2 or +-2): F(4x4, 3x3)'s error is 15-25x the direct method's and grows with C, so
F(2x2, 3x3) is the one used for 3x3 windows, although it is slower: the emitter is generic
in the tile size, and with F(4x4, 3x3) the ResNet block's 16x32x32x64 3x3 -> 64 layer took
4.2-4.3 ms against F(2x2, 3x3)'s 6.1-6.3 (gemm path 11.6; one thread, CPU time, load ~7,
384 KiB blocks; relative error on it 6.9e-6 against 1.0e-6).
Filter gradients keep the gemm path. Tried: F(3x3, 2x2) over 2x2 chunks of the window (the
output gradient), the chunks summed in the transformed domain by 16 gemms [C, chunks] x
[chunks, K]; the ResNet block's 16x32x32x64 filter gradient took 8.1 ms against 13.3, but
its error was 1.2-1.4 of the tolerance above (gemm path 0.60-0.68; largest error relative
to the largest result 4.2-5.0e-7 against 4.1-4.7e-7), 0.34-0.39 against 0.22-0.30 at
4-8x16x16 C=K=32-64.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction
from types import SimpleNamespace

from xlapy.backends.cpu.passes.conv_plan import conv_plan, one_output_plan
from xlapy.flags import flags
from xlapy.hlo.attributes import ConvDimensionNumbers, Window
from xlapy.hlo.shapes import Layout, Shape

# Measured against the gemm path (one thread, CPU time, same process, load ~7; C input
# and K output features, 8x32x32 outputs): C=K=8 0.33x, 16 0.44x, 32 0.53x, 64 0.49x,
# 128 0.49x, C=64 K=16 0.51x, C=3 K=64 0.54x, C=8 K=1 0.61x; a 2x224x224 C=3 K=64 layer
# 0.55x. Slower: one input feature (2.6x: the direct kernel of conv_depthwise.py takes it)
# and few tiles (1x4x4 outputs, 4 tiles, C=K=64: 1.24x, the kernel transform dominates;
# 1x6x6, 9 tiles: 0.85x; 2x8x8, 32 tiles, C=K=16: 0.58x).
# bf16 and f16 operands are widened as the transforms read them (sums in f32, the result
# rounded once, as the gemm path's), f32 or the operands' type out
TYPES = ("f32", "bf16", "f16")
MIN_INPUT_FEATURES = 2
MIN_TILES = 16
MIN_FLOPS = 1 << 20      # direct multiply-adds x 2: smaller ones are not worth the code
# outputs per tile along each spatial dim, by window: F(2x2, 3x3); F(1x2, 5x5) (Winograd
# along the second spatial dim only: F(2x2, 5x5) is not accurate enough, docstring) for at
# most MAX_FEATURES input features (by window: the error grows with C, docstring)
TILES = {(3, 3): (2, 2), (5, 5): (1, 2)}
MAX_FEATURES = {3: 256, 5: 64}
# one spatial dim (NWC / NCW): computed as the two-dim form of a size-1 first dim, window
# 1 x r (as_2d), F(2, r) along the second
TILES_1D = {3: 2, 5: 2}
MAX_FEATURES_1D = {3: 256, 5: 64}
# and at least MIN_FEATURES_1D input and output features: F(2, r) against the gemm path
# (one thread, CPU time, load ~9; batch x width x C -> K, window): 16x128x64 -> 128, 5:
# NWC 0.66x, NCW 0.67x; 16x128x64 -> 64, 3: 0.75x / 0.54x; 16x128x256 -> 256, 3: 0.69x /
# 0.78x; 1x256x64 -> 64, 5: 0.71x / 0.57x; but 32x64x4 -> 64, 5: 1.39x / 1.12x;
# 8x512x32 -> 16, 5: 1.14x / 0.84x; 64x100x16 -> 32, 3: 1.02x / 0.97x (the gemm path's
# direct phase reads so few features straight from the lhs)
MIN_FEATURES_1D = 32
POINTS = {(2, 3): (0, 1, -1), (4, 3): (0, 1, -1, Fraction(1, 2), Fraction(-1, 2)),
          (2, 5): (0, 1, -1, 2, -2)}


def _solve(rows: list, rhs: list) -> list:
    """x with rows . x = rhs (rational Gauss-Jordan on an overdetermined consistent system)."""
    n = len(rows[0])
    a = [list(r) + [v] for r, v in zip(rows, rhs)]
    piv_rows, r = [], 0
    for c in range(n):
        p = next((i for i in range(r, len(a)) if a[i][c] != 0), None)
        if p is None:
            continue
        a[r], a[p] = a[p], a[r]
        a[r] = [v / a[r][c] for v in a[r]]
        for i in range(len(a)):
            if i != r and a[i][c] != 0:
                f = a[i][c]
                a[i] = [x - f * y for x, y in zip(a[i], a[r])]
        piv_rows.append(c)
        r += 1
    if len(piv_rows) != n or any(row[-1] != 0 for row in a[r:]):
        raise ValueError("no Winograd input transform for these points")
    return [a[i][-1] for i in range(n)]


@functools.cache
def matrices(m: int, r: int, points=None):
    """(A^T [m][n], G [n][r], B^T [n][n]) of F(m, r) as Fractions."""
    if m == 1:   # one output: the direct sum (no transform)
        eye = [[Fraction(int(i == j)) for j in range(r)] for i in range(r)]
        return [[Fraction(1)] * r], eye, eye
    pts = [Fraction(p) for p in (points or POINTS[(m, r)])]
    n = m + r - 1
    assert len(pts) == n - 1
    at = [[p ** i for p in pts] + [Fraction(int(i == m - 1))] for i in range(m)]
    g = []
    for j, p in enumerate(pts):
        den = Fraction(1)
        for q in pts[:j] + pts[j + 1:]:
            den *= p - q
        g.append([p ** k / den for k in range(r)])
    g.append([Fraction(int(k == r - 1)) for k in range(r)])
    w = [[at[i][p] * g[p][k] for p in range(n)] for i in range(m) for k in range(r)]
    cols = [_solve(w, [Fraction(int(j == i + k)) for i in range(m) for k in range(r)])
            for j in range(n)]
    bt = [[cols[j][p] for j in range(n)] for p in range(n)]
    # y_i = sum_k g_k d_{i+k} for every g, d: the identity, exactly
    for i in range(m):
        for k in range(r):
            for j in range(n):
                s = sum(at[i][p] * g[p][k] * bt[p][j] for p in range(n))
                assert s == (j == i + k)
    return at, g, bt


@dataclass(frozen=True)
class WinogradPlan:
    ms: tuple         # outputs per tile along each spatial dim
    rs: tuple         # window size along each spatial dim
    batch: int
    c: int            # input features
    k: int            # output features
    in_hw: tuple      # lhs spatial sizes
    out_hw: tuple     # output spatial sizes
    tiles_hw: tuple   # tiles per spatial dim

    @property
    def ns(self) -> tuple:
        """Input patch size along each spatial dim."""
        return tuple(m + r - 1 for m, r in zip(self.ms, self.rs))

    @property
    def points(self) -> int:
        """Products per tile and feature pair: the number of gemms."""
        return self.ns[0] * self.ns[1]

    def matrices(self, s: int):
        """(A^T, G, B^T) along spatial dim s."""
        return matrices(self.ms[s], self.rs[s])

    @property
    def tiles(self) -> int:
        return self.batch * self.tiles_hw[0] * self.tiles_hw[1]


def enabled() -> bool:
    return flags().xla_cpu_winograd


def winograd_plan(instr):
    """The WinogradPlan of a convolution emitters/conv_winograd.py computes, else None."""
    if instr.opcode != "convolution" or not enabled():
        return None
    lhs, rhs, out = instr.operands[0].shape, instr.operands[1].shape, instr.shape
    t = lhs.element_type.name
    if t not in TYPES or rhs.element_type.name != t or out.element_type.name not in (t, "f32"):
        return None
    a = instr.attrs
    dn, w = a["dim_labels"], a["window"]
    nsp = len(dn.output_spatial)
    if nsp not in (1, 2) or a.get("feature_group_count", 1) != 1 \
            or a.get("batch_group_count", 1) != 1:
        return None
    if nsp == 2:
        r, ms, rs = w.size[0], TILES.get(tuple(w.size)), tuple(w.size)
        most = MAX_FEATURES.get(r)
    else:
        r = w.size[0]
        ms, rs = ((1, TILES_1D[r]), (1, r)) if r in TILES_1D else (None, None)
        most = MAX_FEATURES_1D.get(r)
    if ms is None or any(s != 1 for s in w.stride) \
            or any(d != 1 for d in w.lhs_dilate) or any(d != 1 for d in w.rhs_dilate):
        return None
    if conv_plan(instr) is None or one_output_plan(instr) is not None:
        return None   # few output features: the direct kernel (the CNN's 5x5 conv1 input
                      # gradient, 50x28x28x32 -> 1: 1.6 ms, Winograd 3.6 ms; 8x32x32x64
                      # 3x3 -> 3: 0.47 ms, Winograd 1.11)
    c, k = lhs.dims[dn.input_feature], out.dims[dn.output_feature]
    out_hw = tuple(out.dims[d] for d in dn.output_spatial)
    in_hw = tuple(lhs.dims[d] for d in dn.input_spatial)
    if nsp == 1:
        out_hw, in_hw = (1,) + out_hw, (1,) + in_hw
    wp = WinogradPlan(ms=ms, rs=rs, batch=out.dims[dn.output_batch], c=c, k=k,
                      in_hw=in_hw, out_hw=out_hw,
                      tiles_hw=tuple(-(-s // m) for s, m in zip(out_hw, ms)))
    if nsp == 1 and min(c, k) < MIN_FEATURES_1D:
        return None
    if c < MIN_INPUT_FEATURES or wp.tiles < MIN_TILES \
            or 2 * out.size * c * rs[0] * rs[1] < MIN_FLOPS or c > most:
        return None
    return wp


def as_2d(instr):
    """instr itself when it has two spatial dims; else an instruction-like view of a
    one-spatial-dim convolution as the two-dim one with a size-1 first spatial dim (window
    1 x r): the same bytes (the new dim sits next to the spatial one in every layout)."""
    a = instr.attrs
    dn, w = a["dim_labels"], a["window"]
    if len(dn.output_spatial) != 1:
        return instr

    def widen(shape, sp):
        """(the shape with a size-1 dim inserted at sp, the old dims' new indices)."""
        new = [d + (d >= sp) for d in range(shape.rank)]
        m2m = []
        for d in shape.minor_to_major:
            m2m.append(new[d])
            if d == sp:
                m2m.append(sp)
        dims = list(shape.dims)
        dims.insert(sp, 1)
        return Shape(shape.element_type, tuple(dims), Layout(tuple(m2m))), new

    (isp,), (ksp,), (osp,) = dn.input_spatial, dn.kernel_spatial, dn.output_spatial
    lhs, li = widen(instr.operands[0].shape, isp)
    rhs, ki = widen(instr.operands[1].shape, ksp)
    out, oi = widen(instr.shape, osp)
    dn2 = ConvDimensionNumbers(li[dn.input_batch], li[dn.input_feature], (isp, isp + 1),
                               ki[dn.kernel_input_feature], ki[dn.kernel_output_feature],
                               (ksp, ksp + 1), oi[dn.output_batch], oi[dn.output_feature],
                               (osp, osp + 1))
    w2 = Window((1,) + w.size, (1,) + w.stride, (0,) + w.pad_low, (0,) + w.pad_high,
                (1,) + w.lhs_dilate, (1,) + w.rhs_dilate, (0,) + w.rhs_reversal)
    attrs = dict(a, dim_labels=dn2, window=w2)
    return SimpleNamespace(opcode=instr.opcode, name=instr.name, shape=out, attrs=attrs,
                           operands=[SimpleNamespace(shape=lhs), SimpleNamespace(shape=rhs)])
