"""Conformance cases of flambeau-distributions' ops."""
def cases():
    return []
