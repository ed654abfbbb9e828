"""Whether a die lies flat, leans (or stands on an edge) or rests on another die, from a close look
at it: a small learned net over a crop around that die alone, turned to a fixed way out of the photo.

The detector (`vision.detect`) sees the whole tray with the usual die 16 pixels across. At that
size a die leaning at 30-45 degrees looks much like a flat die whose sides a wide lens shows (its
on-edge score gives half the leaning dice under 0.5), and a die resting on another off its centre
hides all but a rim of the lower one (`models/lean_cnn.md`). Here each die is cut out on its own,
turned so that the way from the photo's centre to the die points right (a lens shows a flat
die's sides on the side facing the centre, so they always fall on the left), and scaled so that
the usual die is `DIE` pixels across; a fourth channel tells the net how far out the die lies
(its distance from the photo's centre in photo widths: how much of a flat die's sides a lens
shows there). The net (`models/lean_cnn.onnx`, trained by `tools/train_lean.py`)
gives the chances that it lies flat, leans, or is stacked. It runs through OpenCV's dnn module:
no torch at runtime.
"""
from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from vision.nets import read_net

MODEL_PATH = Path(__file__).resolve().parent.parent / "models" / "lean_cnn.onnx"
CROP = 48     # the net's input side, pixels
DIE = 20      # the usual die's side in the crop, pixels (a leaning die's outline: up to 1.5 times)
FLAT, LEANING, ON_ANOTHER = 0, 1, 2    # the net's outputs, in order: lies flat, leans, is stacked


def lean_crop(image_bgr: np.ndarray, centre, side: float) -> np.ndarray:
    """The CROP×CROP BGR cut around `centre` (photo pixels) as the net sees it: the usual die's
    `side` (photo pixels) scaled to DIE, turned so that the way from the photo's centre to the
    die points right (to +x)."""
    cx, cy = float(centre[0]), float(centre[1])
    outward = math.degrees(math.atan2(*_from_middle(image_bgr.shape, centre)[::-1]))
    m = cv2.getRotationMatrix2D((cx, cy), outward, DIE / max(side, 1.0))
    m[:, 2] += (CROP - 1) / 2 - np.array([cx, cy])
    # (warpAffine has no area interpolation: it samples linearly however much it shrinks)
    return cv2.warpAffine(image_bgr, m, (CROP, CROP), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def outward_reach(image_shape, centre) -> float:
    """How far out a die lies: its distance from the photo's centre, in photo widths."""
    return math.hypot(*_from_middle(image_shape, centre)) / image_shape[1]


def _from_middle(image_shape, centre) -> tuple[float, float]:
    """(dx, dy) from the photo's middle (pixel centres) to `centre`."""
    h, w = image_shape[:2]
    return float(centre[0]) - (w - 1) / 2, float(centre[1]) - (h - 1) / 2


def net_input(crops_bgr: np.ndarray, reaches) -> np.ndarray:
    """N×4×CROP×CROP float32 input for N BGR crops and their dice's `outward_reach`: Lab,
    centred and scaled as the detector's, and the reach (times two) as a flat fourth channel."""
    crops_bgr = np.asarray(crops_bgr, np.uint8)
    lab = cv2.cvtColor(crops_bgr.reshape(-1, CROP, 3), cv2.COLOR_BGR2LAB).reshape(crops_bgr.shape)
    out = np.empty((len(crops_bgr), 4, CROP, CROP), np.float32)
    out[:, :3] = ((lab.astype(np.float32) - 128.0) / 64.0).transpose(0, 3, 1, 2)
    out[:, 3] = 2 * np.asarray(reaches, np.float32).reshape(-1, 1, 1)
    return out


class LeanModel:
    """The exported net, loaded once: N crops and their dice's reaches in, N×3 chances out
    (FLAT, LEANING, ON_ANOTHER)."""

    def __init__(self, path: Path = MODEL_PATH):
        self.net = read_net(path, "lean model", "tools/train_lean.py train")

    def chances(self, crops_bgr: np.ndarray, reaches) -> np.ndarray:
        if not len(crops_bgr):
            return np.zeros((0, 3), np.float32)
        self.net.setInput(net_input(crops_bgr, reaches))
        return self.net.forward().reshape(len(crops_bgr), 3)


@lru_cache(maxsize=1)
def load_model() -> LeanModel:
    return LeanModel(MODEL_PATH)


def lean_chances(image_bgr: np.ndarray, centres, side: float) -> np.ndarray:
    """N×3 chances that each die at `centres` (photo pixels) lies flat, leans (or stands on an
    edge), or rests on another die or under one (FLAT, LEANING, ON_ANOTHER), the usual die being
    `side` photo pixels across."""
    crops = np.array([lean_crop(image_bgr, c, side) for c in centres], np.uint8).reshape(-1, CROP, CROP, 3)
    return load_model().chances(crops, [outward_reach(image_bgr.shape, c) for c in centres])
