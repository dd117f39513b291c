"""``python -m flambeau info``: the environment, for bug reports."""
from __future__ import annotations

import platform
import sys
from importlib import metadata

from . import _discovery


def _distributions() -> list[tuple[str, str]]:
    """Every installed flambeau distribution, and every distribution that provides a plugin or backend."""
    from . import _loader

    found: dict[str, str] = {}
    for dist in metadata.distributions():
        name = _discovery.distribution_name(dist)
        if name.lower().startswith("flambeau"):
            found.setdefault(name, _discovery.distribution_version(dist))
    for record in [*_loader.plugin_records, *_loader.all_backend_records]:
        found.setdefault(record.distribution, record.version)
    return sorted(found.items(), key=lambda item: item[0].lower())


def _backend_lines(name: str, record: _discovery.PluginRecord, show_ops: bool) -> list[str]:
    from ..ops import coverage
    from ..ops._registry import OPS, TABLES
    from . import _loader

    was = record.status
    head = f"  {name}: {record.distribution} {record.version}"
    if record.status == "failed":
        return [f"{head} [failed: {record.reason}]"]
    if record.status == "disabled" or _loader.backend_records.get(name) is not record:
        return [f"{head} [{was}]", f"    reason: {record.reason}"]
    lines = [f"{head} [{was}]"]
    try:
        backend = _loader.loaded_backend(name)
    except Exception:  # noqa: BLE001 - the report lists what fails, it does not stop at it
        return [f"{head} [failed: {record.reason}]"]
    if was != "loaded":
        lines[0] = lines[0][: -len(f"[{was}]")] + "[not loaded; loaded for this report]"
    cov = coverage(name)
    counts = {k: sum(1 for v in cov.values() if v == k) for k in ("kernel", "decomposition", "host", "missing")}
    lines.append(f"    devices: {backend.device_count()}; dtypes: " + ", ".join(sorted(d.name for d in backend.dtypes)))
    describe = getattr(backend, "describe_devices", None)  # a backend written before it has none
    try:
        lines += [f"      {line}" for line in (describe() if describe is not None else [])]
    except Exception as exc:  # noqa: BLE001 - the report lists what fails, it does not stop at it
        lines.append(f"      (describe_devices failed: {type(exc).__name__}: {exc})")
    core = [op for op, d in OPS.items() if d.tier == "core"]
    lacking = sorted(op for op in core if cov[op] != "kernel")
    lines.append(f"    ops: {counts['kernel']} native, {counts['decomposition']} by decomposition, "
                 f"{counts['host']} by host decomposition, {counts['missing']} missing (of {len(OPS)} declared); "
                 f"core tier: {len(core) - len(lacking)} of {len(core)}"
                 + (f" (lacks {', '.join(lacking)})" if lacking else ""))
    for op, reason in sorted(TABLES[name].refused.items()):
        lines.append(f"    refused kernel {op}: {reason}")
    if show_ops:
        for how in ("kernel", "decomposition", "host", "missing"):
            ops = [op for op, v in cov.items() if v == how]
            label = {"kernel": "native", "decomposition": "by decomposition", "host": "by host decomposition",
                     "missing": "missing"}[how]
            lines.append(f"    {label} ({len(ops)}): " + (", ".join(ops) if ops else "-"))
    return lines


def report(show_ops: bool = False) -> str:
    """The environment as text: Python, distributions, backends, plugins, failures.

    Args:
        show_ops: also list, per backend, which declared ops have a kernel, only a composite, or neither.
    """
    from . import _loader

    lines = [f"Python {platform.python_version()} ({sys.executable}) on {platform.platform()}",
             f"flambeau core API {_discovery.CORE_API_VERSION}", "", "Distributions:"]
    lines += [f"  {name} {version}" for name, version in _distributions()] or ["  (none installed)"]
    lines += ["", "Backends:"]
    for record in _loader.all_backend_records:
        lines += _backend_lines(record.name, record, show_ops)
    if not _loader.all_backend_records:
        lines.append("  (none: install flambeau-backend-cpu)")
    lines += ["", "Plugins:"]
    for record in _loader.plugin_records:
        status = f"failed: {record.reason}" if record.status == "failed" else record.status
        lines.append(f"  {record.name}: {record.distribution} {record.version} [{status}] - "
                     f"{len(record.ops)} ops, {len(record.kernels)} kernels")
        if record.ops:
            lines.append("    ops: " + ", ".join(record.ops))
        if record.kernels:
            lines.append("    kernels: " + ", ".join(f"{b}/{op}" for b, op in record.kernels))
    failed = [r for r in [*_loader.plugin_records, *_loader.all_backend_records] if r.status == "failed"]
    lines += ["", "Failed plugins:"]
    for record in failed:
        kind = "backend" if record.group == _discovery.BACKEND_GROUP else "plugin"
        lines.append(f"  {kind} {record.name} from {record.distribution} {record.version}: {record.reason}")
    if not failed:
        lines.append("  (none)")
    return "\n".join(lines)
