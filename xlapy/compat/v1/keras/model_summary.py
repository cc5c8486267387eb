"""Model.summary (keras/models.py's Model has it from SummaryMethods): Keras' table of
layers, output shapes and parameter counts, and for models of several inputs or outputs the
table with each layer call's connections (layer[call][tensor]); then the totals."""

from __future__ import annotations

import numpy as np

from xlapy.compat.v1.keras import backend as K


class SummaryMethods:
    """summary() for Model (uses its name, layers, weights, inputs and outputs)."""

    def summary(self, line_length=None, positions=None, print_fn=None) -> None:
        """Keras' table: layer (type), output shape, parameter count; then the totals."""
        p = print_fn or print
        width = line_length or 65
        pos = [int(width * f) for f in (positions or [0.45, 0.85, 1.0])]

        def row(*cols):
            line = ""
            for c, end in zip(cols, pos):
                line = (line + str(c))[:end].ljust(end)
            p(line.rstrip())
        p(f'Model: "{self.name}"')
        if self._is_multi():
            self._summary_graph(p, line_length or 98, positions)
        else:
            p("_" * width)
            row("Layer (type)", "Output Shape", "Param #")
            p("=" * width)
            layers = self.layers
            for k, layer in enumerate(layers):
                n = int(sum(np.prod(w.shape.as_list()) for w in layer.weights))
                shape = getattr(layer, "_keras_output_shape", None)
                shape = "multiple" if shape is None else str(shape).replace(", )", ",)")
                row(f"{layer.name} ({type(layer).__name__})", shape, n)
                p("=" * width if k == len(layers) - 1 else "_" * width)
        width = line_length or (98 if self._is_multi() else 65)
        ws = self.weights
        trainable = {id(w) for w in self.trainable_weights}
        total = int(sum(np.prod(w.shape.as_list()) for w in ws))
        tr = int(sum(np.prod(w.shape.as_list()) for w in ws if id(w) in trainable))
        p(f"Total params: {total:,}")
        p(f"Trainable params: {tr:,}")
        p(f"Non-trainable params: {total - tr:,}")
        p("_" * width)


    def _summary_graph(self, p, width, positions):
        """summary's table for a model of several inputs or outputs: the Input rows, then
        each layer call with what it is connected to (layer[call][tensor])."""
        pos = [int(width * f) for f in (positions or [0.33, 0.55, 0.67, 1.0])]

        def row(*cols):
            line = ""
            for c, end in zip(cols, pos):
                line = (line + str(c))[:end - 1].ljust(end)
            p(line.rstrip())
        known = {id(t): f"{n}[0][0]" for t, n in zip(self.inputs, self.input_names)}
        rows = [(f"{n} (InputLayer)", str(tuple(t.shape.as_list())).replace(", )", ",)"), 0,
                 []) for t, n in zip(self.inputs, self.input_names)]
        mine = self.layers
        node: dict = {}
        for layer, outs in K._CALLS.get(self._outputs.graph, []):
            if not any(layer is x for x in mine):
                continue
            k = node[id(layer)] = node.get(id(layer), -1) + 1
            own = {id(o) for o in outs}
            # the tensors from other calls (or the inputs) that this call's outputs read
            srcs, todo, seen = [], [o.op for o in outs], set()
            while todo:
                op = todo.pop()
                if id(op) in seen:
                    continue
                seen.add(id(op))
                for t in op.inputs:
                    if id(t) in known and id(t) not in own:
                        if known[id(t)] not in srcs:
                            srcs.append(known[id(t)])
                    else:
                        todo.append(t.op)
            for j, o in enumerate(outs):
                known[id(o)] = f"{layer.name}[{k}][{j}]"
            if k == 0:      # (one row per layer: a shared layer lists all its calls)
                n = int(sum(np.prod(w.shape.as_list()) for w in layer.weights))
                shape = tuple(outs[0].shape.as_list()) if outs[0].shape.ndims is not None \
                    and len(outs) == 1 else "multiple"
                rows.append((f"{layer.name} ({type(layer).__name__})",
                             str(shape).replace(", )", ",)"), n, srcs))
            else:
                i = next(i for i, r in enumerate(rows)
                         if r[0] == f"{layer.name} ({type(layer).__name__})")
                rows[i] = (rows[i][0], "multiple", rows[i][2], rows[i][3] + srcs)
        p("_" * width)
        row("Layer (type)", "Output Shape", "Param #", "Connected to")
        p("=" * width)
        for i, (name, shape, n, srcs) in enumerate(rows):
            row(name, shape, n, srcs[0] if srcs else "")
            for extra in srcs[1:]:
                row("", "", "", extra)
            p("=" * width if i == len(rows) - 1 else "_" * width)
