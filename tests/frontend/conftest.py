"""Shared fixtures of the frontend tests.

`x64`: run the test with jax_enable_x64 on (xlapy.enable_x64), for tests that compare with
NumPy's 64-bit semantics (the op tables sweep int64/float64 inputs and expect NumPy's
result dtypes) or differentiate numerically in float64. xlapy's default, as JAX's, is
x64 off (tests/frontend/test_x64.py checks that mode against JAX).
"""

from __future__ import annotations

import pytest

import xlapy as xp


@pytest.fixture
def x64():
    with xp.enable_x64(True):
        yield
