"""Where the dice's centres are, by a small learned heatmap (CenterNet-style): used to cut a
blob of touching dice into one piece per die.

The image (Lab, the locator's working copy, or a crop of it) is resized so that the usual die's
side becomes `SIDE` pixels: the net needs no scale invariance and runs on a small picture. It
returns a heatmap at a quarter of that resolution whose local peaks are die centres. The model
(`models/dice_centres.onnx`, trained by `tools/train_detector.py`) runs through OpenCV's dnn
module: no torch at runtime.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

MODEL_PATH = Path(__file__).resolve().parent.parent / "models" / "dice_centres.onnx"
SIDE = 16            # the usual die's side in the net's input, pixels
STRIDE = 4           # input pixels per heatmap cell
PEAK_SCORE = 0.5     # least heatmap value of a die's centre


def net_input(lab: np.ndarray) -> np.ndarray:
    """1×3×H×W float32 input for a Lab uint8 image whose size is a multiple of STRIDE."""
    return ((lab.astype(np.float32) - 128.0) / 64.0).transpose(2, 0, 1)[None]


class CentreModel:
    """The exported heatmap net, loaded once."""

    def __init__(self, path: Path = MODEL_PATH):
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"dice centre model missing: {path} (run tools/train_detector.py train)")
        try:
            self.net = cv2.dnn.readNetFromONNX(str(path))
        except cv2.error as exc:
            raise ValueError(f"dice centre model unreadable: {path} is not a valid ONNX model "
                             f"(retrain with tools/train_detector.py train): {str(exc).strip()[:200]}") from None

    def heatmap(self, lab: np.ndarray) -> np.ndarray:
        """Centre probabilities (H/STRIDE × W/STRIDE) for a Lab image sized in multiples of STRIDE."""
        self.net.setInput(net_input(lab))
        return self.net.forward()[0, 0]


@lru_cache(maxsize=1)
def centre_model() -> CentreModel:
    return CentreModel(MODEL_PATH)


def die_centres(lab: np.ndarray, expected_side: float, model: CentreModel | None = None,
                min_score: float = PEAK_SCORE) -> tuple[np.ndarray, np.ndarray]:
    """Centres (N×2, x y in `lab`'s pixels) and scores (N) of the dice in a Lab image whose usual
    die is `expected_side` pixels across, best first."""
    if lab.ndim != 3 or lab.shape[2] != 3 or lab.dtype != np.uint8:
        raise ValueError("die_centres needs a Lab uint8 image (height x width x 3)")
    if not expected_side > 0:
        raise ValueError(f"expected die side must be positive, not {expected_side!r}")
    model = model or centre_model()
    f = SIDE / float(expected_side)
    h, w = lab.shape[:2]
    sw, sh = max(1, int(round(w * f))), max(1, int(round(h * f)))
    small = cv2.resize(lab, (sw, sh), interpolation=cv2.INTER_AREA if f < 1 else cv2.INTER_LINEAR)
    # at least two dice across, sized in whole cells: padded with the picture's own edge
    pw, ph = max(2 * SIDE, -(-sw // STRIDE) * STRIDE), max(2 * SIDE, -(-sh // STRIDE) * STRIDE)
    small = cv2.copyMakeBorder(small, 0, ph - sh, 0, pw - sw, cv2.BORDER_REPLICATE)
    heat = model.heatmap(small)
    peaks = (heat >= min_score) & (heat >= cv2.dilate(heat, np.ones((3, 3), np.uint8)))
    ys, xs = np.nonzero(peaks)
    if len(xs) == 0:
        return np.zeros((0, 2), np.float32), np.zeros(0, np.float32)
    # sub-cell position: the heat-weighted mean of the 3×3 cells around each peak
    padded = np.pad(heat, 1)
    dy, dx = np.mgrid[-1:2, -1:2]
    weights = padded[ys[:, None, None] + 1 + dy, xs[:, None, None] + 1 + dx]
    total = weights.sum(axis=(1, 2))
    cx = xs + (weights * dx).sum(axis=(1, 2)) / total
    cy = ys + (weights * dy).sum(axis=(1, 2)) / total
    # cell centre -> input pixel -> the caller's pixel
    centres = np.column_stack([((cx + 0.5) * STRIDE) / f - 0.5, ((cy + 0.5) * STRIDE) / f - 0.5])
    scores = heat[ys, xs]
    keep = (centres[:, 0] < w) & (centres[:, 1] < h)
    order = np.argsort(-scores[keep])
    return centres[keep][order].astype(np.float32), scores[keep][order].astype(np.float32)
