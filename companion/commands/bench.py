"""`companion bench TARGET`: benchmarks that print figures (not tests: they measure, they don't judge).

Each target lives in its own module, which defines `HELP`, `add_arguments(parser)` and
`run(args) -> exit code`; add a line to `BENCH_TARGETS` to add one. Targets import their heavy
parts inside `run`, so `companion --help` stays quick.
"""
from __future__ import annotations

import argparse
import importlib

BENCH_TARGETS = {
    "vision": "companion.bench_vision",
    "table": "companion.bench_table",
}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bench", help="run a benchmark and print its table",
        description="Run a benchmark and print its figures: " + ", ".join(BENCH_TARGETS) + ".")
    targets = parser.add_subparsers(dest="target", metavar="TARGET", required=True)
    for name, module_name in BENCH_TARGETS.items():
        module = importlib.import_module(module_name)
        sub = targets.add_parser(name, help=module.HELP, description=module.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(sub)
        sub.set_defaults(func=module.run)
