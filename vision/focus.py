"""A blurred photo's dice read from a sharpened copy.

A camera out of focus (a fixed-focus lens under a tray set a little off, a phone that focused on
the table's edge) softens every pip's edge: the face reader's two cues then disagree and it
refuses the face. Byler-d6 train photos blurred by 1.6 px: 87.0 % of dice read right; every one
read from a copy sharpened by an unsharp mask, 91.7 %. A sharp photo sharpened so reads worse
(97.8 -> 96.7 %: pip edges ring, glare speckles), so only a photo whose dice show soft edges is
sharpened (`BLURRED_EDGES`: blurred 90.8 %, photos `ok` and wrong 4 -> 3; as taken 97.8 %). Both
are measured in the dice's own scale (their sides), so a phone photo, blurred in pixels but not
on a die 150 px across, is left as it is.
"""
from __future__ import annotations

import cv2
import numpy as np

# A photo is blurred when its dice show their sharpest edges (the 95th percentile of the grey
# gradient over a die's square, over its 3-97 % grey spread) this many times per die side or
# fewer (the median over its dice). Byler-d6 train photos (every third of 197): as taken 6.6-14.9,
# 5 % under 8.5; blurred by 1.6 px 3.6-9.4, median 6.6; at phone size 12.0-22.0.
BLURRED_EDGES = 7.0
SHARPEN_AMOUNT = 1.0    # the unsharp mask: the photo plus this much of its difference from...
SHARPEN_REACH = 0.067   # ...its blur at this many die sides (2 px on a byler die 30 px across)
MIN_DIE_SPREAD = 20.0   # a die's square with less grey spread (a black die in shadow) says nothing of focus


def edges_per_side(image_bgr: np.ndarray, centres, sides) -> float | None:
    """How sharp the dice's edges are: the median over dice of their sharpest edges' gradient
    over their grey spread, times their side (so the same for any size of die in the photo).
    None when no die shows enough contrast to tell."""
    grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY).astype(np.float32)
    h, w = grey.shape
    measures = []
    for (x, y), side in zip(centres, sides):
        half = int(side / 2)
        square = grey[max(0, int(y) - half):min(h, int(y) + half), max(0, int(x) - half):min(w, int(x) + half)]
        if square.shape[0] < 5 or square.shape[1] < 5:
            continue
        low, high = np.percentile(square, (3, 97))
        if high - low < MIN_DIE_SPREAD:
            continue
        gradient = cv2.magnitude(cv2.Sobel(square, cv2.CV_32F, 1, 0) / 8, cv2.Sobel(square, cv2.CV_32F, 0, 1) / 8)
        measures.append(float(np.percentile(gradient, 95)) / (high - low) * side)
    return float(np.median(measures)) if measures else None


def in_focus(image_bgr: np.ndarray, centres, sides) -> np.ndarray:
    """The photo to read these dice's faces from: the photo itself, or, when its dice's edges are
    soft (`edges_per_side` at most BLURRED_EDGES), a copy sharpened at the dice's scale."""
    sharpness = edges_per_side(image_bgr, centres, sides)
    if sharpness is None or sharpness > BLURRED_EDGES:
        return image_bgr
    sigma = SHARPEN_REACH * float(np.median(sides))
    return cv2.addWeighted(image_bgr, 1 + SHARPEN_AMOUNT, cv2.GaussianBlur(image_bgr, (0, 0), sigma), -SHARPEN_AMOUNT, 0)
