"""The reader's typed results: what every stage of `vision/` hands on, and what the table reads."""
from __future__ import annotations

from dataclasses import dataclass, field

VIEWS = ("above", "below")

# Why a die is not counted. Any flag keeps the die out of `counts` and puts the photo in `check`.
EDGE = "edge"            # standing on an edge or leaning: must be re-rolled
STACKED = "stacked"      # resting on another die
CUT = "cut"              # cut off by the frame
OUTSIDE = "outside"      # not on the tray (rim, jar beside it): ignored, never counted
UNREADABLE = "unreadable"  # face the reader cannot read with confidence (or an untaught picture face)
FLAGS = (EDGE, STACKED, CUT, OUTSIDE, UNREADABLE)


class ImageError(ValueError):
    """The input is not a usable photo (corrupt, not an image, blank, black)."""


@dataclass(frozen=True)
class Die:
    """One die found in a photo. `face` is the top face (1 = ace/paco); `seen` is the face the camera saw."""

    face: int | None
    seen: int | None
    center: tuple[float, float]
    size: float
    angle: float
    confidence: float
    colour: str
    seat: str | None = None
    flags: tuple[str, ...] = ()

    @property
    def counted(self) -> bool:
        return not self.flags and self.face is not None

    def to_json(self) -> dict:
        return {
            "face": self.face,
            "seen": self.seen,
            "center": [round(self.center[0], 1), round(self.center[1], 1)],
            "size": round(self.size, 1),
            "angle": round(self.angle, 1),
            "confidence": round(self.confidence, 3),
            "colour": self.colour,
            "seat": self.seat,
            "flags": list(self.flags),
        }


@dataclass(frozen=True)
class Reading:
    """Everything read from one photo."""

    view: str
    dice: tuple[Die, ...]
    warnings: tuple[str, ...] = field(default=())

    @property
    def status(self) -> str:
        """`ok` only when every die on the tray was read with confidence; else `check`. A photo
        with no die found on the tray is `check` too: a reveal always shows dice, so an empty
        reading means the dice were lost (a dark photo, the camera's view blocked)."""
        on_tray = [d for d in self.dice if OUTSIDE not in d.flags]
        return "ok" if on_tray and all(d.counted for d in on_tray) else "check"

    @property
    def counts(self) -> dict[str, int]:
        tally = {str(f): 0 for f in range(1, 7)}
        for die in self.dice:
            if die.counted:
                tally[str(die.face)] += 1
        return tally

    def to_json(self, image: str | None = None) -> dict:
        return {
            "image": image,
            "view": self.view,
            "status": self.status,
            "dice": [d.to_json() for d in self.dice],
            "counts": self.counts,
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class Candidate:
    """A die found by `vision.locate`, before its face is read.

    `corners` is the top face's quadrilateral (4 (x, y) points, image pixels) used to cut the
    face out for `vision.faces`; `flags` holds what locating alone can tell (edge, stacked, cut,
    outside, unreadable). `faint`: a lone die found only by a weak cue (a die-sized square with
    faint marks, or the detector's second count) and flagged `unreadable` for that alone; a sure
    read of its face lifts the flag (`vision.reader`)."""

    center: tuple[float, float]
    size: float
    angle: float
    corners: tuple[tuple[float, float], ...]
    colour: str
    flags: tuple[str, ...] = ()
    faint: bool = False


@dataclass(frozen=True)
class FaceRead:
    """What `vision.faces` read on one die's visible face: `value` is the face seen (None: unreadable)."""

    value: int | None
    confidence: float
    kind: str = "pips"  # "pips" or "picture"
