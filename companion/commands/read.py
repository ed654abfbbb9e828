"""`companion read IMAGE...`: read the dice on tray photos and print what was counted.

    companion read tray.jpg                         # a table per photo
    companion read *.jpg --json                     # one JSON object per photo, one per line
    companion read tray.jpg --annotate tray.read.png
    companion read a.jpg b.jpg --annotate out/      # a folder: out/a.read.png, out/b.read.png
    companion read a.jpg b.jpg --annotate 'out/{stem}-checked.jpg'   # a name template

All photos are read in one process. A photo that cannot be read (missing, corrupt, blank,
black) gets one line on stderr (and, with --json, an object with an `error`); the others are
still read. Exit 0: every photo was read (whatever its status); 1: at least one photo could not
be read or its annotation not written; 2: bad options or calibration file.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ANNOTATION_SUFFIX = ".read.png"


class UsageError(ValueError):
    """An option that cannot work, found before any photo is read."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "read", help="read the dice on tray photos (faces, counts, flags)",
        description="Read every die on each photo: its top face, colour, seat and any flag "
                    "(edge, stacked, cut, outside, unreadable). A photo is `ok` only when every "
                    "die on the tray was read with confidence; otherwise `check`.",
        epilog="--annotate OUT: with one photo, OUT is the picture to write (.png or .jpg). With "
               "several, OUT is a folder (each photo's picture is named STEM.read.png) or a name "
               "template with {stem}, {name} or {index}, e.g. 'out/{stem}-read.jpg'. "
               "Exit 0: all photos read; 1: a photo could not be read; 2: bad options.")
    parser.add_argument("images", nargs="+", metavar="IMAGE", help="photos of the tray (JPEG, PNG, ...)")
    parser.add_argument("--view", choices=("above", "below"), default="above",
                        help="camera over the tray (above, default) or under a clear tray (below: "
                             "the face seen is the bottom one, the top face is 7 - seen)")
    parser.add_argument("--calibration", type=Path, metavar="FILE",
                        help="this table's calibration (from `companion calibrate`)")
    parser.add_argument("--json", action="store_true", help="one JSON object per photo, one per line")
    parser.add_argument("--annotate", metavar="OUT",
                        help="draw each die's box and read face over the photo (see below)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from vision.calibration import Calibration, CalibrationError

    images = [Path(p) for p in args.images]
    try:
        targets = annotation_paths(images, args.annotate) if args.annotate else [None] * len(images)
        calibration = Calibration.load(args.calibration) if args.calibration else None
    except (UsageError, CalibrationError) as problem:
        print(f"companion read: {problem}", file=sys.stderr)
        return 2
    failed = 0
    for path, target in zip(images, targets):
        failed += not _read_one(path, target, args.view, calibration, args.json)
    return 1 if failed else 0


def _read_one(path: Path, target: Path | None, view: str, calibration, as_json: bool) -> bool:
    """Read one photo and print it; on failure say why (stderr) and return False."""
    import cv2

    from vision.annotate import draw_reading
    from vision.imageio import load_image
    from vision.reader import read_tray
    from vision.types import ImageError

    try:
        image = load_image(path)
        reading = read_tray(image, view=view, calibration=calibration)
    except ImageError as problem:
        return _failure(path, str(problem), as_json)
    except Exception as problem:      # a reader fault on one photo must not lose the others
        return _failure(path, f"{path}: the reader failed ({type(problem).__name__}: {problem})", as_json)
    result = reading.to_json(str(path))
    print(json.dumps(result, ensure_ascii=False) if as_json else _table(result), flush=True)
    if target is None:
        return True
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        written = cv2.imwrite(str(target), draw_reading(image, reading))
    except (OSError, cv2.error) as problem:
        written, why = False, str(problem).strip().splitlines()[-1]
    else:
        why = "the file could not be written"
    if not written:
        print(f"companion read: {path}: annotation {target}: {why}", file=sys.stderr)
    return bool(written)


def _failure(path: Path, message: str, as_json: bool) -> bool:
    print(f"companion read: {message}", file=sys.stderr, flush=True)
    if as_json:
        print(json.dumps({"image": str(path), "error": message}, ensure_ascii=False), flush=True)
    return False


def annotation_paths(images: list[Path], target: str) -> list[Path]:
    """Where each photo's annotated picture goes: one file, a folder, or a {stem}/{name}/{index} template."""
    if "{" in target:
        try:
            paths = [Path(target.format(stem=p.stem, name=p.name, index=i)) for i, p in enumerate(images, 1)]
        except (KeyError, IndexError, ValueError) as problem:
            raise UsageError(f"--annotate template {target!r}: use only {{stem}}, {{name}} or {{index}} ({problem})") from None
        if len(set(paths)) != len(paths):
            raise UsageError(f"--annotate template {target!r} gives several photos the same name: add {{index}}")
    elif len(images) == 1 and not (target.endswith(("/", "\\")) or Path(target).is_dir()):
        paths = [Path(target)]
    else:
        folder = Path(target)
        if folder.exists() and not folder.is_dir():
            raise UsageError(f"--annotate {target}: with several photos give a folder or a {{stem}} template")
        paths, used = [], set()
        for index, image in enumerate(images, 1):
            path = folder / (image.stem + ANNOTATION_SUFFIX)
            if path in used:
                path = folder / f"{image.stem}-{index}{ANNOTATION_SUFFIX}"
            used.add(path)
            paths.append(path)
    import cv2

    for path in paths:
        if not cv2.haveImageWriter(str(path)):
            raise UsageError(f"--annotate {path}: cannot write that kind of picture; end the name in .png or .jpg")
    return paths


def _table(result: dict) -> str:
    """A photo's reading as a few aligned lines a person can check against the tray."""
    counts = " ".join(f"{face}:{n}" for face, n in result["counts"].items())
    lines = [f"{result['image']}  view {result['view']}  status {result['status']}  "
             f"{len(result['dice'])} dice  counts {counts}"]
    if result["dice"]:
        lines.append(f"  {'#':>3} {'face':>4} {'seen':>4}  {'colour':<7} {'seat':<8} {'x':>7} {'y':>7} "
                     f"{'size':>6} {'angle':>6} {'conf':>5}  flags")
    for number, die in enumerate(result["dice"], 1):
        face = "-" if die["face"] is None else str(die["face"])
        seen = "-" if die["seen"] is None else str(die["seen"])
        lines.append(f"  {number:>3} {face:>4} {seen:>4}  {die['colour']:<7} {die['seat'] or '-':<8} "
                     f"{die['center'][0]:>7.1f} {die['center'][1]:>7.1f} {die['size']:>6.1f} "
                     f"{die['angle']:>6.1f} {die['confidence']:>5.2f}  {','.join(die['flags']) or '-'}")
    lines.extend(f"  ! {warning}" for warning in result["warnings"])
    return "\n".join(lines)
