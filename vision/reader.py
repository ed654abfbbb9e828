"""The reader: one photo in, every die's face, colour, seat and flags out.

An underexposed photo is first brought up to a usual exposure (`vision.exposure`), and a
blurred one's faces are read from a sharpened copy (`vision.focus`). Locating
(`vision.locate`) finds each die and flags what geometry alone can tell (edge, stacked,
cut, outside); the face reader (`vision.faces`) reads the face the camera sees; this module puts
the two together, turns the face seen into the top face for the `below` view (opposite faces of
a die add up to 7), maps colours to seats, and words a warning for every die that keeps the
photo from being `ok`, so the table knows which die to re-roll and why.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from vision import faces
from vision.exposure import lifted
from vision.focus import in_focus
from vision.imageio import check_image
from vision.locate import Located, find_dice, lean_side, locate_dice
from vision.types import CUT, EDGE, OUTSIDE, STACKED, UNREADABLE, VIEWS, Candidate, Die, FaceRead, Reading

# Locating flags that make reading the face pointless: the die is not counted either way.
_NOT_READ = (EDGE, STACKED, CUT, OUTSIDE)

# Least side (the photo's pixels) of a die's top face found for its pips to be read: below it a
# pip is about a pixel across. Byler-d6 train photos shrunk to 0.45 times (top faces found 9-20
# px): photos `ok` and wrong 5 -> 1 (a label error; white 2s had been read as aces), dice read
# right 88.1 -> 61.0 %; shrunk to 0.6 times, 90.9 -> 90.3 %; as taken no die counted is under 16.
MIN_READ_SIDE = 12.0

_WHY = {
    EDGE: "stands on an edge or leans — re-roll it",
    STACKED: "rests on another die (or dice too close to tell apart) — re-roll them",
    CUT: "is cut off by the edge of the photo — move it into view",
    UNREADABLE: "could not be read with confidence — check it by eye or re-roll it",
}
# Least confidence of a face read that counts a `faint` die (vision.types.Candidate): the locator
# found it by a weak cue alone (dim marks, the detector's second count). Byler-d6 train photos
# darkened and grainy (197): of the dice the locator flagged `unreadable`, 182 had a face read,
# none wrong; counting the faint ones read 0.95 sure took dice read right 73.0 -> 79.3 %. Session
# 57, 0.95 -> 0.9 (train split, `--split train --only real --only spoiled`): underexposed 95.61 ->
# 96.43 %, dark and grainy 90.80 -> 91.01, turned and larger 90.87 -> 91.42, blurred 92.59 ->
# 92.79, the other rows the same, no new wrong read; synthetic seeds 7, 71, 72: far seed 7 and hard
# seed 72 +1 die each, no other change. Just under it, one faint die read 0.89 disagrees with the
# truth (train 100722, a photo with known label slips).
FAINT_READ_PROB = 0.9

_TOO_SMALL = "is too small in the photo to read — check it by eye, or take the photo closer"


def read_tray(image_bgr, view: str = "above", calibration=None) -> Reading:
    """Read every die on the tray photo. Raises `ImageError` for a blank, black or broken image."""
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(VIEWS)}, not {view!r}")
    check_image(image_bgr)
    located, image_bgr = _located(image_bgr, calibration)
    candidates = list(located.candidates)
    to_read = [c for c in candidates if not any(f in _NOT_READ for f in c.flags) and c.size >= MIN_READ_SIDE]
    face_photo = in_focus(image_bgr, [c.center for c in to_read], [c.size for c in to_read])
    side = lean_side(candidates) if to_read else None
    reads = dict(zip(map(id, to_read), faces.read_faces(face_photo, to_read, view, calibration, side)))
    for i, candidate in enumerate(candidates):
        read = reads.get(id(candidate))
        if read is not None and read.value is None:
            # refused on its outline: its pips read again on the die the detector sees there, if
            # any, unless the pip counter's looks at the outline rule that read out (a picture
            # stays refused: an untaught skull, cut anew, may pass for the taught paco)
            redrawn = located.redrawn(i)
            others = candidates[:i] + candidates[i + 1:]
            again = (None if redrawn is None else
                     faces.read_faces(face_photo, [redrawn], view, calibration, side, beside=others)[0])
            if (again is not None and again.kind == "pips" and again.value is not None
                    and not faces.vetoed(face_photo, candidate, again.value, view)):
                candidates[i] = redrawn
                reads[id(redrawn)] = again
    dice = tuple(_die(c, reads.get(id(c)), view, calibration) for c in candidates)
    return Reading(view=view, dice=dice, warnings=_warnings(dice))


def _located(image_bgr: np.ndarray, calibration) -> tuple[Located, np.ndarray]:
    """The dice found (`vision.locate.Located`), and the photo to read their faces on. An
    underexposed photo is read as a usual exposure shows it (`vision.exposure.lifted`), and a
    die that only the photo as taken shows is flagged `unreadable`, never left out of the count
    (the lift may merge a dark marbled die with a tray's black wall). Byler-d6 train photos, dark and grainy: dice read
    right 80.3 -> 88.5 %, photos `check` 112 -> 98 of 197; darkened in proportion (0.45 times)
    and grainy: 87.0 -> 94.5 %, 82 -> 50."""
    lit = lifted(image_bgr)
    located = locate_dice(lit, calibration)
    if lit is image_bgr:
        return located, image_bgr
    candidates = list(located.candidates)
    for die in find_dice(image_bgr, calibration):
        if OUTSIDE not in die.flags and not any(_one_die(die, other) for other in candidates):
            candidates.append(replace(die, flags=(UNREADABLE,), faint=False))
    return replace(located, candidates=candidates), lit


def _one_die(a: Candidate, b: Candidate) -> bool:
    """Whether two candidates found on two copies of one photo are one die: centres within
    half a side."""
    return math.dist(a.center, b.center) < 0.5 * max(a.size, b.size)


def _die(candidate: Candidate, read: FaceRead | None, view: str, calibration) -> Die:
    """One die from its candidate and face read (None: not read: the die is flagged already, or
    its top face is too small in the photo to read)."""
    seen = None if read is None else read.value
    confidence = 0.0 if read is None else read.confidence
    flags = candidate.flags
    if candidate.faint and seen is not None and confidence >= FAINT_READ_PROB and flags == (UNREADABLE,):
        flags = ()   # a die found by a weak cue, its face read sure: counted
    unread = seen is None and not any(f in _NOT_READ for f in flags)   # refused, or too small to read
    if unread and UNREADABLE not in flags:  # the locator may have said so already
        flags = flags + (UNREADABLE,)
    face = None if seen is None else (seen if view == "above" else 7 - seen)
    seat = calibration.seat_for_colour(candidate.colour) if calibration is not None else None
    return Die(face=face, seen=seen, center=candidate.center, size=candidate.size,
               angle=candidate.angle, confidence=confidence, colour=candidate.colour,
               seat=seat, flags=flags)


def _warnings(dice: tuple[Die, ...]) -> tuple[str, ...]:
    """One line per die that keeps the photo from `ok`, after a one-line summary."""
    if all(OUTSIDE in die.flags for die in dice):
        return ("no dice found on the tray: check the photo (light, focus, the camera's view) "
                "and take it again",)
    lines = []
    for die in dice:
        if OUTSIDE in die.flags:
            continue
        for flag in die.flags:
            if flag in _WHY:
                x, y = die.center
                why = _TOO_SMALL if flag == UNREADABLE and die.size < MIN_READ_SIDE else _WHY[flag]
                lines.append(f"{die.colour} die at ({x:.0f},{y:.0f}) {why}")
                break
    if not lines:
        return ()
    noun = "die" if len(lines) == 1 else "dice"
    return (f"{len(lines)} {noun} flagged: the count needs a check",) + tuple(lines)
