"""Find every die on the tray: where it is, how big, how turned, its colour, and what looks wrong.

The photo is shrunk to a working copy (about 640 px on its long side) where all the heavy work
happens: a smooth background model is fitted around the dice, and pixels that differ from it in
colour or brightness become foreground; the tray's floor bounds the search (gaps in its rim
are closed first). Each foreground blob is then one die (a convex square), a die showing a long
side, or touching dice. Touching dice are cut around the die centres a small learned detector
(`vision.detect`) sees in the blob, when every part is then a square die with a square top
face and all that is left is shadow; else by k-means over position and colour into the fewest
similar squares, a part flagged where k-means and the detector disagree on the dice it holds,
dropped where the detector sees neither a die's centre nor its body in it (a rim's square).
A part holding one detected die yet far bigger than the net sees that die is flagged too: a die
the net missed lies in it.
A blob far bigger than the dice the detector sees in it (a tray's wall, rim or a lamp's glow
with dice against it) is not given to k-means, whose cost grows with its area times the counts
tried (seconds): each detected die's body is cut out and judged as a lone die, and the rest is
cut into die-sized tiles, a tile with die body and marks flagged, the rest dropped.
A long lone outline is a die on its edge unless it is a flat die seen off the camera's axis:
its top face square and as wide as the blob, lying outward, with its sides (of its own colour,
or a shadow) toward the photo's centre, stretched no more than a phone's lens shows. A
die-sized outline a little longer across the line from the photo's centre than along it, with
no square top face, is on its edge too: a flat die's sides lengthen it only along that line.
One longer along that line than the lens shows a flat die's sides there (an oblique camera shows
them anywhere), its top face not lying outward, is on its edge when the detector sees so too.
Any of these the detector sees as one die lying flat, sure of it (a camera looking from aside
shows a flat die's sides in any direction, its top face foreshortened), is a flat die; so is a
long one stretched along that line no more than the lens shows, which the detector sees as one
die neither on its edge nor on another (its sides and shadow, of its colour, hide its top face's
square). A die-shaped one the detector is sure stands on its edge (or fairly sure, with no
square top face) is on its edge: a steep lean shows only a narrow second face. A blob too
small for two dice in which the detector sees two or more, each surely flat, is cut as a cluster.
A blob the frame cuts in which the detector sees no die's centre and almost no die body is a
piece of the rim or the table, not a die. Parts of a cluster that still do not look like one
die are reported flagged, never dropped;
only pieces with no sharp marks inside are: shadow, a bit of wall (one not of the board's
colour may be a die's blank side, so a die centred next to it is flagged). A piece's pip-sized
holes (a 1's lone pip that k-means gave to its neighbour) count as its inside. So the photo goes
to `check` instead of being counted short. Dice the colour foreground misses (a white
die on a white board) are found by their pips: dark round spots in groups no wider than a face,
ringed by an outline; a black die against a dim room seen from below is found by its light pips
(specks too small for a die), its faint outline standing out from the even room just around it;
light pips (even an ace's one) on an even dark face with no outline at all are reported flagged,
as is a die-sized square blob whose marks are too faint to count as a face's (dim pips). Dice touching
corner to corner in a straight row fill their rectangle like a rim or a ruler: a band as wide
as a die is cut like a cluster, every part flagged. A pale die on a pale board may be found
only in part (its brightest part, its pips with a side's): a candidate lying off the centre of a
die the detector is sure lies flat, or one of two pieces of it, is redrawn as that die.
The usual die size comes from the square blobs no smaller than the smallest die, with detail at
a pip's scale: a lamp's soft round glow seen through the tray has none, a die merged with a glow
too little. Two candidates closer than a die's side cannot both be flat
dice: both are flagged stacked. A die resting almost squarely on another looks like one die; it
is flagged stacked when the lower die's edge shows beside the top face in another colour (not
the top's hue, nor the board's, which a shadow has, even a faint tint, only darker), or as a
white or black die far brighter or
darker than the board (on a dark board: darker than half its lightness, more than a shadow
darkens it); where the net sees a die on another there, a bigger patch counts that is not plain
shadow (no more vivid, darker by a shadow's step at most), of the board's hue or grey beside a
coloured top (a dark marbled die under a purple one): flat lone dice on crowded trays also reach
the net's stacked score, so it alone is not enough. One of the same colour is not caught.
Last, a second count: the detector's centre head, run once over the whole working copy, names
every die it sees that no candidate accounts for, on the floor or within 1.6 sides of it, with
sharp marks on it (a coin or a token has none); each is reported flagged `unreadable`, so a die
that the colour steps lost (merged with the tray's wall, taken for a shadow, a white die on a
white board) sends the photo to `check` instead of leaving it counted short.
Coordinates in the returned candidates are in the original photo's pixels.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache, cached_property

import cv2
import numpy as np

from vision.detect import EDGE_SCORE, PEAK_SCORE, STACKED_SCORE, Detections, detect_dice, die_centres
from vision.exposure import NOISY, sensor_noise
from vision.lean import FLAT, LEANING, ON_ANOTHER, lean_chances
from vision.types import CUT, EDGE, OUTSIDE, STACKED, UNREADABLE, Candidate, ImageError

WORK_LONG_SIDE = 640          # pixels on the working copy's long side
SMALL_DIE_SIDE = 14.0         # dice smaller than this (working pixels) are looked at again on a finer copy...
FINER_DIE_SIDE = 24.0         # ...where they are about this big...
FINEST_LONG_SIDE = 1920       # ...its long side at most this
MIN_DIE_FRACTION = 0.012      # smallest die side accepted, as a fraction of the photo's short side
MAX_DIE_FRACTION = 0.30       # largest die side accepted
FLOOR_LEAKS = (0.03, 0.07)    # widths of gaps in a tray's rim closed to find its floor (short sides)
OUTLINED_FLOOR_SOLIDITY = 0.85  # least share of its hull a floor found by its edges fills (a wood grain's: 0.6)
OUTLINED_FLOOR_GROWTH = 0.03  # ...whose hull is grown this far (short sides) to take in the dice in its corners
LONG_OUTLINE = 0.2            # ...by edges running this far at least (short sides) first: a rim's, not a wood grain's
# A floor's hull is squared off (`_squared_off`) when its four longest straight stretches (edges
# heading within RUN_TURN degrees of the stretch's first) make up this share of its perimeter or
# more, the floor's outline running within SIDE_REACH pixels of each along SIDE_SUPPORT of it
# or more, each turning at least SQUARE_TURN degrees from the next, and the quadrilateral their
# lines meet in is at most SQUARED_GROWTH times the hull's area: a regular octagon's four
# longest sides are half its perimeter (squared: 1.21 times its area), a hexagon's two thirds
# (1.33). On five byler-d6 train photos and a synthetic tray a tray's wall runs 0.26-1.0 along
# the floor's outline (dice against it), the hull's edge bridging dice that line a wall
# 0.04-0.09. Only the quadrilateral's corners that show CORNER_FLOOR of floor or more beyond the
# hull are added: on eight train photos the corners the rim's shading rounds off show none,
# those heaped with dice 0.26-0.34.
RUN_TURN = 3.0
SQUARE_SIDES_SHARE = 0.55
SIDE_REACH = 3.0
SIDE_SUPPORT = 0.2
SQUARE_TURN = 35.0
SQUARED_GROWTH = 1.2
CORNER_FLOOR = 0.1
MAX_HOLE_FRACTION = 0.15      # holes filled up to this side (fraction of the short side)
DENOISE_COLOUR = 7.0          # a grainy photo (noise over `NOISY`) is smoothed keeping edges of more contrast than this many noise deviations
GRAINY_LARGER = 1.5           # ...whose second count also looks for dice this much bigger than the usual

# one blob: one die, a die showing a long side, or touching dice (area in usual die areas)
SINGLE_MAX_AREA = 1.65        # a convex square blob up to this area is one die
BIG_DIE_AREA = 3.0            # ...and a square, convex one up to this (a big die among small ones)
LEAN_CHECK_AREA = 1.45        # a lone blob bigger than this must show a square top face, else edge
LEAN_ASPECT = 1.15            # ...and so must one longer than this across the way to the photo's centre...
ACROSS_STRETCH = 0.03         # ...by this share of its width or more
ALONG_STRETCH = 0.1           # ...or longer along it than the lens shows a flat die's sides, by this share
FLAT_EDGE_SCORE = 0.08        # most on-edge and stacked score (the net's) of a long lone die it sees lying flat
SIDES_EDGE_SCORE = 0.15       # ...of one stretched no more than a lens shows a flat die's sides: most on-edge score
SIDES_STACKED_SCORE = 0.5     # ...and most stacked score
SURE_EDGE_SCORE = 0.65        # least on-edge score (the net's) of a die-shaped lone die that is on its edge
NOT_FLAT_SCORE = 1.0          # ...or on-edge and stacked scores together, its top face not square
LONE_DIE_AREA = 1.25          # a convex blob smaller than this is one die, however long
SPECK_AREA = 0.25             # a blob smaller than this is a speck, never a die by itself
ROW_WIDTH = (0.75, 1.6)       # a band this wide (usual die sides) with marks may be dice in a row
TWO_DICE_AREA = 1.75          # a convex blob smaller than this is not two dice
PAIR_FLAT_SCORE = 0.2         # ...unless the net sees two dice there, on-edge and stacked under this each
EDGE_ASPECT = 1.3             # a lone die whose outline is longer than this is on an edge / leaning
BAND_ASPECT = 3.5             # a blob longer than this and filling its rectangle is a band, not dice
STRIP_ASPECT = 8.0            # a blob longer than this (its width) is a strip (wood grain, a rim), no dice in a row
TOP_ASPECT = 1.2              # a flat die's top face is this square or better
TOP_SQUARE = 1.12             # ...and a flat die seen at a slant shows a top face this square...
SLANT_TOP_WIDTH = 0.75        # ...as wide as this share of its blob's width...
SLANT_TOP_SHIFT = 0.08        # ...lying this far (blob sides) out from the blob's middle, away from the centre
WIDEST_LENS = 0.75            # focal length of the widest camera lens expected, in photo widths (a phone's)
SLANT_TOLERANCE = 0.1         # the outline's stretch away from the centre may exceed the lens's by this
TOP_TOLERANCE = 10.0          # Lab distance within which the top face's plastic counts as one colour
TOP_SHARE = 0.45              # ...and covers at least this share of its blob (the rest: sides, shadow)
MARK_CONTRAST = 30.0          # least spread (Lab L, sharp detail) of a die's marks: pips, a picture
DIM_MARK_CONTRAST = 20.0      # ...or, where they differ in hue (Lab a or b spread MARK_HUE), this much
MARK_HUE = 15.0               # (red pips on a black die: L 29.4, a 22.6; a coin or a shadow's edge: a, b <= 12)
MARK_MIDDLES = (0.35, 0.42)   # ...within either radius (patch sides) of its middle
PIP_HOLE = 0.25               # a hole in a piece of a cluster up to this side (piece sides) is a pip
FAINT_MARKS = 18.0            # a die-sized square plain blob with this much detail may be a die (faint pips)
FAINT_SIZE = (0.7, 1.3)       # ...when its side is this many usual sides
FAINT_ASPECT = 1.35           # ...and it is no longer than this (a dark die's shadow lengthens its blob)...
ROUND_FILL = 0.92             # ...and fills less than this of its enclosing circle (byler-d6 train dark dice: 0.76-0.89; a hole: 0.95-1)
DISC_FILL = 0.95              # a lone blob filling this much of its enclosing circle, nothing marked in its middle, is a coin
UNMARKED_DIE_CONTRAST = 40.0  # ...or, with no detail, this far off the board's lightness (Lab L) where the
                              # detector sees a die (black dice in a dim room: 40-76; die-shaped patches of
                              # shadow or rim the detector also sees: 12-35)...
UNMARKED_DIE_SCORE = 0.4      # ...at this centre score (those black dice: 133 of 142 at 0.4 or more, 115 at 0.5;
                              # such patches this far off the board: one, a tray's round hole, at 0.41)
FAINT_ROW = 3.5               # ...or, as thick as one, up to this many die areas (dark dice touching)...
FAINT_ROW_FILL = 0.6          # ...filling this share of its rectangle
SMOOTH_DETAIL = 12.0          # a piece of a cluster with less sharp detail (Lab L) than this inside...
BOARD_HUE = 10.0              # a piece within this Lab a-b distance of the board's colour...
BOARD_BRIGHTER = 8.0          # ...and no more than this brighter is board (or its shadow)
SMOOTH_MARGIN = 0.15          # ...this far (usual die sides) in from its outline holds no die face
MARK_SCALE = 0.06             # blur (in blob sides) at about a pip's scale: a die's detail there is...
GLOW_SHARE = 0.3              # ...at least this share of its detail at a quarter side (a glow: a tenth)
SIZE_GLOW_SHARE = 0.45        # ...and this share for a lone die setting the die size (a die in a glow: a third)
FEW_LONE_DICE = 6             # the lone dice setting the die size are checked for touching dice when this few
MERGED_LONE_SIDES = 2.0       # ...one this many times the smallest's side measured by the dice the detector sees in it
PLAIN_LONE_AREA = 2.25        # a plain lone blob this much bigger than most marked blobs may be lamp light
LONE_PIP_SHARE = 0.25         # lone "dice" this small (sides of the second biggest) lying together within one...
LONE_PIP_GAP = 3.0            # ...(linked when this near: their own sides), six at most, are one die's pips
PIP_SIZED_SHARE = 0.35        # lone "dice" all under this share of the dice seen touching in a cluster are pips
CLUSTER_DIE_SIDE = 0.7        # ...dice the detector sees in one, this share of its side or less...
CLUSTER_GAP = 0.75            # ...and centres this far apart (their sides) or more, make it a cluster (one real
                              # die seen at twice its size: pieces 0.27-0.61 apart; touching dice: 0.84 or more)...
DETECTOR_SIZED_DICE = 3       # with no lone die, the detector's median side stands where it sees this many dice...
DETECTOR_SIZED_SCORE = 0.8    # ...this sure of each (real photos' dice mostly score 0.5-0.8)...
DETECTOR_SIZE_FIT = 1.25      # ...and that side lies more than this many times off the guess
CLUSTER_COVER = 0.5           # ...and their top faces cover this share of it (clusters: 0.67-0.89; a real die's
                              # pips taken for dice a quarter its size: 0.14-0.3)
SURER_MARGIN = 0.05           # a blob's dice are the size the detector sees them surer at, by this much (`_surer`)
UNACCOUNTED_SCORE = 0.6      # least centre score of a die the detector alone sees (a tray's printed wall: 0.51)...
UNACCOUNTED_REACH = 1.6      # ...that counts this near the floor found (sides: a die behind one against the wall)
OFF_FLOOR_SIDE = 0.6         # ...and, beyond the floor, this share of the usual die's side (a glossy wall mirrors dice)
SURE_UNMARKED_SCORE = 0.85   # ...and, this sure, flagged even where it shows no marks (a dim die under glare)
BLURRED_PIP_SCALE = 2.0      # ...or where it shows MARK_CONTRAST at this many times MARK_SCALE within the inner
                             # MARK_MIDDLES radius (small blurred white dice: 36-59; coins, their rim further
                             # out: 24 at most)...
EVEN_BOARD = 25.0            # ...and the board around it is this even (Lab L spread; white dice alone: 7-22, the
                             # cluttered rim of a tray, whose detail passes for marks at that scale: 120 and more)
FLAT_CHANCE = 0.05           # least chance of lying flat (`vision.lean`) of a die to count it...
SEEN_STACKED_FLAT_CHANCE = 0.2  # ...or, where the detector sees it on another (UNDER_STACKED_SCORE), this...
TOP_PER_USUAL = 0.87         # ...its scale: the faces found's median against the usual die's side (synthetic
                             # plain trays: 0.81-0.95, median 0.87; byler-d6: about 1.0)
LEAN_SIZE = 1.2              # ...and a die this many times the photo's median die, likelier leaning than flat, is `edge`
SURE_FLAT_CHANCE = 0.99      # ...and least chance of a die its outline alone flagged (`_by_outline`), to count it...
BOTH_LOOKS_FLAT_CHANCE = 0.94  # ...or this at each of its two looks (outline's centre, the die the detector sees)...
FLAT_SEEN_REACH = 0.75       # ...where the detector sees a die's centre this near (its sides)...
NEIGHBOUR_REACH = 1.5        # ...and every other die it sees this near that die has a candidate of its own...
FLAT_SEEN_STACKED = 0.5      # ...and it sees that die on another with a stacked score under this (any, for a lone die
                             # flagged for a patch beside it)...
LONG_SEEN_STACKED = 0.95     # ...or this, for a die its outline alone flagged `edge`
FAINT_SEEN_SCORE = 0.3       # ...and every die it sees around, this faintly or more, has a candidate of its own
ROUGH_PART_AREA = 1.4        # ...and a part cut rough from its cluster covers at most this (that die's areas)...
ROOM_REACH = 0.75            # ...or, beyond this far from that die's centre (its sides)...
ROOM_WIDTH = 0.45            # ...holds nothing this wide (its sides): no room for a die the detector missed
REDRAWN_TOP_SHARE = 0.8      # ...then narrowed to its top face, unless that is under this share of the square
ON_FLOOR_DEPTH = 0.7         # a die this deep inside a floor that may take in the rim (its own sides) lies on it
MIN_CENTRE_GAP = 0.85         # flat dice's centres lie at least this many sides apart
CALIBRATED_SIZE_FIT = 1.15    # a calibration's die size stands where the photo's own dice are within this factor of it
SECOND_PEAK_GAP = 0.6         # a die's second peak lies nearer its first than this many sides (second count)
SMALL_DIE_SHARE = 0.7         # smallest die (usual sides) the second count looks for before it sizes them
PIECE_REACH = 0.75            # a candidate this near (sides) a die the detector sees is a piece of it (or of one under it)...
OFF_CENTRE = 0.2              # ...and cut off its centre when this far from it...
PIECE_SIZE = 0.6              # ...or when its side is under this share of the die's...
PIECE_MARGIN = 2.0            # ...unless another die the detector sees lies less than this many times as far
SEEN_FACE_GROWTH = 1.4        # most a die's face found exceeds the side the net sees (its sides seen at a slant)
UNDER_HUE = 30.0              # degrees of hue between a die's top face and another die under it
UNDER_CHROMA = 10.0           # least Lab chroma for a hue to count (greys have none)
TINT_CHROMA = 3.0             # ...but a board's faint tint this strong shows in its shadow too
GREY_STEP = 50.0              # a grey die under a coloured one: this much brighter than the board (twice: darker)
SHADOW_SHARE = 0.5            # ...or darker than this share of a dark board's lightness (Lab L)
UNDER_AREA = 0.10             # a patch of another colour beside the top face this big (die areas): a die under it
UNDER_STACKED_SCORE = 0.6     # ...where the net sees a die on another (stacked score), a patch of another colour...
SEEN_UNDER_AREA = 0.05        # ...this big counts, and one not plain shadow...
BARE_UNDER_AREA = 0.13        # ...this big counts, even of the board's hue
MIX_TOLERANCE = 6.0           # Lab distance within which a pixel mixes a die's top and the board
VIVID_CORE_SHARE = 0.05       # most share of a plain grey die's middle that is vivid (swirls: 0.39-0.69)
LIT_UNDER_HUE = 45.0          # plastic beside a die's top face, within this hue of it...
LIT_UNDER_CHROMA = 30.0       # ...this vivid...
LIT_UNDER_STEP = 10.0         # ...and lighter than its top by this (Lab L) is another die's, under it

# cutting clusters
SPLIT_ASPECT = 1.45           # longest a die cut out of a cluster may be (the cut is rough)
COLOUR_WEIGHT = 0.5           # how far apart (in die sides) k-means sees two clearly different colours
KMEANS_POINTS_PER_DIE = 250   # pixels per die that k-means fits its centres on
KMEANS_ATTEMPTS = 2           # k-means restarts (the best is kept)
MAX_SPLIT_TRIES = 10          # dice counts tried when cutting one cluster
KMEANS_MOST_AREA = 12.0       # a blob this much bigger (usual die areas) than its detected dice...
DIE_AND_SHADOW = 2.0          # ...each with its shadow, this big, is cut without k-means
CUT_EDGE_SCORE = 0.3          # most on-edge score (the net's) of a die cut from such a blob, its outline rough
DIE_REACH = 0.8               # farthest a die's pixel lies from its detected centre (usual die sides)
DETECTED_FILL = 0.62          # least a part cut around a detected centre fills its rectangle (its cut is ragged)
DETECTED_TOP_ASPECT = 1.35    # ...and longest its top face may be (it may show a neighbour's edge)
SURE_REACH = 0.72             # a sure die's part reaches this far (its own sides) from its centre: its top face
SURE_REST = 0.5               # widest (usual die sides) die body or marks left beside sure dice that is no die
NOT_BODY = 0.2                # most mean die-body chance (the net's) of a markless piece that is no die
MISSED_DIE_BODY = 0.25        # least die body (usual die areas, in one piece) of a marked piece left beside sure dice that may be a die
ONE_DIE_BODY = 1.6            # most die body (the net's own side squared) around one detected centre: one die
ONE_DIE_PART = 2.7            # most area (the net's own side squared) of a k-means part holding one detected die

# dice found by their pips (white on white)
PIP_RADIUS = 0.08             # a pip's radius, in die sides (of the die's whole blob)
PIP_CONTRAST = 30.0           # least darkening (Lab L) of a pip against its face
NEIGHBOUR_PIP = 1.2           # a point around a pip this close (pip radii) to another pip's centre is on that pip
PIP_LINK = 0.45               # pips of one face lie closer than this (die sides)
PIP_FACE_SPREAD = 0.85        # widest a face's pips spread (the 2's diagonal), in face sides
LONE_PIP_REACH = 1.6          # a lone pip this close (face sides) to another group's pips is the same die's
FACE_OF_BLOB = 1.0            # a top face's side against its whole blob's
FACE_EVENNESS = 40.0          # spread (Lab L, 10-90 %) of a plain face's plastic between its pips
RING_EDGE = 4.0               # a pip-found die's outline edges against the photo's median edge
FAINT_RING_EDGE = 2.0         # ...a dark die's, against the edges just around it (and the median)
FEW_PIPS = 3                  # a pip group this small (an ace, a 2, a 3) may be specks on the board...
UNSEEN_REACH = 1.0            # ...and is flagged unless the detector sees a die this near (its sides)
ACE_PIP_REACH = 0.3           # ...or, for a lone pip, this near: an ace's pip is its face's middle


_BLANK = "blank"               # a piece of a cluster without marks: not reported, only checked against
_TOKEN = "token"               # a coin (`_token`): not reported, but it accounts for the die the detector sees there
_APART = "apart"               # a part of a cluster the net sees as one flat die, apart from the others
_ROUGH = "rough"               # a part flagged stacked only because its cut does not look like one die
_LONG = "long"                 # a lone die whose long outline only its geometry calls a flat die's
_UNDER = "under"               # a lone die flagged stacked only for a patch of another colour beside it
_CUT_NOTES = (_APART, _ROUGH, _LONG, _UNDER)   # what `_split` tells of a cut for the checks after: never reported
_FAINT = "faint"               # one die found by a weak cue alone: `Candidate.faint`
_OFF_PIP = "off pip"           # one pip found alone, off the centre of the die the detector sees there


@dataclass(frozen=True)
class _Cut:
    """What cutting a candidate out of its cluster told, for the checks after: a part the net
    sees as one flat die apart from the others (`_net_sees_apart`) gives its cluster's index and
    the side the net sees (photo pixels: `_flag_crowded`); a part flagged stacked only because
    its cut does not look like one die gives its area (photo pixels) and its region (mask, x0,
    y0: working pixels) for `_close_look`; a lone die whose long outline only its geometry
    called flat is `long`, and one flagged stacked only for a patch of another colour beside
    its top face (`_die_underneath`) is `under` (`_close_look`)."""

    cluster: int | None = None
    net_side: float | None = None
    rough_area: float | None = None
    rough_region: tuple | None = None
    long: bool = False
    under: bool = False


@dataclass
class _Blob:
    """One region of the working copy's foreground thought to hold dice."""

    mask: np.ndarray          # bool, cropped to the blob's bounding box
    x0: int
    y0: int
    # what was measured on it already (the detector's view, its top face, its detail): a blob
    # belongs to one working copy, and several tests ask the same of it
    memo: dict = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def area(self) -> int:
        return int(self.mask.sum())

    @cached_property
    def inner(self) -> np.ndarray:
        """The blob's inside, pip-sized holes included, its outline eroded away: where `_detail`
        measures marks (for two blurs, and for the size survey and the split alike)."""
        return cv2.erode(_with_pips(self.mask), np.ones((5, 5), np.uint8)).astype(bool)


def find_dice(image_bgr: np.ndarray, calibration=None) -> list[Candidate]:
    """Every die on the photo, once each, in reading order (top to bottom, left to right)."""
    return locate_dice(image_bgr, calibration).candidates


@dataclass(frozen=True)
class Located:
    """The dice `locate_dice` found (`candidates`, as `find_dice` gives them), with what it saw
    them on: the photo, its working copy, the tray's floor (working pixels; None: no tray found)
    and the usual die's side (working pixels), so that a die whose face the reader refuses may
    be redrawn as the die the detector sees there."""

    candidates: list[Candidate]
    image: np.ndarray
    view: _WorkingCopy
    floor: np.ndarray | None
    expected: float

    def redrawn(self, index: int) -> Candidate | None:
        """Candidate `index` (counted, its face refused by the reader) redrawn as the die the detector
        sees there: an outline taking in a tray wall's shading or a side seen at a slant puts the face
        off its centre (byler-d6 train 112951: a red 4 against the wall, its outline 1.7 times the net's
        die and 0.36 of a side off it, refused; on the net's square it reads 4). On the conditions a die
        flagged by its outline alone is redrawn (`_close_look`): one die seen that near, not on another,
        the close look at that die SURE_FLAT_CHANCE sure it lies flat (or it and the look at the
        outline's centre BOTH_LOOKS_FLAT_CHANCE sure each: byler-d6 train 095854 and 111316 under warm
        light, a 4 and a 6), no other candidate's nor another die left uncounted (`_counted_alone`); the
        net nearly sure it lies flat (PAIR_FLAT_SCORE: on a close-up, seed 2024's 20240045, one face of
        a die on its edge, on-edge 0.43, was read as a die, the close look sure it lay flat); and its
        centre on the tray's floor (synthetic close seed 71, 710039: a die half on the rim, half over
        the table, found by its half on the rim). None otherwise."""
        candidate, scale = self.candidates[index], self.view.scale
        if candidate.flags or candidate.faint:
            return None
        where = _in_working([c.center for c in self.candidates], scale).reshape(-1, 2)
        seen = _flat_die_under(self.view, candidate, None, self.expected, np.delete(where, index, axis=0))
        if (seen is None or not _sure_flat(seen[1], seen[2], PAIR_FLAT_SCORE)
                or _counted_alone(self.candidates, {index: seen}, scale) != [index]):
            return None
        centres, found, k = seen
        x, y = np.int32(np.round(centres[k]))
        if self.floor is not None and not (0 <= y < self.floor.shape[0] and 0 <= x < self.floor.shape[1]
                                           and self.floor[y, x]):
            return None
        at = np.vstack([_in_photo(centres[k], scale).reshape(1, 2), [candidate.center]])
        looks = lean_chances(self.image, at, lean_side(self.candidates))[:, FLAT]
        if not _cleared_flat(looks[0], looks):
            return None
        return _redrawn_as(self.image, self.view, centres[k], float(found.sides[k]))


def locate_dice(image_bgr: np.ndarray, calibration=None) -> Located:
    """`find_dice`'s dice, with what they were found on (`Located`)."""
    image = _check_image(image_bgr)
    if calibration is not None and hasattr(calibration, "scaled_to"):
        calibration = calibration.scaled_to(image.shape[1], image.shape[0])
    view, tray_mask, on_tray, expected = _survey(image, calibration)
    # slivers of the tray's rim along the outline: thinner than a die, so an opening clears them
    # without touching the dice lying against the wall
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (max(3, int(0.35 * expected) | 1),) * 2)
    on_tray = cv2.morphologyEx(on_tray.astype(np.uint8), cv2.MORPH_OPEN, kernel).astype(bool)
    blobs = _blobs(on_tray, view.min_side, view.max_side)
    lum = view.lab[..., 0]
    candidates, blank, tokens, cuts, seen = [], [], [], [], []
    for index, blob in enumerate(blobs):
        for region, flags in _split(blob, expected, view.lab):
            if _BLANK in flags:
                blank.append(_candidate(region, flags, view))
            elif _TOKEN in flags:
                tokens.append(_candidate(region, (), view))
            else:
                candidates.append(_candidate(region, tuple(f for f in flags if f not in _CUT_NOTES), view))
                side = _net_side(blob, region[0], expected, view.lab) if _APART in flags else None
                if side is not None:
                    cuts.append(_Cut(index, side / view.scale))
                elif _ROUGH in flags:
                    cuts.append(_Cut(rough_area=float(region[0].sum()) / view.scale ** 2, rough_region=region))
                elif _LONG in flags:
                    cuts.append(_Cut(long=True))
                elif _UNDER in flags:
                    cuts.append(_Cut(under=True))
                else:
                    cuts.append(None)
                seen.append(blob)
    covered = np.zeros(on_tray.shape, np.uint8)
    for cand in candidates:
        cv2.fillPoly(covered, [np.int32(np.round(_in_working(cand.corners, view.scale)))], 1)
    specks = np.zeros_like(covered)
    for blob in blobs:
        h, w = blob.mask.shape
        small = blob.area < SPECK_AREA * expected * expected
        (specks if small else covered)[blob.y0:blob.y0 + h, blob.x0:blob.x0 + w] |= blob.mask.astype(np.uint8)
    grow = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (max(3, int(0.3 * expected) | 1),) * 2)
    floor = np.ones(covered.shape, bool) if tray_mask is None else (tray_mask > 0)
    free_light = floor & ~(cv2.dilate(covered, grow) > 0)
    # light pips on a dark die barely seen against a dim room show as lone specks: left free for
    # them; dark pips on a pale face are looked for clear of any foreground
    free_dark = floor & ~(cv2.dilate(covered | specks, grow) > 0)
    off_pips = []
    for region, flags in _pip_dice(view.lab, view.denoised, expected, free_dark, free_light):
        candidates.append(_candidate(region, tuple(f for f in flags if f != _OFF_PIP), view))
        if _OFF_PIP in flags:
            off_pips.append(candidates[-1])
        cuts.append(None)
        seen.append(None)
    around = [_dice_around(cand, blob, view, expected) for cand, blob in zip(candidates, seen)]
    candidates, cuts, around = _redrawn_on_detected(image, candidates, cuts, around, [b is not None for b in seen],
                                                     view, expected)
    candidates = _flag_one_die_twice(candidates, around, view.scale)
    # a lone pip off its die's centre is no ace's where it was not redrawn as that die
    candidates = [replace(c, flags=(UNREADABLE,)) if any(c is p for p in off_pips) else c for c in candidates]
    if tray_mask is not None:
        # off the tray only lone, clearly die-shaped blobs are reported (as outside): the rim,
        # the table and whatever stands on it are not dice
        off_tray = view.foreground & ~cv2.dilate(tray_mask, np.ones((3, 3), np.uint8)).astype(bool)
        # (a floor found by its edges alone may be a strip of the floor that a wood grain's
        # edges cut off: a die beyond it may lie on the tray, so it is flagged for a check)
        beyond = (UNREADABLE,) if view.floor_by_edges else (OUTSIDE,)
        for blob in _blobs(off_tray, view.min_side, view.max_side):
            if _lone_die(blob, expected, lum):
                region = (blob.mask, blob.x0, blob.y0)
                candidates.append(_candidate(region, beyond, view))
    # in a grainy photo the colour steps lose dice, and with them the usual die's size: the
    # second count also looks for bigger dice there (three white dice on a white board, dark
    # and grainy, left out of the count of a byler-d6 test photo)
    unexplained = False
    for side in (expected, GRAINY_LARGER * expected) if view.grainy else (expected,):
        found, unmarked = _unaccounted_dice(view, tray_mask, candidates + tokens, side, expected)
        unexplained |= unmarked
        for region, flags in found:
            candidates.append(_candidate(region, flags, view))
    if unexplained:
        # the detector sees a die there that nothing accounts for, too faint to show marks: a die
        # the count may lack, so no faint die's read may make the photo `ok`
        candidates = [replace(c, faint=False) for c in candidates]
    if view.floor_by_edges:
        candidates = _flag_near_the_rim(candidates, tray_mask, view.scale)
    cuts += [None] * (len(candidates) - len(cuts))
    unflagged = [not c.flags for c in candidates]
    candidates = _flag_crowded([_top_face(image, c) for c in candidates], blank, cuts)
    candidates = _close_look(image, candidates, cuts, unflagged, view, expected)
    candidates.sort(key=lambda c: (round(c.center[1] / max(c.size, 1.0)), c.center[0]))
    return Located(candidates, image, view, tray_mask, expected)


def _dice_around(cand: Candidate, blob: _Blob | None, view: _WorkingCopy, expected: float) -> Detections | None:
    """What the detector sees around a candidate that may be counted or redrawn (unflagged, or
    flagged stacked by its cut, and not faint), centres in working pixels; None for the rest.
    `blob`: the blob it was cut from (its detections are at hand), or None (a die found by its
    pips: the detector looks around it)."""
    if cand.faint or not set(cand.flags) <= {STACKED}:
        return None
    if blob is not None:
        found, x0, y0 = _detections_around(blob, expected, view.lab)
    else:
        found, x0, y0 = _detections_near(view.lab, _in_working(cand.center, view.scale), expected)
    return replace(found, centres=found.centres + np.float32((x0, y0)))


def _redrawn_on_detected(image: np.ndarray, candidates: list[Candidate], cuts: list,
                         around: list[Detections | None], measured: list[bool], view: _WorkingCopy,
                         expected: float) -> tuple[list[Candidate], list, list]:
    """Candidates cut off their die's centre, redrawn as the die the detector sees there.

    A pale die on a pale board (white on the byler-d6 tray's grey) differs from it by a few
    grey levels: the foreground holds only its brightest part, or its pips and a side's, so its
    outline lies off its top face, often beside a second piece of it (the two then crowd each
    other), and its face read is refused. A candidate (unflagged, or flagged stacked by its
    cut) is a piece of the die whose centre the detector sees within PIECE_REACH of a side of
    its own (a side in view, its pips found apart from the top face, lies 0.65 of a side off
    the centre), lying flat, sure of it, when no other die the detector sees lies within
    PIECE_MARGIN times that distance (a cut across two dice is neither's). Where the detector is
    less sure (under EDGE_SCORE on an edge, FLAT_SEEN_STACKED on another) of a die found in two
    pieces or more, the close look at that die (`vision.lean`) must give SURE_FLAT_CHANCE of
    lying flat: a green die on a green board, found as its top face and, apart, as its pips
    beside it (the detector's stacked score 0.09), was flagged `stacked` as one die cut in two.
    (A lone piece needs the detector sure: a black 6 seen from below, 1.25 times the size a
    calibration taught, found whole by its pips, was redrawn as the smaller die the detector
    saw there, which cut its pips, and refused.) Where a die's pieces
    lie off its centre (OFF_CENTRE), or are two or more, or the largest is under PIECE_SIZE of
    its side, none is bigger than the die (a die's side alone passes for a small die) and no
    other candidate lies within PIECE_REACH of it, they become one candidate: the detector's
    square, turned as the edges there run. A die found by its pips (`measured[i]` False) has
    the usual die's square for an outline, not a size of its own, so its size does not count:
    a black die's two light pips on black felt, one of them in the shadow of a die beside it,
    were found as one lone pip with a square bigger than the die seen there, and read as an
    ace. `around[i]`: what the detector sees around candidate i (`_dice_around`); returned
    aligned with the candidates, as `cuts` is (`_Cut`)."""
    lab, scale = view.lab, view.scale
    centres = _in_working([c.center for c in candidates], scale).reshape(-1, 2)
    targets = []   # [centre, side, candidate indices, detections, whether the detector is sure it lies flat]
    for i, found in enumerate(around):
        if found is None:
            continue
        gaps = np.hypot(*(found.centres - centres[i]).T)
        order = np.argsort(gaps)
        if not len(order) or gaps[order[0]] >= PIECE_REACH * found.sides[order[0]]:
            continue
        k = int(order[0])
        if found.on_edge[k] >= EDGE_SCORE or found.stacked[k] >= FLAT_SEEN_STACKED:
            continue
        if len(order) > 1 and gaps[order[1]] < PIECE_MARGIN * gaps[k]:
            continue   # a piece between two dice (a cut across both) is neither's
        side = float(found.sides[k])
        # (a crop that cuts a die off shows it smaller: the largest side seen counts)
        die = _seen_before(targets, found.centres[k], side)
        if die is None:
            die = [found.centres[k], side, [], found, True]
            targets.append(die)
        die[1] = max(die[1], side)
        die[2].append(i)
        die[4] = die[4] and _sure_flat(found, k)
    # (a lone piece off the die's centre is redrawn only where the detector is sure: it may be the
    # die found whole by its pips, the detector's side short of it)
    targets = [t for t in targets if (t[4] or len(t[2]) > 1) and _redrawn(candidates, measured, centres, scale, *t[:3])]
    doubted = [t for t in targets if not t[4]]
    if doubted:
        where = _in_photo(np.float32([t[0] for t in doubted]), scale)
        for t, chance in zip(doubted, lean_chances(image, where, lean_side(candidates))[:, FLAT]):
            t[4] = chance >= SURE_FLAT_CHANCE
        targets = [t for t in targets if t[4]]
    if not targets:
        return candidates, cuts, around
    replaced = {i for t in targets for i in t[2]}
    kept = [i for i in range(len(candidates)) if i not in replaced]
    out, out_cuts, out_around = [candidates[i] for i in kept], [cuts[i] for i in kept], [around[i] for i in kept]
    for centre, side, _, found, _ in targets:
        region, _ = _detected_square(lab, centre, side)
        out.append(_candidate(region, (), view))
        out_cuts.append(None)
        out_around.append(found)
    return out, out_cuts, out_around


def _flag_one_die_twice(candidates: list[Candidate], around: list[Detections | None], scale: float) -> list[Candidate]:
    """Candidates that lie within PIECE_REACH of a side of one die the detector sees, each
    nearer to it than to any other, flagged stacked: two pieces of one die (counted, it would
    count twice) or a die on another. Flat dice lie a side or more apart, so two of them
    cannot both lie that near one centre; pieces that were not redrawn as their die
    (`_redrawn_on_detected`: the detector not sure it lies flat, a piece bigger than it), or
    too small for crowding (`_flag_crowded`, by the smaller side) to catch, can."""
    centres = _in_working([c.center for c in candidates], scale).reshape(-1, 2)
    dice = []   # [centre, side, candidate indices]
    for i, found in enumerate(around):
        if found is None or not len(found.centres):
            continue
        gaps = np.hypot(*(found.centres - centres[i]).T)
        k = int(np.argmin(gaps))
        side = float(found.sides[k])
        if gaps[k] >= PIECE_REACH * side:
            continue
        die = _seen_before(dice, found.centres[k], side)
        if die is None:
            dice.append([found.centres[k], side, [i]])
        else:
            die[2].append(i)
    twice = {i for _, _, pieces in dice if len(pieces) > 1 for i in pieces}
    return [replace(c, flags=tuple(dict.fromkeys(c.flags + (STACKED,)))) if i in twice else c
            for i, c in enumerate(candidates)]


def _seen_before(dice: list, centre: np.ndarray, side: float) -> list | None:
    """The entry of `dice` (each [centre, side, ...], working pixels) that is the die the
    detector sees at `centre`: one die seen from two crops (a piece's blob, around a pip group)
    lies a pixel or two off, within OFF_CENTRE of the larger side; None when it is new."""
    return next((d for d in dice if np.hypot(*(d[0] - centre)) < OFF_CENTRE * max(side, d[1])), None)


def _redrawn(candidates: list[Candidate], measured: list[bool], centres: np.ndarray, scale: float,
             centre: np.ndarray, side: float, pieces: list[int]) -> bool:
    """Whether the pieces (indices) of the die seen at `centre` are redrawn as it (see
    `_redrawn_on_detected`)."""
    gaps = np.hypot(*(centres - centre).T)
    others = np.ones(len(candidates), bool)
    others[pieces] = False
    sizes = np.array([candidates[i].size * scale for i in pieces])
    off = len(pieces) > 1 or gaps[pieces].min() >= OFF_CENTRE * side or sizes.max() < PIECE_SIZE * side
    outlined = [size for size, i in zip(sizes, pieces) if measured[i]]
    return off and max(outlined, default=0.0) <= side and not (gaps[others] < PIECE_REACH * side).any()


def _detections_near(lab: np.ndarray, centre, expected: float, min_score: float = PEAK_SCORE
                     ) -> tuple[Detections, int, int]:
    """What `vision.detect` sees (centre heat `min_score` or more) within 1.5 usual die sides
    around a point, and that crop's corner."""
    h, w = lab.shape[:2]
    reach = int(np.ceil(1.5 * expected))
    x0, y0 = max(0, int(centre[0]) - reach), max(0, int(centre[1]) - reach)
    crop = np.ascontiguousarray(lab[y0:min(h, int(centre[1]) + reach + 1), x0:min(w, int(centre[0]) + reach + 1)])
    return detect_dice(crop, expected, min_score=min_score), x0, y0


def _flag_near_the_rim(candidates: list[Candidate], tray_mask: np.ndarray, scale: float) -> list[Candidate]:
    """Dice less than ON_FLOOR_DEPTH of their side inside a floor found by its edges alone,
    flagged `unreadable` (and no faint read counts them): where glare hides the floor's edge,
    that floor takes in the rim, and a die standing on the rim lies as deep inside it as one
    against the wall."""
    inside = cv2.distanceTransform(tray_mask, cv2.DIST_L2, 5)
    h, w = inside.shape
    flagged = []
    for cand in candidates:
        x, y = np.clip(np.round(_in_working(cand.center, scale)).astype(int), 0, (w - 1, h - 1))
        if inside[y, x] < ON_FLOOR_DEPTH * cand.size * scale:
            cand = replace(cand, flags=cand.flags or (UNREADABLE,), faint=False)
        flagged.append(cand)
    return flagged


def _close_look(image: np.ndarray, candidates: list[Candidate], cuts: list[_Cut | None], unflagged: list[bool],
                view: _WorkingCopy, expected: float) -> list[Candidate]:
    """Dice about to be counted (no flag, or faint: a sure read would count them) that a close
    look at each (`vision.lean`) gives under FLAT_CHANCE of lying flat, flagged `edge` or `stacked`,
    whichever it finds likelier (leaning, or resting on another die): a die leaning at 30-45 degrees
    shows two faces whose outline passes for a flat die's seen at a slant, and the detector's
    on-edge score gives half of them under 0.5; a die resting on another hides all but a rim of
    it. Where a second cue agrees, less doubt is enough: a die under SEEN_STACKED_FLAT_CHANCE
    that the detector sees on another is flagged `stacked`, and a lone die whose long outline
    only its geometry called flat (`_Cut.long`), or one LEAN_SIZE times the photo's median die
    or bigger (a leaning die shows its top face and a side: untuned crowded seeds 61 and 62,
    610065 and 620093, 1.27 and 1.34 times, counted with 0.05 and 0.12 of lying flat), is
    flagged `edge` when the close look finds it likelier leaning than flat. The dice are looked
    at on the scale of the faces found on this photo (their median, by TOP_PER_USUAL), not the
    usual die's: a calibration's die may be another set's.

    The other way round, a die flagged by its outline alone (`_by_outline`; or, lying alone, for a patch
    of another colour beside its top face) is counted when the close look gives it SURE_FLAT_CHANCE or
    more of lying flat (or BOTH_LOOKS_FLAT_CHANCE at each of its two looks, below) and the detector sees
    a die there, redrawn as that die (`_flat_die_under`, `_counted_alone`): a dark die's shadow on a
    pale board, or sides seen at a slant, lengthen a flat die's outline; k-means cuts touching dice
    roughly, and a face found at a slant takes in its sides. Such a die is looked at twice, at its
    outline's centre and at the die the detector sees there (the outline's centre lies off the top face,
    towards what lengthened it; the net's chances shift with the cut's centre), and the surer look
    counts; or both, where each is BOTH_LOOKS_FLAT_CHANCE sure: a die seen at a slant near a wide lens's
    edge shows its sides as a leaning die would, and both looks give it 0.95-0.98. Synthetic hard,
    crowded, close and plain sets, seeds 7, 13 and 67: of the candidates the detector sees one die under
    that neither look finds SURE_FLAT_CHANCE flat, 170 lay flat, 147 on an edge, 119 stacked, 4 no die,
    2 cut off and one outside the tray (on its rim); both looks give 0.94 or more to 37 of the flat dice
    and one cut off (0.98: redrawn, its square still touches the frame), 0.929 to the die on the rim, at
    most 0.894 to the others (`/work/notes/outlinesurvey.py`). On synthetic hard, crowded and close
    (seeds 7, 13; close: 2,000 dice a set), plain and far (seed 7) sets, 502 candidates were flagged
    `edge` by their outline: 331 flat dice, 108 on an edge, 42 stacked, one cut off, 20 no die (an
    outline taken with its shadow, a piece of a tray's rim, a token). 64 flat dice reach 0.99 at the
    outline's centre, 107 at either (the most for a die on an edge: 0.976); so do a die seen from below
    with another resting on its corner (kept flagged by that die, which the detector sees faintly:
    FAINT_SEEN_SCORE) and 2 tokens the detector takes for dice (which the face reader refuses): hence
    the detector's word and `_counted_alone`. Of dice flagged `stacked` for crowding alone that pass
    both, all 29 lay flat (synthetic crowded, hard, plain seed 7, byler-d6 train). Of rough parts that
    pass (`_Cut`), 6 of 124 (crowded seed 7) held a die the detector misses too (a dim blue die in a
    green one's part), their areas 1.6 to 7.8 times the detected die's (one in the tests: 1.47); the 118
    others' at most 2.5, 82 of them ROUGH_PART_AREA or less. A bigger part counts too when the detector
    does not see its die on an edge and it holds nothing ROOM_WIDTH of a side wide beyond ROOM_REACH of
    the die's centre (`_one_die_part`): on that set (today's cuts) 23 of 27 such parts holding one die
    pass, and 5 of 20 holding a second die's centre, each second die either missed before (a sliver of
    it in the part) or holding a candidate of its own.

    The detector's square is narrowed to the top face found in it unless that is under
    REDRAWN_TOP_SHARE of it: the net's side is already the top face's, and a much smaller "top
    face" is a glare patch amid the face (a blue 5 at phone size, lit in its middle: a square 0.76
    of the net's, showing two of its pips, read 2 and counted). Synthetic seed 2024 (hard,
    crowded, close, plain, far) and byler-d6 (all): of 188 dice redrawn so, 3 had a top face under
    0.8 of the square (0.62-0.76), each die as big as the square or bigger; the others 0.86 or more.
    It costs a die whose top face does lie well inside it: at phone size, a translucent red 6 of
    the byler-d6 test split shows a dark rim round its face (0.77 of the square), read right
    there and refused on the square."""
    where = _in_working([c.center for c in candidates], view.scale).reshape(-1, 2)
    under = {i: _flat_die_under(view, c, cut, expected, np.delete(where, i, axis=0))
             for i, (c, cut, clean) in enumerate(zip(candidates, cuts, unflagged)) if _by_outline(c, cut, clean)}
    looked = [i for i, c in enumerate(candidates) if not c.flags or c.faint or i in under]
    if not looked:
        return candidates
    side = lean_side(candidates)
    usual = side * TOP_PER_USUAL
    # a doubted die is also looked at where the detector sees it: its outline's centre may lie
    # off the top face, towards the sides or the shadow that lengthened it
    seen_at = {i: _in_photo(seen[0][seen[2]], view.scale) for i, seen in under.items() if seen is not None}
    chances = lean_chances(image, [candidates[i].center for i in looked] + list(seen_at.values()), side)
    flat_there = dict(zip(seen_at, chances[len(looked):, FLAT]))
    flagged = list(candidates)
    sure = {}
    for i, chance in zip(looked, chances):
        if i in under:
            looks = (chance[FLAT], flat_there.get(i, 0.0))
            seen = under[i] if _cleared_flat(max(looks), looks) else None
            rough = cuts[i] is not None and cuts[i].rough_area is not None
            others = np.delete(where, i, axis=0)
            if seen is not None and (not rough or _one_die_part(cuts[i], seen, view.scale, others)):
                sure[i] = seen
        elif chance[FLAT] < FLAT_CHANCE:
            flag = EDGE if chance[LEANING] >= chance[ON_ANOTHER] else STACKED
            flagged[i] = replace(candidates[i], flags=(flag,), faint=False)
        elif (chance[LEANING] > chance[FLAT]
              and (cuts[i] is not None and cuts[i].long or candidates[i].size >= LEAN_SIZE * usual)):
            flagged[i] = replace(candidates[i], flags=(EDGE,), faint=False)
        elif (chance[FLAT] < SEEN_STACKED_FLAT_CHANCE and chance[ON_ANOTHER] > chance[LEANING]
              and _detector_sees_on_another(view, candidates[i], expected)):
            flagged[i] = replace(candidates[i], flags=(STACKED,), faint=False)
    for i in _counted_alone(candidates, sure, view.scale):
        centres, found, k = sure[i]
        flagged[i] = _redrawn_as(image, view, centres[k], float(found.sides[k]))
    return flagged


def _cleared_flat(surest: float, looks) -> bool:
    """Whether the close look clears a die it looked at twice (`looks`: chances of lying flat):
    the look that may clear it alone (`surest`) SURE_FLAT_CHANCE sure, or every look
    BOTH_LOOKS_FLAT_CHANCE sure (`_close_look`)."""
    return surest >= SURE_FLAT_CHANCE or min(looks) >= BOTH_LOOKS_FLAT_CHANCE


def _redrawn_as(image: np.ndarray, view: _WorkingCopy, centre: np.ndarray, side: float) -> Candidate:
    """A candidate redrawn as the die the detector sees at `centre` with top face `side` (working
    pixels): its square, narrowed to the top face found in it unless that is under
    REDRAWN_TOP_SHARE of it (`_close_look`)."""
    region, _ = _detected_square(view.lab, centre, side)
    square = _candidate(region, (), view)
    top = _top_face(image, square)
    return top if top.size >= REDRAWN_TOP_SHARE * square.size else square


def _one_die_part(cut: _Cut, seen: tuple[np.ndarray, Detections, int], scale: float, others: np.ndarray) -> bool:
    """Whether a part cut rough from its cluster holds no more than the flat die the detector sees
    in it (`seen`: `_flat_die_under`'s): it covers at most ROUGH_PART_AREA of that die's area, or,
    the detector not seeing that die on its edge (a die on an edge shows a second face beside
    its first), it holds nothing beyond the die's reach that another die could be, but for
    pieces of dice the detector sees (PEAK_SCORE) that other candidates (`others`: their centres,
    working pixels) count: k-means may give a die's part a slice of its neighbour (byler-d6 train
    112332: a teal ace's part took half the white 5 beside it, counted on its own)."""
    centres, found, k = seen
    side = float(found.sides[k])
    if cut.rough_area <= ROUGH_PART_AREA * (side / scale) ** 2:
        return True
    counted = found.scores >= PEAK_SCORE
    counted[counted] = ~_unaccounted(centres[counted], found.sides[counted], others, None)
    dice = [k] + [j for j in np.flatnonzero(counted) if j != k]
    return float(found.on_edge[k]) < EDGE_SCORE and not _room_for_another(cut.rough_region, centres[dice],
                                                                            found.sides[dice])


def _room_for_another(region: tuple, centres: np.ndarray, sides: np.ndarray) -> bool:
    """Whether a part (mask, x0, y0: working pixels) holds, beyond the reach of the dice centred at
    `centres` (working pixels) with top faces `sides`, a patch wide enough to be another die (by
    the first die's side: the part's own)."""
    mask, x0, y0 = region
    ys, xs = np.mgrid[:mask.shape[0], :mask.shape[1]]
    beyond = mask.astype(bool)
    for centre, side in zip(centres, sides):
        beyond &= (xs + x0 - centre[0]) ** 2 + (ys + y0 - centre[1]) ** 2 > (ROOM_REACH * side) ** 2
    return _thickness(beyond) >= ROOM_WIDTH * sides[0]


def _by_outline(candidate: Candidate, cut: _Cut | None, unflagged: bool) -> bool:
    """Whether a candidate's one flag rests on its outline (or colours) alone, so that a close
    look may clear it: `edge` (a lone blob too long for a flat die), or `stacked` for crowding
    alone (`unflagged` before it), for a cluster part that does not look like one die
    (`_Cut.rough_area`), or for a patch of another colour beside a lone die's top face
    (`_Cut.under`)."""
    if candidate.faint:
        return False
    noted = cut is not None and (cut.rough_area is not None or cut.under)
    return candidate.flags == (EDGE,) or candidate.flags == (STACKED,) and (unflagged or noted)


def _flat_die_under(view: _WorkingCopy, candidate: Candidate, cut: _Cut | None, expected: float,
                    others: np.ndarray) -> tuple[np.ndarray, Detections, int] | None:
    """(centres, found, k): the dice the detector sees around a candidate (working pixels), k the
    one whose centre lies within FLAT_SEEN_REACH of its side of the candidate's: the die it
    would be redrawn as. None when the detector sees no die there (a piece of a tray's rim) or
    two (small dice touching end to end), or sees that die on another (stacked
    FLAT_SEEN_STACKED or more: a black die under a blue one that the close look takes for a
    flat blue die; LONG_SEEN_STACKED for a candidate its outline alone flagged `edge`, whose
    shadow or sides lengthen it: on synthetic hard, crowded and close trays of seeds 7, 13 and
    67, every such candidate the close look found 0.99 flat on one die the detector sees was a
    flat die (147; 3 more lay on no die, scored 0.06-0.34), their stacked scores 0.01-0.92, 39
    at 0.5 or more, 4 at 0.8 or more: `/work/notes/edgesurvey.py`; surveyed again with either
    close look 0.99 sure or both BOTH_LOOKS_FLAT_CHANCE, hard, crowded, close and plain trays
    of those seeds: 367 flat dice, stacked 0.92 at most, 10 of them 0.8 or more; 6 on no die,
    one cut off and one outside, 0.53 at most: `/work/notes/outlinesurvey_long.py`). No limit for a lone die
    flagged only for a patch of another colour beside its top face (`_Cut.under`): the detector's
    stacked score there reads that same patch (a side seen at a slant, a glare edge), no second
    cue; on synthetic hard and crowded trays of seeds 7, 71 and 72 (close and far: seed 7), of
    135 such candidates the 78 stacked ones got at most 0.90 of lying flat from the close look,
    and 10 flat ones 0.99 or more with stacked scores 0.52-0.90 (`/work/notes/undersurvey.py`).
    The dice around include those the detector barely sees (FAINT_SEEN_SCORE): seen from below,
    a die resting on another off its centre shows only a corner beside it.
    Of two dice that near, one that another candidate (`others`, working pixels) lies on, nearer
    it than this one and as near as flat dice lie (MIN_CENTRE_GAP), is that candidate's: k-means
    cuts touching dice roughly, and a part cut across a pair lies near both (29 of the 132 flat
    dice flagged `stacked` on synthetic hard and crowded trays, seed 2024, lay by such a part).
    `_counted_alone` still asks that every die seen around keeps a candidate of its own."""
    centres, found, distances = _seen_around(view, candidate, expected, FAINT_SEEN_SCORE)
    near = np.flatnonzero((distances < FLAT_SEEN_REACH * found.sides) & (found.scores >= PEAK_SCORE))
    if len(near) > 1:
        nearest_other = np.array([np.hypot(*(others - centres[k]).T).min(initial=np.inf) for k in near])
        near = near[nearest_other >= np.minimum(distances[near], MIN_CENTRE_GAP * found.sides[near])]
    if candidate.flags == (EDGE,):
        most_stacked = LONG_SEEN_STACKED
    elif cut is not None and cut.under:
        most_stacked = np.inf
    else:
        most_stacked = FLAT_SEEN_STACKED
    if len(near) != 1 or float(found.stacked[near[0]]) >= most_stacked:
        return None
    return centres, found, int(near[0])


def lean_side(candidates: list[Candidate]) -> float:
    """The usual die's side as the close look (`vision.lean`) takes it on this photo: the
    outlines' median (dice outside the tray left out), by TOP_PER_USUAL: a calibration's die may
    be another set's."""
    return float(np.median([c.size for c in candidates if OUTSIDE not in c.flags])) / TOP_PER_USUAL


def _detector_sees_on_another(view: _WorkingCopy, candidate: Candidate, expected: float) -> bool:
    """Whether the detector sees the die nearest the candidate's centre (within FLAT_SEEN_REACH of
    its side) resting on another, UNDER_STACKED_SCORE sure: with the close look's own doubt, two
    cues that agree."""
    _, found, distances = _seen_around(view, candidate, expected)
    reach = distances / found.sides
    return bool(len(reach)) and reach.min() < FLAT_SEEN_REACH and float(found.stacked[reach.argmin()]) >= UNDER_STACKED_SCORE


def _seen_around(view: _WorkingCopy, candidate: Candidate, expected: float, min_score: float = PEAK_SCORE
                 ) -> tuple[np.ndarray, Detections, np.ndarray]:
    """The dice the detector sees (`_detections_near`) around a candidate: their centres
    (working pixels), the detections, and each centre's distance from the candidate's."""
    centre = _in_working(candidate.center, view.scale)
    found, x0, y0 = _detections_near(view.lab, centre, expected, min_score)
    centres = found.centres + np.float32((x0, y0))
    return centres, found, np.hypot(*(centres - centre).T)


def _counted_alone(candidates: list[Candidate], sure: dict, scale: float) -> list[int]:
    """Which candidates of `sure` (index: `_flat_die_under`'s view around it) may be redrawn as
    their die, leaving no die the detector sees there uncounted or counted twice: no other
    candidate lies as near that die as flat dice lie (MIN_CENTRE_GAP), and every other die the
    detector sees within NEIGHBOUR_REACH of its sides has a candidate of its own that near (a
    white die on a pale board, taken into its green neighbour's part: redrawn as the green die
    alone, the white one would be lost). The others of `sure` count at their own dice: two
    flat dice whose faces found crowd each other (each took in the other's edge) are both
    redrawn, two pieces of one die neither. Another candidate nearer a die of its own (redrawn
    as it, or lying there), SECOND_PEAK_GAP or more of a side away, counts that die only
    (`_unaccounted`'s `one_each`) where the net sees this one nearly sure flat
    (PAIR_FLAT_SCORE): two touching flat dice's centres, one seen at a slant, may lie nearer
    than MIN_CENTRE_GAP (synthetic crowded and hard, seeds 7 and 71: 0.6-0.85 of a side, each
    die flagged `stacked` with its neighbour), but a die on its edge shows a second peak beside
    its first (on-edge 0.28 there: hard seed 7, 70040), and only dice the net is sure of
    (PEAK_SCORE) count as that other die: in a dark, grainy photo its faint peaks around one
    die are grain (byler-d6 train 100719, 0.46: a white 4 counted and flagged beside itself).
    Those that fail are dropped until none does."""
    alone = dict(sure)
    where = _in_working([c.center for c in candidates], scale).reshape(-1, 2)
    while alone:
        at = where.copy()
        for i, (centres, _, k) in alone.items():
            at[i] = centres[k]
        failed = []
        for i, (centres, found, k) in alone.items():
            others = np.delete(at, i, axis=0)
            uncounted = _unaccounted(centres, found.sides, others, None)
            # another candidate at the die next to this one counts that die, not this one too,
            # where the net sees this one nearly sure flat: two flat dice's peaks may lie nearer
            # than their faces do (one seen at a slant); a die on its edge shows two
            counted = not uncounted[k]
            if _sure_flat(found, k, PAIR_FLAT_SCORE):
                peaks = found.scores >= PEAK_SCORE
                paired = _unaccounted(centres[peaks], found.sides[peaks], others, None, one_each=True)
                counted = not paired[peaks[:k].sum()]
            around = np.hypot(*(centres - centres[k]).T) < NEIGHBOUR_REACH * found.sides[k]
            around[k] = False
            if counted or (around & uncounted).any():
                failed.append(i)
        if not failed:
            break
        for i in failed:
            del alone[i]
    return list(alone)


def _in_working(points, scale: float) -> np.ndarray:
    """Points (x, y) in the photo's pixels as the working copy's (pixel centres onto pixel centres)."""
    return (np.asarray(points, np.float64) + 0.5) * scale - 0.5


def _in_photo(points, scale: float) -> np.ndarray:
    """Points (x, y) in the working copy's pixels as the photo's (`_in_working` undone)."""
    return (np.asarray(points, np.float64) + 0.5) / scale - 0.5


def _survey(image: np.ndarray, calibration=None):
    """The working copy, the tray's floor (uint8 mask, or None), the foreground on it, and the
    usual die's side (working pixels): what every later step measures against. Dice small in a
    big photo (a phone held high over the table) are looked at again on a finer working copy,
    where they are about as big as the usual working copy shows dice on a tray."""
    view = _WorkingCopy(image)
    tray = _tray_polygon(calibration, view.scale)
    if tray is None:
        tray, view.floor_by_edges = _floor_hull(view.foreground, view.lab)
    tray_mask, on_tray, expected = _floor_and_dice(view, tray, calibration)
    if expected < SMALL_DIE_SIDE and view.scale < 1.0:
        coarse = view
        view = _WorkingCopy(image, min(WORK_LONG_SIDE * FINER_DIE_SIDE / expected, FINEST_LONG_SIDE))
        # the tray is as big on either copy: the coarse copy's floor, carried over, spares the
        # finer one the openings with kernels a twentieth of its side (most of the time a phone
        # photo of small dice took)
        view.floor_by_edges = coarse.floor_by_edges
        finer = _tray_polygon(calibration, view.scale)
        if finer is None and tray is not None:
            finer = _in_working(_in_photo(tray.reshape(-1, 2), coarse.scale), view.scale)
        tray_mask, on_tray, expected = _floor_and_dice(view, finer, calibration)
    return view, tray_mask, on_tray, expected


def _floor_and_dice(view: _WorkingCopy, tray: np.ndarray | None,
                    calibration) -> tuple[np.ndarray | None, np.ndarray, float]:
    """`_survey` on one working copy, given its tray's floor (a polygon, working pixels; None:
    none found): the floor as a mask, the foreground on it, the usual die's side."""
    on_tray = view.foreground.copy()
    tray_mask = None
    if tray is not None:
        tray_mask = np.zeros(on_tray.shape, np.uint8)
        cv2.fillPoly(tray_mask, [np.int32(np.round(tray.reshape(-1, 2)))], 1)
        on_tray &= tray_mask.astype(bool)
    blobs = _blobs(on_tray, view.min_side, view.max_side)
    expected = _expected_side(blobs, calibration, view.scale, view.min_side, view.lab)
    return tray_mask, on_tray, expected


def _unaccounted_dice(view: _WorkingCopy, tray_mask: np.ndarray | None, candidates: list[Candidate],
                      expected: float, usual: float):
    """(regions, unmarked): the dice the detector sees over the whole working copy that no
    candidate accounts for (`candidates` may include the tokens `_split` set aside: the detector
    takes a coin for a die, and a small one's blurred rim passes for its marks), as (region
    (mask, x0, y0), flags): a second count, so that a die the colour steps lost (merged with the
    tray's wall, taken for its shadow) sends the photo to `check` instead of being counted
    short. Such a die must lie on the floor or near it (the floor found stops short of the dice
    that line a wall, and of a die behind one of them) and carry marks (a die has pips or a
    picture; a coin or a bottle cap has none), unless the frame cuts it off (what is left of it
    may show none; it is flagged `cut`). It is flagged `unreadable`, and is `faint` (a sure read
    counts it) when its centre lies ON_FLOOR_DEPTH of its side or more inside the floor (or no
    floor was found) and no other die the detector sees lies within MIN_CENTRE_GAP of its side
    (it may be that die's second peak). `unmarked`: whether the detector sees such a die there
    without marks (a coin, or a die too dim to show its pips); one it is SURE_UNMARKED_SCORE
    sure of is flagged all the same (a dark grey die with dim pips under a lamp's glare, 0.88,
    was left out of the count and the photo was `ok`; the coins, screws and clips of the bench's
    synthetic sets (seed 2024) and hard seeds 7 and 17 that it sees unaccounted for score
    0.6-0.81). One whose centre lies beyond the floor must be OFF_FLOOR_SIDE of the `usual`
    die's side or more: a tray's glossy black wall mirrors the dice beside it, squeezed to
    about half a die across (byler-d6 train photos turned 25°: 25 such dice flagged, 0.50-0.59
    of the usual; off the floor, the dice it found on the train split, as taken, spoiled or
    reframed, and synthetic seed 7 were 0.66 and more, but for a marbled 4 pressed into a
    corner of a cluster, 0.54, whose centre lies inside the floor)."""
    known = _in_working([c.center for c in candidates], view.scale).astype(np.float32).reshape(-1, 2)
    # the centre head alone first (cheap); on most photos every die it sees is a candidate's
    seen, _ = die_centres(view.lab, expected, min_score=UNACCOUNTED_SCORE)
    if not _unaccounted(seen, SMALL_DIE_SHARE * expected, known, None, one_each=True).any():
        return [], False
    near_floor = None
    if tray_mask is not None:
        near_floor = cv2.distanceTransform((tray_mask == 0).astype(np.uint8), cv2.DIST_L2, 5) <= UNACCOUNTED_REACH * expected
    # the whole net only where a die lies unaccounted for near the floor (rarely): each die's
    # own side, so that a small token's rim does not pass for marks
    if not _unaccounted(seen, SMALL_DIE_SHARE * expected, known, near_floor, one_each=True).any():
        return [], False
    found = detect_dice(view.lab, expected, min_score=UNACCOUNTED_SCORE)
    keep = _unaccounted(found.centres, found.sides, known, near_floor, one_each=True)
    # a die nearer another that the detector sees than flat dice lie may be that die's second
    # peak (its top face and a side seen at a slant): never counted, however sure its read
    gaps = np.hypot(*(found.centres[:, None] - found.centres[None]).transpose(2, 0, 1))
    np.fill_diagonal(gaps, np.inf)
    beside_another = gaps.min(axis=1, initial=np.inf) < MIN_CENTRE_GAP * found.sides
    h, w = view.lab.shape[:2]
    # how deep inside the floor each pixel lies: the floor found may take in the tray's rim,
    # and a die standing on the rim is outside
    inside = None if tray_mask is None else cv2.distanceTransform(tray_mask, cv2.DIST_L2, 5)
    regions, unmarked = [], False
    for (cx, cy), side, score, near_another in zip(found.centres[keep], found.sides[keep], found.scores[keep],
                                                   beside_another[keep]):
        x, y = int(round(cx)), int(round(cy))
        half = int(np.ceil(0.5 * side))
        region, patch = _detected_square(view.lab, (cx, cy), side)
        (_, x0, y0), (ph, pw) = region, patch.shape[:2]
        # hue on the smoothed copy: a grainy photo's colour noise alone has a spread of ~19
        hue = view.denoised[y0:y0 + ph, x0:x0 + pw, 1:]
        # a die the frame cuts off may show no marks on what is left of it: flagged `cut`
        cut_off = x - half < 0 or y - half < 0 or x + half >= w or y + half >= h
        depth = None if inside is None else inside[min(y, h - 1), min(x, w - 1)]
        if depth == 0 and not cut_off and side < OFF_FLOOR_SIDE * usual:
            continue
        if not cut_off and (min(ph, pw) < 5 or not _marked(patch[..., 0], hue, expected)):
            unmarked = True
            if score < SURE_UNMARKED_SCORE and not _blurred_pips_alone(view.lab, (cx, cy), side, patch, expected):
                continue
        if region[0].any():
            on_floor = depth is None or depth >= ON_FLOOR_DEPTH * side
            regions.append((region, (UNREADABLE, _FAINT) if on_floor and not near_another else (UNREADABLE,)))
    return regions, unmarked


def _blurred_pips_alone(lab: np.ndarray, centre, side: float, patch: np.ndarray, expected: float) -> bool:
    """True when a die the detector sees, too blurred for `_marked`, shows pip-sized marks
    (MARK_CONTRAST at BLURRED_PIP_SCALE times the pip scale, within the inner MARK_MIDDLES
    radius) and lies alone on an even board (EVEN_BOARD across a ring from 0.8 to 1.3 of its
    side from its centre). Small white dice on a pale board, out of focus, pass for no die
    in the colour steps and show `_marked` no sharp pips (a byler-d6 train photo at 0.7-0.75
    size, blurred by 1.2-1.5 px: two such dice left out of an `ok` count); a coin's rim lies
    further out than the inner radius, and a tray's cluttered rim, whose detail at that
    scale passes for marks, is no even board."""
    sigma = BLURRED_PIP_SCALE * max(1.0, MARK_SCALE * expected)
    (light,) = _middle_detail(patch[..., 0], sigma, MARK_MIDDLES[0])
    if light < MARK_CONTRAST:
        return False
    h, w = lab.shape[:2]
    reach = int(np.ceil(1.3 * side))
    x0, y0 = max(0, int(centre[0]) - reach), max(0, int(centre[1]) - reach)
    around = lab[y0:min(h, int(centre[1]) + reach + 1), x0:min(w, int(centre[0]) + reach + 1), 0].astype(np.float32)
    yy, xx = np.mgrid[y0:y0 + around.shape[0], x0:x0 + around.shape[1]]
    from_centre = np.hypot(xx - centre[0], yy - centre[1])
    ring = (from_centre >= 0.8 * side) & (from_centre <= 1.3 * side)
    if not ring.any():
        return False
    low, high = _percentiles(cv2.GaussianBlur(around, (0, 0), max(1.0, MARK_SCALE * side))[ring], (3, 97))
    return high - low <= EVEN_BOARD


def _detected_square(lab: np.ndarray, centre, side: float) -> tuple[tuple[np.ndarray, int, int], np.ndarray]:
    """A die the detector sees, as a region (mask, x0, y0: working pixels) of its side, turned as
    the edges around it run, and the Lab patch (its side across) whose lightness turned it."""
    h, w = lab.shape[:2]
    x, y, half = int(round(centre[0])), int(round(centre[1])), int(np.ceil(0.5 * side))
    x0, y0 = max(0, x - half), max(0, y - half)
    patch = lab[y0:min(h, y + half + 1), x0:min(w, x + half + 1)]
    mask = np.zeros(patch.shape[:2], np.uint8)
    box = cv2.boxPoints(((centre[0] - x0, centre[1] - y0), (side, side), _square_angle(patch[..., 0])))
    cv2.fillPoly(mask, [np.int32(np.round(box))], 1)
    return (mask.astype(bool), x0, y0), patch


def _unaccounted(centres: np.ndarray, sides: np.ndarray | float, known: np.ndarray,
                 near_floor: np.ndarray | None, one_each: bool = False) -> np.ndarray:
    """Which detected centres (working pixels) no candidate's centre accounts for (two flat dice
    lie no closer than MIN_CENTRE_GAP of their sides, `sides`: one that near a candidate is its
    die) and lie inside the photo and near the floor (`near_floor`, None: no tray found). The
    centre head alone gives no sides: SMALL_DIE_SHARE of the usual die's stands for them there,
    so that the whole net is run wherever it may find a die. `one_each`: a candidate accounts
    for one die only, the nearest (pairs matched nearest first): a die pressed against another
    whose blob took in both, cut as one die, lies nearer that candidate than flat dice lie
    (a red 5 against a yellow 2, crowded seed 69, 690033: 0.78 of its side; the count was `ok`),
    unless it lies within SECOND_PEAK_GAP of its side of a die matched to one (a black die seen at
    a slant, byler-d6 train 111548: peaks on its top face and its side, 0.41 of its side apart)."""
    keep = np.ones(len(centres), bool)
    if known.size and len(centres):
        gaps = np.hypot(centres[:, None, 0] - known[None, :, 0], centres[:, None, 1] - known[None, :, 1])
        side_of = np.broadcast_to(np.asarray(sides, np.float64), (len(centres),))
        reach = MIN_CENTRE_GAP * side_of
        beside = gaps.min(axis=1) < reach
        keep = ~beside
        if one_each and beside.any():
            near = np.argwhere(gaps < reach[:, None])
            matched, taken = np.zeros(len(centres), bool), set()
            for i, j in near[np.argsort(gaps[near[:, 0], near[:, 1]], kind="stable")]:
                if not matched[i] and j not in taken:
                    matched[i] = True
                    taken.add(j)
            # a die's second peak (its top face and a side seen at a slant) lies nearer its first
            # than two dice's centres lie: it accounts for no other die
            apart = np.hypot(*(centres[:, None] - centres[None, matched]).transpose(2, 0, 1)).min(axis=1, initial=np.inf)
            keep |= beside & ~matched & (apart >= SECOND_PEAK_GAP * side_of)
    if near_floor is not None:
        spots = np.int32(np.round(centres))
        h, w = near_floor.shape
        keep &= (spots[:, 0] >= 0) & (spots[:, 0] < w) & (spots[:, 1] >= 0) & (spots[:, 1] < h)
        keep[keep] = near_floor[spots[keep, 1], spots[keep, 0]]
    return keep


def _marked(lightness: np.ndarray, hue: np.ndarray, expected: float, radii=MARK_MIDDLES) -> bool:
    """True when a die-sized patch has sharp marks in its middle: pips or a picture, of
    MARK_CONTRAST in `lightness` (Lab L), or of DIM_MARK_CONTRAST there and MARK_HUE in `hue`
    (Lab a and b; coloured pips on a dark die show more hue than lightness). Looked for within
    two radii (MARK_MIDDLES): a 2's pips lie in the corners, where the inner disc barely
    reaches, and the outer one holds so much plain face that an ace's one pip is too small a
    share of it."""
    sigma = max(1.0, MARK_SCALE * expected)
    patch = np.dstack([lightness, hue])
    for radius in radii:
        light, *hues = _middle_detail(patch, sigma, radius)
        if light >= MARK_CONTRAST or (light >= DIM_MARK_CONTRAST and max(hues) >= MARK_HUE):
            return True
    return False


def _middle_detail(patch: np.ndarray, sigma: float, radius: float) -> list[float]:
    """Each channel's spread (3rd to 97th percentile) of the patch's detail finer than `sigma`
    (pixels) within `radius` (patch sides) of its middle."""
    patch = patch.astype(np.float32)
    sharp = patch - cv2.GaussianBlur(patch, (0, 0), sigma)
    ph, pw = patch.shape[:2]
    yy, xx = np.mgrid[:ph, :pw]
    inside = sharp[(yy - (ph - 1) / 2) ** 2 + (xx - (pw - 1) / 2) ** 2 <= (radius * min(ph, pw)) ** 2]
    inside = inside.reshape(len(inside), -1)
    return [high - low for low, high in (_percentiles(inside[:, k], (3, 97)) for k in range(inside.shape[1]))]


def _square_angle(patch: np.ndarray) -> float:
    """The turn (degrees, 0-90) of the square in a patch, from its edges' directions taken four
    times over (a square's four sides then point one way)."""
    gx = cv2.Sobel(patch.astype(np.float32), cv2.CV_32F, 1, 0)
    gy = cv2.Sobel(patch.astype(np.float32), cv2.CV_32F, 0, 1)
    turn = np.sum((gx * gx + gy * gy) * np.exp(4j * np.arctan2(gy, gx)))
    return float(np.degrees(np.angle(turn)) / 4.0) % 90.0


def _flag_crowded(candidates: list[Candidate], blank: list[Candidate] = (), cuts=()) -> list[Candidate]:
    """Two dice lying flat cannot have their centres closer than about one side: candidates that
    close are one die cut in two, or a die resting on another, so both are flagged stacked. So
    is a candidate that close to a plain piece cut from its cluster (no die by itself, but
    maybe the blank side of a die on its edge). Between two parts of one cluster that the net
    sees as flat dice apart (`_net_sees_apart`; `cuts` gives each candidate's cluster and the
    side the net sees: `_Cut`) the net's sides count where smaller: a die seen at a slant
    shows its sides beyond its top face, which widen the face found (`_top_face`), so
    neighbours touching face to face come out closer than that face's side; not where a face
    found is far bigger than the net's die (SEEN_FACE_GROWTH: it may hold a neighbour's edge)."""
    everything = list(candidates) + list(blank)
    n = len(candidates)
    if not n:
        return []
    centres = np.array([c.center for c in everything], np.float64)
    sizes = np.array([c.size for c in everything], np.float64)
    inside = np.array([OUTSIDE not in c.flags for c in everything])
    gaps = np.hypot(centres[:n, None, 0] - centres[None, :, 0], centres[:n, None, 1] - centres[None, :, 1])
    # between two candidates the smaller die's side counts; beside a plain piece, the die's own
    reach = np.minimum(sizes[:n, None], sizes[None, :])
    reach[:, n:] = sizes[:n, None]
    group = np.full(len(everything), -1)
    seen = np.zeros(len(everything))
    for i, cut in enumerate(cuts):
        if cut is not None and cut.cluster is not None:
            group[i], seen[i] = cut.cluster, cut.net_side
    # a face found far bigger than the die the net sees may hold a neighbour's edge: no excuse
    group[:n][sizes[:n] > SEEN_FACE_GROWTH * seen[:n]] = -1
    same = (group[:n, None] == group[None, :]) & (group[:n, None] >= 0)
    reach[same] = np.minimum(reach, np.minimum(seen[:n, None], seen[None, :]))[same]
    close = np.triu(gaps < MIN_CENTRE_GAP * reach, 1) & inside[:n, None] & inside[None, :]
    crowded = close.any(axis=1) | close.any(axis=0)[:n]
    return [replace(c, flags=tuple(dict.fromkeys(c.flags + (STACKED,)))) if crowded[i] else c
            for i, c in enumerate(candidates)]


def _top_face(image: np.ndarray, candidate: Candidate) -> Candidate:
    """Narrow a die's outline (which may include its sides and shading) to its top face."""
    from vision.faces import top_face_quad

    if OUTSIDE in candidate.flags or CUT in candidate.flags:
        return candidate
    quad = top_face_quad(image, candidate.corners)
    (cx, cy), (w, h), angle = cv2.minAreaRect(np.asarray(quad, np.float32))
    return replace(candidate, center=(round(float(cx), 2), round(float(cy), 2)),
                   size=round(float(np.sqrt(max(w * h, 1.0))), 2), angle=round(float(angle) % 90.0, 2),
                   corners=tuple((round(float(x), 2), round(float(y), 2)) for x, y in quad))


def find_tray(image_bgr: np.ndarray) -> np.ndarray | None:
    """The tray's inside as a polygon (N×2, photo pixels), or None when the photo shows no
    enclosed tray floor (a tray filling the frame, or a bare table)."""
    view = _WorkingCopy(_check_image(image_bgr))
    hull, _ = _floor_hull(view.foreground, view.lab, enclosed_only=True)
    if hull is None:
        return None
    hull = hull.reshape(-1, 2)
    hull = cv2.approxPolyDP(hull, 0.01 * cv2.arcLength(hull, True), True).reshape(-1, 2)
    return _in_photo(hull, view.scale)


def _floor_hull(foreground: np.ndarray, lab: np.ndarray,
                enclosed_only: bool = False) -> tuple[np.ndarray | None, bool]:
    """(convex hull of the tray floor (working pixels), whether the lightness's edges alone gave
    it): the largest background region that the frame does not touch, when it is large (a tray
    seen whole); else, when the lightness's edges (`lab`: the working copy's) close a rim seen
    only in parts, the solid region they enclose; else the largest background region (a tray
    filling the frame, a bare table); None when none of these is large."""
    labels, areas, enclosed, side = _enclosed_floor(foreground)
    if enclosed.any():
        return _hull_of(_largest(labels, areas, enclosed), side, foreground, squared=True), False
    # a rim barely off the room's colour is foreground only in parts, its edges all round;
    # a wood grain's edges enclose ragged regions, a tray's floor is solid
    # (the thin cut alone: the edges leave a rim no wide gaps, and the wide cut is the slow part).
    # The rim's long edges first: a grain's short strokes on the floor cut it into strips (hard
    # seed 11, 110088); then every edge: a grain's strokes on the table beside the rim may fill
    # the gaps between its edges' runs (close seed 17, 170039)
    edges = _lightness_edges(lab)
    for least_run in (LONG_OUTLINE, 0.0):
        walls = foreground | _edge_runs(edges, least_run)
        outlined = _enclosed_floor(walls, FLOOR_LEAKS[:1])
        if outlined[2].any():
            floor = _largest(*outlined[:3])
            hull = _hull_of(floor, outlined[3], walls, squared=True)
            if hull is not None and _outline_solidity(floor) >= OUTLINED_FLOOR_SOLIDITY:
                # the hull stops short of the dice in its corners (no floor around them)
                return _grown(hull, foreground.shape, OUTLINED_FLOOR_GROWTH), True
    h, w = foreground.shape
    if enclosed_only or areas.max() < 0.12 * h * w:
        return None, False
    return _hull_of(_largest(labels, areas, np.ones(len(areas), bool)), side, foreground), False


def _enclosed_floor(walls: np.ndarray, leaks: tuple = FLOOR_LEAKS):
    """The background between `walls` split into regions: (labels, areas, which are large and
    enclosed, the opening's side). Leaks of the floor through gaps in the rim (`leaks`: their
    widths, short sides) are cut before the split: thin ones first; wider ones only when the
    floor still reaches the frame."""
    h, w = walls.shape
    first = None
    for leak in leaks:
        side = max(3, int(leak * min(h, w)) | 1)
        background = cv2.morphologyEx((~walls).astype(np.uint8), cv2.MORPH_OPEN,
                                      cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (side, side)))
        # labels, their areas, and which touch the frame: connectedComponentsWithStats takes
        # twenty times as long for statistics not needed here
        count, labels = cv2.connectedComponents(background, connectivity=4)
        areas = np.bincount(labels.ravel(), minlength=max(count, 2))[1:]
        touching = np.zeros(len(areas) + 1, bool)
        touching[np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]])] = True
        enclosed = ~touching[1:] & (areas > 0.12 * h * w)
        if enclosed.any():
            return labels, areas, enclosed, side
        first = first or (labels, areas, enclosed, side)
    return first   # no floor inside a rim: the thin cut's regions


def _largest(labels: np.ndarray, areas: np.ndarray, eligible: np.ndarray) -> np.ndarray:
    """The largest eligible region of `labels` (region i + 1 has area areas[i]), as a uint8 mask."""
    return (labels == int(np.argmax(np.where(eligible, areas, 0))) + 1).astype(np.uint8)


def _hull_of(floor: np.ndarray, side: int, walls: np.ndarray, squared: bool = False) -> np.ndarray | None:
    """Convex hull of a floor region found by an opening of `side`, grown back as far as the
    opening shaved it (its narrow strips between a die and the wall), so a die in a corner
    stays inside it; `squared`: a tray's floor seen whole, its corners put back where dice
    hide them (`_squared_off`)."""
    floor = cv2.dilate(floor, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (side, side))) & ~walls
    contours, _ = cv2.findContours(floor.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        return None
    outline = max(contours, key=cv2.contourArea)
    hull = cv2.convexHull(outline).astype(np.float32)
    return _squared_off(outline, hull, walls) if squared else hull


def _squared_off(outline: np.ndarray, hull: np.ndarray, walls: np.ndarray) -> np.ndarray:
    """The floor's hull with the corners put back that dice heaped there cut off. A tray's floor is
    a quadrilateral (a rectangle, seen at a slant or not), but the opening that finds it leaves
    out the narrow floor between dice in a corner, so the hull of the floor (`outline`: its outer
    contour, every pixel) cuts the corner off and the dice in it fall outside: found only by the
    second count, near the floor's edge, they are flagged for a check however plain their faces.
    When the hull's four longest straight stretches make up most of its perimeter
    (SQUARE_SIDES_SHARE) and the floor's outline runs along each (SIDE_SUPPORT: not an edge of
    the hull bridging dice that line a wall), the quadrilateral their lines meet in gives each
    corner beyond the hull that shows some floor (CORNER_FLOOR of its pixels off the `walls`:
    the floor between the dice there; a corner the rim's shading rounds off is all rim) back to
    the hull. Else (a round or many-sided tray, no floor in a corner) the hull itself."""
    runs = _straight_runs(hull.reshape(-1, 2).astype(np.float64))
    if len(runs) < 4:
        return hull
    lengths = np.float64([length for _, _, length in runs])
    sides = [runs[k] for k in np.sort(np.argsort(lengths)[-4:])]   # in the hull's order round the floor
    if (sum(length for _, _, length in sides) < SQUARE_SIDES_SHARE * lengths.sum()
            or any(_outline_along(outline, start, end) < SIDE_SUPPORT for start, end, _ in sides)):
        return hull
    corners = []
    for (start, end, _), (following, onward_end, _) in zip(sides, sides[1:] + sides[:1]):
        along, onward = end - start, onward_end - following
        turn = _cross(along, onward)
        if abs(turn) < np.sin(np.radians(SQUARE_TURN)) * np.hypot(*along) * np.hypot(*onward):
            return hull
        # where the two sides' lines meet
        corners.append(start + _cross(following - start, onward) / turn * along)
    quad = np.float32(corners).reshape(-1, 1, 2)
    hull_area = cv2.contourArea(hull)
    if not cv2.isContourConvex(quad) or not hull_area <= cv2.contourArea(quad) <= SQUARED_GROWTH * hull_area:
        return hull
    inside_hull, inside_quad = np.zeros(walls.shape, np.uint8), np.zeros(walls.shape, np.uint8)
    cv2.fillPoly(inside_hull, [np.int32(np.round(hull.reshape(-1, 2)))], 1)
    cv2.fillPoly(inside_quad, [np.int32(np.round(quad.reshape(-1, 2)))], 1)
    count, corner = cv2.connectedComponents(inside_quad & (1 - inside_hull), connectivity=4)
    floor_seen = np.bincount(corner.ravel(), weights=(~walls).ravel(), minlength=count)
    added = np.bincount(corner.ravel(), minlength=count)
    kept = floor_seen >= CORNER_FLOOR * np.maximum(added, 1)
    kept[0] = False
    if not kept.any():
        return hull
    contours, _ = cv2.findContours(inside_hull | kept[corner].astype(np.uint8), cv2.RETR_EXTERNAL,
                                   cv2.CHAIN_APPROX_SIMPLE)
    return max(contours, key=cv2.contourArea).astype(np.float32)


def _straight_runs(points: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """A convex outline's (N×2, in order) straight stretches: runs of its edges heading within
    RUN_TURN degrees of the run's first edge, as (start, end, length along the outline), from
    the sharpest corner on. A side a few pixels ragged is many nearly parallel edges; a rounded
    corner, many short edges turning fast."""
    edges = np.roll(points, -1, axis=0) - points
    headings = np.degrees(np.arctan2(edges[:, 1], edges[:, 0]))
    turns = np.abs((headings - np.roll(headings, 1) + 180.0) % 360.0 - 180.0)
    runs: list[list[int]] = []
    for i in np.roll(np.arange(len(points)), -int(np.argmax(turns))):
        if runs and abs((headings[i] - headings[runs[-1][0]] + 180.0) % 360.0 - 180.0) <= RUN_TURN:
            runs[-1].append(int(i))
        else:
            runs.append([int(i)])
    lengths = np.hypot(edges[:, 0], edges[:, 1])
    return [(points[run[0]], points[run[-1]] + edges[run[-1]], float(lengths[run].sum())) for run in runs]


def _outline_along(outline: np.ndarray, start: np.ndarray, end: np.ndarray) -> float:
    """The share of the segment start-end that the outline (N×1×2, every pixel) runs along,
    within SIDE_REACH pixels of it."""
    points = outline.reshape(-1, 2).astype(np.float64) - start
    length = float(np.hypot(*(end - start)))
    along = (end - start) / length
    reach = np.abs(points @ np.float64([-along[1], along[0]]))
    where = points @ along
    near = where[(reach <= SIDE_REACH) & (where >= 0.0) & (where < length)]
    return len(np.unique(near.astype(int))) / length


def _cross(u: np.ndarray, v: np.ndarray) -> float:
    """The 2-D cross product u × v."""
    return float(u[0] * v[1] - u[1] * v[0])


def _grown(hull: np.ndarray, shape: tuple, reach: float) -> np.ndarray:
    """A convex hull grown by `reach` (short sides of `shape`) all round."""
    side = max(3, int(reach * min(shape)) | 1)
    mask = np.zeros(shape, np.uint8)
    cv2.fillPoly(mask, [np.int32(np.round(hull.reshape(-1, 2)))], 1)
    mask = cv2.dilate(mask, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (side, side)))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    return cv2.convexHull(max(contours, key=cv2.contourArea)).astype(np.float32)


def _outline_solidity(mask: np.ndarray) -> float:
    """How much of its convex hull a region's outer outline fills (the dice on a floor, its
    holes, count as filled)."""
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    outline = max(contours, key=cv2.contourArea)
    return float(cv2.contourArea(outline)) / max(float(cv2.contourArea(cv2.convexHull(outline))), 1.0)


def _lightness_edges(lab: np.ndarray) -> np.ndarray:
    """Edge pixels of the lightness (uint8, 255 on an edge): a tray's rim shows all round here
    even where its colour is too near the room's to be foreground."""
    return cv2.Canny(cv2.GaussianBlur(lab[..., 0], (0, 0), 1.5), 10, 25)


def _edge_runs(edges: np.ndarray, least_run: float) -> np.ndarray:
    """The edge pixels (`_lightness_edges`) in runs `least_run` long or more (short sides); every
    one with 0."""
    if not least_run:
        return edges > 0
    _, labels, stats, _ = cv2.connectedComponentsWithStats(edges, connectivity=8)
    long = np.maximum(stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT]) >= least_run * min(edges.shape)
    long[0] = False
    return long[labels]


class _WorkingCopy:
    """The photo shrunk for speed, in Lab, with its foreground and the die-size bounds.

    `denoised` is the Lab copy with a noisy sensor's grain smoothed away (the same as `lab` for
    a clean photo): the steps that compare plain areas (the foreground against the board, the
    outline of a die found by its pips) use it. The tests for a die's marks keep `lab`, since
    smoothing fades faint pips too, and a die dropped as unmarked is a die miscounted."""

    def __init__(self, image: np.ndarray, long_side: float = WORK_LONG_SIDE):
        self.scale = min(1.0, long_side / max(image.shape[:2]))
        self.small = image if self.scale == 1.0 else _shrink(image, self.scale)
        self.lab = cv2.cvtColor(self.small, cv2.COLOR_BGR2LAB)
        self.denoised = _denoised(self.small, self.lab)
        self.grainy = self.denoised is not self.lab
        self.foreground = _foreground(self.denoised)
        short = min(self.small.shape[:2])
        self.min_side = max(6.0, MIN_DIE_FRACTION * short)
        self.max_side = MAX_DIE_FRACTION * short
        self.floor_by_edges = False   # the tray's floor found by the lightness's edges alone (`_floor_hull`)

    @cached_property
    def hsv(self) -> np.ndarray:
        """The working copy in HSV, for the dice's colour names (only the copy the dice are
        found on needs it)."""
        return cv2.cvtColor(self.small, cv2.COLOR_BGR2HSV)


def _denoised(image: np.ndarray, lab: np.ndarray) -> np.ndarray:
    """`lab` (the Lab of BGR `image`) with strong sensor noise smoothed by an edge-keeping
    (bilateral) filter, or `lab` itself when the photo is clean. High-ISO grain (a dim bar, a
    small sensor) otherwise raises the foreground's noise-scaled thresholds over the dice and
    buries a pale die's outline on a pale board (byler-d6 train photos with noise of deviation
    3 per colour channel added: 88 % of dice read right, 41 % of photos `check`; smoothed, 96 %
    and 20 %, as clean)."""
    noise = sensor_noise(image)
    if noise <= NOISY:
        return lab
    return cv2.cvtColor(cv2.bilateralFilter(image, 5, DENOISE_COLOUR * noise, 2.0), cv2.COLOR_BGR2LAB)


def _shrink(image: np.ndarray, scale: float) -> np.ndarray:
    """The photo scaled down by `scale`: halved by pixel averaging while that stays above the
    target (OpenCV's fast path), then area-resampled the rest of the way."""
    while scale <= 0.5:
        image = cv2.resize(image, (image.shape[1] // 2, image.shape[0] // 2), interpolation=cv2.INTER_AREA)
        scale *= 2.0
    if scale == 1.0:
        return image
    return cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)


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

def _smooth_background(lab: np.ndarray, keep: np.ndarray | None, coarse: np.ndarray,
                       median: np.ndarray) -> np.ndarray:
    """A smooth picture of the empty tray: a coarse median first (`median`, of `coarse`, the
    photo shrunk eightfold), then a masked average that ignores the pixels already known to be
    dice."""
    h, w = lab.shape[:2]
    if keep is None:
        model = median.astype(np.float32)
    else:
        sh, sw = coarse.shape[:2]
        weight = cv2.resize(keep.astype(np.float32), (sw, sh), interpolation=cv2.INTER_AREA)
        weight = (weight > 0.98).astype(np.float32)
        sigma = 3.0
        num = cv2.GaussianBlur(coarse.astype(np.float32) * weight[..., None], (0, 0), sigma)
        den = cv2.GaussianBlur(weight, (0, 0), sigma)[..., None]
        model = np.where(den > 0.05, num / np.maximum(den, 1e-6), median.astype(np.float32))
    return cv2.resize(model, (w, h), interpolation=cv2.INTER_LINEAR)


def _foreground(lab: np.ndarray) -> np.ndarray:
    """Pixels that are not the tray: off the background's colour, or much darker (a shadow only
    darkens a little), or brighter (pale dice on a pale board). Holes up to a die's size are
    filled (pips, a pale face inside its darker outline)."""
    labf = lab.astype(np.float32)
    h, w = lab.shape[:2]
    coarse = cv2.resize(lab, (max(4, w // 8), max(4, h // 8)), interpolation=cv2.INTER_AREA)
    median = cv2.medianBlur(coarse, 9)
    keep = None
    for rough in (True, False):
        diff = labf - _smooth_background(lab, keep, coarse, median)
        lum = diff[..., 0]
        chroma = cv2.magnitude(np.ascontiguousarray(diff[..., 1]), np.ascontiguousarray(diff[..., 2]))
        # noise levels from every 4th pixel each way: plenty for a median, 16 times less work
        lum_noise = float(_median(np.abs(lum[::4, ::4]))) * 1.4826 + 1.0
        chroma_noise = float(_median(chroma[::4, ::4])) * 1.4826 + 1.0
        if rough:
            # anything a little off the background stays out of the second background fit
            off = (np.abs(lum) > max(6.0, 3 * lum_noise)) | (chroma > max(6.0, 3 * chroma_noise))
            keep = ~cv2.dilate(off.astype(np.uint8), np.ones((7, 7), np.uint8)).astype(bool)
    mask = ((lum > max(10.0, 4 * lum_noise)) | (lum < -max(45.0, 8 * lum_noise))
            | (chroma > max(12.0, 5 * chroma_noise)))
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
    holes = _holes(mask)
    if not holes.any():
        return (mask > 0).astype(np.uint8)   # most blobs (their pips are foreground already)
    # labels and a bincount of them: a third of connectedComponentsWithStats' time on a full photo
    count, labels = cv2.connectedComponents(holes.astype(np.uint8), connectivity=4)
    small = np.bincount(labels.ravel(), minlength=count) <= max_area
    small[0] = False
    return ((mask > 0) | small[labels]).astype(np.uint8)


# --- blobs, die size and splitting ----------------------------------------------------------------

def _blobs(mask: np.ndarray, min_side: float, max_side: float) -> list[_Blob]:
    """The mask's connected regions that are big enough to hold a die."""
    labels, stats = _components(mask.astype(np.uint8), 8)
    blobs = []
    for i, (x, y, w, h, area) in enumerate(stats, start=1):
        if area < 0.5 * min_side * min_side or max(w, h) < min_side:
            continue
        blobs.append(_Blob(labels[y:y + h, x:x + w] == i, int(x), int(y)))
    return blobs


def _components(mask: np.ndarray, connectivity: int) -> tuple[np.ndarray, np.ndarray]:
    """Connected regions of a sparse uint8 mask: labels (0 = background) and, for labels
    1, 2..., rows of (x, y, width, height, area), as connectedComponentsWithStats gives them in
    a fifth of its time (OpenCV's statistics cost twenty times the labelling)."""
    _, labels = cv2.connectedComponents(mask, connectivity=connectivity)
    # the labelled pixels row by row: findNonZero scans a sparse mask far quicker than numpy
    where = cv2.findNonZero(mask)
    if where is None:
        return labels, np.zeros((0, 5), np.int64)
    xs, ys = where.reshape(-1, 2).astype(np.int64).T
    label = labels[ys, xs]
    order = np.argsort(label, kind="stable")   # by label, each label's pixels still row by row
    xs, ys, label = xs[order], ys[order], label[order]
    starts = np.flatnonzero(np.r_[True, label[1:] != label[:-1]])
    ends = np.r_[starts[1:], len(label)]
    left, right = np.minimum.reduceat(xs, starts), np.maximum.reduceat(xs, starts)
    top, bottom = ys[starts], ys[ends - 1]
    return labels, np.column_stack([left, top, right - left + 1, bottom - top + 1, ends - starts])


def _squareness(mask: np.ndarray) -> tuple[float, float, tuple]:
    """(fill of the min-area rectangle, long/short side ratio, the rectangle)."""
    # the outlines' points have the pixels' convex hull: a big blob (a tray's rim) costs
    # milliseconds as every pixel, a tenth of one as its outline
    contours, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    rect = cv2.minAreaRect(np.concatenate(contours))
    (w, h) = rect[1]
    if min(w, h) < 1:
        return 0.0, 99.0, rect
    return float(mask.sum()) / (w * h), max(w, h) / min(w, h), rect


def _padded(mask: np.ndarray) -> np.ndarray:
    """A uint8 mask with a one-pixel border of zeros (np.pad's result, in a tenth of its time)."""
    return cv2.copyMakeBorder(mask, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)


def _thickness(mask: np.ndarray) -> float:
    """Diameter of the largest disc that fits inside the blob."""
    return 2.0 * float(cv2.distanceTransform(_padded(mask.astype(np.uint8)), cv2.DIST_L2, 3).max())


def _expected_side(blobs: list[_Blob], calibration, scale: float, min_side: float, lab: np.ndarray) -> float:
    """Side of one die's blob in working pixels: from the calibration where the photo's own dice
    are within CALIBRATED_SIZE_FIT of it, else from the lone dice seen (square blobs with
    marks: a round lamp's glow seen through a clear tray is none, nor
    is a die merged with a glow around it, nor a lost die's pips: `_without_pips`, nor lamp
    light on a glossy board: `_lamp_light`). When few lone dice are seen, each is checked for
    touching dice (`_die_side_in`): players reveal their dice in clusters, and a square
    cluster (two by two, three in an L) taken for the usual die hides every die in it. With no
    lone die (every die touching another or showing its sides: a phone held close over a few dice) a
    guess, 2.5 times the smallest die accepted, stands unless the smallest blob with marks has dice
    more than twice that and the detector, told of dice that small, sees no more than one
    there, or sees a die of the blob's dice surer than those (`_surer`), or, neither
    surer, things too small to cover the blob as dice would (CLUSTER_COVER: pips; a
    tray's dice all in one cluster, it sees them all and they cover it): a guess that small
    cut close dice into their pips (untuned close seed 31's 310009: two clusters of three
    dice, cut into 27 pieces). Where the smallest blob's dice are within twice the guess and
    it holds touching dice, the dice are as big as the detector sizes them there, if bigger
    than the guess (untuned crowded seed 64's 640026: the guess was 0.7 of the dice, and a
    black 4 found by one pip was boxed that small and read as an ace). With no lone die, the
    detector run over the whole photo checks the side found (`_detector_sized`)."""
    if calibration is not None and getattr(calibration, "die_size", None):
        # the calibration keeps the top faces' side (`calibration.learn_dice`), a blob takes in the
        # sides too; and it stands only where the photo's own dice bear it out (another set, or
        # the camera moved: dice half again as big, cut to the taught size, were read by halves)
        taught = float(calibration.die_size) / TOP_PER_USUAL * scale
        own = _expected_side(blobs, None, scale, min_side, lab)
        return taught if 1 / CALIBRATED_SIZE_FIT <= own / taught <= CALIBRATED_SIZE_FIT else own
    lone = []
    for blob in blobs:
        fill, aspect, _ = _squareness(blob.mask)
        # (a speck smaller than the smallest die accepted is no die, however square)
        if (fill > 0.72 and aspect < 1.3 and blob.area >= min_side * min_side
                and not _glow(blob, lab[..., 0], SIZE_GLOW_SHARE)):
            lone.append(blob)
    lone = _without_pips(lone, lab)
    # (the blobs with marks are measured only when some lone blob shows none, as few photos have)
    marked = cache(lambda: [blob.area for blob in blobs
                            if blob.area >= min_side * min_side and not _plain(blob, lab[..., 0])])
    lone = [blob for blob in lone if not _lamp_light(blob, marked, lab)]
    beside_pips = _dice_beside_pips(lone, blobs, lab)
    if beside_pips is not None:
        return beside_pips
    if not lone:
        return _detector_sized(_side_without_lone_dice(blobs, min_side, lab), lab)
    if len(lone) <= FEW_LONE_DICE:
        sides = [_die_side_in(blob, lab) for blob in lone]
        biggest = max(blob.area for blob in lone)
        clustered = _clustered_die_sides([blob for blob in blobs if min_side * min_side <= blob.area <= biggest
                                          and not any(blob is other for other in lone)], lab)
        dice = [i for i in range(len(lone))
                if not _pip_sized(lone[i], sides[i], sides[:i] + sides[i + 1:] + clustered, lab)]
        return float(_median(_merged_sides_measured([lone[i] for i in dice], [sides[i] for i in dice],
                                                    clustered, lab)))
    return float(_median([np.sqrt(blob.area) for blob in lone]))


def _side_without_lone_dice(blobs: list[_Blob], min_side: float, lab: np.ndarray) -> float:
    """`_expected_side` where no lone die is seen (every die touching another or showing its
    sides): the guess, or the dice of the smallest blob with marks, as told there."""
    guess = min_side * 2.5
    # (a strip, a streak of wood grain or a tray's rim, holds no die to size: untuned close
    # seed 31's 310007 and 310087, where one was the smallest blob, and the dice were cut
    # into their pips; nor does a blob without marks or a lamp's glow: untuned crowded seed
    # 71's 710020, nine dice in one cluster sized by a piece of rim without marks, three times
    # the dice, and cut into three pieces)
    blobs = [blob for blob in blobs
             if blob.area >= guess * guess and _squareness(blob.mask)[1] <= STRIP_ASPECT
             and not _plain(blob, lab[..., 0]) and not _glow(blob, lab[..., 0], SIZE_GLOW_SHARE)]
    if not blobs:
        return guess
    smallest = min(blobs, key=lambda blob: blob.area)
    side = _die_side_in(smallest, lab)
    if side <= 2 * guess:
        if side < np.sqrt(smallest.area):   # touching dice
            found = _detections_in(smallest, 0.5 * float(np.sqrt(smallest.area)), lab)
            return max(guess, float(_median(found.sides)) / TOP_PER_USUAL)
        return guess
    found = _detections_in(smallest, guess, lab)
    if len(found.centres) <= 1:
        return side
    # the detector told of dice the guess's size and of dice the side found: the size it sees
    # surer stands (untuned close seed 7's 70047 and 70067, every die touching another on a
    # dark or mottled board: the guess 0.42 of the dice, its pieces seen at 0.54-0.61, the dice
    # at 0.68-0.93; crowded seed 71's 710044, six dice in a lamp's glow, one blob with marks
    # 5.7 times their side: the dice seen at 0.71-0.89, the blob at 0.55); else pieces that do
    # not cover it as dice would are pips
    at_side = _surest_at(smallest, side, lab)
    if _surer(at_side, found.scores):
        return side
    if _surer(found.scores, at_side):
        return guess
    covered = len(found.centres) * float(_median(found.sides)) ** 2
    return side if covered < CLUSTER_COVER * smallest.area else guess


def _detector_sized(side: float, lab: np.ndarray) -> float:
    """A usual die's side found with no lone die to measure, checked by the detector run once
    over the whole working copy, told of dice that size: where it is DETECTOR_SIZED_SCORE sure
    of DETECTOR_SIZED_DICE dice or more, and their median side lies more than DETECTOR_SIZE_FIT
    times off the side found, the detector's stands (its side head reads up to twice off the
    side it is told). Pale dice on a pale board, every one touching another, show the colour
    steps pieces of them: crowded seed 72's 720079 and 720108 were sized 0.62 and 0.63 of
    their dice, and every cluster cut into pieces; the detector's median was 1.04 of both.
    Surveyed (`/work/notes/sizesurvey.py`, the photos with no lone die among crowded seeds 71
    and 72 and close, hard, far and plain seed 7): on crowded trays the detector's median lay
    0.85-1.04 of the truth, the side found 0.62-1.12. Real photos' dice mostly score under
    0.8: of the byler-d6 train photos as taken only 112902 has no lone die, and the detector is
    that sure of one die there."""
    found = detect_dice(lab, side, min_score=DETECTOR_SIZED_SCORE)
    if len(found.centres) < DETECTOR_SIZED_DICE:
        return side
    seen = float(_median(found.sides)) / TOP_PER_USUAL
    return seen if not 1.0 / DETECTOR_SIZE_FIT <= seen / side <= DETECTOR_SIZE_FIT else side


def _pip_sized(blob: _Blob, side: float, others: list[float], lab: np.ndarray) -> bool:
    """True when a lone "die" is under PIP_SIZED_SHARE of every other die measured (lone or
    touching in a cluster), two or more, or of the one other where the detector, told of dice
    its own size, sees none in it: dice of one set are one size, so it is a pip of a die the
    foreground lost, or a speck. Untuned crowded seed 64's 640041: from below, a black ace on a
    black board showed only its gold pip, the one lone blob beside a lone die and three
    clusters; it set the usual size, and every die was cut into its pips. Untuned close seed
    7's 70059: a plain speck 0.16 of the one other lone die, the two sides' median set the
    size, 0.58 of the dice."""
    if not others or side > PIP_SIZED_SHARE * min(others):
        return False
    return len(others) >= 2 or not len(_detections_in(blob, side, lab).centres)


def _merged_sides_measured(lone: list[_Blob], sides: list[float], clustered: list[float],
                           lab: np.ndarray) -> list[float]:
    """The sides of a few lone dice, where one is MERGED_LONE_SIDES times the smallest die seen
    or more, that one's by the dice the detector sees in it (their median), told dice are the
    smallest's size: dice lying in a lamp's glow seen from below (their marks hide the glow from
    `_glow`) make one square blob with it, several dice wide, and two lone dice have that for
    their median (crowded seed 13, 130017: 3.1 times the dice's side, four of nine dice missed).
    The smallest is the smallest lone die's side, or a smaller one among `clustered`, the dice
    of touching clusters no bigger than the lone dice (a photo whose one lone die is such a
    blob: crowded seed 7, 70077, 4.4 times). Only where such blobs are no more than the dice
    measured, and the detector sees a lone smallest as one die (or, a square cluster's dice,
    as many as it was measured to hold: untuned crowded seed 71's 710001, three touching dice
    the smallest, a die in a glow 2.1 times their side left unmeasured, the two sides' median
    1.6 times the dice): else the smallest may be a speck (byler-d6 111339) or a dark die's
    light pip seen from below (synthetic close, 20240008), and the dice would be measured by
    their pips."""
    smallest = min(sides + clustered)
    merged = [side >= MERGED_LONE_SIDES * smallest for side in sides]
    if 2 * sum(merged) > len(sides) + len(clustered):
        return sides
    if smallest in sides:
        blob = lone[sides.index(smallest)]
        if len(_detections_in(blob, smallest, lab).centres) != round(blob.area / smallest ** 2):
            return sides
    measured = []
    for blob, side, big in zip(lone, sides, merged):
        if big:
            found = _detections_in(blob, smallest, lab)
            if len(found.centres):
                side = float(np.median(found.sides)) / TOP_PER_USUAL
        measured.append(side)
    return measured


def _clustered_die_sides(blobs: list[_Blob], lab: np.ndarray) -> list[float]:
    """The side of the dice in each blob with marks that the detector sees as touching dice
    (`_die_side_in`)."""
    sides = []
    for blob in blobs:
        if not _plain(blob, lab[..., 0]):
            side = _die_side_in(blob, lab)
            if side < np.sqrt(blob.area):
                sides.append(side)
    return sides


def _lamp_light(blob: _Blob, marked_areas: Callable[[], list[float]], lab: np.ndarray) -> bool:
    """True when a lone square blob is a patch of lamp light on a glossy board, not a die: it
    shows no marks, it is lighter than the board around it, far bigger than most blobs that do
    show marks (PLAIN_LONE_AREA times their median area), and the detector, told of dice its
    size, sees none in it. (A blurred die shows no marks either, but the detector sees it; the
    screw heads on byler-d6's tray are plain, the detector sees no die in them, and they are
    darker than the tray: they stay, and being about a die's size they do little harm.)
    `marked_areas` gives the areas of the photo's blobs with marks when first asked."""
    if not _plain(blob, lab[..., 0]):
        return False
    areas = marked_areas()
    if not areas or blob.area <= PLAIN_LONE_AREA * _median(areas):
        return False
    h, w = blob.mask.shape
    inside = lab[blob.y0:blob.y0 + h, blob.x0:blob.x0 + w, 0][blob.mask > 0]
    side = float(np.sqrt(blob.area))
    return (float(_median(inside)) > float(_board_colour(blob, lab, side)[0])
            and not len(_detections_in(blob, side, lab).centres))


def _without_pips(lone: list[_Blob], lab: np.ndarray) -> list[_Blob]:
    """The lone dice less the pips of a die the foreground lost: from below, a dark die on a
    dark tray shows only its light pips, each a small square-ish blob. They are far smaller
    than at least two other lone dice (LONE_PIP_SHARE: dice of one set are one size, a pip a
    fifth of it; one big square may be a patch of lamp light around small dice), or than the
    one biggest where the detector, told dice are that big, sees one die in it (close seed
    62's 620077 and 620037: the others touch in clusters), and lie together, up to six, within
    one such die; taken for dice they set the usual size to a pip's and every die is cut into
    its pips."""
    sides = [float(np.sqrt(blob.area)) for blob in lone]
    if len(sides) < 3:
        return lone
    order = np.argsort(sides)
    usual = sides[order[-2]]
    if (sides[order[-2]] <= LONE_PIP_SHARE * sides[order[-1]]
            and len(_detections_in(lone[order[-1]], sides[order[-1]], lab).centres) == 1):
        usual = sides[order[-1]]
    small = [i for i, side in enumerate(sides) if side <= LONE_PIP_SHARE * usual]
    centres = {i: np.array([lone[i].x0, lone[i].y0]) + np.argwhere(lone[i].mask).mean(0)[::-1] for i in small}
    group = {i: i for i in small}
    for a in small:
        for b in small:
            if a < b and np.linalg.norm(centres[a] - centres[b]) <= LONE_PIP_GAP * max(sides[a], sides[b]):
                group = {i: group[a] if g == group[b] else g for i, g in group.items()}
    pips = set()
    for members in ([i for i in small if group[i] == g] for g in set(group.values())):
        span = max(float(np.linalg.norm(centres[a] - centres[b])) for a in members for b in members)
        if len(members) <= 6 and span + max(sides[i] for i in members) <= usual:
            pips.update(members)
    return [blob for i, blob in enumerate(lone) if i not in pips]


def _dice_beside_pips(lone: list[_Blob], blobs: list[_Blob], lab: np.ndarray) -> float | None:
    """The side of the dice in a cluster with marks (`_die_side_in`: the detector sees touching
    dice there, covering it) where every lone "die" is under PIP_SIZED_SHARE of it: those are
    pips of dice the foreground lost or specks, and the dice all touch one another (untuned close
    seed 47's 470054: three pips of a pale die the only lone blobs, two clusters of dice 5 times
    their size; taken for dice, every die was cut into its pips). None otherwise: only clusters
    that much bigger than the biggest lone blob are looked into."""
    if not lone:
        return None
    biggest = max(float(np.sqrt(blob.area)) for blob in lone)
    bigger = sorted((blob for blob in blobs if np.sqrt(blob.area) * PIP_SIZED_SHARE > biggest),
                    key=lambda blob: blob.area)
    return next((side for side in _clustered_die_sides(bigger, lab) if biggest < PIP_SIZED_SHARE * side), None)


def _die_side_in(blob: _Blob, lab: np.ndarray) -> float:
    """The side of the dice in a square blob: its own, unless the detector, looking for dice half
    its size, sees two or more dice there, each under CLUSTER_DIE_SIDE of it (one die seen at
    that scale fills the net's largest side), and as far apart as touching dice lie
    (CLUSTER_GAP: one die seen at twice its size shows the net pieces closer together), their
    faces covering CLUSTER_COVER of it (not pips taken for small dice): then the side of its
    area shared among them."""
    side = float(np.sqrt(blob.area))
    found = _detections_in(blob, 0.5 * side, lab)
    count = len(found.centres)
    if count < 2:
        return side
    die = float(np.median(found.sides))
    gaps = np.linalg.norm(found.centres[:, None] - found.centres[None, :], axis=2)[np.triu_indices(count, 1)]
    if die > CLUSTER_DIE_SIDE * side or gaps.min() < CLUSTER_GAP * die or count * die * die < CLUSTER_COVER * blob.area:
        return side
    # (unless it sees one die its size surer, `_surer`: close seed 7's 70005 and 72's 720017,
    # one big die that set the usual size to half its own, every die then cut into its pips;
    # surveyed with `/work/notes/clustersurvey.py`, every blob taken for touching dice here on
    # synthetic close and crowded sets of seeds 7, 71 and 72, 2,000 dice each, crowded 71 in
    # part, a few trays of hard 71 and far 72, and the byler-d6 train split: of 78 single dice
    # taken so, the detector saw 72 surer at their own side, 0.65-0.95 against pieces seen at
    # 0.50-0.83; of 453 true clusters, 11, mostly two dice side by side or stacked)
    return side if _surer(_surest_at(blob, side, lab), found.scores) else float(np.sqrt(blob.area / count))


def _surer(scores, than) -> bool:
    """Whether the detector sees dice of one size (`scores`, one or more) surer than it sees
    those of another (`than`): every one surer, and by SURER_MARGIN on average."""
    scores, than = np.atleast_1d(scores), np.atleast_1d(than)
    return float(scores.min()) > float(than.max()) and float(scores.mean()) > float(than.mean()) + SURER_MARGIN


def _surest_at(blob: _Blob, side: float, lab: np.ndarray) -> float:
    """The detector's surest die in the blob, told of dice `side` across (0 where it sees none):
    set against how surely it sees smaller dice there, it tells a die's pips and swirls from
    touching dice, and dice from a blob that a lamp's glow joins them in."""
    found = _detections_in(blob, side, lab)
    return float(found.scores.max()) if len(found.scores) else 0.0


def _split(blob: _Blob, expected: float, lab: np.ndarray):
    """Yield (region, flags) for the dice in one blob; region = (mask, x0, y0) in working pixels."""
    lum = lab[..., 0]
    area_ratio = blob.area / (expected * expected)
    fill, aspect, rect = _squareness(blob.mask)
    width = min(rect[1])
    if area_ratio < SPECK_AREA or width < 0.5 * expected or _thickness(blob.mask) < 0.3 * expected:
        return  # far too small or thin for a die: a speck, a line, the tray's rim
    if _token(blob, expected, lab):
        yield (blob.mask, blob.x0, blob.y0), (_TOKEN,)   # a coin, a token, a bottle cap: never reported
        return
    if _plain(blob, lum):
        if _faint_die(blob, expected, lab):
            # a die-sized square with faint marks or none: a dark die's dim pips seen from below, maybe
            yield (blob.mask, blob.x0, blob.y0), (UNREADABLE, _FAINT)
        elif _faint_dice(blob, expected, lab):
            # a few such dice touching, too dim to cut apart: never read as one
            yield (blob.mask, blob.x0, blob.y0), (UNREADABLE,)
        return  # a plain patch (glare, a shadow's edge, a button, a coin): every die face carries marks
    if _at_frame(blob, lab.shape) and _no_die_in(blob, expected, lab):
        return  # a piece of the rim or the table that the frame cuts: what is left of a die is die body
    # a straight even band: a tray's rim, a ruler, a pencil (dice in a row leave notches), or
    # dice touching corner to corner in a straight row: as wide as a die, with marks (pips)
    band = aspect > BAND_ASPECT and fill > 0.85
    if band and not ROW_WIDTH[0] <= width / expected <= ROW_WIDTH[1]:
        return
    solid = _solidity(blob.mask)
    convex = fill > 0.72 and solid > 0.9
    # one die: a convex, square outline of about the usual size, or a big die among small ones
    # (still square and convex: touching dice leave a long side or a notch, unless four make a square)
    big_square = fill > 0.85 and solid > 0.94 and area_ratio < BIG_DIE_AREA
    if aspect <= EDGE_ASPECT and ((convex and area_ratio <= SINGLE_MAX_AREA) or big_square):
        # a die standing on an edge shows two faces, none of them a square; seen close, one of
        # them may pass for a square top face, but the net then sees no flat die alone there
        # (untuned close seed 61, 610063: a purple die leaning with its 6 up, on-edge 0.44 and
        # stacked 0.61; of 60 flat dice this big with a square top at seed 2024 and on
        # byler-d6, none adds up to more than 0.97; the bench's calibrated set has one, a
        # flat 6 in 202400005, now flagged)
        leaning = LEAN_CHECK_AREA < area_ratio <= SINGLE_MAX_AREA and (
            _square_top(blob, lab) is None or _net_sees_no_flat_die(blob, expected, lab))
        if not leaning and aspect > LEAN_ASPECT and not _at_frame(blob, lab.shape):
            # longer across the way to the photo's centre than along it: no flat die's sides show
            # there (a shadow may, but then the top face is still a square and what lies beside
            # it carries no marks; the frame may cut a die to any shape)
            along, across, lens = _stretch(blob, lab.shape)
            leaning = along + 1 < (1 - ACROSS_STRETCH) * (across + 1) and not _marks_only_on_top(blob, lab, expected)
            # longer along that way than a lens shows a flat die's sides so near the centre (an
            # oblique camera shows them too), its top face not lying outward of them as a flat
            # die's seen at a slant: leaning when the detector sees a die on its edge there too
            if not leaning and along + 1 > (1 + lens + ALONG_STRETCH) * (across + 1) and not _seen_at_a_slant(blob, lab):
                on_edge = _blob_detections(blob, expected, lab).on_edge
                leaning = bool(len(on_edge)) and float(on_edge.max()) >= EDGE_SCORE
        # the net sure it stands on an edge (or fairly sure, its top face not square): its outline
        # may still be die-shaped, its second face narrow
        leaning = leaning or _detector_sees_on_edge(blob, expected, lab)
        # (unless the detector is sure it lies flat: a camera from aside shows a flat die's
        # sides in any direction, its top face foreshortened)
        if leaning and not _detector_sees_flat(blob, expected, lab):
            flags = (EDGE,)
        else:
            flags = (STACKED, _UNDER) if _die_underneath(blob, lab, expected) else ()
        yield (blob.mask, blob.x0, blob.y0), flags
        return
    if (convex and (area_ratio < TWO_DICE_AREA and aspect <= 2 * EDGE_ASPECT - 1 or area_ratio < LONE_DIE_AREA)
            and not _detector_sees_flat_dice(blob, expected, lab)):
        # too small for two dice: one die showing a long side, leaning (re-rolled) or lying flat
        # away from the camera's axis, its sides seen at a slant
        # (its sides are its top's colour: a patch of another, even the board's, may be a die under it)
        flat = ((_seen_at_a_slant(blob, lab) or _detector_sees_flat(blob, expected, lab)
                 or _stretched_as_sides_show(blob, expected, lab))
                and not _die_underneath(blob, lab, expected, shadows=False))
        flags = (_LONG,) if flat else (EDGE,)
        yield (blob.mask, blob.x0, blob.y0), flags
        return
    parts, good, seen = _split_cluster(blob, expected, lab)
    if convex and len(parts) > 1 and _one_die_by_its_own_size(blob, expected, lab):
        # cut into more parts than the detector sees dice (k-means' pieces, or its die and a
        # shadow), yet too small for two of its die's size: a die bigger than the usual one with
        # its sides in view (near the photo's edge), flat or leaning, flagged by its outline as
        # a lone die's long one is: the close look decides
        yield (blob.mask, blob.x0, blob.y0), (EDGE,)
        return
    apart = _net_sees_apart(blob, expected, lab) and len(parts) > 1
    # (a band's parts count where the detector sees them as a row of flat dice, one in each:
    # bench crowded trays 70089 and 710023, whose rows of touching dice were all flagged)
    band = band and not _detector_sees_row(blob, parts, expected, lab)
    board = None
    for part, fine, die in zip(parts, good, seen):
        plain = _plain(_Blob(part, blob.x0, blob.y0), lum)
        if plain or _smooth_inside(part, blob.x0, blob.y0, lum, expected):
            if die:
                # no marks, yet the detector sees a die there: the plain side of a die on its edge
                yield (part, blob.x0, blob.y0), (STACKED,)
            elif not plain:
                # no sharp marks inside either: a piece of shadow or wall (the board's colour, or
                # darker), or else maybe the plain side of a die on its edge, which
                # `_flag_crowded` still sees
                board = _board_colour(blob, lab, expected) if board is None else board
                if not _like_board(part, blob, lab, board):
                    yield (part, blob.x0, blob.y0), (_BLANK,)
            # else: a piece of shadow or wall cut off with the dice: no marks, no die
        else:
            # a part of a band the detector does not see as a row of dice is never counted: it
            # may be a marked ruler's or rim's, or the cut of a row into dice may be off by one
            if band:
                yield (part, blob.x0, blob.y0), (STACKED,)
            else:
                yield (part, blob.x0, blob.y0), ((_APART,) if apart else ()) if fine else (STACKED, _ROUGH)


def _no_die_in(blob: _Blob, expected: float, lab: np.ndarray) -> bool:
    """True when the detector sees no die's centre in the blob and little die body (under
    NOT_BODY on average): on byler-d6 photos framed as phone photos, pieces of the tray's
    dotted rim cut by the frame's edge average 0.02-0.05, half a die cut by it 0.67."""
    found = _blob_detections(blob, expected, lab)
    return not len(found.centres) and float(found.body[blob.mask].mean()) < NOT_BODY


def _one_die_by_its_own_size(blob: _Blob, expected: float, lab: np.ndarray) -> bool:
    """True when the detector sees exactly one die in a blob no bigger than LONE_DIE_AREA of a
    die's outline by that die's own side (its top face's, by TOP_PER_USUAL): dice in one photo
    vary in size, so a big die seen with its sides passes for a cluster by the usual die's.
    Byler-d6 train, 111304 and 113019: a big red 2 and a big yellow 6 in the tray's far corner,
    a side and its pips in view, 1.06 and 1.08 of their own outlines (2.21 and 1.84 of the
    usual), were cut in two and both pieces flagged; of the blobs where the detector sees one
    die that were cut so on the bench's hard and crowded sets (seed 2024), the smallest by its
    die's size was 1.58 (a die on its edge), two flat dice the detector saw as one 2.53."""
    found = _blob_detections(blob, expected, lab)
    return len(found.centres) == 1 and blob.area <= LONE_DIE_AREA * (float(found.sides[0]) / TOP_PER_USUAL) ** 2


def _detector_sees_flat(blob: _Blob, expected: float, lab: np.ndarray) -> bool:
    """True when the detector sees exactly one die in a lone blob and is sure it lies flat, on no
    other die: a camera looking at the tray from aside shows a flat die's sides beyond its top
    face in any direction, which the outline alone cannot tell from a die on its edge."""
    found = _blob_detections(blob, expected, lab)
    return len(found.centres) == 1 and _sure_flat(found, 0)


def _detector_sees_flat_dice(blob: _Blob, expected: float, lab: np.ndarray) -> bool:
    """True when the net sees two dice or more in a blob small for two, each lying flat on no
    other (on-edge and stacked scores under PAIR_FLAT_SCORE): touching small dice (or a small
    die beside a big one), cut as a cluster, not one die on its edge. Where the net sees one
    die on its edge as two, it doubts they lie flat: in such blobs on synthetic hard, crowded
    and close seeds 7 and 71, 4 dice on an edge scored 0.36-0.57 on-edge at the most, 8 pairs
    of flat dice 0.08-0.33 (6 under 0.2; under FLAT_EDGE_SCORE, as before, none)."""
    found = _blob_detections(blob, expected, lab)
    return len(found.centres) > 1 and all(_sure_flat(found, i, PAIR_FLAT_SCORE) for i in range(len(found.centres)))


def _detector_sees_row(blob: _Blob, parts: list[np.ndarray], expected: float, lab: np.ndarray) -> bool:
    """True when the net sees a band cut into `parts` as a row of dice: as many dice as parts,
    each lying flat on no other, sure of it, one centre in each part."""
    found = _blob_detections(blob, expected, lab)
    return (len(found.centres) == len(parts) and all(_sure_flat(found, i) for i in range(len(parts)))
            and all(int(_on_mask(part, found.centres).sum()) == 1 for part in parts))


def _detector_sees_on_edge(blob: _Blob, expected: float, lab: np.ndarray) -> bool:
    """True when the net sees a die on its edge in a die-shaped lone blob: sure of it (on-edge
    >= SURE_EDGE_SCORE), or fairly sure (>= EDGE_SCORE) with no square top face found. A die
    leaning steeply shows a narrow second face, and its outline passes for a flat die's. So
    does one whose on-edge and stacked scores add up to NOT_FLAT_SCORE, with no square top
    face: the net sees no flat die alone there, whichever it takes it for."""
    found = _blob_detections(blob, expected, lab)
    edge = float(found.on_edge.max()) if len(found.on_edge) else 0.0
    return edge >= SURE_EDGE_SCORE or ((edge >= EDGE_SCORE or _net_sees_no_flat_die(blob, expected, lab))
                                       and _square_top(blob, lab) is None)


def _net_sees_no_flat_die(blob: _Blob, expected: float, lab: np.ndarray) -> bool:
    """True when the net's on-edge and stacked scores in a lone blob add up to NOT_FLAT_SCORE:
    whichever it takes the die for, it sees no flat die alone there."""
    found = _blob_detections(blob, expected, lab)
    return bool(len(found.centres)) and float(found.on_edge.max() + found.stacked.max()) >= NOT_FLAT_SCORE


def _stretched_as_sides_show(blob: _Blob, expected: float, lab: np.ndarray) -> bool:
    """True when a long lone blob is a flat die whose sides the camera sees: longer along the
    line from the photo's centre than across it by no more than the widest lens shows a flat
    die's sides that far out, and the net sees one die there, not on its edge nor on another
    (on-edge < SIDES_EDGE_SCORE, stacked < SIDES_STACKED_SCORE). Its top face need not be
    found square: the sides and a shadow are often of its colour. A die on its edge stretches
    its outline in any direction, and the net sees it so (on-edge 0.156 at the least, on
    pairs edge 0-300)."""
    found = _blob_detections(blob, expected, lab)
    if (len(found.centres) != 1 or float(found.on_edge[0]) >= SIDES_EDGE_SCORE
            or float(found.stacked[0]) >= SIDES_STACKED_SCORE):
        return False
    along, across, lens = _stretch(blob, lab.shape)
    return along + 1 <= (1 + lens + ALONG_STRETCH) * (across + 1)


def _net_sees_apart(blob: _Blob, expected: float, lab: np.ndarray) -> bool:
    """True when the net is sure of every die it sees in a cluster: each lies flat, on no other
    die, and their centres lie as far apart as flat dice lie (by the smaller of each pair's sides).
    A part of it that holds one of these dice (`_split_cluster`'s good parts) is that die."""
    found = _blob_detections(blob, expected, lab)
    if len(found.centres) < 2 or not all(_sure_flat(found, i) for i in range(len(found.centres))):
        return False
    sides = found.sides.astype(np.float64)
    gaps = np.hypot(*(found.centres[:, None] - found.centres[None]).transpose(2, 0, 1)) + np.eye(len(sides)) * sides.max()
    return not (gaps < MIN_CENTRE_GAP * np.minimum(sides[:, None], sides[None])).any()


def _net_side(blob: _Blob, part: np.ndarray, expected: float, lab: np.ndarray) -> float | None:
    """The side (working pixels) of the one die whose centre the net sees in a part of the
    blob; None when it sees none there, or more."""
    found = _blob_detections(blob, expected, lab)
    inside = np.flatnonzero(_on_mask(part, found.centres))
    return float(found.sides[inside[0]]) if len(inside) == 1 else None


def _sure_flat(found: Detections, i: int, most: float = FLAT_EDGE_SCORE) -> bool:
    """True when the detector sees its die `i` lying flat, on no other die: on-edge and stacked
    scores both under `most` (FLAT_EDGE_SCORE: sure of it)."""
    return float(found.on_edge[i]) < most and float(found.stacked[i]) < most


def _square_top(blob: _Blob, lab: np.ndarray, most_aspect: float = TOP_ASPECT) -> np.ndarray | None:
    """The die's top face inside its blob, when that is a square (by `most_aspect`) covering much
    of the blob. None when it is not square."""
    top = _top_region(blob, lab)
    if top is None:
        return None
    (_, _), (rw, rh), _ = cv2.minAreaRect(cv2.findNonZero(top))
    if min(rw, rh) < 1 or max(rw, rh) / min(rw, rh) > most_aspect or rw * rh < TOP_SHARE * blob.area:
        return None
    return top.astype(bool)


def _marks_only_on_top(blob: _Blob, lab: np.ndarray, expected: float) -> bool:
    """True when the blob's top face is a square and what lies beside it carries no marks (a
    shadow, a plain strip of side). A die on its edge shows a second face beside the square
    one, with its pips: an orange die seen from below, a 4 and a 6 side by side, passed for a
    flat 4 (its outline square enough, its square face found) and was counted."""
    top = _square_top(blob, lab)
    if top is None:
        return False
    beside = _beside_top(blob.mask, top)
    return _markless(beside, blob, lab[..., 0], expected)


def _beside_top(mask: np.ndarray, top: np.ndarray) -> np.ndarray:
    """A blob's pixels (`mask`) clear of its top face (`top`, grown a pixel all round): its
    sides, its shadow, or a die under it."""
    return mask.astype(bool) & ~cv2.dilate(top.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)


def _seen_at_a_slant(blob: _Blob, lab: np.ndarray) -> bool:
    """True when a long blob is one flat die seen off the camera's axis: its top face (the face
    nearest the camera) is a square as wide as the blob, and the rest of the blob, its sides,
    lies on the side facing the photo's centre, the only sides a camera square above (or
    below) the tray sees. A die on an edge shows two oblong faces, side by side in any direction."""
    top = _top_region(blob, lab)
    if top is None:
        return False
    pts = cv2.findNonZero(top)
    (_, _), (tw, th), _ = cv2.minAreaRect(pts)
    _, _, (_, (bw, bh), _) = _squareness(blob.mask)
    if min(tw, th) < SLANT_TOP_WIDTH * min(bw, bh) or max(tw, th) > TOP_SQUARE * min(tw, th):
        return False
    xs, ys, outward, off_axis = _outward(blob, lab.shape)
    if off_axis == 0:
        return False
    top_xy = pts.reshape(-1, 2).mean(axis=0)
    shift = float(np.dot(top_xy - (xs.mean(), ys.mean()), outward))
    # the sides show in proportion to the distance from the centre: about that over the focal
    # length longer than wide (no more than a wide phone lens shows)
    along, across = _outward_extents(xs, ys, outward)
    longest = off_axis / (WIDEST_LENS * max(lab.shape[:2])) + SLANT_TOLERANCE
    return shift >= SLANT_TOP_SHIFT * np.sqrt(blob.area) and along <= (1 + longest) * (across + 1)


def _at_frame(blob: _Blob, shape) -> bool:
    """True when the blob reaches the photo's border (its die may be cut off there)."""
    h, w = blob.mask.shape
    return blob.x0 <= 1 or blob.y0 <= 1 or blob.x0 + w >= shape[1] - 1 or blob.y0 + h >= shape[0] - 1


def _outward(blob: _Blob, shape) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The blob's pixels (x, y in its box), the unit direction from the photo's centre to the
    blob's middle, and that distance (working pixels)."""
    ys, xs = np.nonzero(blob.mask)
    outward = np.array([xs.mean() + blob.x0 - shape[1] / 2, ys.mean() + blob.y0 - shape[0] / 2])
    distance = float(np.hypot(*outward))
    return xs, ys, outward / max(distance, 1e-6), distance


def _stretch(blob: _Blob, shape) -> tuple[float, float, float]:
    """The blob's extent along the line from the photo's centre and across it, and how much
    longer than wide the widest lens shows a flat die's sides that far out (a share)."""
    xs, ys, outward, off_axis = _outward(blob, shape)
    along, across = _outward_extents(xs, ys, outward)
    return along, across, off_axis / (WIDEST_LENS * max(shape[:2]))


def _outward_extents(xs: np.ndarray, ys: np.ndarray, outward: np.ndarray) -> tuple[float, float]:
    """The pixels' extent along the `outward` line from the photo's centre, and across it: a
    flat die's sides, seen at a slant, only lengthen the first."""
    return float(np.ptp(xs * outward[0] + ys * outward[1])), float(np.ptp(ys * outward[0] - xs * outward[1]))


def _die_underneath(blob: _Blob, lab: np.ndarray, expected: float, shadows: bool = True) -> bool:
    """True when a die-shaped blob shows a die under it (`_patch_underneath`): a patch of another
    colour beside its top face as big as UNDER_AREA (half that with `shadows` False). When the
    net sees a die on another there (`_net_sees_on_another`), a vivid patch beside a grey die
    counts from SEEN_UNDER_AREA (a black die on a red one, its edge a sliver; the net alone also
    sees coloured lone dice with their sides in view so, with as big a patch of another colour
    beside them), and a board-hued patch too unless it is plain shadow (no more vivid, darker by
    a shadow's step at most), from BARE_UNDER_AREA: a lower die of about the board's hue shows
    so (the net alone is not enough: flat lone dice on crowded trays reach 0.6-0.8)."""
    area = expected * expected
    least = (UNDER_AREA if shadows else UNDER_AREA / 2) * area
    patch = _patch_underneath(blob, lab, expected, SEEN_UNDER_AREA * area if shadows else least, shadows)
    if patch > least:
        return True
    if not shadows:
        return False
    if patch > SEEN_UNDER_AREA * area and _grey_top(blob, lab) and _net_sees_on_another(blob, expected, lab):
        return True
    bare = BARE_UNDER_AREA * area
    return _patch_underneath(blob, lab, expected, bare, False) > bare and _net_sees_on_another(blob, expected, lab)


def _grey_top(blob: _Blob, lab: np.ndarray) -> bool:
    """Whether the blob's top face (`_top_region`) is a plain grey die's: its middle's plastic
    (`_grey_plastic`, as `_find_top_region` measured it). Beside such a die neither its sides,
    its shadow nor its blur into the board show a vivid hue."""
    return _top_region(blob, lab) is not None and blob.memo["grey"]


def _net_sees_on_another(blob: _Blob, expected: float, lab: np.ndarray) -> bool:
    """Whether the detector sees a die resting on another in the blob (UNDER_STACKED_SCORE)."""
    stacked = _blob_detections(blob, expected, lab).stacked
    return bool(len(stacked)) and float(stacked.max()) >= UNDER_STACKED_SCORE


def _patch_underneath(blob: _Blob, lab: np.ndarray, expected: float, least: float, shadows: bool = True) -> int:
    """Working pixels of a die-shaped blob's patch, beside its top face, of plastic of
    another colour: a die resting almost squarely on another (the pair's outline is then about
    one die's) shows the lower die's edge around it. A die's own sides are its top's hue, only
    darker, and its shadow is the board's hue, so neither counts, nor a pixel that mixes the top
    and the board where the die's edge blurs (with `shadows` False, only a plain shadow is
    excused: darker than the board by a shadow's step at most, and no more vivid); a white or
    black die under a coloured one counts when it is grey and far brighter or darker than the
    board. 0 when no more than `least` pixels lie beside the top face at all
    (most dice): the caller's threshold, so the colours need not be measured."""
    top = _top_region(blob, lab)
    if top is None:
        return 0
    h, w = blob.mask.shape
    pad = max(2, int(0.15 * expected))
    y0, x0 = max(0, blob.y0 - pad), max(0, blob.x0 - pad)
    window = lab[y0:blob.y0 + h + pad, x0:blob.x0 + w + pad]
    mask = np.zeros(window.shape[:2], np.uint8)
    mask[blob.y0 - y0:blob.y0 - y0 + h, blob.x0 - x0:blob.x0 - x0 + w] = blob.mask
    top_mask = np.zeros_like(mask)
    top_mask[blob.y0 - y0:blob.y0 - y0 + h, blob.x0 - x0:blob.x0 - x0 + w] = top
    rest = _beside_top(mask > 0, top_mask)
    if int(rest.sum()) <= least:
        return 0   # too little beside the top face for another die, whatever its colour (most dice)
    crop = cv2.medianBlur(np.ascontiguousarray(window), 3).astype(np.float32)
    ring = cv2.dilate(mask, np.ones((2 * pad + 1,) * 2, np.uint8)) > mask
    a, b = crop[..., 1] - 128.0, crop[..., 2] - 128.0
    chroma = np.hypot(a, b)
    other = chroma > UNDER_CHROMA
    on_top = top_mask > 0
    # the medians several tests below ask for, each taken once
    top_ab_medians = (_median(a[on_top]), _median(b[on_top])) if on_top.any() else None
    board_lum = cache(lambda: float(_median(crop[..., 0][ring])))
    board_ab = cache(lambda: (float(_median(a[ring])), float(_median(b[ring]))))
    for place in (on_top, ring) if shadows else (on_top,):
        if not place.any():
            continue
        ref_a, ref_b = map(float, top_ab_medians) if place is on_top else board_ab()
        ref_chroma = float(np.hypot(ref_a, ref_b))
        if ref_chroma > UNDER_CHROMA:
            cosine = (a * ref_a + b * ref_b) / np.maximum(chroma * ref_chroma, 1e-6)
            other &= cosine < np.cos(np.radians(UNDER_HUE))
        elif place is ring and ref_chroma > TINT_CHROMA:
            # a faintly tinted board: its shadow keeps the tint, a little stronger, and is darker
            # (a die's plastic is far more vivid; a white die under, lit, is brighter)
            cosine = (a * ref_a + b * ref_b) / np.maximum(chroma * ref_chroma, 1e-6)
            shade = (cosine > np.cos(np.radians(UNDER_HUE))) & (chroma <= 2 * UNDER_CHROMA)
            other &= ~(shade & (crop[..., 0] < board_lum()))
        elif place is not ring:
            # a coloured die under a grey one, or (unless shadows excuse it) a white one under a black one
            other &= chroma > 2.5 * ref_chroma
            if not shadows:
                top_lum = float(_median(crop[..., 0][place]))
                other |= np.abs(crop[..., 0] - top_lum) > 2 * GREY_STEP
    top_ab = np.hypot(*(top_ab_medians or (_median(a[on_top]), _median(b[on_top]))))
    if top_ab > 2 * UNDER_CHROMA and ring.any():
        # a white or black die under a coloured one: grey, and far brighter or darker than the board
        board = board_lum()
        lum = crop[..., 0]
        grey = chroma < 0.3 * top_ab
        # a shadow darkens the board by two steps at most, a dark board by half its lightness
        # (and at least a step): a black die's plastic is darker still
        darker = max(board - 2 * GREY_STEP, min(board - GREY_STEP, SHADOW_SHARE * board))
        other |= grey if not shadows else grey & ((lum > board + GREY_STEP) | (lum < darker))
    if not shadows and ring.any():
        # still no shadow: the board's colour, darker but by no more than a shadow darkens, and
        # no more vivid (plastic of the board's hue lit from above is)
        lum = crop[..., 0]
        board_a, board_b = board_ab()
        board_chroma = float(np.hypot(board_a, board_b))
        shade = (lum < board_lum()) & (lum > board_lum() - 2 * GREY_STEP) & (chroma <= board_chroma + UNDER_CHROMA / 2)
        if board_chroma > UNDER_CHROMA:
            cosine = (a * board_a + b * board_b) / np.maximum(chroma * board_chroma, 1e-6)
            shade &= (cosine > np.cos(np.radians(UNDER_HUE))) & (chroma > 0.3 * board_chroma)
        other &= ~shade
    if shadows and ring.any() and on_top.any():
        # where the die's edge blurs into the board a pixel mixes the two colours: on a tinted
        # board, or under a coloured light, that mix has neither's hue (but it is no darker nor
        # brighter than both: a grey die under a die of the board's opposite hue is no mix).
        # Without `shadows` a lower die of about the board's hue is looked for: no excuse there
        lum = crop[..., 0]
        top_colour = (float(_median(lum[on_top])), *map(float, top_ab_medians))
        board_colour = (board_lum(), *board_ab())
        other &= _off_the_mix((lum, a, b), top_colour, board_colour) > MIX_TOLERANCE
    # no opening: the lower die's edge may show only a few working pixels wide
    return int((rest & other).sum())


def _off_the_mix(pixels: tuple[np.ndarray, ...], one: tuple[float, ...], two: tuple[float, ...]) -> np.ndarray:
    """Each pixel's Lab distance from the colours that mix `one` and `two` (the segment between
    them); `pixels` are the L, a and b planes."""
    step = np.subtract(two, one)
    offsets = [plane - start for plane, start in zip(pixels, one)]
    along = np.clip(sum(o * d for o, d in zip(offsets, step)) / max(float(step @ step), 1e-6), 0.0, 1.0)
    return np.sqrt(sum((o - along * d) ** 2 for o, d in zip(offsets, step)))


def _top_region(blob: _Blob, lab: np.ndarray) -> np.ndarray | None:
    """The even plastic around the blob's deepest point, pips filled in (uint8 mask, the blob's
    box): a lone die's top face."""
    if "top" not in blob.memo:
        blob.memo["top"] = _find_top_region(blob, lab)
    return blob.memo["top"]


def _find_top_region(blob: _Blob, lab: np.ndarray) -> np.ndarray | None:
    h, w = blob.mask.shape
    mask8 = blob.mask.astype(np.uint8)
    crop = lab[blob.y0:blob.y0 + h, blob.x0:blob.x0 + w].astype(np.float32)
    depth = cv2.distanceTransform(_padded(mask8), cv2.DIST_L2, 3)[1:-1, 1:-1]
    core = depth >= 0.6 * depth.max()
    body = np.array([_median(channel) for channel in crop[core].T])
    off = crop - body.astype(np.float32)
    dist = np.sqrt((off * off).sum(axis=2))   # np.linalg.norm's sum, without its overhead
    plastic = (dist < max(TOP_TOLERANCE, 2.0 * float(_median(dist[core])))) & blob.mask
    vivid = _vivid(crop, body)
    blob.memo["grey"] = _grey_plastic(body, vivid[core])
    if blob.memo["grey"]:
        # glare and shade keep a grey die grey; its plastic's texture (glare on black) would
        # otherwise reach out to a vivid die's edge under it
        plastic &= ~vivid
    plastic = plastic.astype(np.uint8)
    pip = max(3, int(0.25 * np.sqrt(blob.area)) | 1)   # close over the pips, which cut the face up
    plastic = cv2.morphologyEx(plastic, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (pip, pip)))
    plastic = cv2.morphologyEx(plastic, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)) & mask8
    n, labels = cv2.connectedComponents(plastic, connectivity=4)
    if n < 2:
        return None
    inside = labels[core & (plastic > 0)]
    if len(inside) == 0:
        return None
    region = (labels == np.bincount(inside).argmax()).astype(np.uint8)
    contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    hull = cv2.convexHull(max(contours, key=cv2.contourArea))
    top = np.zeros((h, w), np.uint8)
    cv2.fillPoly(top, [hull.reshape(-1, 2)], 1)
    return top & mask8


def _grey_plastic(body: np.ndarray, vivid_middle: np.ndarray) -> bool:
    """Whether a die's plastic of colour `body` (Lab) is a plain grey die's (white, black): no
    chroma over UNDER_CHROMA, and few of its middle's pixels vivid (`vivid_middle`, `_vivid`):
    VIVID_CORE_SHARE (a marbled die's swirl, coloured pips; a purple and green swirl's median is
    grey)."""
    return (float(np.hypot(body[1] - 128.0, body[2] - 128.0)) <= UNDER_CHROMA
            and float(vivid_middle.mean()) <= VIVID_CORE_SHARE)


def _vivid(lab: np.ndarray, body: np.ndarray) -> np.ndarray:
    """Pixels of `lab` far more vivid than plastic of colour `body` (Lab): over UNDER_CHROMA and
    2.5 times its chroma (a red die's edge beside a black die)."""
    ref_chroma = float(np.hypot(body[1] - 128.0, body[2] - 128.0))
    return np.hypot(lab[..., 1] - 128.0, lab[..., 2] - 128.0) > max(UNDER_CHROMA, 2.5 * ref_chroma)


def _good_parts(parts: list[np.ndarray], expected: float, least_fill: float = 0.72) -> list[bool]:
    """Which parts look like exactly one flat die: square, filling their rectangle (by
    `least_fill`), no smaller than a small die nor bigger than a big one, and about the size of
    the other parts."""
    areas = np.array([p.sum() for p in parts], np.float64)
    typical = float(_median(areas))
    good = []
    for part, area in zip(parts, areas):
        fill, aspect, _ = _squareness(part)
        ratio = area / (expected * expected)
        good.append(0.6 <= ratio <= BIG_DIE_AREA and aspect <= SPLIT_ASPECT
                    and 0.6 <= area / typical <= 1.6 and fill >= least_fill)
    return good


def _kmeans_parts(blob: _Blob, k: int, colour: np.ndarray) -> list[np.ndarray]:
    """The blob cut into k compact parts of one colour each: k-means over its pixels' positions
    and (smoothed, so pips do not count) colours."""
    xs, ys, pts = _pixel_features(blob, colour)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.5)
    cv2.setRNGSeed(7)
    step = max(1, len(pts) // (KMEANS_POINTS_PER_DIE * k))   # fit on a sample, then label every pixel
    _, _, centres = cv2.kmeans(pts[::step], k, None, criteria, KMEANS_ATTEMPTS, cv2.KMEANS_PP_CENTERS)
    return _labelled_parts(blob, xs, ys, _nearest_label(pts, centres), k)


def _pixel_features(blob: _Blob, colour: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The blob's pixels (x, y in its box) and their features for cutting it: position and colour."""
    ys, xs = np.nonzero(blob.mask)
    return xs, ys, np.column_stack([xs, ys, colour[ys, xs]]).astype(np.float32)


def _nearest_label(pts: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Index of each point's nearest centre (squared distance, without the points' own norm)."""
    return np.argmin((centres * centres).sum(1) - 2 * pts @ centres.T, axis=1)


def _labelled_parts(blob: _Blob, xs: np.ndarray, ys: np.ndarray, labels: np.ndarray, count: int) -> list[np.ndarray]:
    """One mask (the blob's box) per label 0..count-1."""
    parts = []
    for label in range(count):
        part = np.zeros(blob.mask.shape, bool)
        part[ys[labels == label], xs[labels == label]] = True
        parts.append(part)
    return parts


def _colour_features(blob: _Blob, lab: np.ndarray, expected: float) -> np.ndarray:
    """Per-pixel Lab colour of the blob, smoothed past its pips and scaled so that two dice of
    clearly different colours lie about half a die apart."""
    h, w = blob.mask.shape
    crop = cv2.medianBlur(np.ascontiguousarray(lab[blob.y0:blob.y0 + h, blob.x0:blob.x0 + w]), 5)
    return crop.astype(np.float32) * np.float32([0.3, 1.0, 1.0]) * np.float32(COLOUR_WEIGHT * expected / 30.0)


def _split_cluster(blob: _Blob, expected: float, lab: np.ndarray) -> tuple[list[np.ndarray], list[bool], list[bool]]:
    """Cut a blob of touching dice into one region per die: around the die centres the detector
    sees in it (`_cut_at_centres`), when that cut is clean (or, around one centre, down to the
    net's die body when that holds one die: `_one_die_in_body`); else k-means over the blob's pixels
    for the counts of dice its area allows, keeping the count whose parts all look like single
    dice (else the best try, with which parts look right), a part flagged unless it holds
    exactly one of the detector's centres (if it saw any); or, where some of those parts
    would be flagged, the net's own cut (`_cut_at_net_centres`) when more of its parts pass.
    Returns the parts, which look like one die each, and which hold a detected centre."""
    ratio = blob.area / (expected * expected)
    # the fewest dice that explain the blob: dice in one photo vary in size (a big die among
    # small ones), so the count is not simply the area over the usual die's
    first = max(2, int(np.floor(ratio / BIG_DIE_AREA)) + 1)
    best = ([blob.mask], [False])
    colour = _colour_features(blob, lab, expected)
    last = max(first, int(np.ceil(ratio)) + 1)
    centres = _detected_centres(blob, expected, lab)
    if len(centres) == 1:
        die = _one_die_in_body(blob, centres[0], expected, lab)
        if die is not None:
            return die
    if 1 <= len(centres) <= last:
        cut = _cut_at_centres(blob, centres, colour, expected, lab)
        if cut is not None:
            return cut
    if ratio - DIE_AND_SHADOW * len(centres) > KMEANS_MOST_AREA:
        return _cut_in_tiles(blob, centres, colour, expected, lab)
    for k in np.unique(np.round(np.linspace(first, last, min(MAX_SPLIT_TRIES, last - first + 1)))).astype(int):
        if k > blob.area / 4:
            break
        parts = _kmeans_parts(blob, k, colour)
        good = _good_parts(parts, expected)
        if all(good) or sum(good) / k > sum(best[1]) / len(best[1]):
            best = (parts, good)
        if all(good):
            break
    parts, good = best
    if len(centres):
        # where k-means and the detector disagree (a part holding no detected centre, or two: a
        # die leaning on the wall cut into its top and a side), the part is flagged; one holding
        # a centre is never dropped as markless (`_split`)
        middles, nearest, held = _centres_held(parts, centres)
    else:
        held = [0] * len(parts)
    passing = sum(fine and n == 1 for fine, n in zip(good, held))
    if len(centres) and passing < len(parts):
        # where k-means cut more dice than the net sees (a die seen with its sides cut in two,
        # maybe), the net's cut stands when the net is sure of every die; where some of k-means'
        # parts look wrong (one holds a neighbour's side) or hold two of the net's dice (five
        # flat dice in a cluster whose area allows four: one part a square pair), when every
        # part of the net's passes, or more of them than of k-means'
        net_cut = _cut_at_net_centres(blob, colour, expected, lab)
        if net_cut is not None:
            found = _blob_detections(blob, expected, lab)
            sure = all(_sure_flat(found, i) for i in range(len(found.centres)))
            if (len(parts) > len(centres) and sure) or all(net_cut[1]) or sum(net_cut[1]) > passing:
                return net_cut
    pairs = [(p, np.flatnonzero(nearest == p)) for p, n in enumerate(held) if n == 2]
    if pairs:
        parts, good = _pairs_cut(blob, parts, good, pairs, colour, expected, lab)
        middles, nearest, held = _centres_held(parts, centres)
    # a part holding no detected centre that the net sees no die body in either is no die,
    # however sharp its marks (a tray's rim cut in squares, the table's grain beyond it): dropped,
    # as `_cut_in_tiles` drops such tiles
    found = _blob_detections(blob, expected, lab)
    kept = [i for i, (part, n) in enumerate(zip(parts, held)) if n or (part.any() and float(found.body[part].mean()) >= NOT_BODY)]
    if len(centres):
        # a part far bigger than the one die the net sees in it holds more: a die the net missed
        # beside it (a dim blue die against a green one), whose own part it may drop as no die;
        # and a part whose die the net sees maybe on its edge (as `_cut_in_tiles` takes it) is
        # no sure flat die
        for centre_index, part_index in enumerate(nearest):
            if (parts[part_index].sum() > ONE_DIE_PART * float(found.sides[centre_index]) ** 2
                    or float(found.on_edge[centre_index]) >= CUT_EDGE_SCORE):
                good[part_index] = False
        # a die the net sees off the outline, between its parts (a white die on a pale board),
        # may have been taken into the part nearest it
        for centre in _dice_off_outline(blob, expected, lab):
            good[int(np.argmin(np.hypot(*(middles - centre).T)))] = False
    return ([parts[i] for i in kept], [good[i] and (held[i] == 1 or not len(centres)) for i in kept],
            [held[i] > 0 for i in kept])


def _centres_held(parts: list[np.ndarray], centres: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Each part's middle (x y), the part each centre counts for (the one whose middle is
    nearest: a die's pip may lie in its neighbour's part), and how many centres each holds so."""
    middles = np.array([np.argwhere(part).mean(axis=0)[::-1] if part.any() else (np.inf, np.inf) for part in parts])
    nearest = np.argmin(np.hypot(*(centres[:, None] - middles[None]).transpose(2, 0, 1)), axis=1)
    return middles, nearest, np.bincount(nearest, minlength=len(parts)).tolist()


def _pairs_cut(blob: _Blob, parts: list[np.ndarray], good: list[bool], pairs: list[tuple[int, np.ndarray]],
               colour: np.ndarray, expected: float, lab: np.ndarray) -> tuple[list, list]:
    """k-means' parts (and which look like one die) with each part that holds two of the
    detector's dice (`pairs`: part index, the two dice's indices), both sure flat, cut between
    them (`_nearest_parts`) when nothing is left beyond their reach and each half is as big as
    a small die: k-means sizes its parts by area alone, and two touching dice with their
    shadows fall into one part beside a piece of shadow or side (synthetic crowded trays, seed
    2024, 2,000 dice: four such parts, three of them cut so). Used where the net's own cut was
    not taken."""
    found = _blob_detections(blob, expected, lab)
    parts, good = list(parts), list(good)
    for p, two in pairs:
        if not all(_sure_flat(found, i) for i in two):
            continue
        halves, rest = _nearest_parts(_Blob(parts[p], blob.x0, blob.y0), found.centres[two], colour, expected)
        if rest or any(half.sum() < 0.5 * expected * expected for half in halves):
            continue
        first, second = _good_parts(halves, expected, DETECTED_FILL)
        parts[p], good[p] = halves[0], first
        parts.append(halves[1])
        good.append(second)
    return parts, good


def _cut_at_centres(blob: _Blob, centres: np.ndarray, colour: np.ndarray, expected: float,
                    lab: np.ndarray) -> tuple[list[np.ndarray], list[bool], list[bool]] | None:
    """The blob cut around the detected centres, as `_split_cluster` returns it, when every
    part looks like one flat die and all that is left beyond the dice is shadow; else None."""
    gaps = np.hypot(*(centres[:, None] - centres[None]).transpose(2, 0, 1)) + np.eye(len(centres)) * expected
    if gaps.min() < MIN_CENTRE_GAP * expected:
        return None  # closer than flat dice lie: a die on another, one die seen as two, small dice
    parts, rest = _nearest_parts(blob, centres, colour, expected)
    if any(part.sum() < 0.5 * expected * expected for part in parts):
        return None
    if len(parts) == 1:
        # one die with its shadow, or a die on its edge (too big for one flat die, so not taken
        # as one): only what lies beyond its reach is cut off, so there must be some, and the
        # die must be as square as a lone die
        good = [bool(rest) and _squareness(parts[0])[1] <= EDGE_ASPECT]
        if parts[0].sum() > LEAN_CHECK_AREA * expected * expected:
            # as big as a lone die that must show a square top face, else it leans (no
            # neighbour's edge excuses a longer one here)
            good[0] = good[0] and _square_top(_Blob(parts[0], blob.x0, blob.y0), lab) is not None
    else:
        good = _good_parts(parts, expected, DETECTED_FILL)
    # each a square top face too (a die on its edge shows two oblong faces)
    if not all(good) or any(_square_top(_Blob(part, blob.x0, blob.y0), lab, DETECTED_TOP_ASPECT) is None
                            for part in parts):
        return None
    if not _only_shadow(rest, blob, lab, expected):
        # markless pieces up to a die's size that the net sees no die body in are no die either
        # (a reflection in the wall, a shadow of another hue than the board's): dropped; the
        # rest must be shadow (a bigger piece is much else: the board, a tray's wall)
        body = _blob_detections(blob, expected, lab).body
        lum = lab[..., 0]
        rest = [piece for piece in rest if not (piece.sum() <= SINGLE_MAX_AREA * expected * expected
                                                 and _markless(piece, blob, lum, expected)
                                                 and float(body[piece].mean()) < NOT_BODY)]
        if not _only_shadow(rest, blob, lab, expected):
            return None
    # what lies beyond every die's reach is the board in shadow: `_split` drops it
    return parts + rest, good + [False] * len(rest), [True] * len(parts) + [False] * len(rest)


def _cut_at_net_centres(blob: _Blob, colour: np.ndarray, expected: float, lab: np.ndarray
                        ) -> tuple[list[np.ndarray], list[bool], list[bool]] | None:
    """The blob cut as the net sees it, as `_split_cluster` returns it, when no two of its dice
    lie closer than flat dice lie (by their own sides) and nothing as wide as half a die lies
    beyond them that may be a die the net missed: die body (NOT_BODY on average), or marks with
    a patch of die body MISSED_DIE_BODY of a die or more (a strip of a tray's wall joined to the
    dice has sharp edges and 0.05 of a die of body: byler-d6 test 112957; an orange ace the net
    missed in such a strip, 0.92: synthetic hard 20240022); else None. Each die is the die body
    nearest its centre within its top face's reach (half its diagonal, by the net's side): its
    sides and shadow beyond are cut off, as k-means' parts, sized by area alone, cannot (it
    cuts a die seen with its sides into two, or a small die and a big one's side into one). A
    part is flagged when the net is not sure its die lies flat on no other (on-edge or stacked
    FLAT_EDGE_SCORE or more), or it is not square, shows no square top face, or lies beside a
    patch that may be a die under it."""
    found = _blob_detections(blob, expected, lab)
    centres, sides = found.centres, found.sides.astype(np.float64)
    if not len(centres):
        return None
    gaps = np.hypot(*(centres[:, None] - centres[None]).transpose(2, 0, 1)) + np.eye(len(centres)) * sides.max()
    if (gaps < MIN_CENTRE_GAP * np.minimum(sides[:, None], sides[None])).any():
        return None
    body = (found.body >= 0.5) & blob.mask
    near, _ = _nearest_parts(blob, centres, colour, expected)
    ys, xs = np.mgrid[:blob.mask.shape[0], :blob.mask.shape[1]]
    parts = []
    for part, (cx, cy), side in zip(near, centres, sides):
        part = part & body & ((xs - cx) ** 2 + (ys - cy) ** 2 <= (SURE_REACH * side) ** 2)
        count, pieces = cv2.connectedComponents(part.astype(np.uint8), connectivity=8)
        label = pieces[min(int(round(cy)), part.shape[0] - 1), min(int(round(cx)), part.shape[1] - 1)]
        if not label or (pieces == label).sum() < 0.5 * side * side:
            return None
        parts.append(pieces == label)
    rest = blob.mask & ~np.logical_or.reduce(parts)
    lum = lab[..., 0]
    count, pieces = cv2.connectedComponents(rest.astype(np.uint8), connectivity=8)
    for piece in (pieces == label for label in range(1, count)):
        if _thickness(piece) >= SURE_REST * expected and (
                float(found.body[piece].mean()) >= NOT_BODY
                or not _markless(piece, blob, lum, expected)
                and _largest_patch(piece & body) >= MISSED_DIE_BODY * expected * expected):
            return None
    # a patch of another colour among what lies nearest a die (its sides, its shadow) may be a
    # die under it, which the net's low stacked score does not rule out
    good = [_sure_flat(found, i) and _squareness(part)[1] <= SPLIT_ASPECT
            and _square_top(_cropped(part, blob), lab, DETECTED_TOP_ASPECT) is not None
            and not _die_underneath(_cropped(around, blob), lab, expected)
            for i, (part, around) in enumerate(zip(parts, near))]
    return parts, good, [True] * len(parts)


def _cut_in_tiles(blob: _Blob, centres: np.ndarray, colour: np.ndarray, expected: float,
                  lab: np.ndarray) -> tuple[list[np.ndarray], list[bool], list[bool]]:
    """A blob too big for k-means, as `_split_cluster` returns it: far bigger than the dice the
    detector sees in it, it is a tray's wall or rim, its shadow or a lamp's glow, with dice
    against it, and k-means' cost grows with the area times the dice counts tried (seconds for
    one such blob). Each detected die gets the net's die body within its reach
    (`_nearest_parts`), good when it passes as one flat die by every test a lone die's blob
    passes, or as a clean part of a cluster the net sees lying flat (else flagged). What is
    left is cut into die-sized tiles, never good: a tile the net sees no die body in is dropped
    (the edge of a rim, the table's grain beyond it, however sharp its marks); one with die
    body and marks (a die the detector missed) is flagged; a plain one is dropped."""
    found = _blob_detections(blob, expected, lab)
    body = found.body >= 0.5
    parts, good, index = [], [], []
    rest = blob.mask.copy()
    if len(centres):
        near, _ = _nearest_parts(blob, centres, colour, expected)
        for i, (part, (cx, cy)) in enumerate(zip(near, centres)):
            if not part.any():
                continue  # a centre whose pixels all lie nearer another's
            count, pieces = cv2.connectedComponents((part & body).astype(np.uint8), connectivity=8)
            if count > 1:
                # the body piece holding the centre, else the biggest
                sizes = np.bincount(pieces.ravel(), minlength=count)
                label = pieces[min(int(round(cy)), part.shape[0] - 1), min(int(round(cx)), part.shape[1] - 1)]
                piece = pieces == (label if label else 1 + int(np.argmax(sizes[1:])))
                if piece.sum() >= 0.5 * expected * expected:
                    part = piece
            parts.append(part)
            index.append(i)
            rest &= ~part
        # each judged as a lone die's blob would be (leaning, on another, seen at a slant...);
        # one whose outline is too rough for that (the body's edge is soft) still passes as a
        # part k-means cuts would when the net sees it lie flat, on no other die
        for i, part, fine in zip(index, parts, _good_parts(parts, expected) if parts else []):
            die = _cropped(part, blob)
            good.append(_one_flat_die(die, expected, lab) or (
                fine and found.on_edge[i] < CUT_EDGE_SCORE and found.stacked[i] < STACKED_SCORE
                and not _die_underneath(die, lab, expected)))
    least = SPECK_AREA * expected * expected
    side = max(2, int(round(expected)))
    tiles = []
    for y in range(0, rest.shape[0], side):
        for x in range(0, rest.shape[1], side):
            window = rest[y:y + side, x:x + side]
            if window.sum() < least:
                continue
            count, pieces = cv2.connectedComponents(window.astype(np.uint8), connectivity=8)
            sizes = np.bincount(pieces.ravel(), minlength=count)
            for label in range(1, count):
                piece = pieces == label
                if sizes[label] >= least and float(found.body[y:y + side, x:x + side][piece].mean()) >= NOT_BODY:
                    tile = np.zeros_like(rest)
                    tile[y:y + side, x:x + side] = piece
                    tiles.append(tile)
    return parts + tiles, good + [False] * len(tiles), [True] * len(parts) + [False] * len(tiles)


def _cropped(part: np.ndarray, blob: _Blob) -> _Blob:
    """A part of a blob (a mask in the blob's box) as a blob of its own, cropped to its box."""
    ys, xs = np.nonzero(part.any(axis=1))[0], np.nonzero(part.any(axis=0))[0]
    return _Blob(part[ys[0]:ys[-1] + 1, xs[0]:xs[-1] + 1], blob.x0 + int(xs[0]), blob.y0 + int(ys[0]))


def _one_flat_die(blob: _Blob, expected: float, lab: np.ndarray) -> bool:
    """True when `_split`, taking the blob as one of its own, finds exactly one unflagged die in
    it: the blob itself."""
    found = list(_split(blob, expected, lab))
    return (len(found) == 1 and all(f in _CUT_NOTES for f in found[0][1])
            and found[0][0][0] is blob.mask)


def _one_die_in_body(blob: _Blob, centre: np.ndarray, expected: float,
                     lab: np.ndarray) -> tuple[list[np.ndarray], list[bool], list[bool]] | None:
    """A blob with one detected centre cut down to that die, as `_split_cluster` returns it, when
    the net's die body in it is no more than one die of the side it sees there (a die with its
    own sides seen at a slant): the rest is its shadow or its reflection in the wall, not a
    second die. None when the body holds more, or what is left shows marks (a die the net
    missed), when the die may lean or lie on another by the net's flags, or when it or its top
    face is not square. The die is flagged (not good) when a patch of another colour beside it,
    or of its own hue but lighter (`_lit_plastic_beside`), may be a die under it."""
    found = _blob_detections(blob, expected, lab)
    if not len(found.centres):
        return None
    i = int(np.argmin(np.hypot(*(found.centres - centre).T)))
    if found.on_edge[i] >= EDGE_SCORE or found.stacked[i] >= STACKED_SCORE:
        return None
    body = (found.body >= 0.5) & blob.mask
    if body.sum() > ONE_DIE_BODY * float(found.sides[i]) ** 2:
        return None
    pieces, stats = _components(body.astype(np.uint8), 8)
    if not len(stats):
        return None
    part = pieces == 1 + int(np.argmax(stats[:, 4]))
    cx, cy = np.round(centre).astype(int)
    die = _Blob(part, blob.x0, blob.y0)
    if not part[min(cy, part.shape[0] - 1), min(cx, part.shape[1] - 1)] or part.sum() < 0.5 * expected * expected:
        return None
    # as big as a lone die that must show a square top face (else it leans), it must here too
    top_aspect = TOP_ASPECT if part.sum() > LEAN_CHECK_AREA * expected * expected else DETECTED_TOP_ASPECT
    if _squareness(part)[1] > EDGE_ASPECT or _square_top(die, lab, top_aspect) is None:
        return None
    # what is left carries no marks: a die the net missed would show its pips
    lum = lab[..., 0]
    count, pieces = cv2.connectedComponents((blob.mask & ~part).astype(np.uint8), connectivity=8)
    sizes = np.bincount(pieces.ravel(), minlength=count)
    for piece in (pieces == label for label in range(1, count) if sizes[label] >= SPECK_AREA * expected * expected):
        if not _markless(piece, blob, lum, expected):
            return None
    return [part], [not (_die_underneath(die, lab, expected) or _lit_plastic_beside(die, lab, expected))], [True]


def _lit_plastic_beside(die: _Blob, lab: np.ndarray, expected: float) -> bool:
    """Whether the die's blob holds, beside its top face (UNDER_AREA or more), plastic of about
    its top's hue (LIT_UNDER_HUE), vivid (LIT_UNDER_CHROMA) and lighter than the top
    (LIT_UNDER_STEP): the face of another die under it, its marks out of view. A die's own
    sides turn from the light and its shadow lies on the board, both darker; a red die resting
    on an orange one, seen from below, showed the orange die's corner (its hue 20 degrees off,
    too near for `_patch_underneath`, and 18 lighter) and was counted alone (untuned hard seed
    63). Of 169 dice cut down to the net's die body (synthetic hard, crowded, close and plain,
    seeds 2024 and 63; far, seed 2024; byler-d6, all 247 photos), that pair's alone shows such
    plastic: a narrow cue, that never flags a flat die there."""
    top = _top_region(die, lab)
    if top is None:
        return False
    beside = _beside_top(die.mask, top)
    if beside.sum() < UNDER_AREA * expected * expected:
        return False
    h, w = die.mask.shape
    window = lab[die.y0:die.y0 + h, die.x0:die.x0 + w]
    (top_l, top_a, top_b), (beside_l, beside_a, beside_b) = (
        [float(_median(window[..., k][mask])) for k in range(3)] for mask in (top.astype(bool), beside))
    top_ab, beside_ab = np.array([top_a - 128.0, top_b - 128.0]), np.array([beside_a - 128.0, beside_b - 128.0])
    top_chroma, beside_chroma = float(np.hypot(*top_ab)), float(np.hypot(*beside_ab))
    if min(top_chroma, beside_chroma) < LIT_UNDER_CHROMA or beside_l < top_l + LIT_UNDER_STEP:
        return False
    return float(top_ab @ beside_ab) / (top_chroma * beside_chroma) > np.cos(np.radians(LIT_UNDER_HUE))


def _detected_centres(blob: _Blob, expected: float, lab: np.ndarray) -> np.ndarray:
    """The die centres (N×2, x y in the blob's box) that `vision.detect` sees inside the blob,
    looking at the blob's box and half a die around it."""
    return _blob_detections(blob, expected, lab).centres


def _blob_detections(blob: _Blob, expected: float, lab: np.ndarray) -> Detections:
    """What `vision.detect` sees of the dice whose centres lie inside the blob, looking at the
    blob's box and half a die around it: centres in the blob's box, body mask cropped to it."""
    key = ("detections", expected)
    if key not in blob.memo:
        blob.memo[key] = _detections_in(blob, expected, lab)
    return blob.memo[key]


def _detections_in(blob: _Blob, expected: float, lab: np.ndarray, min_score: float = PEAK_SCORE) -> Detections:
    h, w = blob.mask.shape
    found, x0, y0 = _detections_around(blob, expected, lab, min_score)
    centres = found.centres - (blob.x0 - x0, blob.y0 - y0)
    inside = _on_mask(blob.mask, centres)
    return Detections(centres=centres[inside], scores=found.scores[inside], sides=found.sides[inside],
                      stacked=found.stacked[inside], on_edge=found.on_edge[inside],
                      body_source=lambda: found.body[blob.y0 - y0:blob.y0 - y0 + h, blob.x0 - x0:blob.x0 - x0 + w])


def _detections_around(blob: _Blob, expected: float, lab: np.ndarray,
                       min_score: float = PEAK_SCORE) -> tuple[Detections, int, int]:
    """What `vision.detect` sees in the blob's box and half a die around it (centres scoring
    `min_score` or more), and that crop's corner."""
    key = ("around", expected, min_score)
    if key not in blob.memo:
        h, w = blob.mask.shape
        pad = int(np.ceil(0.5 * expected))
        y0, x0 = max(0, blob.y0 - pad), max(0, blob.x0 - pad)
        crop = np.ascontiguousarray(lab[y0:blob.y0 + h + pad, x0:blob.x0 + w + pad])
        blob.memo[key] = (detect_dice(crop, expected, min_score=min_score), x0, y0)
    return blob.memo[key]


def _dice_off_outline(blob: _Blob, expected: float, lab: np.ndarray) -> np.ndarray:
    """Centres (x y in the blob's box) of dice the net sees within the blob's convex hull but off
    its outline: a die as pale as the board between dice of a cluster, only its edges found."""
    found, x0, y0 = _detections_around(blob, expected, lab)
    centres = found.centres - (blob.x0 - x0, blob.y0 - y0)
    hull = np.zeros(blob.mask.shape, np.uint8)
    points = cv2.findNonZero(blob.mask.astype(np.uint8))
    cv2.fillConvexPoly(hull, cv2.convexHull(points), 1)
    return centres[_on_mask(hull > 0, centres) & ~_on_mask(blob.mask, centres)]


def _on_mask(mask: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """For each centre (x y, the mask's pixels), whether the pixel it rounds to is set in the mask."""
    cols, rows = np.round(centres).astype(int).reshape(-1, 2).T
    h, w = mask.shape
    inside = (cols >= 0) & (rows >= 0) & (cols < w) & (rows < h)
    inside[inside] = mask[rows[inside], cols[inside]]
    return inside


def _only_shadow(rest: list[np.ndarray], blob: _Blob, lab: np.ndarray, expected: float) -> bool:
    """True when every piece left beyond the detected dice is shadow: no marks, and the board's
    colour or darker. A piece with marks may be a die the detector missed or the other face of
    a die on its edge; a plain one of another colour, a die's plain side."""
    lum = lab[..., 0]
    board = _board_colour(blob, lab, expected) if rest else None
    return all(_markless(piece, blob, lum, expected) and _like_board(piece, blob, lab, board) for piece in rest)


def _largest_patch(mask: np.ndarray) -> int:
    """The area of a boolean mask's biggest connected patch (0 when it is empty)."""
    stats = _components(mask.astype(np.uint8), 8)[1]
    return int(stats[:, 4].max()) if len(stats) else 0


def _markless(piece: np.ndarray, blob: _Blob, lum: np.ndarray, expected: float) -> bool:
    """True when a piece of a blob carries no die's marks: plain, or no sharp detail inside."""
    return _plain(_Blob(piece, blob.x0, blob.y0), lum) or _smooth_inside(piece, blob.x0, blob.y0, lum, expected)


def _nearest_parts(blob: _Blob, centres: np.ndarray, colour: np.ndarray,
                   expected: float) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The blob cut into one part per centre, and the rest: each pixel within a die's reach of
    a centre (DIE_REACH) goes to the nearest by position and colour (a centre's colour: its
    die's, the median around it), or to the part that encloses it; the rest, in pieces bigger
    than a speck, is returned apart."""
    xs, ys, pts = _pixel_features(blob, colour)
    core = (0.3 * expected) ** 2
    seeds = []
    for cx, cy in centres:
        near = (xs - cx) ** 2 + (ys - cy) ** 2 <= core
        body = colour[ys[near], xs[near]] if near.any() else colour[int(round(cy)), int(round(cx))][None]
        seeds.append(np.concatenate([[cx, cy], [_median(c) for c in body.T]]))
    seeds = np.asarray(seeds, np.float32)
    labels = _nearest_label(pts, seeds)
    reach = ((xs[:, None] - centres[:, 0]) ** 2 + (ys[:, None] - centres[:, 1]) ** 2).min(axis=1)
    labels[reach > (DIE_REACH * expected) ** 2] = len(seeds)
    parts = _labelled_parts(blob, xs, ys, labels, len(seeds) + 1)
    # a pip's colour may lie nearer a neighbour's die than its own (a yellow die's dark pips
    # beside a blue die): it would leave a hole in its die's part and a speck in the
    # neighbour's, both parts then the wrong shape; what a die's part encloses is its own
    inside = blob.mask.astype(bool)
    for i in range(len(seeds)):
        enclosed = _holes(parts[i]) & inside
        if enclosed.any():
            for other in parts:
                other &= ~enclosed
            parts[i] |= enclosed
    count, pieces = cv2.connectedComponents(parts.pop().astype(np.uint8), connectivity=8)
    sizes = np.bincount(pieces.ravel(), minlength=count)
    rest = [pieces == i for i in range(1, count) if sizes[i] >= SPECK_AREA * expected * expected]
    return parts, rest


def _median(values) -> np.floating:
    """np.median of all the values, the same number without its overhead (it runs hundreds of
    times per photo, mostly on a few hundred values)."""
    values = np.array(values).ravel()   # a copy of its own, partially sorted in place
    half = len(values) // 2
    if len(values) == 0:
        return np.median(values)
    # the mean of the middle one or two, in the type `.mean()` gives (float64 for integers)
    kind = values.dtype.type if values.dtype.kind == "f" else np.float64
    if len(values) % 2:
        values.partition(half)
        return kind(values[half])
    values.partition((half - 1, half))
    low, high = values[half - 1:half + 1]
    return (kind(low) + kind(high)) / kind(2)


def _percentiles(values, percents) -> list[float]:
    """np.percentile's values (linear between the nearest two), from one partial sort."""
    values = np.asarray(values).ravel()
    spots = [q / 100 * (len(values) - 1) for q in percents]
    below = [int(np.floor(spot)) for spot in spots]
    ranks = sorted({r for b in below for r in (b, min(b + 1, len(values) - 1))})
    ordered = np.partition(values, ranks)
    out = []
    for spot, b in zip(spots, below):
        a, c, t = float(ordered[b]), float(ordered[min(b + 1, len(values) - 1)]), spot - b
        out.append(a + (c - a) * t if t < 0.5 else c - (c - a) * (1 - t))
    return out


def _solidity(mask: np.ndarray) -> float:
    """Area over convex-hull area: 1 for a convex outline, less where dice overlap or touch."""
    contours, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    hull = cv2.contourArea(cv2.convexHull(np.concatenate(contours)))
    return float(mask.sum()) / hull if hull > 0 else 0.0


def _lone_die(blob: _Blob, expected: float, lum: np.ndarray) -> bool:
    """A blob that is plainly one die by itself: die-sized, square, with marks on it."""
    fill, aspect, _ = _squareness(blob.mask)
    ratio = blob.area / (expected * expected)
    return 0.5 < ratio < SINGLE_MAX_AREA and fill > 0.8 and aspect < 1.3 and not _plain(blob, lum)


def _faint_die(blob: _Blob, expected: float, lab: np.ndarray) -> bool:
    """A plain blob that may still be a die: as square, full and big as one, not round, with
    some sharp detail inside (a glare patch or a shadow has next to none). A dark die in dim
    light (dark red pips on black) is such a blob, its shadow making it up to a third longer
    than wide. Round: a hole in the tray, a coin, a bottle cap, which a small working copy's
    pixels square off enough to pass for a die's outline; a die's corners stick out of the
    circle its sides touch.

    Dimmer still, that die's pips leave no detail at all: a die-shaped blob with none is one
    too where it stands UNMARKED_DIE_CONTRAST off the board and the detector sees a die in
    it, if only fairly sure (UNMARKED_DIE_SCORE; byler-d6 train photos, darkened and grainy
    as the bench spoils them and turned, scaled or lit otherwise: black dice left out of 11
    `ok` counts of 197)."""
    fill, aspect, _ = _squareness(blob.mask)
    if not (FAINT_SIZE[0] <= np.sqrt(blob.area) / expected <= FAINT_SIZE[1] and fill > 0.85
            and aspect < FAINT_ASPECT and _circle_fill(blob.mask) < ROUND_FILL):
        return False
    broad = _detail(blob, lab[..., 0], 0.25)
    if broad is not None and broad >= FAINT_MARKS:
        return True
    h, w = blob.mask.shape
    body = float(np.median(lab[blob.y0:blob.y0 + h, blob.x0:blob.x0 + w, 0][blob.mask]))
    if abs(body - float(_board_colour(blob, lab, expected)[0])) < UNMARKED_DIE_CONTRAST:
        return False
    return len(_detections_in(blob, expected, lab, UNMARKED_DIE_SCORE).centres) > 0


def _circle_fill(mask: np.ndarray) -> float:
    """The share of its smallest enclosing circle that a mask fills (about 1 for a disc, 0.64
    for a square: pixel centres, so a small disc may give a little over 1)."""
    contours, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    _, radius = cv2.minEnclosingCircle(np.concatenate(contours))
    return float(mask.sum()) / (np.pi * max(radius, 0.5) ** 2)


def _faint_dice(blob: _Blob, expected: float, lab: np.ndarray) -> bool:
    """A plain blob that may be dark dice touching in dim light: as thick as a die, no bigger
    than FAINT_ROW dice, fairly full, with some sharp detail inside, and a die there for the
    detector (a piece of a tray's shaded wall has such detail too)."""
    fill, _, _ = _squareness(blob.mask)
    broad = _detail(blob, lab[..., 0], 0.25)
    return (FAINT_SIZE[0] * expected <= _thickness(blob.mask) and blob.area <= FAINT_ROW * expected * expected
            and fill > FAINT_ROW_FILL and broad is not None and broad >= FAINT_MARKS
            and len(_blob_detections(blob, expected, lab).scores) > 0)


def _token(blob: _Blob, expected: float, lab: np.ndarray) -> bool:
    """True when a blob is a disc (DISC_FILL of its enclosing circle) with no marks in its middle
    (`_marked`): a coin or a token, whose rim alone passes for detail (`_plain`). A die's square,
    its corners rounded, fills less: on synthetic hard and crowded trays of seed 7, 1,713 lone
    dice filled 0.92 at most, and the 19 lone blobs that were no die 0.97-1.03 (12, 10 of them
    unmarked) or 0.56-0.89; on byler-d6 train photos 965 lone dice filled 0.95 at most (one,
    marked in its middle; 99 % under 0.91).

    Marks are looked for within the inner radius alone: a small disc's blurred rim reaches the
    outer one (a dark disc 19 px across in the working copy: Lab L detail 38.6 within 0.42 of
    its side, 16.0 within 0.35). Every die filling 0.9 of its circle or more shows marks within
    the inner radius (`tokensurvey2.py`: synthetic hard and crowded seed 7, 10; byler-d6 train
    photos as taken and dark and grainy, 31, all but one marked there, that one plain within
    both radii and filling 0.90); none fills 0.95."""
    if _circle_fill(blob.mask) < DISC_FILL:
        return False
    h, w = blob.mask.shape
    patch = lab[blob.y0:blob.y0 + h, blob.x0:blob.x0 + w]
    return not _marked(patch[..., 0], patch[..., 1:], expected, MARK_MIDDLES[:1])


def _plain(blob: _Blob, lum: np.ndarray) -> bool:
    """True when the blob's inside has no marks: no pips, no picture."""
    # marks are sharp: a smooth ramp of light (glare) is no mark
    broad = _detail(blob, lum, 0.25)
    return broad is None or broad < MARK_CONTRAST


def _board_colour(blob: _Blob, lab: np.ndarray, expected: float) -> np.ndarray:
    """Median Lab colour of the board in a ring just around the blob."""
    h, w = blob.mask.shape
    pad = max(2, int(0.2 * expected))
    y0, x0 = max(0, blob.y0 - pad), max(0, blob.x0 - pad)
    crop = lab[y0:blob.y0 + h + pad, x0:blob.x0 + w + pad]
    mask = np.zeros(crop.shape[:2], np.uint8)
    mask[blob.y0 - y0:blob.y0 - y0 + h, blob.x0 - x0:blob.x0 - x0 + w] = blob.mask
    ring = cv2.dilate(mask, np.ones((2 * pad + 1,) * 2, np.uint8)) > mask
    pixels = crop[ring] if ring.any() else crop.reshape(-1, 3)
    return np.array([_median(channel) for channel in pixels.T], np.float32)


def _like_board(part: np.ndarray, blob: _Blob, lab: np.ndarray, board: np.ndarray) -> bool:
    """True when a piece of a blob has the board's colour, or the board's in shadow: as dark or
    darker, of its hue."""
    h, w = part.shape
    pixels = lab[blob.y0:blob.y0 + h, blob.x0:blob.x0 + w][part].astype(np.float32)
    colour = np.array([_median(channel) for channel in pixels.T], np.float32)
    return bool(np.hypot(*(colour[1:] - board[1:])) < BOARD_HUE and colour[0] < board[0] + BOARD_BRIGHTER)


def _smooth_inside(part: np.ndarray, x0: int, y0: int, lum: np.ndarray, expected: float) -> bool:
    """True when a piece cut from a cluster has no sharp detail (pips, a picture's lines) away
    from its outline: a soft shadow or a patch of wall between dice, not a die's face. Its
    outline, where it meets the dice, does not count."""
    h, w = part.shape
    r = max(1, int(round(SMOOTH_MARGIN * expected)))
    inner = cv2.erode(_with_pips(part), cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1,) * 2))
    if inner.sum() < 5:
        return False
    sigma = max(1.0, MARK_SCALE * expected)
    pad = int(3 * sigma) + 1
    top, left = max(0, y0 - pad), max(0, x0 - pad)
    crop = lum[top:y0 + h + pad, left:x0 + w + pad].astype(np.float32)
    sharp = (crop - cv2.GaussianBlur(crop, (0, 0), sigma))[y0 - top:y0 - top + h, x0 - left:x0 - left + w]
    low, high = _percentiles(sharp[inner > 0], (3, 97))
    return high - low < SMOOTH_DETAIL


def _with_pips(mask: np.ndarray) -> np.ndarray:
    """The mask (uint8) with its pip-sized holes filled: a pip that k-means gave to another
    piece of a cluster leaves a hole, and is still this piece's mark."""
    return _fill_holes(mask.astype(np.uint8), (PIP_HOLE * np.sqrt(mask.sum())) ** 2)


def _glow(blob: _Blob, lum: np.ndarray, share: float = GLOW_SHARE) -> bool:
    """True when the blob's detail is nearly all broad shading, next to none at a pip's scale: a
    soft round glow (a lamp seen through a clear tray from below), however big and bright. Pips
    and a die's outline are sharp, even in a blurred photo."""
    fine, broad = _detail(blob, lum, MARK_SCALE), _detail(blob, lum, 0.25)
    return fine is not None and fine < share * broad


def _detail(blob: _Blob, lum: np.ndarray, blur: float) -> float | None:
    """Spread (Lab L, 3-97 %) of the blob's inside (pip-sized holes included) less its blur at
    `blur` blob sides; None when the blob is too thin to have an inside."""
    key = ("detail", blur)
    if key not in blob.memo:
        blob.memo[key] = _measure_detail(blob, lum, blur)
    return blob.memo[key]


def _measure_detail(blob: _Blob, lum: np.ndarray, blur: float) -> float | None:
    h, w = blob.mask.shape
    inner = blob.inner
    if inner.sum() < 10:
        return None
    crop = lum[blob.y0:blob.y0 + h, blob.x0:blob.x0 + w].astype(np.float32)
    sharp = crop - cv2.GaussianBlur(crop, (0, 0), max(2.0, blur * np.sqrt(blob.area)))
    low, high = _percentiles(sharp[inner], (3, 97))
    return float(high - low)


def _pip_dice(lab: np.ndarray, denoised: np.ndarray, expected: float, free_dark: np.ndarray,
              free_light: np.ndarray):
    """Dice that the colour foreground missed (a white die on a white board, a black one on dark
    felt), found by their pips: small round spots of one size, darker (or lighter) than the face
    all round, in groups no wider than a face, ringed by the die's outline on an even face (its
    edges looked for in `denoised`, the photo's grain smoothed away). Yields (region, flags)
    like `_split`; a group too big for one face is reported flagged."""
    lum = lab[..., 0].astype(np.float32)
    pip = max(1.0, PIP_RADIUS * expected)
    response = cv2.GaussianBlur(lum, (0, 0), 2.5 * pip) - cv2.GaussianBlur(lum, (0, 0), 0.7 * pip)
    noise = 6 * (float(_median(np.abs(response[::2, ::2]))) * 1.4826 + 1.0)
    grad = None
    h, w = lum.shape
    for dark in (True, False):
        # a dark die's light pips, blurred, stand out less than a pale die's dark ones
        threshold = max(PIP_CONTRAST if dark else PIP_CONTRAST / 2, noise)
        pts = _pips(lum, response if dark else -response, threshold, pip, free_dark if dark else free_light, dark)
        if len(pts) == 0 or len(pts) > 400:
            continue
        if grad is None:
            grad = cv2.GaussianBlur(_gradient(denoised), (0, 0), 1.0)   # outlines, not grain
            grad_level = float(_median(grad)) + 1.0
        group = _merge_groups(pts, _groups(pts, PIP_LINK * expected), FACE_OF_BLOB * expected)
        for g in np.unique(group):
            members = pts[group == g]
            if _one_stroke(lum, members, dark, pip):
                continue  # spots along one dark (or light) line: a pencil, a crack, not pips
            spread = float(np.max(np.hypot(*(members[:, None, :] - members[None, :, :]).transpose(2, 0, 1))))
            centre = members.mean(axis=0)
            angle = 0.0
            if len(members) >= 2:
                (_, _), (rw, rh), rangle = cv2.minAreaRect(members)
                angle = rangle if len(members) >= 4 else rangle - 45.0
            side = FACE_OF_BLOB * expected
            if len(members) > 6 or spread > 0.9 * side:
                side = max(side, spread / 0.8)
                flags = (STACKED,)
            else:
                flags = ()
            # the die's outline: edges on a ring half a face out from the pips' centre
            ring = np.zeros((h, w), np.uint8)
            cv2.circle(ring, (int(round(centre[0])), int(round(centre[1]))), int(round(0.55 * side)), 1,
                       max(1, int(0.12 * side)))
            ring_edges = float(grad[ring > 0].mean()) if ring.any() else 0.0
            if ring_edges < RING_EDGE * grad_level and (dark or not _outline_stands_out(
                    grad, centre, side, ring_edges, grad_level)):
                if dark or flags or not _plain_face(lum, centre, side, angle, dark):
                    continue
                # light pips (even one, an ace's) on an even dark face whose outline is lost in
                # the dark room behind it: a black die seen from below, maybe; flagged, not dropped
                flags = (UNREADABLE,)
            if not flags and not _plain_face(lum, centre, side, angle, dark):
                continue  # marks everywhere: a textured table (wood grain, print), not a die's face
            if not flags and len(members) <= FEW_PIPS:
                gap = _gap_to_a_die(lab, centre, expected)
                if gap >= UNSEEN_REACH:
                    flags = (UNREADABLE,)
                elif len(members) == 1 and gap >= ACE_PIP_REACH:
                    flags = (_OFF_PIP,)   # (a piece of that die: it may still be redrawn as that die)
            if flags == (STACKED,):
                one = _one_flat_die_around(lab, centre, side, expected)
                if one is not None:
                    # too many pips for one face: a pale die seen from aside shows its sides'
                    # pips too, and the detector sees one die there, lying flat, sure of it
                    centre, side, flags = one[0], one[1], ()
            box = cv2.boxPoints(((float(centre[0]), float(centre[1])), (side, side), angle))
            mask = np.zeros((h, w), np.uint8)
            cv2.fillPoly(mask, [np.int32(np.round(box))], 1)
            x0, y0 = max(0, int(box[:, 0].min())), max(0, int(box[:, 1].min()))
            x1, y1 = min(w, int(box[:, 0].max()) + 1), min(h, int(box[:, 1].max()) + 1)
            yield (mask[y0:y1, x0:x1].astype(bool), x0, y0), flags


def _one_stroke(lum: np.ndarray, pips: np.ndarray, dark: bool, pip: float) -> bool:
    """True when a group's spots lie along one line, each running into its nearest neighbour
    without the face showing between them: the peaks that a thin line (a pencil on the table)
    leaves along its length. Pips are separate spots, the face lighter (or darker) between any
    two; a small die's rows of pips, blurred, may run together, but never all on one line."""
    if len(pips) < 2 or min(cv2.minAreaRect(pips)[1]) > 2 * pip:
        return False
    h, w = lum.shape
    gaps = np.hypot(*(pips[:, None, :] - pips[None, :, :]).transpose(2, 0, 1))
    np.fill_diagonal(gaps, np.inf)
    nearest = pips[np.argmin(gaps, axis=1)]

    def at(points):
        xs = np.clip(np.round(points[..., 0]).astype(int), 0, w - 1)
        return lum[np.clip(np.round(points[..., 1]).astype(int), 0, h - 1), xs]

    ends = np.maximum(at(pips), at(nearest)) if dark else np.minimum(at(pips), at(nearest))
    # the whole way between (a pip missed between two others leaves the midpoint dark)
    along = np.linspace(0.15, 0.85, 8)[None, :, None]
    between = at(pips[:, None, :] + (nearest - pips)[:, None, :] * along)
    rise = (between - ends[:, None]) if dark else (ends[:, None] - between)
    return bool(np.all(rise.max(axis=1) < PIP_CONTRAST / 2))


def _gap_to_a_die(lab: np.ndarray, centre, expected: float) -> float:
    """How far (its sides) the nearest die the detector sees lies from a pip group's centre.
    A speck on a white board passes for an ace's pip, and two or three marks in a row (dust, a
    scratch, the grain of the tray's wall) for a 2's or a 3's: byler-d6 train photos turned 25
    degrees showed six such groups, none near a die the detector sees, two read 3 and one read
    1 and counted. Of 274 pip-found dice counted right (byler-d6 train; synthetic plain, hard,
    crowded, far, pictures seed 7, hard 13), 271 lie within 0.55 of a side of one, well
    within UNSEEN_REACH; two small dice seen from below (a 2 and an ace) the detector misses
    are flagged now. A lone pip is an ace's only where the die lies around it: one pip of a 2
    found alone (a black die on black felt, its other pip in a green die's shadow) was read as
    an ace and counted. Byler-d6 (all) and synthetic plain, hard and crowded seeds 7 and 2024: of
    73 lone pips on aces, 71 lie within 0.25 of a side of a die's centre the detector sees (the
    others 0.49 and 0.62 off); of 50 lone pips of other faces, 36 lie 0.3 or more off
    (ACE_PIP_REACH). Infinite where it sees none."""
    found, x0, y0 = _detections_near(lab, centre, expected)
    gaps = np.hypot(*(found.centres + (x0, y0) - np.asarray(centre)).T) / found.sides
    return float(gaps.min()) if len(gaps) else np.inf


def _one_flat_die_around(lab: np.ndarray, centre, side: float, expected: float):
    """(centre, side) of the one die the detector sees within half a side of a pip group's
    centre, when it sees just one there and is sure it lies flat, on no other die; else None."""
    h, w = lab.shape[:2]
    x0, y0 = max(0, int(centre[0] - side)), max(0, int(centre[1] - side))
    crop = np.ascontiguousarray(lab[y0:min(h, int(centre[1] + side) + 1), x0:min(w, int(centre[0] + side) + 1)])
    found = detect_dice(crop, expected)
    near = np.hypot(*(found.centres + (x0, y0) - np.asarray(centre)).T) < 0.5 * side
    if near.sum() != 1:
        return None
    i = int(np.flatnonzero(near)[0])
    if not _sure_flat(found, i):
        return None
    return found.centres[i] + (x0, y0), max(float(found.sides[i]), FACE_OF_BLOB * expected)


def _outline_stands_out(grad: np.ndarray, centre, side: float, ring_edges: float, grad_level: float) -> bool:
    """True when a dark die's faint outline (a black die against a dim room, seen from below)
    still stands out from the even surroundings just beyond it: an edge pattern that covers
    the whole table (wood grain, print) is as strong there."""
    around = np.zeros(grad.shape, np.uint8)
    cv2.circle(around, (int(round(centre[0])), int(round(centre[1]))), int(round(0.95 * side)), 1,
               max(1, int(0.25 * side)))
    if not around.any():
        return False
    local = float(_median(grad[around > 0])) + 1.0
    return ring_edges >= FAINT_RING_EDGE * max(local, grad_level)


def _pips(lum: np.ndarray, response: np.ndarray, threshold: float, pip: float, allowed: np.ndarray,
          dark: bool) -> np.ndarray:
    """Centres (x, y) of pips: peaks of the centre-surround `response` that are darker (or
    lighter) than the face all round them, but where a neighbouring pip lies (a step edge
    differs on one side only). N×2."""
    size = 2 * int(1.5 * pip) + 1
    peaks = (response > threshold) & allowed
    if peaks.any():   # (a third of the photos have no such spot at all: no local maxima to look for)
        peaks &= response >= cv2.dilate(response, np.ones((size, size), np.uint8))
    # the peaks row by row, as np.nonzero gives them, in a fraction of its time on a whole photo
    found = cv2.findNonZero(peaks.view(np.uint8))
    if found is None:
        return np.zeros((0, 2), np.float32)
    xs, ys = found.reshape(-1, 2).T
    h, w = lum.shape
    turns = np.linspace(0, 2 * np.pi, 8, endpoint=False)
    around_x = np.clip(np.round(xs[:, None] + 2.2 * pip * np.cos(turns)), 0, w - 1).astype(int)
    around_y = np.clip(np.round(ys[:, None] + 2.2 * pip * np.sin(turns)), 0, h - 1).astype(int)
    step = lum[around_y, around_x] - lum[ys, xs][:, None]
    low = (step if dark else -step) <= PIP_CONTRAST / 2
    if low.any():
        # a point of the ring may fall on a neighbouring pip (a 6's rows of pips lie closer
        # than the ring on a small die): that side does not count against it. Peaks near each
        # pixel from one dilation: a textured table has thousands, too many to pair up
        reach = NEIGHBOUR_PIP * pip
        r = int(reach)
        dy, dx = np.mgrid[-r:r + 1, -r:r + 1]
        near = cv2.dilate(peaks.astype(np.uint8), (dx * dx + dy * dy <= reach * reach).astype(np.uint8))
        beyond_own = np.hypot(around_x - xs[:, None], around_y - ys[:, None]) > reach
        low &= ~((near[around_y, around_x] > 0) & beyond_own)
    ringed = ~low.any(axis=1)
    return np.column_stack([xs[ringed], ys[ringed]]).astype(np.float32)


def _plain_face(lum: np.ndarray, centre, side: float, angle: float, dark: bool) -> bool:
    """True when the face around a pip group is one even plastic apart from its pips."""
    inner = np.zeros(lum.shape, np.uint8)
    box = cv2.boxPoints(((float(centre[0]), float(centre[1])), (0.7 * side, 0.7 * side), angle))
    cv2.fillPoly(inner, [np.int32(np.round(box))], 1)
    values = lum[inner > 0]
    if len(values) < 9:
        return False
    body = float(_median(values))
    plastic = values[values > body - PIP_CONTRAST / 2] if dark else values[values < body + PIP_CONTRAST / 2]
    low, high = _percentiles(plastic, (10, 90))
    return high - low < FACE_EVENNESS


def _merge_groups(pts: np.ndarray, group: np.ndarray, face: float) -> np.ndarray:
    """Join pip groups that fit on one face together (the two far-apart pips of a 2, a die's
    side pips beside its top ones), nearest first. Only groups whose pips all lie within one
    face of each other are compared, so a speckled table stays quick."""
    reach = PIP_FACE_SPREAD * face
    dist = np.hypot(*(pts[:, None, :] - pts[None, :, :]).transpose(2, 0, 1))
    close = list(zip(*np.nonzero(np.triu(dist <= reach, 1))))
    while True:
        best = None
        for a, b in {(min(group[i], group[j]), max(group[i], group[j])) for i, j in close if group[i] != group[j]}:
            both = (group == a) | (group == b)
            if both.sum() > 6:
                continue
            spread = float(dist[np.ix_(both, both)].max())
            if spread <= reach and (best is None or spread < best[0]):
                best = (spread, a, b)
        if best is None:
            return _join_lone_pips(pts, group, dist, LONE_PIP_REACH * face)
        group = np.where(group == best[2], best[1], group)


def _join_lone_pips(pts: np.ndarray, group: np.ndarray, dist: np.ndarray, reach: float) -> np.ndarray:
    """Join each lone pip to the nearest group within `reach` (6 pips at most in all), nearest
    first: a die bigger than the usual die's side (that size taken from other things on the
    photo) shows its pips, a side face's too, farther apart than one face, and a lone pip left
    alone is read as an ace. Joined, they spread wider than one usual face: `_pip_dice` flags that."""
    pairs = []
    for i in np.flatnonzero(np.bincount(group)[group] == 1):
        for g in np.unique(group[(group != group[i]) & (dist[i] <= reach)]):
            pairs.append((float(dist[i, group == g].max()), i, g))
    for _, i, g in sorted(pairs):
        both = (group == g) | (group == group[i])
        if (group == group[i]).sum() == 1 and (group == g).any() and both.sum() <= 6 \
                and dist[np.ix_(both, both)].max() <= reach:
            group = np.where(group == group[i], g, group)
    return group


def _groups(pts: np.ndarray, link: float) -> np.ndarray:
    """Single-linkage groups of points closer than `link`: a label per point."""
    near = (np.hypot(*(pts[:, None, :] - pts[None, :, :]).transpose(2, 0, 1)) < link).astype(np.uint8)
    parent = list(range(len(pts)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in zip(*np.nonzero(np.triu(near, 1))):
        parent[root(i)] = root(j)
    return np.array([root(i) for i in range(len(pts))])


# --- candidates -----------------------------------------------------------------------------------

_COLOUR_HUES = ((8, "red"), (20, "orange"), (34, "yellow"), (85, "green"), (130, "blue"), (165, "purple"), (180, "red"))


def _colour_name(hsv_pixels: np.ndarray) -> str:
    """The die body's colour name (pips are the minority, so medians see the body)."""
    if len(hsv_pixels) == 0:
        return "other"
    s = float(_median(hsv_pixels[:, 1]))
    v = float(_median(hsv_pixels[:, 2]))
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


def _candidate(region, flags, view: _WorkingCopy) -> Candidate:
    """The candidate of a region (mask, x0, y0) of `view`, in the photo's pixels; flagged `cut`
    where it or its box touches the frame."""
    mask, x0, y0 = region
    faint = _FAINT in flags
    flags = tuple(f for f in flags if f != _FAINT)
    mask8 = mask.astype(np.uint8)
    rect = cv2.minAreaRect(cv2.findNonZero(mask8))
    (cx, cy), (w, h), angle = rect
    box = cv2.boxPoints(((cx + x0, cy + y0), (w, h), angle))
    inner = cv2.erode(mask8, np.ones((3, 3), np.uint8)).astype(bool)
    if inner.sum() < 4:
        inner = mask.astype(bool)
    colour = _colour_name(view.hsv[y0:y0 + mask.shape[0], x0:x0 + mask.shape[1]][inner])
    ys, xs = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    H, W = view.small.shape[:2]
    # (a die's rounded corner may stop short of the frame that cuts its square outline off: its
    # box, on pixel centres, then reaches past the frame's edge, half a pixel beyond the last)
    if (xs[0] + x0 <= 1 or ys[0] + y0 <= 1 or xs[-1] + x0 >= W - 2 or ys[-1] + y0 >= H - 2
            or (box < -0.5).any() or (box[:, 0] > W - 0.5).any() or (box[:, 1] > H - 0.5).any()):
        flags = tuple(flags) + (CUT,)
    inv = 1.0 / view.scale
    # pixel centres: working pixel i covers original [i*inv, (i+1)*inv)
    to_orig = lambda p: ((p[0] + 0.5) * inv - 0.5, (p[1] + 0.5) * inv - 0.5)  # noqa: E731
    corners = tuple(tuple(round(c, 2) for c in to_orig(p)) for p in box)
    center = to_orig((cx + x0, cy + y0))
    return Candidate(
        center=(round(center[0], 2), round(center[1], 2)),
        # the widest square that fits: the top face, without the sides and shadow around it
        size=round(min(float(np.sqrt(w * h)), _thickness(mask)) * inv, 2),
        angle=round(float(angle) % 90.0, 2),
        corners=corners,
        colour=colour,
        flags=tuple(dict.fromkeys(flags)),
        faint=faint,
    )


# --- calibration hooks ----------------------------------------------------------------------------

def _tray_polygon(calibration, scale):
    """The calibrated tray outline in working pixels, or None."""
    outline = getattr(calibration, "tray_outline", None) if calibration is not None else None
    if not outline:
        return None
    return (np.asarray(outline, np.float32) * scale).reshape(-1, 1, 2)
