"""``python -m flambeau info [--ops]`` and ``python -m flambeau manifest``."""
from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flambeau", description="flambeau's environment tools")
    sub = parser.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="print the environment for bug reports")
    info.add_argument("--ops", action="store_true", help="list, per backend, how each declared op runs")
    sub.add_parser("manifest", help="print the primitive-op manifest as JSON")
    args = parser.parse_args(argv)
    import flambeau  # noqa: F401 - loads the plugins
    from flambeau.ops import manifest_json
    from flambeau.plugins._info import report

    if args.command == "info":
        print(report(show_ops=args.ops))
    else:
        print(manifest_json())
    return 0


if __name__ == "__main__":
    sys.exit(main())
