"""The model-class workloads of model_fns.py in torch (eager and torch.compile), taking the
same NumPy parameters and inputs (NHWC / HWIO) and returning results laid out as JAX's, so
that models.py checks them the same way. Convolutions run in torch's channels-last memory
format on NCHW views (no copies of the inputs per call)."""

from __future__ import annotations

import os

import model_fns as M


# torch.compile traces the LSTM's Python loop unrolled (150 cells, and their gradient):
# its compile took over six minutes on the development machine, so that row is eager only
EAGER_ONLY = ("lstm",)


def torch_models() -> dict:
    """{model: make(form, params, inputs) -> {"torch eager": fn, "torch": fn}}; {} without
    torch."""
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return {}
    torch.set_num_threads(os.cpu_count() or 1)

    def nchw(x):      # NHWC array -> NCHW view in channels-last memory
        return torch.from_numpy(x).permute(0, 3, 1, 2)

    def oihw(w):      # HWIO -> OIHW view
        return torch.from_numpy(w).permute(3, 2, 0, 1)

    def nhwc(t):
        return t.permute(0, 2, 3, 1)

    def hwio(t):
        return t.permute(2, 3, 1, 0)

    def conv(x, w, groups=1):
        k = w.shape[-1]
        return F.conv2d(x, w, padding=k // 2, groups=groups)

    def xent(logits, labels):
        return -(labels * torch.log_softmax(logits, -1)).sum(-1).mean()

    def batch_norm(x, g, b):
        mu = x.mean((0, 2, 3), keepdim=True)
        var = ((x - mu) ** 2).mean((0, 2, 3), keepdim=True)
        return (x - mu) * (g[:, None, None] / torch.sqrt(var + 1e-5)) + b[:, None, None]

    def folded(x, g, b):
        return x * g[:, None, None] + b[:, None, None]

    def cnn_logits(p, x):
        w1, b1, w2, b2, w3, b3, w4, b4 = p
        h = F.max_pool2d(torch.relu(conv(x, w1) + b1[:, None, None]), 2)
        h = F.max_pool2d(torch.relu(conv(h, w2) + b2[:, None, None]), 2)
        h = nhwc(h).reshape(h.shape[0], 3136)   # the NHWC flattening order of the others
        return torch.relu(h @ w3 + b3) @ w4 + b4

    def resnet(p, x, norm):
        w1, g1, b1, w2, g2, b2 = p
        h = torch.relu(norm(conv(x, w1), g1, b1))
        return torch.relu(norm(conv(h, w2), g2, b2) + x)

    def attention(p, x, heads=4):
        g, b, wq, wk, wv, wo = p
        bsz, seq, width = x.shape
        dh = width // heads
        h = F.layer_norm(x, (width,), g, b, 1e-5)

        def split(t):
            return t.reshape(bsz, seq, heads, dh).transpose(1, 2)
        q, k, v = split(h @ wq), split(h @ wk), split(h @ wv)
        a = torch.softmax(q @ k.transpose(-1, -2) / dh ** 0.5, -1)
        o = (a @ v).transpose(1, 2).reshape(bsz, seq, width)
        return x + o @ wo

    def mobilenet(p, x, norm):
        wd, g1, b1, wp, g2, b2 = p
        h = torch.clamp(norm(conv(x, wd, groups=x.shape[1]), g1, b1), 0, 6)
        return torch.clamp(norm(conv(h, wp), g2, b2), 0, 6)

    def lstm(p, xs, h0):
        W = M.LSTM_WIDTH
        layers = [p[3 * k:3 * k + 3] for k in range(M.LSTM_DEPTH)]
        hs = [h0] * M.LSTM_DEPTH
        cs = [h0 * 0] * M.LSTM_DEPTH
        ys = []
        for t in range(xs.shape[0]):
            inp = xs[t]
            for k, (wx, wh, bias) in enumerate(layers):
                z = inp @ wx + hs[k] @ wh + bias
                i, f, g, o = (z[:, j * W:(j + 1) * W] for j in range(4))
                cs[k] = torch.sigmoid(f) * cs[k] + torch.sigmoid(i) * torch.tanh(g)
                hs[k] = torch.sigmoid(o) * torch.tanh(cs[k])
                inp = hs[k]
            ys.append(inp)
        return hs[-1], torch.stack(ys)

    # (params to torch, inputs to torch, loss(p, inp), infer(p, inp), params back)
    def conv_params(kinds):
        def to(ps):
            return [oihw(a) if k == "w" else torch.from_numpy(a) for a, k in zip(ps, kinds)]

        def back(ts):
            return [hwio(t) if k == "w" else t for t, k in zip(ts, kinds)]
        return to, back

    def same(ps):
        return [torch.from_numpy(a) for a in ps]

    cnn_to, cnn_back = conv_params("wbwbvvvv")
    res_to, res_back = conv_params("wvvwvv")
    spec = {
        "cnn": (cnn_to, lambda i: [nchw(i[0]), torch.from_numpy(i[1])],
                lambda p, i: xent(cnn_logits(p, i[0]), i[1]),
                lambda p, i: cnn_logits(p, i[0]), cnn_back, lambda y: y),
        "resnet": (res_to, lambda i: [nchw(a) for a in i],
                   lambda p, i: ((resnet(p, i[0], batch_norm) - i[1]) ** 2).mean(),
                   lambda p, i: resnet(p, i[0], folded), res_back, nhwc),
        "attention": (same, same, lambda p, i: ((attention(p, i[0]) - i[1]) ** 2).mean(),
                      lambda p, i: attention(p, i[0]), lambda ts: ts, lambda y: y),
        "mobilenet": (res_to, lambda i: [nchw(a) for a in i],
                      lambda p, i: ((mobilenet(p, i[0], batch_norm) - i[1]) ** 2).mean(),
                      lambda p, i: mobilenet(p, i[0], folded), res_back, nhwc),
        "lstm": (same, same,
                 lambda p, i: (lstm(p, i[0], i[1])[0] ** 2).mean() + lstm(p, i[0], i[1])[1].mean(),
                 lambda p, i: lstm(p, i[0], i[1])[0], lambda ts: ts, lambda y: y),
    }

    def make(model):
        to_p, to_i, loss, infer, back, out = spec[model]

        def for_form(form, params, inputs):
            tp, ti = to_p(params), to_i(inputs)
            if model in ("resnet", "mobilenet", "cnn"):
                ti = [t.contiguous(memory_format=torch.channels_last) if t.dim() == 4 else t
                      for t in ti]
                tp = [t.contiguous(memory_format=torch.channels_last) if t.dim() == 4 else t
                      for t in tp]
            if form == "train":
                def step(p, i):
                    gs = torch.func.grad(lambda q: loss(q, i))(p)
                    return [a - 0.01 * g for a, g in zip(p, gs)]
                fn, post = step, back
            else:
                fn, post = infer, out
            fns = {"torch eager": lambda: _np(post(fn(tp, ti)))}
            if model not in EAGER_ONLY:
                comp = torch.compile(fn)
                fns["torch"] = lambda: _np(post(comp(tp, ti)))
            return fns
        return for_form

    def _np(t):
        if isinstance(t, (list, tuple)):
            return [_np(x) for x in t]
        return t.detach().numpy()

    return {m: make(m) for m in spec}
