"""``python -m flambeau info``: the environment, for bug reports."""
from __future__ import annotations

import platform
import sys
from importlib import metadata


def _distributions() -> list[tuple[str, str]]:
    found = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"] or ""
        if name.lower().startswith("flambeau"):
            found[name] = dist.version
    return sorted(found.items())


def report(show_ops: bool = False) -> str:
    from ..ops import coverage
    from ..ops._registry import OPS
    from . import _loader

    lines = [f"Python {platform.python_version()} ({sys.executable}) on {platform.platform()}", "",
             "Distributions:"]
    lines += [f"  {name} {version}" for name, version in _distributions()] or ["  (none installed)"]
    lines += ["", "Backends:"]
    for name, record in sorted(_loader.backend_records.items()):
        head = f"  {name}: {record.distribution} {record.version} [{record.status}]"
        if record.status == "not loaded" and name == "cpu":
            pass
        lines.append(head)
        if record.status in ("failed", "disabled"):
            lines.append(f"    reason: {record.reason}")
            continue
        try:
            backend = _loader.loaded_backend(name)
        except Exception as exc:  # noqa: BLE001 - the report must list what fails, not stop at it
            lines.append(f"    could not load: {exc}")
            continue
        cov = coverage(name)
        counts = {k: sum(1 for v in cov.values() if v == k) for k in ("kernel", "composite", "missing")}
        lines.append(f"    devices: {backend.device_count()}; dtypes: "
                     + ", ".join(sorted(d.name for d in backend.dtypes)))
        lines.append(f"    ops: {counts['kernel']} kernels, {counts['composite']} composites, "
                     f"{counts['missing']} missing (of {len(OPS)} declared)")
        if show_ops:
            for op, how in cov.items():
                lines.append(f"      {op}: {how}")
    if not _loader.backend_records:
        lines.append("  (none: install flambeau-backend-cpu)")
    lines += ["", "Plugins:"]
    for record in _loader.plugin_records:
        lines.append(f"  {record.name}: {record.distribution} {record.version} [{record.status}]"
                     f" - {len(record.ops)} ops")
        if record.ops:
            lines.append("    " + ", ".join(record.ops))
    failed = [r for r in [*_loader.plugin_records, *_loader.backend_records.values()] if r.status == "failed"]
    lines += ["", "Failed plugins:"]
    for record in failed:
        lines.append(f"  {record.group}:{record.name} from {record.distribution} {record.version}: {record.reason}")
    if not failed:
        lines.append("  (none)")
    return "\n".join(lines)
