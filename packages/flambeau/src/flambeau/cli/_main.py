"""Argument parsing for the ``flambeau`` command line."""
from __future__ import annotations

import argparse
import subprocess
import sys
from importlib import metadata


def _version() -> str:
    try:
        return metadata.version("flambeau")
    except metadata.PackageNotFoundError:  # running from a source tree that is not installed
        return "unknown"


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flambeau",
        description="flambeau: a deep-learning framework with PyTorch's API, built from separate packages.",
    )
    parser.add_argument("--version", action="version", version=f"flambeau {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("demo", help="run a short tour of tensors, then a small training run")
    from ._train import add_arguments

    train = sub.add_parser(
        "train",
        help="train a classifier on the bundled 8x8 digits (or MNIST-format IDX files), save and plot it",
        description="Train an MLP on the 1,797 bundled 8x8 digits (or on MNIST-format IDX files with --data), "
                    "with a progress bar per epoch; print the test accuracy, save a checkpoint (fb.save) and a "
                    "PNG plot of the training loss and test accuracy per epoch.",
    )
    add_arguments(train)
    sub.add_parser(
        "run",
        help="start a data-parallel job: N copies of a script with flambeau.distributed's variables set "
             "(same as `python -m flambeau.distributed.run`; needs flambeau-distributed)",
        add_help=False,  # --help and every other option go to flambeau.distributed.run
    )
    sub.add_parser(
        "info",
        help="print the environment for bug reports (same as `python -m flambeau info`)",
        add_help=False,  # --help and every other option go to `python -m flambeau info`
    )
    return parser


def _forward_info(extra: list[str]) -> int:
    # A child process, so that the report is exactly what `python -m flambeau info` prints,
    # options and exit status included, and no state of this process leaks into it.
    return subprocess.call([sys.executable, "-m", "flambeau", "info", *extra])


def _forward_run(extra: list[str]) -> int:
    # In this process: the launcher supervises its children and forwards signals to them.
    try:
        from flambeau.distributed.run import main as run_main
    except ImportError:
        print("flambeau run: needs flambeau-distributed (pip install flambeau-distributed mpi4py mpich)",
              file=sys.stderr)
        return 2
    return run_main(extra)


def main(argv: list[str] | None = None) -> int:
    """Run the ``flambeau`` command line with ``argv`` (default: ``sys.argv[1:]``); return its exit status.

    Example::

        >>> from flambeau.cli import main
        >>> main(["demo"])  # doctest: +SKIP
        0
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["run"]:
        return _forward_run(argv[1:])
    args, extra = _build_parser().parse_known_args(argv)
    if args.command == "info":
        return _forward_info(extra)
    if extra:
        _build_parser().error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command == "train":
        from ._train import run_train

        return run_train(args)
    from ._demo import run_demo

    return run_demo()
