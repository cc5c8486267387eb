"""Splitting a program's LLVM module into parts that compile in parallel.

LLVM's optimization and code generation take most of a first call's time, and one module
compiles on one core. Like XLA's parallel codegen split (`xla_cpu_parallel_codegen_split_count`),
the cpu compiler cuts the emitted module into up to N parts that `codegen.compile_objects`
compiles concurrently, each in its own LLVM context, and loads as one executable.

  texts = split_module(llmod, "xlapy_entry", parts=2)    # one IR text per part
  may_split(llmod, parts=2)                              # a cheap bound, before printing

Algorithm:
- Units: every defined function that is not `alwaysinline` belongs to exactly one part.
  Functions that reference each other (a kernel and its thread-pool wrapper, a gemm
  epilogue and its body, a while body and its kernels) form one cluster (union-find over
  references), so calls inside a cluster stay inlinable; the entry function is a cluster of
  its own (it only calls kernels once each, where inlining gains nothing).
- Clusters are packed into parts by estimated cost (lines of IR, about one instruction each,
  with the alwaysinline helpers they use counted at each use), largest first into the
  cheapest part. Parts whose cost is under a fifth of the largest are merged back (a part
  has a fixed cost of about a millisecond of LLVM set-up, and a lopsided split only adds it).
- A module gets at most one part per MIN_PART_LINES (150) lines: a part that small takes
  LLVM about 3 ms, no more than handing it to another thread can cost when that thread's
  core has been idle (its wake-up, and the scheduler first placing it beside the caller).
  Measured with `make bench`'s first calls: split in two, sum(x + y*z) (151 lines) took
  24.5 ms against 21.8 unsplit and the x + 1 of the call-overhead row (34 lines) 16.8
  against 11.1, while the MLP step (1419 lines) took 137 ms against 175 unsplit.
- Each part's text holds its functions, copies of the alwaysinline helpers and constant
  globals they reference (private copies per part; large constants are external
  declarations, elemental.literal_global), declarations of everything else they
  reference, and all module metadata. A function referenced from another part gets external
  linkage; all parts load into one engine, whose linker resolves those names among its own
  objects first.

Invariant: with parts=1, or when a module has one cluster, the result is the module's own
text, unchanged. Profile builds are never split (their counter tables are shared globals).
"""

from __future__ import annotations

import re

from llvmlite import ir

_REF = re.compile(r'@"((?:[^"\\]|\\.)*)"|@([-a-zA-Z$._][-a-zA-Z$._0-9]*)')
MIN_PART_SHARE = 0.2
MIN_PART_LINES = 150


def _module_text(llmod: ir.Module, lines: list[str]) -> str:
    """What str(llmod) prints, with `lines` as its body."""
    return (f'; ModuleID = "{llmod.name}"\ntarget triple = "{llmod.triple}"\n'
            f'target datalayout = "{llmod.data_layout}"\n\n'
            + "\n".join(lines + llmod._get_metadata_lines()))


PART_MARKER = "; ---- part {} of {} ----\n"


def join_parts(texts: list[str]) -> str:
    """The parts as one text (for dumps), each after a marker line; parts_of reads it back.
    (A part's text may end without a newline: its last metadata line; the next marker
    must still start a line.)"""
    return "".join(PART_MARKER.format(k + 1, len(texts)) + t + ("" if t.endswith("\n") else "\n")
                   for k, t in enumerate(texts))


def parts_of(dumped: str) -> list[str]:
    """The modules of a join_parts text (a text without markers: itself)."""
    chunks = re.split(r"^; ---- part \d+ of \d+ ----\n", dumped, flags=re.M)
    return [c for c in chunks if c.strip()]


_DEFINE = re.compile(r'^define [^@\n]*@(?:"((?:[^"\\]|\\.)*)"|([-a-zA-Z$._][-a-zA-Z$._0-9]*))',
                     re.M)


def defined_functions(text: str) -> set[str]:
    """Names of the functions a module text defines."""
    return {a or b for a, b in _DEFINE.findall(text)}


def _refs(text: str) -> set[str]:
    return {a or b for a, b in _REF.findall(text)}


def may_split(llmod: ir.Module, parts: int) -> bool:
    """Whether split_module(llmod, ..., parts) can cut the module at all, judged before any
    text is printed: instructions against MIN_PART_LINES (an instruction is about a line)."""
    size = sum(len(blk.instructions) for f in llmod.functions for blk in f.blocks)
    return parts > 1 and size >= 2 * MIN_PART_LINES


# a function that many lines or more is not pulled into its callers' part: one call of it
# costs nothing next to its work (the variants of a convolution, a kernel and its
# thread-pool wrapper), and apart it can go to another part, or a part with another
# pipeline (see `scalar` below)
SEPARABLE_LINES = 100
# -O3's cost per line against the direct pipeline's (codegen.PIPELINES): the deep-MNIST CNN's
# inference module, split in two, took 139 ms for 3633 lines of vector code (direct) and
# 336 ms for 3016 lines that needed the vectorizer (O3), on a loaded 2-core machine
O3_WEIGHT = 3


def split_module(llmod: ir.Module, entry: str, parts: int,
                 scalar: frozenset = frozenset()) -> list[str]:
    """The module as up to `parts` IR texts that together define it (see the docstring).
    `scalar`: functions with loops left to LLVM's vectorizer (loop_analysis.needs_vectorizer):
    a part holding one compiles with -O3, the others with the direct pipeline
    (compiler.part_pipelines), so parts are packed by the cost of the pipeline they will
    take."""
    if parts <= 1:
        return [str(llmod)]
    values = dict(llmod.globals)
    fns = {n: v for n, v in values.items() if isinstance(v, ir.Function) and v.blocks}
    gvars = {n: v for n, v in values.items() if isinstance(v, ir.GlobalVariable)}
    if any(not (g.global_constant and (g.linkage in ("private", "internal")
                                       or g.initializer is None))  # (external constants)
           for g in gvars.values()):
        return [str(llmod)]
    text = {n: str(f) for n, f in fns.items()}
    refs = {n: _refs(t) - {n} for n, t in text.items()}

    def whole() -> list[str]:  # str(llmod), from the function texts already printed
        types = [it.get_declaration() for it in llmod.get_identified_types().values()]
        return [_module_text(llmod, types + [text.get(n) or str(v) for n, v in values.items()])]

    inline = {n for n, f in fns.items() if "alwaysinline" in f.attributes}
    units = [n for n in fns if n not in inline]

    parent = {n: n for n in units}

    def find(n):
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    helpers_of: dict[str, set[str]] = {}

    def helpers(n):
        """alwaysinline functions n needs, transitively."""
        got = helpers_of.get(n)
        if got is None:
            got, stack = set(), [r for r in refs[n] if r in inline]
            while stack:
                h = stack.pop()
                if h not in got:
                    got.add(h)
                    stack.extend(r for r in refs[h] if r in inline)
            helpers_of[n] = got
        return got

    # a unit's references include its alwaysinline helpers' (copied into its part): a
    # function called only from a helper is still called from the unit's part
    for n in units:
        refs[n] = refs[n].union(*(refs[h] for h in helpers(n))) - {n}
    size = {n: t.count("\n") for n, t in text.items()}   # ~ instructions
    callers: dict[str, int] = {}
    for n in units:
        for r in refs[n]:
            callers[r] = callers.get(r, 0) + (n != entry)
    for n in units:
        if n == entry:
            continue
        for r in refs[n]:
            # (a small function several units call, a shared epilogue, would chain all of
            # them into one cluster: it stays a unit of its own, called across parts)
            if (r in parent and r != entry and size[r] < SEPARABLE_LINES
                    and callers[r] <= 1):
                parent[find(r)] = find(n)

    clusters: dict[str, list[str]] = {}
    for n in units:
        clusters.setdefault(find(n), []).append(n)
    if len(clusters) < 2:
        return whole()
    lines = {root: sum(size[n] + sum(size[h] for h in helpers(n)) for n in members)
             for root, members in clusters.items()}
    o3 = {root for root, members in clusters.items() if scalar.intersection(members)}
    parts = min(parts, len(clusters), sum(lines.values()) // MIN_PART_LINES)
    if parts < 2:
        return whole()

    def cost(b) -> int:  # a part's LLVM time, in direct-pipeline lines
        return b[0] * (O3_WEIGHT if b[2] else 1)

    bins: list[list] = [[0, [], False] for _ in range(parts)]   # [lines, members, O3]
    for root in sorted(clusters, key=lambda r: -lines[r] * (O3_WEIGHT if r in o3 else 1)):
        b = min(bins, key=lambda b: cost([b[0] + lines[root], None, b[2] or root in o3]))
        b[0] += lines[root]
        b[1].extend(clusters[root])
        b[2] = b[2] or root in o3
    bins.sort(key=lambda b: -cost(b))
    while len(bins) > 1 and cost(bins[-1]) < MIN_PART_SHARE * cost(bins[0]):
        small = bins.pop()
        into = min(bins, key=lambda b: cost([b[0] + small[0], None, b[2] or small[2]]))
        into[0] += small[0]
        into[1].extend(small[1])
        into[2] = into[2] or small[2]
        bins.sort(key=lambda b: -cost(b))
    if len(bins) < 2:
        return whole()

    home = {n: k for k, (_, members, _) in enumerate(bins) for n in members}
    for n, k in home.items():  # referenced from another part: must be visible to the linker
        if n != entry and any(n in refs[m] and home.get(m, k) != k for m in fns):
            fns[n].linkage = "external"
            text[n] = str(fns[n])
    out = []
    for _, members, _ in bins:
        defined = list(members)
        for n in members:
            defined.extend(h for h in helpers(n) if h not in defined)
        used = set().union(*(refs[n] for n in defined)) - set(defined)
        lines = [str(gvars[g]) for g in gvars if g in used]
        for name in values:
            if name not in used or name in gvars:
                continue
            f = values[name]
            args = ", ".join(str(t) for t in f.ftype.args)
            lines.append(f"declare {f.ftype.return_type} {f.get_reference()}({args})")
        lines.extend(text[n] for n in defined)
        out.append(_module_text(llmod, lines))
    return out
