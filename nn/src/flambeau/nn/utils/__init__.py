"""flambeau.nn.utils: gradient clipping, parameter vectors, weight and spectral norm, parametrize, summary, fusion."""
from __future__ import annotations

from . import fusion, parametrizations, parametrize, prune  # noqa: F401
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm  # noqa: F401
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401
from .summary import LayerInfo, ModelSummary, summary  # noqa: F401,E402
from . import rnn  # noqa: F401,E402  (packed sequences: nn.utils.rnn)
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights  # noqa: F401,E402
