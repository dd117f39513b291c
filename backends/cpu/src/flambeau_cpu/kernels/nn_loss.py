"""Fused kernels for the loss ops flambeau-nn declares (``nn_cross_entropy``, ``nn_nll_loss``...).

The backend never imports flambeau-nn: these kernels stay unused unless it declares the ops.
"""
from __future__ import annotations

KERNELS: dict = {}
