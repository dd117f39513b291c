"""The version of flambeau-optim: its one source (pyproject.toml reads it from here)."""
__version__ = "0.1.0"
