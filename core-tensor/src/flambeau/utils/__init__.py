"""flambeau.utils: helpers around the tensor library (``flambeau.utils.data``: datasets, samplers, DataLoader).

Subpackages are imported on first use, so ``import flambeau`` does not pay for them.
"""
from __future__ import annotations

from .._portions import extend_path as _extend_path

# Other distributions may ship flambeau/utils/<name> too.
__path__ = _extend_path(__path__, __name__)
del _extend_path
