"""The harness's own judgement: a difference counts unless something honest explains it."""

import numpy as np

from fuzzlib import harness, xla

TEXT = """HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  ROOT n = f32[3] negate(x)
}"""
X = [np.array([1.0, 2.0, 3.0], np.float32)]


def _fake_xla(monkeypatch, values):
    """XLA returning `values` one after another (each a list of outputs)."""
    calls = iter(values)
    monkeypatch.setattr(xla, "run_text", lambda text, inputs, fast=False: next(calls))


def test_a_wrong_value_is_a_finding(monkeypatch):
    wrong = [np.float32([-1.0, -2.0, 5.0])]
    _fake_xla(monkeypatch, [wrong] * 5)
    result = harness.check(TEXT, X, backends=("cpu",))
    harness.clear_caches()
    assert [f.kind for f in result.findings] == ["mismatch"], result


def test_xla_changing_from_run_to_run_is_no_reference(monkeypatch):
    """XLA's value that moves between runs of the same executable is not a reference: the
    compiled backend is judged against the interpreter there."""
    right = [np.float32([-1.0, -2.0, -3.0])]
    _fake_xla(monkeypatch, [[np.float32([-1.0, -2.0, 5.0])]] * 2 + [right, right, right])
    result = harness.check(TEXT, X, backends=("cpu",))
    harness.clear_caches()
    assert not result.findings and result.explained == {"xla-nondeterministic": 1}, result
