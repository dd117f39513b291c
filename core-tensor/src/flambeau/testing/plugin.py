"""The kit's pytest plugin lives in the top-level module ``_flambeau_testing_plugin``.

pytest loads its entry point in every run of an environment where flambeau-core-tensor is
installed; a module inside ``flambeau`` would import the whole framework (the parent package)
before any test ran, and a broken install would break every pytest run. This name stays for
the kit's own tests and for anyone who imported it.
"""
from _flambeau_testing_plugin import KEY_MARKER, backend_name, key_matches  # noqa: F401
