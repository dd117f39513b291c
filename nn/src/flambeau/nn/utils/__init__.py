"""flambeau.nn.utils: gradient clipping, parameter vectors, weight and spectral norm, parametrize, summary."""
from __future__ import annotations
