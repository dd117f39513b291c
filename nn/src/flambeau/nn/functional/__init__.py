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
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .vision import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
