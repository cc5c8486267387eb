"""Random and model-form convolution cases shared by the convolution tests (importable as
`xlapy_tests_cpu_conv_cases`, see conftest.py)."""

from __future__ import annotations

import numpy as np

import xlapy_tests_cpu_optable as O


def out_sizes(insp, win, stride, ldil, rdil, pl, ph) -> list | None:
    """A convolution's output spatial sizes, or None where a window does not fit."""
    outsp = []
    for s in range(len(insp)):
        padded = (insp[s] - 1) * ldil[s] + 1 + pl[s] + ph[s]
        eff = (win[s] - 1) * rdil[s] + 1
        if padded < eff:
            return None
        outsp.append((padded - eff) // stride[s] + 1)
    return outsp


def draw(make, rng, n: int) -> list:
    """n cases of make(rng), skipping the None (invalid) ones."""
    cases = []
    while len(cases) < n:
        c = make(rng)
        if c is not None:
            cases.append(c)
    return cases


def window_text(win, stride, pl, ph, ldil, rdil, rev) -> str:
    """The window attribute's text of a convolution."""
    return (f"size={'x'.join(map(str, win))} stride={'x'.join(map(str, stride))} "
            f"pad={'x'.join(f'{a}_{b}' for a, b in zip(pl, ph))} "
            f"lhs_dilate={'x'.join(map(str, ldil))} rhs_dilate={'x'.join(map(str, rdil))} "
            f"rhs_reversal={'x'.join(map(str, rev))}")


def random_window(rng, nsp: int, insp=(1, 8), win_hi=4, ldil=(1, 1, 2)):
    """(input spatial sizes, window sizes, output spatial sizes, window text) of a random
    window over nsp spatial dims (strides 1-2, kernel dilation, padding from -1, reversal),
    or None where it does not fit. Draws in a fixed order, so seeds keep their cases."""
    sizes = [int(rng.integers(*insp)) for _ in range(nsp)]
    win = [int(rng.integers(1, win_hi)) for _ in range(nsp)]
    stride = [int(rng.integers(1, 3)) for _ in range(nsp)]
    ld = [int(rng.choice(ldil)) for _ in range(nsp)]
    rdil = [int(rng.choice([1, 1, 2])) for _ in range(nsp)]
    pl = [int(rng.integers(-1, 3)) for _ in range(nsp)]
    ph = [int(rng.integers(-1, 3)) for _ in range(nsp)]
    rev = [int(rng.random() < 0.3) for _ in range(nsp)]
    outsp = out_sizes(sizes, win, stride, ld, rdil, pl, ph)
    if outsp is None:
        return None
    return sizes, win, outsp, window_text(win, stride, pl, ph, ld, rdil, rev)


def features_last(rng, batch: int, insp, outsp, in_features: int, out_features: int):
    """(lhs dims, out dims, lhs labels, out labels) with the batch and spatial dims of the
    lhs and the output each in a random order and the features innermost."""
    nsp = len(insp)
    lperm = [int(x) for x in rng.permutation(nsp + 1)]
    oper = [int(x) for x in rng.permutation(nsp + 1)]
    lab = ["b"] + [str(s) for s in range(nsp)]
    ldims, odims = [batch] + list(insp), [batch] + list(outsp)
    return (tuple(ldims[j] for j in lperm) + (in_features,),
            tuple(odims[j] for j in oper) + (out_features,),
            "".join(lab[j] for j in lperm) + "f", "".join(lab[j] for j in oper) + "f")


def _case(rng, nsp=None):
    """(lhs dims, lhs layout, rhs dims, rhs layout, out dims, out layout, window text,
    labels, extra) of a random valid convolution, or None."""
    nsp = nsp or int(rng.choice([1, 2, 2, 2, 3]))
    fg, bg = 1, 1
    kind = rng.integers(0, 4)
    if kind == 1:
        fg = int(rng.integers(2, 4))
    elif kind == 2:
        bg = int(rng.integers(2, 4))
    i_g = int(rng.integers(1, 5)) if fg == 1 else int(rng.integers(2, 4))
    batch = int(rng.integers(1, 4)) * bg
    n_out = int(rng.integers(1, 4)) * max(fg, bg)
    win = [int(rng.integers(1, 4)) for _ in range(nsp)]
    stride = [int(rng.integers(1, 3)) for _ in range(nsp)]
    ldil = [int(rng.choice([1, 1, 2])) for _ in range(nsp)]
    rdil = [int(rng.choice([1, 1, 2])) for _ in range(nsp)]
    pl = [int(rng.integers(-1, 3)) for _ in range(nsp)]
    ph = [int(rng.integers(-1, 3)) for _ in range(nsp)]
    rev = [int(rng.integers(0, 2)) if rng.random() < 0.3 else 0 for _ in range(nsp)]
    insp = [int(rng.integers(1, 7)) for _ in range(nsp)]
    outsp = out_sizes(insp, win, stride, ldil, rdil, pl, ph)
    if outsp is None:
        return None
    rank = nsp + 2
    lperm, rperm, operm = (list(rng.permutation(rank)) for _ in range(3))

    def labels(perm, a, b_):
        chars = [""] * rank
        chars[perm[0]], chars[perm[1]] = a, b_
        for s in range(nsp):
            chars[perm[2 + s]] = str(s)
        return "".join(chars)

    def dims(perm, a, b_, sp):
        d = [0] * rank
        d[perm[0]], d[perm[1]] = a, b_
        for s in range(nsp):
            d[perm[2 + s]] = sp[s]
        return tuple(d)

    c_in = i_g * fg
    ld = dims(lperm, batch, c_in, insp)
    rd = dims(rperm, i_g if fg > 1 else c_in, n_out, win)
    od = dims(operm, batch // bg, n_out, outsp)
    layouts = [tuple(int(x) for x in rng.permutation(rank)) if rng.random() < 0.4 else None
               for _ in range(3)]
    window = window_text(win, stride, pl, ph, ldil, rdil, rev)
    text = f"{labels(lperm, 'b', 'f')}_{labels(rperm, 'i', 'o')}->{labels(operm, 'b', 'f')}"
    extra = (f", feature_group_count={fg}" if fg > 1 else "") + \
        (f", batch_group_count={bg}" if bg > 1 else "")
    return ld, layouts[0], rd, layouts[1], od, layouts[2], window, text, extra


def _module(cases, t="f32", seed=0, rng=None, name="convs"):
    """A module of one convolution per case (the extra attribute text, a case's ninth
    element, may be left out) and standard-normal arguments from rng (else from seed)."""
    rng = np.random.default_rng(seed) if rng is None else rng
    m = O.ModuleText(name=name)
    args = []
    for ld, ll, rd, rl, od, ol, window, labels, *more in cases:
        extra = more[0] if more else ""
        pl = m.param(O.ShapeCase("", ld, ll).text(t))
        pr = m.param(O.ShapeCase("", rd, rl).text(t))
        args += [rng.standard_normal(ld).astype(O.DTYPE[t]),
                 rng.standard_normal(rd).astype(O.DTYPE[t])]
        m.op(O.ShapeCase("", od, ol).text(t),
             f"convolution({pl}, {pr}), window={{{window}}}, dim_labels={labels}{extra}",
             f"conv {labels}{extra} {window} {ld} {rd}")
    return m, args


# the forms jax.grad emits for NHWC / HWIO and NCHW / OIHW layers (forward, input gradient
# with the reversed kernel, filter gradient), a strided layer's, pointwise and grouped ones
_MODEL_FORMS = (
    ((4, 9, 9, 8), None, (3, 3, 8, 16), None, (4, 9, 9, 16), None, "size=3x3 pad=1_1x1_1",
     "b01f_01io->b01f", ""),
    ((4, 9, 9, 16), None, (3, 3, 8, 16), None, (4, 9, 9, 8), None,
     "size=3x3 pad=1_1x1_1 rhs_reversal=1x1", "b01f_01oi->b01f", ""),
    ((4, 9, 9, 8), None, (4, 9, 9, 16), None, (3, 3, 8, 16), None, "size=9x9 pad=1_1x1_1",
     "f01b_i01o->01bf", ""),
    ((4, 8, 10, 10), None, (16, 8, 3, 3), None, (4, 16, 5, 5), None,
     "size=3x3 stride=2x2 pad=1_1x1_1", "bf01_oi01->bf01", ""),
    ((4, 16, 5, 5), None, (16, 8, 3, 3), None, (4, 8, 10, 10), None,
     "size=3x3 pad=1_2x1_2 lhs_dilate=2x2 rhs_reversal=1x1", "bf01_io01->bf01", ""),
    ((4, 8, 10, 10), None, (4, 16, 5, 5), None, (8, 16, 3, 3), None,
     "size=5x5 pad=1_0x1_0 rhs_dilate=2x2", "fb01_io01->bf01", ""),
    ((2, 7, 7, 12), None, (1, 1, 12, 20), None, (2, 7, 7, 20), None, "size=1x1",
     "b01f_01io->b01f", ""),
    ((2, 7, 7, 12), None, (2, 7, 7, 20), None, (1, 1, 12, 20), None, "size=7x7",
     "f01b_i01o->01bf", ""),
    ((2, 6, 6, 12), None, (3, 3, 4, 9), None, (2, 6, 6, 9), None, "size=3x3 pad=1_1x1_1",
     "b01f_01io->b01f", ", feature_group_count=3"),
    ((3, 6, 6, 6), None, (3, 6, 6, 6), None, (3, 3, 2, 6), None, "size=6x6 pad=1_1x1_1",
     "f01b_i01o->01bf", ", batch_group_count=3"),
)


def _depthwise_case(rng):
    """A random depthwise convolution with features innermost (the direct kernel's)."""
    nsp = int(rng.choice([1, 2, 2, 3]))
    g, mult = int(rng.integers(1, 40)), int(rng.choice([1, 1, 1, 2, 3]))
    g = max(g, 2)
    w = random_window(rng, nsp)
    if w is None:
        return None
    insp, win, outsp, window = w
    batch = int(rng.integers(1, 4))
    sp = "".join(str(s) for s in range(nsp))
    # kernel: spatial, then i (size 1) and o, or o and i ("01oi", the input gradient's)
    kio = "io" if rng.random() < 0.5 else "oi"
    rd = tuple(win) + ((1, g * mult) if kio == "io" else (g * mult, 1))
    ld, od, llab, olab = features_last(rng, batch, insp, outsp, g, g * mult)
    return (ld, None, rd, None, od, None, window, f"{llab}_{sp}{kio}->{olab}",
            f", feature_group_count={g}")
