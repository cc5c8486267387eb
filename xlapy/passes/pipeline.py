"""Pass infrastructure: the Pass protocol, Pipeline and FixedPoint, and the graph-editing
helpers the passes share.

A pass is any object with a `name` and `run(module) -> bool` that returns whether it
changed the module. `Pipeline(name, passes)` runs passes in order; `FixedPoint(passes)`
repeats them until a whole round changes nothing. Both are passes themselves, so they nest;
a nested pipeline runs with its parent's options (verification, disabled passes, observers
are merged).

Options of a pipeline (all checked after every leaf pass, nested ones included):
  verify     run the HLO verifier after each pass, and check that a pass returning False
             left the module identical (module_diff against a clone taken before it);
             either failure raises PassError naming the pass. Default: the environment
             variable XLAPY_VERIFY_PASSES=1 (tests pass verify=True).
  disabled   names of passes to skip; default: --xla_disable_hlo_passes=a,b from
             XLAPY_FLAGS (read when the pipeline runs). Naming a pipeline skips all of it.
  observers  callables f(pass_name, module_before_text, module_after_text, changed) called
             after each leaf pass (the hook for --xla_dump_hlo_pass_re dumps). The texts are
             only printed when there is such an observer. An observer with the attribute
             `wants_module = True` is called f(pass_name, module, changed) with the live
             module instead (graph dumps draw it without printing and parsing it).

Passes and changes are logged on the "xlapy.passes" logger (DEBUG: every pass run;
INFO: passes that changed the module).

Helpers (used by cse, dce, constant folding, the simplifiers): `non_fusion_computations`,
`has_side_effect`, `insert_before`, `replace_with` (redirect uses, insert the new
instructions before the old one, delete what became dead).
"""

from __future__ import annotations

import logging
import os
import time
from typing import Callable, Iterable, Protocol, Sequence

from xlapy.errors import VerificationError
from xlapy.hlo.ir import Module, module_diff
from xlapy.flags import flags
from xlapy.hlo.verifier import verify

log = logging.getLogger("xlapy.passes")

Observer = Callable[[str, str, str, bool], None]


class PassError(VerificationError):
    """A pass broke the module (verifier failure after it) or lied about changing it."""


class Pass(Protocol):
    name: str

    def run(self, module: Module) -> bool: ...


def _verify_default() -> bool:
    return os.environ.get("XLAPY_VERIFY_PASSES", "").lower() in ("1", "true", "yes")


def _disabled_default() -> list[str]:
    return list(flags().xla_disable_hlo_passes)


class _Options:
    def __init__(self, verify: bool, disabled: set[str], observers: list[Observer]):
        self.verify = verify
        self.disabled = disabled
        self.observers = observers


class Pipeline:
    """Runs `passes` in order; `run` returns True if any of them changed the module."""

    def __init__(self, name: str, passes: Sequence[Pass] = (), *, verify: bool | None = None,
                 disabled: Iterable[str] | None = None,
                 observers: Iterable[Observer] | None = None):
        self.name = name
        self.passes: list[Pass] = list(passes)
        self.verify = verify
        self.disabled = None if disabled is None else list(disabled)
        self.observers: list[Observer] = list(observers or [])

    def add(self, p: Pass) -> Pass:
        self.passes.append(p)
        return p

    def run(self, module: Module) -> bool:
        return self._run_with(module, None)

    # ---- internals -----------------------------------------------------------------------
    def _options(self, parent: _Options | None) -> _Options:
        verify = self.verify if self.verify is not None else (
            parent.verify if parent is not None else _verify_default())
        disabled = set(self.disabled if self.disabled is not None else _disabled_default())
        observers = list(self.observers)
        if parent is not None:
            verify = verify or parent.verify
            disabled |= parent.disabled
            observers = parent.observers + observers
        return _Options(verify, disabled, observers)

    def _run_with(self, module: Module, parent: _Options | None) -> bool:
        opts = self._options(parent)
        if opts.verify:
            self._verify(module, f"before pipeline {self.name}")
        log.debug("pipeline %s: start", self.name)
        changed = self._run_passes(module, opts)
        log.debug("pipeline %s: %s", self.name, "changed" if changed else "no change")
        return changed

    def _run_passes(self, module: Module, opts: _Options) -> bool:
        changed = False
        for p in self.passes:
            changed |= self._run_pass(p, module, opts)
        return changed

    def _run_pass(self, p: Pass, module: Module, opts: _Options) -> bool:
        name = getattr(p, "name", type(p).__name__)
        if name in opts.disabled and not getattr(p, "required", False):
            log.debug("pass %s: disabled", name)
            return False
        if isinstance(p, Pipeline):
            return p._run_with(module, opts)
        before = module.clone() if opts.verify else None
        text_observers = [o for o in opts.observers if not getattr(o, "wants_module", False)]
        # (large literals as {...} unless an observer asks for them: a model's weights
        # printed value by value for every pass would take minutes)
        full = any(getattr(o, "print_large_constants", False) for o in text_observers)
        before_text = module.to_string(print_large_constants=full) if text_observers else None
        start = time.perf_counter()
        changed = bool(p.run(module))
        elapsed = time.perf_counter() - start
        log.debug("pass %s: %s (%.3f s)", name, "changed" if changed else "no change", elapsed)
        if changed:
            log.info("pass %s changed module %s", name, module.name)
        if opts.verify:
            self._verify(module, f"after pass {name}")
            if not changed:
                diff = module_diff(before, module)
                if diff is not None:
                    raise PassError(f"pass {name} returned False (no change) but changed "
                                    f"module {module.name}: {diff}")
        if opts.observers:
            after_text = (module.to_string(print_large_constants=full) if changed
                          else before_text) if text_observers else None
            for observer in opts.observers:
                if getattr(observer, "wants_module", False):
                    observer(name, module, changed)
                else:
                    observer(name, before_text, after_text, changed)
        return changed

    @staticmethod
    def _verify(module: Module, when: str) -> None:
        try:
            verify(module)
        except VerificationError as e:
            raise PassError(f"{when}: the module does not verify (rerun with "
                            f"--xla_disable_hlo_passes=<pass> to bisect): {e}") from e

    def __repr__(self) -> str:
        names = [getattr(p, "name", p) for p in self.passes]
        return f"<{type(self).__name__} {self.name}: {names}>"


class FixedPoint(Pipeline):
    """Runs `passes` in order, again and again, until a round changes nothing (or
    `max_iterations` rounds ran, which is logged as a warning)."""

    def __init__(self, passes: Sequence[Pass] = (), max_iterations: int = 25,
                 name: str = "fixed-point", **options):
        super().__init__(name, passes, **options)
        self.max_iterations = max_iterations
        self.iterations = 0  # rounds run by the last `run`

    def _run_passes(self, module: Module, opts: _Options) -> bool:
        changed = False
        for i in range(1, self.max_iterations + 1):
            self.iterations = i
            if not super()._run_passes(module, opts):
                return changed
            changed = True
        log.warning("fixed point %s did not converge in %d iterations", self.name,
                    self.max_iterations)
        return changed
