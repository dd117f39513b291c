"""Fixtures of flambeau-optim's tests."""
from __future__ import annotations

import pytest

from optim_problems import PROBLEMS


@pytest.fixture(params=sorted(PROBLEMS))
def problem(request):
    return PROBLEMS[request.param]
