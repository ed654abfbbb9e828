"""`companion calibrate`: teach the reader this table's tray, dice size, seat colours and picture faces.

    companion calibrate --tray EMPTY.jpg [--dice PHOTO... [--face N]] [--seat colour=Name ...] -o table-cal.json

Each photo is reported as it is processed (what was learned, or why it was refused), so a bad
photo can be retaken on the spot. `--from` starts from an existing calibration, so a second
picture face or a new seat can be added later without redoing the tray.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "calibrate", help="learn this table's tray, dice and picture faces from a few photos",
        description="Learn the empty tray (its outline and background), the dice size and, with"
                    " --face, what a face looks like on this set (e.g. --face 1 for the paco"
                    " toucan), from photos taken by the table's own camera.")
    parser.add_argument("--tray", type=Path, metavar="EMPTY.jpg", help="photo of the empty tray")
    parser.add_argument("--dice", type=Path, nargs="+", default=[], metavar="PHOTO",
                        help="photos of dice lying flat and apart on the tray")
    parser.add_argument("--face", type=int, choices=range(1, 7), metavar="N",
                        help="every die in the --dice photos shows this face up: teach it (1-6)")
    parser.add_argument("--seat", action="append", default=[], metavar="colour=Name",
                        help="the seat whose dice have this colour (repeat per seat)")
    parser.add_argument("--from", dest="start", type=Path, metavar="FILE",
                        help="start from this calibration and add to it")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="FILE",
                        help="where to write the calibration (JSON)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here, not at the top: the CLI registers every command at start-up, and
    # OpenCV (via vision) would otherwise slow down `companion judge` and the rest.
    from vision.calibration import (Calibration, CalibrationError, learn_dice, learn_tray,
                                    parse_seat, teach_face)
    from vision.imageio import load_image
    from vision.types import ImageError

    if not (args.tray or args.dice or args.seat or args.start):
        print("companion calibrate: nothing to learn: give --tray, --dice or --seat", file=sys.stderr)
        return 2
    if args.face is not None and not args.dice:
        print("companion calibrate: --face needs --dice photos showing that face", file=sys.stderr)
        return 2
    try:
        cal = Calibration.load(args.start) if args.start else Calibration()
        seats = [parse_seat(text) for text in args.seat]
    except CalibrationError as err:
        print(f"companion calibrate: {err}", file=sys.stderr)
        return 2
    steps = ([("tray", args.tray)] if args.tray else []) + [("dice", p) for p in args.dice]
    failed = 0
    crops = []
    for number, (kind, path) in enumerate(steps, 1):
        prefix = f"[{number}/{len(steps)}] {path.name}: "
        try:
            image = load_image(path)
            if kind == "tray":
                learned = learn_tray(cal, image)
            else:
                learned, found = learn_dice(cal, image, args.face)
                crops.extend(found)
        except (ImageError, CalibrationError) as err:
            failed += 1
            print(prefix + f"FAILED - {_reason(err, path)}", flush=True)
            continue
        print(prefix + learned, flush=True)
    if args.face is not None:
        try:
            print(f"teaching: {teach_face(cal, args.face, crops)}", flush=True)
        except (CalibrationError, ValueError) as err:
            failed += 1
            print(f"teaching face {args.face}: FAILED - {err}", flush=True)
    for colour, name in seats:
        cal.seats[colour] = name
    if seats:
        print("seats: " + ", ".join(f"{c} = {n}" for c, n in cal.seats.items()), flush=True)
    try:
        cal.save(args.output)
    except OSError as err:
        print(f"companion calibrate: cannot write {args.output}: {err.strerror or err}", file=sys.stderr)
        return 2
    print(f"wrote {args.output}" + (f" ({failed} step(s) failed: retake those photos)" if failed else ""))
    return 1 if failed else 0


def _reason(err: Exception, path: Path) -> str:
    """The error's message without repeating the file name the progress line already shows."""
    text = str(err)
    return text[len(str(path)) + 2:] if text.startswith(f"{path}: ") else text
