"""Find every die on the tray: where it is, how big, how turned, its colour, and what looks wrong.

The photo is shrunk to a working copy (about 640 px on its long side) where all the heavy work
happens: a smooth background model is fitted around the dice, pixels that differ from it in
colour, brightness or sharp edges become foreground, and each foreground blob is then either one
die, a cluster of touching dice split apart by the expected die size, or something that cannot be
resolved, which is still reported (flagged), so the photo goes to `check` instead of being
counted short. Coordinates in the returned candidates are in the original photo's pixels.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.types import CUT, EDGE, OUTSIDE, STACKED, Candidate, ImageError

WORK_LONG_SIDE = 640          # pixels on the working copy's long side
MIN_DIE_FRACTION = 0.012      # smallest die side accepted, as a fraction of the photo's short side
MAX_DIE_FRACTION = 0.30       # largest die side accepted
SINGLE_MAX_AREA = 1.65        # a blob up to this many single-die areas can still be one die
MAX_HOLE_FRACTION = 0.15     # holes filled up to this side (fraction of the short side)
EDGE_ASPECT = 1.45            # a lone die whose outline is longer than this is on an edge / leaning


@dataclass
class _Blob:
    """One region of the working copy's foreground thought to hold dice."""

    mask: np.ndarray          # bool, cropped to the blob's bounding box
    x0: int
    y0: int

    @property
    def area(self) -> int:
        return int(self.mask.sum())


def find_dice(image_bgr: np.ndarray, calibration=None) -> list[Candidate]:
    """Every die on the photo, once each, in reading order (top to bottom, left to right)."""
    image = _check_image(image_bgr)
    scale = min(1.0, WORK_LONG_SIDE / max(image.shape[:2]))
    small = image if scale == 1.0 else cv2.resize(
        image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB)
    foreground = _foreground(lab, _calibration_background(calibration, small.shape))
    short = min(small.shape[:2])
    min_side = max(6.0, MIN_DIE_FRACTION * short)
    max_side = MAX_DIE_FRACTION * short
    blobs, rings = _blobs(foreground, min_side, max_side)
    expected = _expected_side(blobs, calibration, scale, min_side)
    tray = _tray_polygon(calibration, scale)
    for ring in rings:
        # the tray's rim: its inside is the tray; dice lying against or on it survive an
        # opening by most of a die's width, the thinner rim does not
        if tray is None:
            tray = _ring_interior(ring)
        opened = cv2.morphologyEx(ring.mask.astype(np.uint8), cv2.MORPH_OPEN, cv2.getStructuringElement(
            cv2.MORPH_RECT, (max(3, int(0.75 * expected)),) * 2))
        parts, _ = _blobs(opened.astype(bool), min_side, max_side, ring.x0, ring.y0)
        blobs.extend(parts)
    hsv = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)
    edges = _seams(lab)
    candidates = []
    for blob in blobs:
        for region, flags in _split(blob, expected, edges, lab[..., 0]):
            candidates.append(_candidate(region, flags, hsv, small.shape, scale, tray))
    candidates.sort(key=lambda c: (round(c.center[1] / max(c.size, 1.0)), c.center[0]))
    return candidates


def _check_image(image_bgr) -> np.ndarray:
    if not isinstance(image_bgr, np.ndarray) or image_bgr.ndim not in (2, 3):
        raise ImageError("not an image: expected a height x width x 3 BGR array")
    if image_bgr.ndim == 2:
        image_bgr = cv2.cvtColor(image_bgr, cv2.COLOR_GRAY2BGR)
    if image_bgr.shape[2] == 4:
        image_bgr = cv2.cvtColor(image_bgr, cv2.COLOR_BGRA2BGR)
    if image_bgr.shape[2] != 3:
        raise ImageError(f"not a colour photo: {image_bgr.shape[2]} channels")
    if min(image_bgr.shape[:2]) < 32:
        raise ImageError(f"photo too small to find dice: {image_bgr.shape[1]}x{image_bgr.shape[0]} px")
    if image_bgr.dtype != np.uint8:
        raise ImageError(f"expected 8-bit pixels, got {image_bgr.dtype}")
    return image_bgr


# --- foreground ---------------------------------------------------------------------------------

def _smooth_background(lab: np.ndarray, keep: np.ndarray | None) -> np.ndarray:
    """A smooth picture of the empty tray: a coarse median first, then a masked average
    that ignores the pixels already known to be dice."""
    h, w = lab.shape[:2]
    f = 8
    sw, sh = max(4, w // f), max(4, h // f)
    coarse = cv2.resize(lab, (sw, sh), interpolation=cv2.INTER_AREA)
    if keep is None:
        model = cv2.medianBlur(coarse, 9).astype(np.float32)
    else:
        weight = cv2.resize(keep.astype(np.float32), (sw, sh), interpolation=cv2.INTER_AREA)
        weight = (weight > 0.98).astype(np.float32)
        sigma = 3.0
        num = cv2.GaussianBlur(coarse.astype(np.float32) * weight[..., None], (0, 0), sigma)
        den = cv2.GaussianBlur(weight, (0, 0), sigma)[..., None]
        fallback = cv2.medianBlur(coarse, 9).astype(np.float32)
        model = np.where(den > 0.05, num / np.maximum(den, 1e-6), fallback)
    return cv2.resize(model, (w, h), interpolation=cv2.INTER_LINEAR)


def _foreground(lab: np.ndarray, known_background: np.ndarray | None) -> np.ndarray:
    """Pixels that are not the tray: off the background's colour or brightness, or inside a
    closed outline of sharp edges (pale dice on a pale board)."""
    labf = lab.astype(np.float32)
    mask = None
    for _ in range(2):
        if known_background is not None and mask is None:
            model = known_background
        else:
            model = _smooth_background(lab, None if mask is None else ~cv2.dilate(
                mask.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool))
        diff = labf - model
        lum = np.abs(diff[..., 0])
        chroma = np.hypot(diff[..., 1], diff[..., 2])
        lum_noise = float(np.median(lum)) * 1.4826 + 1.0
        chroma_noise = float(np.median(chroma)) * 1.4826 + 1.0
        lum_diff = diff[..., 0]
        strong = ((lum_diff > max(10.0, 4 * lum_noise)) | (lum_diff < -max(45.0, 8 * lum_noise))
                  | (chroma > max(12.0, 5 * chroma_noise)))
        mask = strong
    mask = cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    mask = _fill_holes(mask, (MAX_HOLE_FRACTION * min(lab.shape[:2])) ** 2)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3)))
    return mask.astype(bool)


def _gradient(lab: np.ndarray) -> np.ndarray:
    """Edge strength over brightness and colour together."""
    g = np.zeros(lab.shape[:2], np.float32)
    for c, weight in ((0, 1.0), (1, 2.0), (2, 2.0)):
        ch = lab[..., c]
        gx = cv2.Sobel(ch, cv2.CV_32F, 1, 0, ksize=3)
        gy = cv2.Sobel(ch, cv2.CV_32F, 0, 1, ksize=3)
        g = np.maximum(g, weight * cv2.magnitude(gx, gy))
    return g


def _holes(mask: np.ndarray) -> np.ndarray:
    """Background pixels that the mask fully encloses."""
    h, w = mask.shape
    flood = np.zeros((h + 2, w + 2), np.uint8)
    flood[1:-1, 1:-1] = mask > 0
    cv2.floodFill(flood, None, (0, 0), 1)
    return flood[1:-1, 1:-1] == 0


def _fill_holes(mask: np.ndarray, max_area: float) -> np.ndarray:
    """Fill holes up to one die's area (pips, a pale face inside its outline), not a whole tray."""
    holes = _holes(mask).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(holes, connectivity=4)
    small = np.zeros(count, bool)
    small[1:] = stats[1:, cv2.CC_STAT_AREA] <= max_area
    return ((mask > 0) | small[labels]).astype(np.uint8)


def _seams(lab: np.ndarray) -> np.ndarray:
    """Sharp edges, used to cut clusters of touching dice along the gaps between them."""
    return _gradient(lab)


# --- blobs, die size and splitting ----------------------------------------------------------------

def _blobs(mask: np.ndarray, min_side: float, max_side: float, x0: int = 0, y0: int = 0):
    """Split the mask into blobs that may hold dice, and rings (a tray's rim around a large
    empty inside). Offsets x0, y0 place a sub-mask in the working copy."""
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    blobs, rings = [], []
    for i in range(1, count):
        x, y, w, h, area = stats[i]
        if area < 0.5 * min_side * min_side or max(w, h) < min_side:
            continue
        blob = _Blob(labels[y:y + h, x:x + w] == i, int(x) + x0, int(y) + y0)
        if min(w, h) > 2 * max_side and _holes(blob.mask).sum() > 4 * area:
            rings.append(blob)
        elif min(w, h) <= 4 * max_side:
            blobs.append(blob)
    return blobs, rings


def _ring_interior(ring: _Blob) -> np.ndarray:
    """The tray's outline (working pixels): convex hull of what the rim encloses."""
    inside = _holes(ring.mask).astype(np.uint8)
    pts = cv2.findNonZero(inside)
    hull = cv2.convexHull(pts).astype(np.float32)
    hull[..., 0] += ring.x0
    hull[..., 1] += ring.y0
    return hull


def _squareness(mask: np.ndarray) -> tuple[float, float, tuple]:
    """(fill of the min-area rectangle, long/short side ratio, the rectangle)."""
    pts = cv2.findNonZero(mask.astype(np.uint8))
    rect = cv2.minAreaRect(pts)
    (w, h) = rect[1]
    if min(w, h) < 1:
        return 0.0, 99.0, rect
    return float(mask.sum()) / (w * h), max(w, h) / min(w, h), rect


def _thickness(mask: np.ndarray) -> float:
    """Diameter of the largest disc that fits inside the blob."""
    return 2.0 * float(cv2.distanceTransform(np.pad(mask.astype(np.uint8), 1), cv2.DIST_L2, 3).max())


def _expected_side(blobs: list[_Blob], calibration, scale: float, min_side: float) -> float:
    """Side of one die's blob in working pixels: from the calibration, else from the lone dice seen."""
    if calibration is not None and getattr(calibration, "die_size", None):
        return float(calibration.die_size) * scale
    sides = []
    for blob in blobs:
        fill, aspect, _ = _squareness(blob.mask)
        if fill > 0.72 and aspect < 1.3:
            sides.append(np.sqrt(blob.area))
    if not sides:
        return min_side * 2.5
    return float(np.median(sides))


def _split(blob: _Blob, expected: float, seams: np.ndarray, lum: np.ndarray):
    """Yield (region, flags) for the dice in one blob; region = (mask, x0, y0) in working pixels."""
    area_ratio = blob.area / (expected * expected)
    fill, aspect, _ = _squareness(blob.mask)
    if area_ratio < 0.25 or _thickness(blob.mask) < 0.3 * expected:
        return  # far too small or thin for a die: a speck, a line, the tray's rim
    if aspect < 1.15 and fill < 0.87 and _plain(blob, lum):
        return  # a plain round disc (a button, a magnet, a coin): dice are square and carry pips
    if area_ratio <= SINGLE_MAX_AREA and fill > 0.7:
        flags = (EDGE,) if aspect > EDGE_ASPECT else ()
        yield (blob.mask, blob.x0, blob.y0), flags
        return
    yield from _split_cluster(blob, expected, seams)


def _plain(blob: _Blob, lum: np.ndarray) -> bool:
    """True when the blob's inside has no marks: no pips, no picture."""
    h, w = blob.mask.shape
    inner = cv2.erode(blob.mask.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
    values = lum[blob.y0:blob.y0 + h, blob.x0:blob.x0 + w][inner]
    if len(values) < 10:
        return True
    low, high = np.percentile(values, (3, 97))
    return high - low < 30


def _split_cluster(blob: _Blob, expected: float, seams: np.ndarray):
    """Cut a blob of touching dice into one region per die: seeds at the distance transform's
    peaks (after cutting along sharp seams), regions grown by watershed. A part that still does
    not look like one die is flagged so that the photo is checked by a person."""
    h, w = blob.mask.shape
    mask8 = blob.mask.astype(np.uint8)
    grad = seams[blob.y0:blob.y0 + h, blob.x0:blob.x0 + w]
    dist = cv2.distanceTransform(np.pad(mask8, 1), cv2.DIST_L2, 5)[1:-1, 1:-1]
    peak_min = 0.28 * expected
    kernel = max(3, int(0.5 * expected) | 1)
    local_max = (dist >= cv2.dilate(dist, np.ones((kernel, kernel), np.uint8)) - 1e-3) & (dist > peak_min)
    n, markers = cv2.connectedComponents(local_max.astype(np.uint8))
    if n - 1 < 1:
        yield (blob.mask, blob.x0, blob.y0), (STACKED,)
        return
    # every blob pixel goes to the seed it lies deepest inside: distance to the seed minus
    # the seed's inscribed radius (a power diagram), so a big die is not halved by a small one
    seeds = [(*np.argwhere(markers == k)[0], k) for k in range(1, n)]
    ys, xs = np.mgrid[0:h, 0:w]
    cost = np.stack([np.hypot(ys - y, xs - x) - dist[y, x] for y, x, _ in seeds])
    markers = np.where(mask8 > 0, np.argmin(cost, axis=0) + 1, 0)
    for label in range(1, n):
        part = markers == label
        if part.sum() < 0.2 * expected * expected:
            continue
        fill, aspect, _ = _squareness(part)
        ratio = part.sum() / (expected * expected)
        flags = ()
        if ratio > SINGLE_MAX_AREA * 1.2 or fill < 0.6:
            flags = (STACKED,)
        elif aspect > EDGE_ASPECT:
            flags = (EDGE,)
        yield (part, blob.x0, blob.y0), flags


# --- candidates -----------------------------------------------------------------------------------

_COLOUR_HUES = ((8, "red"), (20, "orange"), (34, "yellow"), (85, "green"), (130, "blue"), (165, "purple"), (180, "red"))


def _colour_name(hsv_pixels: np.ndarray) -> str:
    """The die body's colour name (pips are the minority, so medians see the body)."""
    if len(hsv_pixels) == 0:
        return "other"
    s = float(np.median(hsv_pixels[:, 1]))
    v = float(np.median(hsv_pixels[:, 2]))
    if v < 55:
        return "black"
    if s < 55:
        return "white" if v > 150 else ("black" if v < 90 else "other")
    hist = np.bincount(hsv_pixels[:, 0].astype(np.int64), minlength=180)
    hue = int(np.argmax(np.convolve(np.r_[hist[-5:], hist, hist[:5]], np.ones(11), "valid")))
    for limit, name in _COLOUR_HUES:
        if hue < limit:
            return name
    return "other"


def _candidate(region, flags, hsv, shape, scale, tray) -> Candidate:
    mask, x0, y0 = region
    pts = cv2.findNonZero(mask.astype(np.uint8))
    rect = cv2.minAreaRect(pts)
    (cx, cy), (w, h), angle = rect
    box = cv2.boxPoints(((cx + x0, cy + y0), (w, h), angle))
    inner = cv2.erode(mask.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    if inner.sum() < 4:
        inner = mask
    ys, xs = np.nonzero(inner)
    colour = _colour_name(hsv[ys + y0, xs + x0])
    ys, xs = np.nonzero(mask)
    H, W = shape[:2]
    if xs.min() + x0 <= 1 or ys.min() + y0 <= 1 or xs.max() + x0 >= W - 2 or ys.max() + y0 >= H - 2:
        flags = tuple(flags) + (CUT,)
    if tray is not None and cv2.pointPolygonTest(tray, (float(cx + x0), float(cy + y0)), True) < -0.25 * np.sqrt(w * h):
        flags = tuple(flags) + (OUTSIDE,)
    inv = 1.0 / scale
    # pixel centres: working pixel i covers original [i*inv, (i+1)*inv)
    to_orig = lambda p: ((p[0] + 0.5) * inv - 0.5, (p[1] + 0.5) * inv - 0.5)  # noqa: E731
    corners = tuple(tuple(round(c, 2) for c in to_orig(p)) for p in box)
    center = to_orig((cx + x0, cy + y0))
    return Candidate(
        center=(round(center[0], 2), round(center[1], 2)),
        size=round(float(np.sqrt(w * h)) * inv, 2),
        angle=round(float(angle) % 90.0, 2),
        corners=corners,
        colour=colour,
        flags=tuple(dict.fromkeys(flags)),
    )


# --- calibration hooks ----------------------------------------------------------------------------

def _calibration_background(calibration, shape) -> np.ndarray | None:
    return None


def _tray_polygon(calibration, scale):
    """The calibrated tray outline in working pixels, or None."""
    outline = getattr(calibration, "tray_outline", None) if calibration is not None else None
    if not outline:
        return None
    return (np.asarray(outline, np.float32) * scale).reshape(-1, 1, 2)
