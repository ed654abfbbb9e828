"""`companion export GAME`: write a recorded game as a record `companion judge` accepts unchanged.

GAME is the game's number at the table (see the history page) or `last`. The record holds the
set-up (variant, options, players, starting dice, the roll-off's starter) and every settled
round: bids, call and the revealed dice as finally accepted (corrections included).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from companion.table import records
from companion.table.config import DB_NAME, DEFAULT_DATA_DIR
from companion.table.store import EventStore, StoreError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "export", help="write a recorded game as a record for `companion judge`",
        description="Write a game from the table's event log as a JSON game record that"
                    " `companion judge` accepts unchanged.")
    parser.add_argument("game", metavar="GAME", help="game number, or 'last'")
    parser.add_argument("--data-dir", type=Path, default=Path(DEFAULT_DATA_DIR),
                        help=f"the table's data folder (default ./{DEFAULT_DATA_DIR})")
    parser.add_argument("--table", help="table id, when the log holds more than one table")
    parser.add_argument("-o", "--output", type=Path, help="write to this file instead of stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    path = args.data_dir / DB_NAME
    if not path.exists():
        print(f"companion export: no event log at {path}", file=sys.stderr)
        return 2
    try:
        store = EventStore(path)
    except StoreError as exc:
        print(f"companion export: {exc}", file=sys.stderr)
        return 2
    try:
        return _export(store, args)
    finally:
        store.close()


def _export(store: EventStore, args: argparse.Namespace) -> int:
    tables = store.tables()
    if args.table is None and len(tables) != 1:
        print("companion export: " + ("the log is empty" if not tables else
              "the log holds several tables; choose one with --table: " + ", ".join(tables)),
              file=sys.stderr)
        return 2
    table = args.table or tables[0]
    number = int(args.game) if args.game.isdigit() else args.game
    try:
        record = records.game_record(store, table, number)
    except LookupError as exc:
        print(f"companion export: {exc}", file=sys.stderr)
        return 2
    text = json.dumps(record, ensure_ascii=False, indent=2) + "\n"
    if args.output:
        if number == "last":
            number = store.games(table)[-1]
        args.output.write_text(text, encoding="utf-8")
        print(f"game {number} of table {table} written to {args.output}"
              f" ({len(record['rounds'])} rounds)", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
