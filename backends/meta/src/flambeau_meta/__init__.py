"""flambeau's ``meta`` device: tensors with shapes, strides and dtypes but no data.

flambeau finds this backend through the ``flambeau.backends`` entry point ``meta`` and imports
this module only when the ``meta`` device is first used. Everything here goes through
core-tensor's public backend API (:class:`flambeau.plugins.Backend`, :mod:`flambeau.ops`).

Example::

    >>> import flambeau as fb
    >>> x = fb.empty(1000, 1000, device="meta")   # allocates nothing
    >>> (x @ x.t()).sum(0)
    tensor(..., device='meta', size=(1000,))
"""
from __future__ import annotations

from ._version import __version__


def create_backend():
    """The entry point's factory: flambeau calls it once, on first use of the ``meta`` device."""
    from ._backend import MetaBackend

    return MetaBackend()
