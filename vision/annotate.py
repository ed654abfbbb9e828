"""Draw what the reader saw over the photo: the evidence the table page shows after a reveal.

Each die gets its box and the face it was counted as; a flagged die is boxed in a warning colour
with the reason (edge, stacked, cut, unreadable), a die outside the tray in grey. A banner on top
gives the photo's status and counts, so the picture alone tells what was decided. An
underexposed photo is drawn on as the reader saw it, lifted (`vision.exposure`), so that the
table can see the dice it is shown."""
from __future__ import annotations

import cv2
import numpy as np

from vision.exposure import lifted
from vision.types import OUTSIDE, Reading

COUNTED = (60, 200, 40)      # BGR: green
FLAGGED = (0, 140, 255)      # orange
IGNORED = (150, 150, 150)    # grey: outside the tray
INK = (255, 255, 255)
SHADOW = (0, 0, 0)


def draw_reading(image_bgr: np.ndarray, reading: Reading) -> np.ndarray:
    """A copy of `image_bgr` (lifted when underexposed) with every die of `reading` boxed and
    labelled, and a status banner."""
    if image_bgr is None or image_bgr.ndim != 3 or image_bgr.shape[2] != 3:
        raise ValueError("draw_reading needs a BGR colour image")
    out = lifted(image_bgr).copy()
    scale = max(out.shape[:2]) / 1000
    thickness = max(1, round(2 * scale))
    for die in reading.dice:
        colour = IGNORED if OUTSIDE in die.flags else COUNTED if die.counted else FLAGGED
        box = cv2.boxPoints(((float(die.center[0]), float(die.center[1])), (die.size, die.size), die.angle))
        cv2.polylines(out, [np.round(box).astype(np.int32)], True, colour, thickness, cv2.LINE_AA)
        label = "?" if die.face is None else str(die.face)
        if die.flags:
            label += " " + ",".join(die.flags)
        top = box[:, 1].min()
        text_scale = min(2.0, max(0.35, die.size / 70))
        _text(out, label, (int(die.center[0] - die.size / 2), int(top - 4 * scale)), text_scale, colour)
    counts = " ".join(f"{face}:{n}" for face, n in reading.counts.items())
    flagged = sum(1 for d in reading.dice if d.flags and OUTSIDE not in d.flags)
    banner = f"{reading.status.upper()}  {reading.view}  {len(reading.dice)} dice  counts {counts}"
    if flagged:
        banner += f"  ({flagged} flagged)"
    _banner(out, banner, scale, COUNTED if reading.status == "ok" else FLAGGED)
    return out


def _text(image, text, origin, size, colour):
    width = max(1, round(size * 2))
    x = max(0, origin[0])
    y = max(int(18 * size), origin[1])
    cv2.putText(image, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, size, SHADOW, width + 2, cv2.LINE_AA)
    cv2.putText(image, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, size, colour, width, cv2.LINE_AA)


def _banner(image, text, scale, colour):
    size = max(0.5, 0.7 * scale)
    (w, h), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, size, max(1, round(size * 2)))
    pad = int(8 * scale) + 2
    cv2.rectangle(image, (0, 0), (min(image.shape[1], w + 2 * pad), h + base + 2 * pad), (30, 30, 30), -1)
    cv2.rectangle(image, (0, 0), (pad // 2, h + base + 2 * pad), colour, -1)
    cv2.putText(image, text, (pad, pad + h), cv2.FONT_HERSHEY_SIMPLEX, size, INK, max(1, round(size * 2)),
                cv2.LINE_AA)
