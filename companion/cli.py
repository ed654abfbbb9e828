"""The `companion` command: finds each sub-command's module and dispatches to it."""
from __future__ import annotations

import argparse
import importlib
import sys

# Each module defines `register(subparsers)`, which adds its parser and sets `func`;
# `func(args)` returns the process exit code.
COMMAND_MODULES = [
    "companion.commands.judge",
    "companion.commands.odds",
    "companion.commands.serve",
    "companion.commands.verify",
    "companion.commands.export",
    "companion.commands.read",
    "companion.commands.bench",
    "companion.commands.calibrate",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="companion",
        description="Perudo table companion: read revealed dice and settle dudo and calza.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        sys.stderr.close()
        return 0
