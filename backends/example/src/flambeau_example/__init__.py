"""flambeau's second example backend: an ``example`` device with only the core tier's kernels.

Written from ``backends/meta/README.md`` alone, as a hardware vendor would start: numpy stands
in for the device's memory and kernels, and every op outside the core tier runs through the
decompositions core-tensor ships. ``python -m flambeau info`` shows the split.

Example::

    >>> import flambeau as fb
    >>> x = fb.arange(6.0, device="example").reshape(2, 3)
    >>> x.softmax(1).sum(1)          # softmax: a decomposition onto exp, amax, sum, div
    tensor([1.0000, 1.0000], device='example')
"""
from __future__ import annotations

from ._version import __version__


def create_backend():
    """The entry point's factory: flambeau calls it once, on first use of the ``example`` device."""
    from ._backend import ExampleBackend

    return ExampleBackend()
