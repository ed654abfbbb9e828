"""What a table learns about its own tray and dice set, kept in one small JSON file.

A calibration is learned once per table (`companion calibrate`) and handed to the reader:

* the empty tray: its outline (dice outside it are reported `outside`) and its background
  colour statistics;
* the expected die size, which lets the locator split touching dice by size;
* seat colours {colour: seat}, so each revealed die is checked against the seat that owns it;
* face templates taught by `vision.faces.teach` (a picture face such as the paco toucan),
  stored under `faces[str(face)]`.

Coordinates and sizes are in the pixels of the photos it was learned from (`image_size`); a
reader working on photos of another size scales them with `scaled_to`.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np

VERSION = 1
COLOURS = ("white", "black", "red", "blue", "green", "yellow", "purple", "orange", "other")


class CalibrationError(ValueError):
    """A calibration file or step that cannot be used, with a reason a person can act on."""


@dataclass
class Calibration:
    """A table's learned set-up. Every part is optional: a blank calibration changes nothing."""

    image_size: tuple[int, int] | None = None          # (width, height) the pixels below refer to
    tray_outline: list[list[float]] | None = None       # polygon of the tray's inside, image pixels
    background: dict | None = None                      # {"lab_mean": [L, a, b], "lab_std": [...]}
    die_size: float | None = None                       # side of one die, image pixels
    seats: dict[str, str] = field(default_factory=dict)  # colour name -> seat name
    faces: dict[str, dict] = field(default_factory=dict)  # str(face) -> vision.faces.teach(...) data

    def seat_for_colour(self, colour: str) -> str | None:
        return self.seats.get(colour)

    def scaled_to(self, width: int, height: int) -> "Calibration":
        """The same calibration for photos of another size (same camera framing)."""
        if self.image_size is None or tuple(self.image_size) == (width, height):
            return self
        fx, fy = width / self.image_size[0], height / self.image_size[1]
        outline = None if self.tray_outline is None else [[x * fx, y * fy] for x, y in self.tray_outline]
        size = None if self.die_size is None else self.die_size * (fx * fy) ** 0.5
        return replace(self, image_size=(width, height), tray_outline=outline, die_size=size)

    # --- files ---------------------------------------------------------------------------------

    def to_json(self) -> dict:
        return {
            "version": VERSION,
            "image_size": list(self.image_size) if self.image_size else None,
            "tray_outline": self.tray_outline,
            "background": self.background,
            "die_size": self.die_size,
            "seats": dict(self.seats),
            "faces": dict(self.faces),
        }

    @classmethod
    def from_json(cls, data: dict, source: str = "calibration") -> "Calibration":
        if not isinstance(data, dict):
            raise CalibrationError(f"{source}: expected a JSON object")
        version = data.get("version")
        if version != VERSION:
            raise CalibrationError(f"{source}: calibration version {version!r} is not supported "
                                   f"(this reader knows version {VERSION}); run `companion calibrate` again")
        try:
            size = data.get("image_size")
            outline = data.get("tray_outline")
            cal = cls(
                image_size=(int(size[0]), int(size[1])) if size else None,
                tray_outline=[[float(x), float(y)] for x, y in outline] if outline else None,
                background=data.get("background"),
                die_size=float(data["die_size"]) if data.get("die_size") else None,
                seats={str(k): str(v) for k, v in (data.get("seats") or {}).items()},
                faces={str(k): v for k, v in (data.get("faces") or {}).items()},
            )
        except (TypeError, ValueError, KeyError, IndexError) as err:
            raise CalibrationError(f"{source}: malformed calibration ({err})") from None
        if cal.tray_outline is not None and len(cal.tray_outline) < 3:
            raise CalibrationError(f"{source}: the tray outline needs at least 3 points")
        unknown = sorted(set(cal.seats) - set(COLOURS))
        if unknown:
            raise CalibrationError(f"{source}: unknown seat colour(s) {unknown}; use {', '.join(COLOURS)}")
        return cal

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Calibration":
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise CalibrationError(f"{path}: no such calibration file") from None
        except (OSError, UnicodeDecodeError) as err:
            raise CalibrationError(f"{path}: cannot read the calibration ({err})") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise CalibrationError(f"{path}: not a calibration file (bad JSON: {err.msg}, line {err.lineno})") from None
        return cls.from_json(data, str(path))

    def save(self, path: str | os.PathLike) -> None:
        """Write atomically, so a table never reads a half-written file."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)


# --- learning ----------------------------------------------------------------------------------

def learn_tray(cal: Calibration, empty_tray_bgr: np.ndarray) -> str:
    """Learn the tray outline and background from a photo of the empty tray; returns what was learned."""
    from vision.exposure import lifted
    from vision.locate import find_tray, find_dice

    empty_tray_bgr = lifted(empty_tray_bgr)   # as the reader will see the table's photos
    height, width = empty_tray_bgr.shape[:2]
    if cal.image_size is not None and tuple(cal.image_size) != (width, height):
        raise CalibrationError(f"the tray photo is {width}×{height} but the other photos are "
                               f"{cal.image_size[0]}×{cal.image_size[1]}: use one camera setting")
    spots = [c for c in find_dice(empty_tray_bgr) if "outside" not in c.flags]
    outline = find_tray(empty_tray_bgr)
    lab = cv2.cvtColor(empty_tray_bgr, cv2.COLOR_BGR2LAB)
    inside = np.zeros((height, width), np.uint8)
    if outline is not None:
        cv2.fillPoly(inside, [np.int32(np.round(outline))], 1)
    else:
        inside[:] = 1
    pixels = lab[inside > 0].reshape(-1, 3).astype(np.float32)
    cal.image_size = (width, height)
    cal.tray_outline = None if outline is None else [[round(float(x), 1), round(float(y), 1)] for x, y in outline]
    cal.background = {"lab_mean": [round(float(v), 2) for v in pixels.mean(0)],
                      "lab_std": [round(float(v), 2) for v in pixels.std(0)]}
    where = (f"tray outline found ({len(outline)} corners, {_polygon_extent(outline)})"
             if outline is not None else "no tray rim seen: the whole frame counts as the tray")
    note = (f"; warning: {len(spots)} spot(s) that look like dice (first at {spots[0].center[0]:.0f},"
            f"{spots[0].center[1]:.0f}): if they are dice, clear the tray and retake") if spots else ""
    return f"{where}; background {_describe_lab(cal.background['lab_mean'])}{note}"


def learn_dice(cal: Calibration, photo_bgr: np.ndarray, face: int | None = None) -> tuple[str, list[np.ndarray]]:
    """Learn the die size (and, with `face`, cut out each die's face for teaching) from a photo of
    dice lying flat. Returns (what was learned, face crops)."""
    from vision.exposure import lifted
    from vision.faces import cut_face
    from vision.locate import find_dice

    photo_bgr = lifted(photo_bgr)   # as the reader will see the table's photos
    height, width = photo_bgr.shape[:2]
    if cal.image_size is not None and tuple(cal.image_size) != (width, height):
        raise CalibrationError(f"the photo is {width}×{height} but the tray photo is "
                               f"{cal.image_size[0]}×{cal.image_size[1]}: use one camera setting")
    found = find_dice(photo_bgr, cal if cal.die_size else None)
    clean = [c for c in found if not c.flags]
    if not clean:
        raise CalibrationError(f"no die lying flat and clear of the others was found ({len(found)} flagged); "
                               "spread the dice out on the tray and retake")
    sizes = [c.size for c in clean]
    previous = [cal.die_size] if cal.die_size else []
    cal.die_size = round(float(np.median(sizes + previous)), 2)
    if cal.image_size is None:
        cal.image_size = (width, height)
    colours = sorted({c.colour for c in clean})
    crops = [cut_face(photo_bgr, c.corners) for c in clean] if face is not None else []
    skipped = len(found) - len(clean)
    note = f"; {skipped} die/dice skipped (flagged: {', '.join(sorted({f for c in found for f in c.flags}))})" if skipped else ""
    return (f"{len(clean)} dice, size {cal.die_size:.0f} px, colours {', '.join(colours)}{note}", crops)


def teach_face(cal: Calibration, face: int, crops: list[np.ndarray]) -> str:
    """Store templates for `face` made by `vision.faces.teach` from the crops gathered."""
    from vision.faces import teach

    if not crops:
        raise CalibrationError(f"no face crops to teach face {face} from")
    entry = teach(crops, face)
    cal.faces[str(face)] = entry
    return f"face {face} taught from {len(entry['templates'])} crops"


def parse_seat(text: str) -> tuple[str, str]:
    """`colour=Name` -> (colour, name), with a clear error for anything else."""
    colour, sep, name = text.partition("=")
    colour, name = colour.strip().lower(), name.strip()
    if not sep or not colour or not name:
        raise CalibrationError(f"--seat {text!r}: write it as colour=Name, e.g. red=Ana")
    if colour not in COLOURS:
        raise CalibrationError(f"--seat {text!r}: unknown colour {colour!r}; use one of {', '.join(COLOURS)}")
    return colour, name


def _polygon_extent(outline) -> str:
    pts = np.asarray(outline, np.float32)
    w, h = pts.max(0) - pts.min(0)
    return f"{w:.0f}×{h:.0f} px"


def _describe_lab(lab_mean) -> str:
    lab = np.uint8([[lab_mean]])
    b, g, r = cv2.cvtColor(lab, cv2.COLOR_LAB2BGR)[0, 0]
    return f"colour #{r:02x}{g:02x}{b:02x} (lightness {lab_mean[0] / 2.55:.0f} %)"
