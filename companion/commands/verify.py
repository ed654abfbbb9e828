"""`companion verify DATA_DIR`: check the event log's hash chain and name the first broken link.

Every event's hash covers the previous hash, the event's fields and its photos' bytes, so a
changed, removed or inserted event or photo breaks the chain from there on. Events cut off the
end leave a valid chain: compare the printed head (last event and hash) with one noted earlier. Exit 0: intact;
1: broken (the first broken link of each table is printed); 2: no readable event log there.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from companion.table.config import DB_NAME
from companion.table.store import StoreError, verify_chain


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "verify", help="check that nothing recorded at the table was altered",
        description="Check the hash chain of a table's event log (events, photos and readings)."
                    " Exit 0: intact; 1: broken (the first broken link is named); 2: no log.")
    parser.add_argument("data_dir", metavar="DATA_DIR", type=Path,
                        help=f"the table's data folder (or its {DB_NAME} file)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    path = args.data_dir / DB_NAME if args.data_dir.is_dir() else args.data_dir
    try:
        checked, broken, heads = verify_chain(path)
    except StoreError as exc:
        print(f"companion verify: {exc}", file=sys.stderr)
        return 2
    if broken:
        for link in broken:
            print(f"BROKEN: {link}")
        print(f"companion verify: the chain in {path} is broken; events from the first broken"
              " link on cannot be trusted", file=sys.stderr)
        return 1
    print(f"OK: {checked} events in {path}, chain intact")
    for table, (seq, digest) in sorted(heads.items()):
        print(f"  table {table}: last event #{seq}, hash {digest}")
    return 0
