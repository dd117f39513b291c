"""flambeau.nn.functional: the functional forms of the layers (torch.nn.functional's API).

One module per family; this namespace re-exports each module's ``__all__``.
"""
from __future__ import annotations

from .linear import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .softmax import *  # noqa: F401,F403
