"""``python -m flambeau info [--ops]`` and ``python -m flambeau manifest [--tier TIER]``."""
from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flambeau", description="flambeau's environment tools")
    sub = parser.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="print the environment for bug reports")
    info.add_argument("--ops", action="store_true", help="list, per backend, how each declared op runs")
    man = sub.add_parser("manifest", help="print the op manifest (signatures, kinds, tiers) as JSON")
    man.add_argument("--tier", choices=("core", "extended", "decomposed", "host"),
                     help="only the ops of this tier (core: the set every backend implements)")
    args = parser.parse_args(argv)
    import flambeau  # noqa: F401 - loads the plugins
    from flambeau.ops import manifest_json
    from flambeau.plugins._info import report

    if args.command == "info":
        print(report(show_ops=args.ops))
    else:
        print(manifest_json(args.tier))
    return 0


if __name__ == "__main__":
    sys.exit(main())
