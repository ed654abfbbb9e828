"""`companion judge FILE|-`: replay a game record and print the verdict as JSON.

Exit 0: the record is clean. Exit 1: it breaks a rule (the verdict's `error` says where and why).
Exit 2: it is not a record that can be judged (one line on stderr says what is wrong).
"""
from __future__ import annotations

import argparse
import json
import sys
from importlib import resources

from companion.rules import RecordError
from companion.rules.record import judge


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "judge", help="re-check a whole game record and print the verdict (JSON)",
        description="Replay a game record and print the verdict as one JSON object. "
                    "Exit 0: clean; 1: the record breaks a rule (see error); 2: malformed record.")
    parser.add_argument("record", metavar="FILE", nargs="?", help="game record (JSON); - reads standard input")
    parser.add_argument("--example", metavar="NAME",
                        help=f"judge a bundled example record instead: {', '.join(example_names())}")
    parser.add_argument("--indent", type=int, default=None, metavar="N", help="pretty-print with N spaces")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        if (args.record is None) == (args.example is None):
            raise RecordError("give a record FILE (- for standard input) or --example NAME, not both")
        record = _example(args.example) if args.example else _read(args.record)
        verdict = judge(record)
    except RecordError as problem:
        print(f"companion judge: {_one_line(str(problem))}", file=sys.stderr)
        return 2
    print(json.dumps(verdict, ensure_ascii=False, indent=args.indent))
    return 1 if verdict["error"] else 0


def example_names() -> list[str]:
    """Names of the example records bundled with the package (companion/examples/*.json)."""
    folder = resources.files("companion") / "examples"
    return sorted(entry.name[:-5] for entry in folder.iterdir() if entry.name.endswith(".json"))


def _example(name: str) -> object:
    if name not in example_names():
        raise RecordError(f"no example called {name!r} (examples: {', '.join(example_names())})")
    return json.loads((resources.files("companion") / "examples" / f"{name}.json").read_text(encoding="utf-8"))


def _read(source: str) -> object:
    """Parse the record from a file or stdin; every failure becomes a RecordError with one clear line."""
    try:
        if source == "-":
            text = sys.stdin.read()
            where = "standard input"
        else:
            where = source
            with open(source, encoding="utf-8") as handle:
                text = handle.read()
    except FileNotFoundError:
        raise RecordError(f"no such file: {source}") from None
    except (OSError, UnicodeDecodeError) as problem:
        raise RecordError(f"cannot read {source}: {problem}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as problem:
        raise RecordError(f"{where} is not valid JSON: {problem}") from None


def _one_line(text: str) -> str:
    return " ".join(text.split())
