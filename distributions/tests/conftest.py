"""Fixtures of flambeau-distributions' tests: a fixed seed per test, validation on."""
from __future__ import annotations

import pytest

import flambeau as fb
from flambeau.distributions import Distribution


@pytest.fixture(autouse=True)
def _seed_and_validate():
    fb.manual_seed(20260)
    before = Distribution._validate_args
    Distribution.set_default_validate_args(True)
    yield
    Distribution.set_default_validate_args(before)
