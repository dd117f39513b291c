"""The conformance kit's contract checks catch backends that slip past value comparisons.

Each mutant is the fake ``fakedev`` backend with one fault; the kit runs against it in a fresh
interpreter and must fail the named contract test (and pass it for the honest backend).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from fake_dists import FAKE_BACKEND_SOURCE, fake_backend, install, run_python

SHARES_ON_THE_WAY_IN = FAKE_BACKEND_SOURCE + '''
FakeBackend.from_numpy = lambda self, array, device: array  # no copy: the device aliases the host array
'''

SHARES_ON_THE_WAY_OUT = FAKE_BACKEND_SOURCE + '''
FakeBackend.to_numpy = lambda self, native: native  # no copy: .cpu() aliases the device's memory
'''


def kit(site: Path, test: str) -> str:
    proc = run_python("", site, args=("-m", "pytest", "-p", "no:cacheprovider", "-q", "--pyargs", "flambeau.testing",
                                      "--flambeau-backend", "fakedev", "-k", test))
    return proc.stdout + proc.stderr


@pytest.mark.parametrize("source, passes", [(FAKE_BACKEND_SOURCE, True), (SHARES_ON_THE_WAY_IN, False),
                                            (SHARES_ON_THE_WAY_OUT, False)])
def test_host_transfers_must_copy(tmp_path, source, passes):
    site = install(tmp_path / "site", fake_backend(source=source))
    text = kit(site, "host_transfers_copy")
    if passes:
        assert "1 passed" in text, text[-2000:]
    else:
        assert "1 failed" in text and "did not copy" in text, text[-2000:]
