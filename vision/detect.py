"""Where the dice are, by a small learned net (CenterNet-style): each die's centre, the side of its
top face, whether it is one of a stack or stands on its edge, and which pixels are die body.
Used to cut a blob of touching dice into one piece per die, and to flag dice that must be re-rolled.

The image (Lab, the locator's working copy, or a crop of it) is resized so that the usual die's
side becomes `SIDE` pixels: the net needs no scale invariance and runs on a small picture. One
net (`models/dice_centres.onnx`, trained by `tools/train_detector.py`) gives, on a grid of
`STRIDE` input pixels, a centre heatmap whose local peaks are die centres, and at those peaks the
die's side and its chances of being one of a stack or standing on its edge; and on a grid of
`BODY_STRIDE` pixels, the chance that a pixel is a die's body (top face and visible sides, not
its shadow, not the board). It runs through OpenCV's dnn module: no torch at runtime. Its trunk
and centre head alone, cut from it into `models/dice_centres_head.onnx`, count dice over a whole
photo at less than half the cost.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Callable

import cv2
import numpy as np

from vision.nets import read_net

MODEL_PATH = Path(__file__).resolve().parent.parent / "models" / "dice_centres.onnx"
SIDE = 16            # the usual die's side in the net's input, pixels
STRIDE = 4           # input pixels per heatmap cell
BODY_STRIDE = 2      # input pixels per body-mask cell
PEAK_SCORE = 0.5     # least heatmap value of a die's centre
SIDE_RANGE = 2.0     # the side head spans SIDE / SIDE_RANGE .. SIDE * SIDE_RANGE
STACKED_SCORE = 0.9  # least `stacked` of a die to take it for one of a stack with a second cue (refuse a cut)
EDGE_SCORE = 0.5     # least `on_edge` of a die to flag as standing on its edge
HEADS = ("centre", "side", "stacked", "on_edge")   # the per-cell outputs' channels, in order
_AROUND_Y, _AROUND_X = np.mgrid[-1:2, -1:2]         # a 3×3 neighbourhood's offsets (built once: np.mgrid is slow)


def net_input(lab: np.ndarray) -> np.ndarray:
    """1×3×H×W float32 input for a Lab uint8 image whose size is a multiple of STRIDE."""
    return ((lab.astype(np.float32) - 128.0) / 64.0).transpose(2, 0, 1)[None]


def side_from_head(value: np.ndarray) -> np.ndarray:
    """The side head's output (0..1) as a side in the net's input pixels (0.5 is SIDE)."""
    return SIDE * SIDE_RANGE ** (2.0 * np.asarray(value, np.float32) - 1.0)


def side_to_head(side: np.ndarray) -> np.ndarray:
    """A side in the net's input pixels as the side head's target (0..1), `side_from_head`'s inverse."""
    return np.clip(0.5 + 0.5 * np.log(np.asarray(side, np.float32) / SIDE) / np.log(SIDE_RANGE), 0.0, 1.0)


class CentreModel:
    """The exported net, loaded once."""

    def __init__(self, path: Path = MODEL_PATH):
        path = Path(path)
        self.net = read_net(path, "dice centre model", "tools/train_detector.py train")
        self.outputs = list(self.net.getUnconnectedOutLayersNames())
        if len(self.outputs) != 2:
            raise ValueError(f"dice centre model {path} gives {len(self.outputs)} outputs, not the 2 this "
                             "code reads (per-cell heads and body mask): retrain with tools/train_detector.py train")
        self.path = path

    def run(self, lab: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(per-cell heads: len(HEADS) × H/STRIDE × W/STRIDE, body probability: H/BODY_STRIDE ×
        W/BODY_STRIDE) for a Lab image sized in multiples of STRIDE."""
        self.net.setInput(net_input(lab))
        outs = sorted((o[0] for o in self.net.forward(self.outputs)), key=lambda o: o.shape[0])
        body, heads = outs
        return heads, body[0]

    def heatmap(self, lab: np.ndarray) -> np.ndarray:
        """Centre probabilities (H/STRIDE × W/STRIDE) for a Lab image sized in multiples of STRIDE:
        the trunk and centre head alone, about 40 % of the whole net's time. OpenCV's engines run
        a graph whole (asked for an inner layer, the new one still runs every layer), so the
        centre head is a model of its own, cut from this one (`head_path`)."""
        self.centre_net.setInput(net_input(lab))
        logits = self.centre_net.forward()[0, 0]
        return 1.0 / (1.0 + np.exp(-logits))

    @cached_property
    def centre_net(self):
        return read_net(head_path(self.path), "dice centre head", "tools/train_detector.py head")


def head_path(model_path: Path) -> Path:
    """Where the trunk and centre head of the detector at `model_path` lie as a model of their own."""
    return model_path.with_name(f"{model_path.stem}_head.onnx")


@lru_cache(maxsize=1)
def centre_model() -> CentreModel:
    return CentreModel(MODEL_PATH)


@dataclass(frozen=True)
class Detections:
    """What the net sees in a Lab image, in that image's pixels, dice best first.

    How the locator should use it (figures: `models/dice_centres.md`, held-out sets):
    * `centres`, `scores`: one per die seen (a peak of at least `min_score`); the number of dice
      in a blob and where to cut it, as `die_centres` gives them (the centre head is unchanged;
      `die_centres` runs it alone, to within about 4e-6).
    * `sides`: each die's top-face side (the image's pixels), read at its centre: median error
      about 3.3 % on synthetic trays, 94 % within 10 %; on real photos about 9 % against sides
      measured roughly from loose boxes. Use it for each die's own reach when cutting a blob
      (rather than the tray's usual die), to accept a cut whose parts have about the sizes the
      net says, and as a stack's cue: from above a die on another is a little bigger.
    * `stacked`: chance that the die is one of a stack (it rests on another, or one rests on it;
      a pair usually gives one peak). On held-out synthetic trays of pip and picture-faced
      dice (the boxed set's paco, a skull, an emblem): at `STACKED_SCORE` (0.9) it catches
      about 53 % of stacked pairs, with 0.5 % false alarms on pips but 4-6 % on pictures, so
      the locator uses it only with a second cue (it refuses a cut). At 0.95 it catches about
      37 % of pairs and flags about one flat die in 500 of every face kind, but only a run over
      the whole photo gives it the context it needs (about 30-40 ms more per 30-dice photo):
      not used yet. On the stacked pairs among issue 4's `ok`-and-wrong
      trays it gives 0.91, 0.84, 0.81, 0.76, 0.63. A low score proves nothing: many pairs
      score low.
    * `on_edge`: chance that the die stands on an edge or leans. At `EDGE_SCORE` (0.5) about half
      the edge dice, with 0.2-0.3 % false alarms on flat synthetic dice and none on real ones:
      flag `edge` when above; a low score proves nothing.
    * `body`: per pixel (the image's size), the chance that it is a die's body (top face and
      visible sides), not its shadow and not the board: IoU with truth about 86 % on synthetic
      trays, 82 % on real photos where known. Pixels of a blob below 0.5 are shadow or board
      and belong to no die (the pieces `_only_shadow` checks); a part of a cut blob with little
      body in it is no die; the body pixels nearest each centre are that die's region.
    """

    centres: np.ndarray      # N×2 float32, x y
    scores: np.ndarray       # N float32, centre heat at the peak
    sides: np.ndarray        # N float32, top-face side in pixels
    stacked: np.ndarray      # N float32, 0..1
    on_edge: np.ndarray      # N float32, 0..1
    body_source: Callable[[], np.ndarray] = field(repr=False, compare=False)   # makes `body`

    @cached_property
    def body(self) -> np.ndarray:
        """H×W float32, 0..1: brought to the image's size only when first asked for, since most
        looks (at lone dice) never use it and its two resizes cost more than the rest."""
        return self.body_source()


def detect_dice(lab: np.ndarray, expected_side: float, model: CentreModel | None = None,
                min_score: float = PEAK_SCORE) -> Detections:
    """The dice in a Lab uint8 image whose usual die is `expected_side` pixels across."""
    small, f, (sw, sh) = _net_sized(lab, expected_side)
    heads, body_cells = (model or centre_model()).run(small)
    h, w = lab.shape[:2]
    ph, pw = small.shape[:2]

    def body() -> np.ndarray:
        cells = cv2.resize(body_cells, (pw, ph), interpolation=cv2.INTER_LINEAR)[:sh, :sw]
        return cv2.resize(cells, (w, h), interpolation=cv2.INTER_LINEAR).astype(np.float32)

    centres, scores, mean = _peaks(heads, min_score, f, (w, h))
    return Detections(centres=centres, scores=scores,
                      sides=(side_from_head(mean[1]) / f).astype(np.float32),
                      stacked=mean[2].astype(np.float32),
                      on_edge=mean[3].astype(np.float32),
                      body_source=body)


def die_centres(lab: np.ndarray, expected_side: float, model: CentreModel | None = None,
                min_score: float = PEAK_SCORE) -> tuple[np.ndarray, np.ndarray]:
    """Centres (N×2, x y in `lab`'s pixels) and scores (N) of the dice in a Lab image whose usual
    die is `expected_side` pixels across, best first: `detect_dice`'s, from the centre head
    alone (`CentreModel.heatmap`), for a count over a whole photo at less than half the cost."""
    small, f, _ = _net_sized(lab, expected_side)
    heat = (model or centre_model()).heatmap(small)
    centres, scores, _ = _peaks(heat[None], min_score, f, lab.shape[1::-1])
    return centres, scores


def _net_sized(lab: np.ndarray, expected_side: float) -> tuple[np.ndarray, float, tuple[int, int]]:
    """The image resized so that its usual die is SIDE pixels across and padded (with its own
    edge) to whole cells and at least two dice across; the scale, and the size before padding."""
    if lab.ndim != 3 or lab.shape[2] != 3 or lab.dtype != np.uint8:
        raise ValueError("detect_dice needs a Lab uint8 image (height x width x 3)")
    if not expected_side > 0:
        raise ValueError(f"expected die side must be positive, not {expected_side!r}")
    f = SIDE / float(expected_side)
    h, w = lab.shape[:2]
    sw, sh = max(1, int(round(w * f))), max(1, int(round(h * f)))
    small = cv2.resize(lab, (sw, sh), interpolation=cv2.INTER_AREA if f < 1 else cv2.INTER_LINEAR)
    pw, ph = max(2 * SIDE, -(-sw // STRIDE) * STRIDE), max(2 * SIDE, -(-sh // STRIDE) * STRIDE)
    return cv2.copyMakeBorder(small, 0, ph - sh, 0, pw - sw, cv2.BORDER_REPLICATE), f, (sw, sh)


def _peaks(heads: np.ndarray, min_score: float, f: float, size: tuple[int, int]):
    """The centre heatmap's peaks (heads[0]) as (centres in the caller's pixels, scores, every
    head's value there: the heat-weighted mean of the 3×3 cells around each), best first."""
    heat = heads[0]
    peaks = (heat >= min_score) & (heat >= cv2.dilate(heat, np.ones((3, 3), np.uint8)))
    ys, xs = np.nonzero(peaks)
    padded = np.zeros((heads.shape[0], heads.shape[1] + 2, heads.shape[2] + 2), heads.dtype)   # np.pad's, quicker
    padded[:, 1:-1, 1:-1] = heads
    dy, dx = _AROUND_Y, _AROUND_X
    cells = padded[:, ys[:, None, None] + 1 + dy, xs[:, None, None] + 1 + dx]   # heads × N × 3 × 3
    weights = cells[0]
    total = weights.sum(axis=(1, 2))
    mean = (cells * weights).sum(axis=(2, 3)) / np.maximum(total, 1e-9)
    cx = xs + (weights * dx).sum(axis=(1, 2)) / np.maximum(total, 1e-9)
    cy = ys + (weights * dy).sum(axis=(1, 2)) / np.maximum(total, 1e-9)
    # cell centre -> input pixel -> the caller's pixel
    centres = np.column_stack([((cx + 0.5) * STRIDE) / f - 0.5, ((cy + 0.5) * STRIDE) / f - 0.5]).reshape(-1, 2)
    w, h = size
    keep = (centres[:, 0] < w) & (centres[:, 1] < h)
    order = np.flatnonzero(keep)[np.argsort(-heat[ys, xs][keep], kind="stable")]
    return centres[order].astype(np.float32), heat[ys, xs][order].astype(np.float32), mean[:, order]
