"""Dumping modules as XLA's --xla_dump_* flags ask, from XLAPY_FLAGS.

  --xla_dump_to=DIR             where dumps go (nothing is dumped without it, except for
                                --xla_generate_hlo_graph, which defaults to ./dumps)
  --xla_dump_hlo_as_text        module_NNNN.<name>.before_optimizations.txt and
                                module_NNNN.<name>.cpu_after_optimizations.txt (the
                                default format when no other is chosen)
  --xla_dump_hlo_as_dot         the same as Graphviz .dot files (fusions drawn as boxes)
  --xla_dump_hlo_as_html        the same as self-contained .html pages
  --xla_dump_hlo_pass_re=RE     also module_NNNN.<name>.SSSS.<pipeline>.after_<pass>.txt for
                                every pass whose name matches RE (and the module before
                                the first one)
  --xla_generate_hlo_graph=RE   one Graphviz file per pass for modules whose name matches
                                RE (the older TensorFlow flag)
  --xla_dump_large_constants    print every literal in the text dumps (by default, as XLA,
                                literals of more than printer.LARGE_CONSTANT elements are
                                {...}: a model's weights take a minute to print)

The cpu backend's LLVM IR (before/after optimization) and assembly are written next to
these files, by the compiler (see backends/cpu/compiler.py).
"""

from __future__ import annotations

import functools
import itertools
import pathlib
import re

from xlapy.flags import Flags, flags
from xlapy.hlo.ir import Module
from xlapy.hlo.graphviz import _esc, module_to_dot

_module_ids = itertools.count(1)
_TITLE = "XLAPY_GRAPH_TITLE"  # placeholder: one graph text serves unchanged passes


class Dumper:
    """Dumps for one compilation; `observers()` are the pipeline hooks for per-pass dumps."""

    def __init__(self, module: Module, fl: Flags | None = None, backend: str = "cpu"):
        self.fl = fl or flags()
        self.backend = backend
        self.name = module.name
        self.enabled = bool(self.fl.xla_dump_to)
        self.graph_re = (re.compile(self.fl.xla_generate_hlo_graph)
                         if self.fl.xla_generate_hlo_graph else None)
        self.graphs = bool(self.graph_re and self.graph_re.search(module.name))
        self.pass_re = (re.compile(self.fl.xla_dump_hlo_pass_re)
                        if self.fl.xla_dump_hlo_pass_re and self.enabled else None)
        self.active = self.enabled or self.graphs
        self.prefix = f"module_{next(_module_ids):04d}.{_safe(module.name)}" if self.active else ""
        self.root = pathlib.Path(self.fl.xla_dump_to or "dumps")
        self._step = 0
        self._before_dumped = False
        self._last_dot: str | None = None  # graph of the last changed module (title elided)
        self.written: list[pathlib.Path] = []

    def _write(self, filename: str, text: str) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / filename
        path.write_text(text)
        self.written.append(path)

    def formats(self) -> list[str]:
        fmts = []
        if self.fl.xla_dump_hlo_as_text:
            fmts.append("txt")
        if self.fl.xla_dump_hlo_as_dot:
            fmts.append("dot")
        if self.fl.xla_dump_hlo_as_html:
            fmts.append("html")
        return fmts or ["txt"]

    def module(self, module: Module, stage: str) -> None:
        """stage: 'before_optimizations' or '<backend>_after_optimizations'."""
        if not self.enabled:
            return
        for fmt in self.formats():
            self._write(f"{self.prefix}.{stage}.{fmt}",
                        render(module, fmt, f"{self.name} {stage}",
                               large_constants=self.fl.xla_dump_large_constants))

    def raw(self, suffix: str, text: str) -> None:
        if self.enabled:
            self._write(f"{self.prefix}.{suffix}", text)

    def observers(self) -> list:
        """The pipeline observers these flags need (see passes/pipeline.py)."""
        out = []
        if self.pass_re:
            observer = functools.partial(self.text_observer)
            observer.print_large_constants = self.fl.xla_dump_large_constants
            out.append(observer)
        if self.graphs:
            out.append(self.graph_observer)
        return out

    def text_observer(self, pass_name: str, before: str, after: str, changed: bool) -> None:
        """--xla_dump_hlo_pass_re: the module text after each matching pass."""
        self._step += 1
        if self.pass_re.search(pass_name):
            if not self._before_dumped:
                self._write(f"{self.prefix}.0000.{self.backend}.before_{_safe(pass_name)}.txt",
                            before)
                self._before_dumped = True
            self._write(f"{self._tag(pass_name)}.txt", after)

    def graph_observer(self, pass_name: str, module: Module, changed: bool) -> None:
        """--xla_generate_hlo_graph: a Graphviz file after every pass, drawn from the live
        module (an unchanged module reuses the previous drawing)."""
        if not self.pass_re:
            self._step += 1
        if changed or self._last_dot is None:
            self._last_dot = module_to_dot(module, _TITLE)
        title = _esc(f"{self.name} after {pass_name}")
        self._write(f"{self._tag(pass_name)}.dot", self._last_dot.replace(_TITLE, title))

    graph_observer.wants_module = True

    def _tag(self, pass_name: str) -> str:
        return f"{self.prefix}.{self._step:04d}.{self.backend}.after_{_safe(pass_name)}"


def render(module: Module, fmt: str, title: str | None = None,
           large_constants: bool = True) -> str:
    if fmt == "txt":
        return module.to_string(print_large_constants=large_constants)
    if fmt == "dot":
        return module_to_dot(module, title)
    if fmt == "html":
        from xlapy.hlo.html_view import module_to_html  # (only when dumping html: `html`)
        return module_to_html(module, title)
    raise ValueError(fmt)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]", "_", name)
