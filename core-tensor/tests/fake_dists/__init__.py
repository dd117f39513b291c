"""Fake installed distributions for the plugin tests.

flambeau's registry is process-global and frozen at ``import flambeau``, so each scenario
writes ``NAME-VERSION.dist-info`` folders (METADATA, entry_points.txt) and the plugin modules
into a temporary directory, then runs a fresh Python in a subprocess with that directory on
``PYTHONPATH``, where ``importlib.metadata`` finds them next to the real installs.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

COMPATIBLE = "flambeau-core-tensor>=0.1,<0.2"
INCOMPATIBLE = "flambeau-core-tensor>=0.9,<1.0"


@dataclass
class FakeDist:
    """One distribution to write: its metadata, entry points and module sources."""

    name: str
    version: str = "0.1.0"
    requires: tuple[str, ...] = (COMPATIBLE,)
    #: group -> {entry point name: "module:attr"}
    entry_points: dict[str, dict[str, str]] = field(default_factory=dict)
    #: relative path ("pkg/__init__.py" or "mod.py") -> source text
    modules: dict[str, str] = field(default_factory=dict)
    #: write no METADATA file at all (a broken install)
    no_metadata: bool = False

    def write(self, root: Path) -> Path:
        info = root / f"{self.name.replace('-', '_')}-{self.version}.dist-info"
        info.mkdir(parents=True)
        if not self.no_metadata:
            lines = ["Metadata-Version: 2.1", f"Name: {self.name}", f"Version: {self.version}"]
            lines += [f"Requires-Dist: {req}" for req in self.requires]
            (info / "METADATA").write_text("\n".join(lines) + "\n")
        if self.entry_points:
            text = []
            for group, entries in self.entry_points.items():
                text.append(f"[{group}]")
                text += [f"{name} = {value}" for name, value in entries.items()]
                text.append("")
            (info / "entry_points.txt").write_text("\n".join(text))
        for rel, source in self.modules.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(source))
        return info


def install(root: Path, *dists: FakeDist) -> Path:
    """Write ``dists`` under ``root`` (a directory meant for PYTHONPATH)."""
    root.mkdir(parents=True, exist_ok=True)
    for dist in dists:
        dist.write(root)
    return root


def other_installed_plugins() -> list[str]:
    """Distributions in this environment, other than core-tensor and the CPU backend, with flambeau entry points.

    Scenarios disable them (``FLAMBEAU_DISABLE_PLUGINS``) so that what they count (warnings, failures,
    the autograd engine) depends only on the fake distributions, whatever else is installed.
    """
    from importlib import metadata

    keep = {"flambeau-core-tensor", "flambeau-backend-cpu"}
    eps = metadata.entry_points()
    found = {ep.dist.metadata["Name"] for group in ("flambeau", "flambeau.backends")
             for ep in eps.select(group=group) if ep.dist is not None}
    return sorted(name for name in found if name and name.lower() not in keep)


def run_python(code: str, site: Path | None = None, env: dict[str, str] | None = None,
               args: tuple[str, ...] = (), hermetic: bool = True) -> subprocess.CompletedProcess:
    """Run ``code`` (or ``python ARGS`` when code is empty) in a fresh interpreter with ``site`` importable."""
    full_env = {k: v for k, v in os.environ.items() if k not in ("FLAMBEAU_DISABLE_PLUGINS", "PYTHONWARNINGS")}
    if site is not None:
        full_env["PYTHONPATH"] = str(site) + os.pathsep + full_env.get("PYTHONPATH", "")
    env = dict(env or {})
    if hermetic:
        disabled = [n for n in env.get("FLAMBEAU_DISABLE_PLUGINS", "").split(",") if n.strip()]
        env["FLAMBEAU_DISABLE_PLUGINS"] = ",".join(disabled + other_installed_plugins())
    full_env.update(env)
    cmd = [sys.executable, *args] if args else [sys.executable, "-c", textwrap.dedent(code)]
    return subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=120,
                          preexec_fn=_default_sigint if os.name == "posix" else None)


def _default_sigint() -> None:
    # A shell starts background jobs with SIGINT ignored, and Python then installs no KeyboardInterrupt
    # handler: the child gets Ctrl-C's default disposition, as a user's interpreter has it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_json(code: str, site: Path | None = None, env: dict[str, str] | None = None, hermetic: bool = True) -> Any:
    """Run ``code``, which must end by printing one JSON value on the last line of stdout; return it."""
    proc = run_python(code, site, env, hermetic=hermetic)
    if proc.returncode != 0:
        raise AssertionError(f"subprocess failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- a tiny fake backend: device type "fakedev", natives are numpy arrays ------------------

FAKE_BACKEND_SOURCE = '''
"""A fake device whose natives are numpy arrays; only a few kernels."""
import numpy as np
from flambeau.plugins import Backend
from flambeau import _dtypes

IMPORTED_AT_LOAD = True


def add(input, other, alpha, out):
    np.add(input, other if alpha == 1 else np.multiply(other, alpha), out=out)


def copy(input, src, out):
    np.copyto(out, src, casting="unsafe")


def fill(input, value, out):
    out[...] = value


def to_dtype(input, dtype, out):
    np.copyto(out, input, casting="unsafe")


def clone(input, memory_format, out):
    np.copyto(out, input)


class FakeBackend(Backend):
    name = "fakedev"
    priority = 5
    dtypes = frozenset({_dtypes.float32, _dtypes.float64, _dtypes.int64, _dtypes.bool})

    def empty(self, shape, dtype, device):
        return np.empty(shape, dtype.numpy_dtype)

    def fill_(self, native, value):
        native[...] = value

    def from_numpy(self, array, device):
        return np.array(array, copy=True)

    def to_numpy(self, native):
        return np.array(native, copy=True)

    def copy_(self, dst, src):
        np.copyto(dst, src, casting="unsafe")

    def storage_numel(self, native):
        return native.size

    def device_count(self):
        return 2

    def kernels(self):
        return {"add": add, "copy": copy, "fill": fill, "to_dtype": to_dtype, "clone": clone,
                "not_an_op_anywhere": add}


def create_backend():
    return FakeBackend()
'''


def fake_backend(name: str = "flambeau-backend-fakedev", version: str = "0.3.0",
                 requires: tuple[str, ...] = (COMPATIBLE,), source: str = FAKE_BACKEND_SOURCE,
                 module: str = "flambeau_fakedev", device: str = "fakedev") -> FakeDist:
    """A distribution providing the ``fakedev`` backend through ``flambeau.backends``."""
    return FakeDist(name, version, requires, {"flambeau.backends": {device: f"{module}:create_backend"}},
                    {f"{module}/__init__.py": source})


# -- a plugin declaring ops, kernels and gradients through the pluggy hooks ----------------

FAKE_PLUGIN_SOURCE = '''
"""A plugin of the ``flambeau`` group: a few ops, their kernels and a gradient."""
import numpy as np
import flambeau
from flambeau.ops import OpDecl, VIEW
from flambeau.plugins import hookimpl

SAW_FULL_CORE = all(hasattr(flambeau, n) for n in ("Tensor", "float32", "device", "ops", "plugins", "tensor"))


def _same(input, *rest):
    return tuple(input.shape), input.dtype


def _view_meta(input):
    return None


def _triple(input):
    # A composite: written with other flambeau ops, so it runs on any backend with "add".
    return flambeau.ops.fn.add(flambeau.ops.fn.add(input, input), input)


def double_backward(grad, *args):
    return grad * 2


@hookimpl
def flambeau_declare_ops():
    return [
        OpDecl("fake_double", "(input: Tensor)", _same, method=True, export=False),
        OpDecl("fake_triple", "(input: Tensor)", _same, composite=_triple, export=False),
        OpDecl("fake_scale", "(input: Tensor, factor=2.0)", _same, export=False),
        OpDecl("fake_alias", "(input: Tensor)", _view_meta, kind=VIEW, export=False),
        OpDecl("fake_noise", "(input: Tensor)", _same, random=True, export=False),
        OpDecl("fake_nothing", "(input: Tensor)", _same, export=False),
    ]


def double_cpu(input, out):
    np.multiply(input, 2, out=out)


def double_fakedev(input, out):
    np.multiply(input, 2, out=out)


def scale_wrong(x, f, out):  # parameter names differ from the declaration: refused
    np.multiply(x, f, out=out)


def alias_cpu(input):
    return input.view()


def noise_cpu(input, out):
    out[...] = input + 0.5


def nothing_cpu(input, out):
    out[...] = input


@hookimpl
def flambeau_register_kernels():
    return {
        ("cpu", "fake_double"): double_cpu,
        ("fakedev", "fake_double"): double_fakedev,
        ("cpu", "fake_scale"): scale_wrong,
        ("cpu", "fake_undeclared"): double_cpu,
        ("cpu", "fake_alias"): alias_cpu,
        ("cpu", "fake_noise"): noise_cpu,
        ("cpu", "fake_nothing"): nothing_cpu,
    }


@hookimpl
def flambeau_register_gradients():
    return {"fake_double": double_backward}
'''


def fake_plugin(name: str = "flambeau-fakeops", version: str = "0.2.0", requires: tuple[str, ...] = (COMPATIBLE,),
                source: str = FAKE_PLUGIN_SOURCE, module: str = "flambeau_fakeops", ep_name: str = "fakeops") -> FakeDist:
    """A distribution providing a ``flambeau`` plugin (ops, kernels, a gradient)."""
    return FakeDist(name, version, requires, {"flambeau": {ep_name: module}}, {f"{module}.py": source})
