"""The TF 1.x symbols xlapy.compat.v1 supports, listed from the package itself.

    .venv/bin/python -m xlapy.tools.compat_symbols            # print the list
    .venv/bin/python -m xlapy.tools.compat_symbols --write    # rewrite it in docs/compat_v1.md

A namespace (tf, tf.nn, tf.train, ...) exports its public names that are not modules;
namespaces that only re-export (tf, tf.nn, tf.train) export every such name, the others
only what is defined in their own package (so tf.summary's helper imports are not API).
tests/compat/test_symbols.py fails when a listed symbol disappears or a new one is not
listed yet.
"""

from __future__ import annotations

import __future__
import argparse
import importlib
import pathlib
import re
import sys
import types

ROOT = "xlapy.compat.v1"
# tf namespaces: (path under tf, re-export only). Listed if the module exists.
NAMESPACES = [
    ("", True), ("nn", True), ("nn.rnn_cell", True), ("train", True), ("summary", False),
    ("losses", False), ("layers", True), ("gfile", False), ("logging", False),
    ("compat", False), ("test", False), ("app", False), ("app.flags", False),
    ("errors", False), ("image", False), ("math", True), ("random", True), ("linalg", True),
    ("signal", False), ("spectral", False), ("bitwise", False), ("manip", False),
    ("quantization", False), ("queue", True), ("profiler", False),
    ("contrib.image", False), ("contrib.losses.metric_learning", False),
    ("contrib.data", True), ("contrib.stateless", True),
    ("metrics", False), ("data", True), ("data.experimental", False), ("debugging", True),
    ("initializers", True), ("io", True), ("python_io", True), ("contrib.compiler.jit", False),
    ("contrib.rnn", True), ("contrib.crf", False), ("contrib.layers", True), ("contrib.opt", True),
    ("contrib.tensorboard.plugins.projector", False), ("contrib.slim", True),
    ("contrib.slim.learning", True), ("contrib.slim.evaluation", False),
    ("contrib.slim.model_analyzer", False), ("contrib.metrics", False),
    ("contrib.losses", True), ("contrib.util", True), ("contrib.predictor", False),
    ("contrib.framework", True), ("contrib.training", True), ("contrib.seq2seq", False),
    ("contrib.legacy_seq2seq", False), ("contrib.distributions", True),
    ("distributions", False), ("sparse", True), ("strings", True), ("lookup", True),
    ("contrib.lookup", True), ("estimator", True),
    ("contrib.summary", False),
    ("estimator.inputs", True), ("estimator.export", False),
    ("estimator.experimental", False), ("feature_column", True),
    ("keras", True), ("keras.layers", True),
    ("keras.models", True), ("keras.callbacks", True), ("keras.backend", True),
    ("keras.optimizers", True), ("keras.losses", True), ("keras.activations", True),
    ("keras.utils", False), ("keras.preprocessing.sequence", False),
    ("keras.preprocessing.text", False), ("keras.preprocessing.image", False),
    ("keras.regularizers", False), ("keras.initializers", False),
    ("keras.constraints", False), ("keras.metrics", True),
    ("graph_util", False), ("saved_model", True), ("saved_model.loader", False),
    ("saved_model.builder", False), ("saved_model.signature_def_utils", False),
    ("saved_model.utils", False), ("saved_model.main_op", True), ("sysconfig", False),
    ("config", False), ("config.experimental", False), ("config.threading", False),
]
# a namespace's own imports of the error classes are no part of its API (tf.errors has them)
ERRORS = "xlapy.compat.v1.errors"
BEGIN = "<!-- BEGIN GENERATED SYMBOLS: .venv/bin/python -m xlapy.tools.compat_symbols --write -->"
END = "<!-- END GENERATED SYMBOLS -->"
DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "compat_v1.md"


def _namespace(path: str):
    name = f"{ROOT}.{path}" if path else ROOT
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name and name.startswith(e.name):  # the namespace itself does not exist
            return None
        raise


def _exported(mod, reexport: bool) -> list:
    own = mod.__name__
    names = []
    for n in dir(mod):
        if n.startswith("_"):
            continue
        v = getattr(mod, n)
        if isinstance(v, types.ModuleType) or v is __future__.annotations:
            continue
        where = getattr(v, "__module__", None) if isinstance(v, (type, types.FunctionType)) \
            else type(v).__module__
        if where in ("builtins", None) and not isinstance(v, (type, types.FunctionType)):
            names.append(n)  # constants: tf.newaxis, tf.logging.INFO, error codes
            continue
        if not (where or "").startswith(ROOT):
            continue
        if where == ERRORS and own != ERRORS and isinstance(v, type):
            continue
        if reexport or where.startswith(own):
            names.append(n)
    return sorted(names)


def supported() -> dict:
    """{"tf.nn": [names...], ...} for every namespace that exists."""
    out = {}
    for path, reexport in NAMESPACES:
        mod = _namespace(path)
        if mod is not None:
            out["tf" + ("." + path if path else "")] = _exported(mod, reexport)
    return out


def render(symbols: dict) -> str:
    total = sum(len(v) for v in symbols.values())
    lines = [BEGIN, "", f"{total} symbols in {len(symbols)} namespaces.", ""]
    for ns, names in symbols.items():
        lines.append(f"- `{ns}` ({len(names)}): " + ", ".join(names))
    lines += ["", END]
    return "\n".join(lines)


def parse(text: str) -> dict:
    """The symbols listed in the generated block of `text` (docs/compat_v1.md)."""
    if BEGIN not in text or END not in text:
        return {}
    block = text[text.index(BEGIN):text.index(END)]
    out = {}
    for m in re.finditer(r"^- `([\w.]+)` \(\d+\): (.*)$", block, re.M):
        out[m.group(1)] = [s.strip() for s in m.group(2).split(",") if s.strip()]
    return out


def write(doc: pathlib.Path = DOC) -> None:
    text = doc.read_text(encoding="utf-8")
    block = render(supported())
    if BEGIN in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip() + "\n\n## Supported TF 1.x symbols\n\n" + block + "\n"
    doc.write_text(text, encoding="utf-8")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--write", action="store_true", help=f"rewrite the list in {DOC}")
    args = p.parse_args(argv)
    if args.write:
        write()
        print(f"wrote {DOC}")
    else:
        print(render(supported()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
