"""CI's closing lines: one per stage (`./dev test`, each tox environment), then the totals.

    python .ci/summary.py DEV_TEST_XML_DIR TOX_XML_DIR TOX_RESULT_JSON [STAGE=EXIT_CODE ...]

Counts come from the JUnit XML files pytest wrote: DEV_TEST_XML_DIR/*.xml for `./dev test`, and
TOX_XML_DIR/ENV.*.xml for tox environment ENV. An environment's own outcome (a failed install, a pytest
that could not start, ruff's findings) comes from tox's --result-json; STAGE=EXIT_CODE adds the exit
status of other steps (the sdist/wheel build and its checks, ./dev test). Exits 1 when a test or a
stage failed, or when no test passed at all.
"""
from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def count(xml_files: list[Path]) -> tuple[int, int, int]:
    passed = failed = skipped = 0
    for xml in xml_files:
        root = ET.parse(xml).getroot()
        suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
        for s in suites:
            t, s_ = int(s.get("tests", 0)), int(s.get("skipped", 0))
            f = int(s.get("failures", 0)) + int(s.get("errors", 0))
            passed, failed, skipped = passed + t - f - s_, failed + f, skipped + s_
    return passed, failed, skipped


def tox_outcomes(path: Path) -> dict[str, bool]:
    """{env: succeeded} from tox's result JSON (empty when tox did not get to write it)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    outcomes = {}
    for name, env in data.get("testenvs", {}).items():
        if not isinstance(env, dict) or name == ".pkg" or "result" not in env:
            continue  # an env defined in tox.ini but not in the run (nn, distributions before their folders)
        result = env.get("result", {})
        outcomes[name] = bool(result.get("success", result.get("retcode", 1) == 0))
    return outcomes


def main(argv: list[str]) -> int:
    dev_dir, tox_dir, tox_json = Path(argv[0]), Path(argv[1]), Path(argv[2])
    stages = dict(a.split("=", 1) for a in argv[3:])
    rows: list[tuple[str, int, int, int, str]] = []

    p, f, s = count(sorted(dev_dir.glob("*.xml")))
    rows.append(("./dev test", p, f, s, "ok" if stages.pop("dev-test", "0") == "0" else "FAILED"))
    outcomes = tox_outcomes(tox_json)
    envs = sorted(set(outcomes) | {x.name.split(".", 1)[0] for x in tox_dir.glob("*.xml")})
    for env in envs:
        p, f, s = count(sorted(tox_dir.glob(f"{env}.*.xml")))
        rows.append((f"tox -e {env}", p, f, s, "ok" if outcomes.get(env, False) else "FAILED"))

    print()
    print("==== CI summary ====")
    for name, code in stages.items():
        print(f"  {name:<24} {'ok' if code == '0' else f'FAILED (exit {code})'}")
    for name, p, f, s, status in rows:
        print(f"  {name:<24} {p:6d} passed {f:4d} failed {s:5d} skipped   {status}")
    passed, failed, skipped = (sum(r[i] for r in rows) for i in (1, 2, 3))
    print(f"total: {passed} passed, {failed} failed, {skipped} skipped")
    broken = failed or any(r[4] != "ok" for r in rows) or any(c != "0" for c in stages.values())
    if passed == 0:
        print("ci: no test passed: treating the run as failed", file=sys.stderr)
    return 1 if broken or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
