"""An underexposed photo brought up to a usual exposure before it is read.

A camera at its exposure limit in a dim room (a fixed exposure, or auto-exposure at its longest
time and highest gain) gives a dark photo with a sensor's grain. Every step of the reader
measures contrast in Lab units: such a photo shows a black die's red pips, a red die on a brown
board and a pip's edge at half their usual contrast or less, and dice are lost or misread. A
photo is lifted only when it is dim AND grainy: a dark table well lit (dark felt, dark dice) is
dim without grain, and its colours are what the reader's thresholds were set on (lifting such
synthetic trays cost 2-5 points of dice read right). The grain is smoothed first, since a gain
raises it with everything else and the reader would take it for marks."""
from __future__ import annotations

import cv2
import numpy as np

DIM_LEVEL = 170.0      # a photo whose brightest 1 % lies under this grey level is dim (byler-d6 as taken: 189-213; dark and grainy: 91-109)
NOISY = 1.2            # sensor noise (grey levels' deviation) above which a photo is grainy (clean: under 1)
LIFTED_LEVEL = 200.0   # grey level the brightest 1 % is brought to
MOST_GAIN = 4.0        # ...by a gain of at most this
SMOOTH_COLOUR = 5.0    # grain smoothed first, keeping edges of more contrast than this many noise deviations...
SMOOTH_REACH = 5.0     # ...by a bilateral filter this wide (pixels' deviation, 7 px across)

_NOISE_KERNEL = np.float32([[1, -2, 1], [-2, 4, -2], [1, -2, 1]])   # zero on any plane of light


def sensor_noise(image: np.ndarray) -> float:
    """The sensor noise's standard deviation (grey levels) in a BGR photo: the median response
    of a kernel blind to smooth light (Immerkaer's, made robust to edges by the median); its
    response to noise of deviation s has deviation 6 s, whose median absolute value is 4.05 s."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    response = cv2.filter2D(grey, cv2.CV_16S, _NOISE_KERNEL)[1:-1:2, 1:-1:2]   # every 4th: plenty
    counts = np.bincount(np.abs(response).ravel())   # whole numbers: a median by counting is quick
    return float(np.searchsorted(np.cumsum(counts), (response.size + 1) / 2)) / 4.047


def lifted(image: np.ndarray) -> np.ndarray:
    """The photo as a usual exposure shows it: smoothed and brightened when it is dim and
    grainy (see the module's docstring), else the photo itself, untouched."""
    step = max(1, min(image.shape[:2]) // 256)
    grey = cv2.cvtColor(image[::step, ::step], cv2.COLOR_BGR2GRAY)
    bright = float(np.percentile(grey, 99))
    if bright >= DIM_LEVEL:
        return image
    noise = sensor_noise(image)
    if noise <= NOISY:
        return image
    smooth = cv2.bilateralFilter(image, 7, SMOOTH_COLOUR * noise, SMOOTH_REACH)
    return cv2.convertScaleAbs(smooth, alpha=min(MOST_GAIN, LIFTED_LEVEL / max(bright, 1.0)))
