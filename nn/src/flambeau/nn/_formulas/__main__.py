"""``python -m flambeau.nn._formulas``: regenerate the formula index (``_index.py``)."""
import flambeau  # noqa: F401  (the families import flambeau's ops)

from flambeau.nn._formulas import write_index

print(write_index())
