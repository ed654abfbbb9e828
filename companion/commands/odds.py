"""`companion odds 7x4 --dice 20 [--mine 1,4,4,2,6] [--no-wild]`: exact odds of a bid.

Prints the distribution of the count the reveal will show, the chance the bid holds (what a dudo
bets against) and the chance it is exact (what a calza bets on), seen by the player whose dice
are given with --mine.
"""
from __future__ import annotations

import argparse
import json
import sys

from companion.rules.bid import Bid, face_word
from companion.rules.odds import exact_distribution

BAR_WIDTH = 40


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "odds", help="exact chance that a bid holds, and the distribution of the count",
        description="Exact binomial odds of a bid, given the dice on the table and your own dice.")
    parser.add_argument("bid", help="the bid, QUANTITYxFACE, e.g. 7x4 (face 1 = aces)")
    parser.add_argument("--dice", type=int, required=True, metavar="N",
                        help="dice on the whole table, yours included")
    parser.add_argument("--mine", default="", metavar="FACES",
                        help="your own dice, comma-separated, e.g. 1,4,4,2,6 (they are known, not rolled)")
    parser.add_argument("--no-wild", dest="aces_wild", action="store_false",
                        help="aces are not wild (a palifico round, or a table playing without wild aces)")
    parser.add_argument("--stairs", metavar="HANDS", default=None,
                        help="Snyd stairs: the other players' hand sizes, comma-separated, e.g. 4,3,2")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        bid = Bid.parse(args.bid)
        mine = _faces(args.mine)
        unknown = args.dice - len(mine)
        if args.dice < 1 or unknown < 0:
            raise ValueError(f"--dice {args.dice} must be at least 1 and count your own {len(mine)} dice too")
        hands = _sizes(args.stairs) if args.stairs is not None else None
        spread = exact_distribution(unknown, bid.face, args.aces_wild, mine, stairs=hands is not None, hands=hands)
    except ValueError as problem:
        print(f"companion odds: {problem}", file=sys.stderr)
        return 2
    holds = float(sum(spread[bid.quantity:]))
    exact = float(spread[bid.quantity]) if bid.quantity < len(spread) else 0.0
    if args.json:
        print(json.dumps({"bid": [bid.quantity, bid.face], "dice": args.dice, "unknown": unknown, "mine": mine,
                          "aces_wild": args.aces_wild, "holds": holds, "exact": exact,
                          "distribution": [float(p) for p in spread]}))
        return 0
    wild = "aces wild" if args.aces_wild and bid.face != 1 else "aces not wild" if bid.face != 1 else "counting aces"
    print(f"{bid}: at least {bid.quantity} {face_word(bid.face)} among {args.dice} dice "
          f"({unknown} unknown; {wild})")
    print(f"bid holds (dudo loses):  {holds:8.2%}")
    print(f"exactly {bid.quantity} (calza right): {exact:8.2%}")
    print()
    print("count   P(=count)  P(>=count)")
    top = max(spread)
    for count, p in enumerate(spread):
        if p > 0 or count == bid.quantity:
            bar = "#" * round(BAR_WIDTH * float(p / top)) if top else ""
            mark = " <- bid" if count == bid.quantity else ""
            print(f"{count:5d}   {float(p):8.2%}   {float(sum(spread[count:])):8.2%}  {bar}{mark}")
    return 0


def _faces(text: str) -> list[int]:
    if not text.strip():
        return []
    try:
        faces = [int(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        raise ValueError(f"--mine takes faces 1 to 6 separated by commas, not {text!r}") from None
    if any(f < 1 or f > 6 for f in faces):
        raise ValueError(f"--mine takes faces 1 to 6, not {text!r}")
    return faces


def _sizes(text: str) -> list[int]:
    try:
        return [int(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        raise ValueError(f"--stairs takes the other hands' sizes separated by commas, not {text!r}") from None
