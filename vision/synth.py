"""Synthetic tray photos with exact ground truth: the reader's main test fixture and what the
simulated camera shows.

Every picture comes from a seed, so a failing case can be reproduced from one number. The
scene (table, tray, light, camera) and the dice are drawn with a simple pinhole model: each die
is a rounded cube whose near face (the top face seen from `above`, the bottom face seen from
`below` through a clear tray, mirrored) is drawn over its visible side faces, so dice near the
edge of a wide-angle frame show their sides the way real ones do.

Truth is a list of dicts, one per die (see `render_tray`); it also carries `.scene` with the
tray outline and the settings used.

Conventions: `center` is the near face's centre in image pixels; `size` is the near face's side
in pixels; `angle` is its rotation in degrees in [0, 90) (OpenCV's image axes, y down);
`corners` are its four sharp corners; `bbox` [x, y, w, h] encloses the whole visible die.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import cv2
import numpy as np

VIEWS = ("above", "below")
COLOURS = ("white", "black", "red", "blue", "green", "yellow", "purple", "orange")
PI_CAMERA = (1640, 1232)
PHONE = (4032, 3024)

# Which face carries a picture, per dice set. "paco": the boxed Perudo set's toucan on the ace.
PICTURE_SETS: dict[str | None, dict[int, str]] = {
    None: {},
    "paco": {1: "paco"},
    "skull": {1: "skull"},
    "emblem": {6: "emblem"},
}

# Body colour (BGR) and the pip colours such dice are sold with.
_BODY = {
    "white": ((228, 231, 233), ((24, 24, 24), (40, 35, 170))),
    "black": ((34, 32, 30), ((236, 236, 236), (60, 180, 230), (50, 50, 165))),
    "red": ((38, 36, 196), ((238, 238, 238), (25, 25, 25))),
    "blue": ((178, 84, 28), ((238, 238, 238),)),
    "green": ((64, 158, 38), ((238, 238, 238), (25, 25, 25))),
    "yellow": ((34, 205, 236), ((24, 24, 24), (40, 40, 180))),
    "purple": ((128, 36, 104), ((238, 238, 238),)),
    "orange": ((28, 120, 238), ((238, 238, 238), (24, 24, 24))),
}
_STYLES = ("solid", "translucent", "marbled")

# Table and tray-floor materials: (BGR base colour, grain strength, streak strength).
_MATERIALS = {
    "wood": ((62, 98, 148), 10, 26),
    "dark_wood": ((34, 52, 80), 8, 16),
    "felt_green": ((52, 104, 30), 9, 0),
    "felt_blue": ((112, 58, 24), 9, 0),
    "felt_red": ((40, 30, 120), 9, 0),
    "cardboard": ((168, 176, 180), 7, 0),
    "white_board": ((226, 228, 229), 3, 0),
    "grey_board": ((150, 152, 150), 5, 0),
    "dark_cloth": ((40, 38, 36), 6, 0),
}
_TABLES = ("wood", "dark_wood", "white_board", "dark_cloth", "grey_board", "felt_green")
_FLOORS = ("felt_green", "felt_blue", "felt_red", "cardboard", "white_board", "grey_board", "wood")


class NoRoom(ValueError):
    """The dice asked for do not fit on the tray drawn (many large dice on a small tray)."""


class TrayTruth(list):
    """The per-die truth list, plus `.scene`: tray outline, view, camera and render settings."""

    def __init__(self, dice, scene):
        super().__init__(dice)
        self.scene = scene


@dataclass
class _Scene:
    width: int
    height: int
    view: str
    focal: float                     # px: sets how much of the dice's sides shows
    principal: np.ndarray
    light: np.ndarray                # unit vector pointing (in the image plane) towards the light
    shadow: float                    # shadow length, in die sizes
    floor: np.ndarray                # tray floor outline (4 points)
    rim: np.ndarray                  # tray outer outline (4 points)
    hard: bool
    pictures: dict[int, str] = field(default_factory=dict)


@dataclass
class _Face:
    """One visible face: its value (as seen), canonical→image affine map, and its picture, if any."""

    value: int
    matrix: np.ndarray               # 2×2: canonical (u, v) in [-0.5, 0.5]² → image offsets
    center: np.ndarray
    picture: str | None = None
    turn: int = 0                    # quarter turns of the pip layout on the face


@dataclass
class _Die:
    faces: list[_Face]
    near: np.ndarray                 # outline of the near face(s) (N×2)
    far: np.ndarray                  # outline of the far face(s)
    quads: list[tuple[np.ndarray, float]]   # visible side faces with their shading
    body: tuple[int, int, int]
    pip: tuple[int, int, int]
    style: str
    alpha: float
    layer: int
    shine: float
    marble: tuple[int, int, int] | None
    truth: dict
    tops: list[tuple[np.ndarray, float]] = field(default_factory=list)   # near-face parts and their light


# ---------------------------------------------------------------------------------------------
# public API


def render_tray(
    seed: int,
    n_dice: int,
    *,
    size: tuple[int, int] = PI_CAMERA,
    view: str = "above",
    hard: bool = False,
    picture_faces: str | None = None,
    faces: list[int] | None = None,
    colours: list[str] | tuple[str, ...] | None = None,
    die_px: tuple[float, float] | None = None,
    edge: int = 0,
    stacked: int = 0,
    cut: int = 0,
    outside: int = 0,
    clusters: float | None = None,
    jpeg: int | None = None,
    blur: float | None = None,
    noise: float | None = None,
    keystone: float | None = None,
    scene_seed: int | None = None,
    seat_colours: dict[str, str] | None = None,
) -> tuple[np.ndarray, TrayTruth]:
    """Render a tray with `n_dice` dice and return (BGR image, truth).

    `hard` turns on uneven bar light, glare, blur, noise, strong JPEG, touching clusters,
    translucent and marbled dice, varied sizes, and (unless counts are given) a few dice on
    edge, stacked, cut by the frame or outside the tray. `edge`, `stacked`, `cut`, `outside`
    ask for that many such dice (`stacked` counts pairs). `faces` fixes the top faces (one per
    die, e.g. for calibration photos). `scene_seed` keeps the same table, tray and light
    while `seed` changes the dice. `jpeg` (quality 1-100, or 0 for none), `blur` (Gaussian
    sigma, px), `noise` (sensor noise sigma, grey levels) and `keystone` (a camera not square
    to the table: one frame edge this fraction nearer, 0-0.15) override the random choice.
    `seat_colours` ({seat: colour}) fills each die's `seat` from its colour.

    Truth per die: face (top face 1-6), seen (face the camera saw: the bottom one from below),
    center, size, angle, corners, bbox, colour, style, seat, flags (edge, stacked, cut,
    outside) and picture (the picture kind on the seen face, or None)."""
    if view not in VIEWS:
        raise ValueError(f"view must be one of {VIEWS}, not {view!r}")
    if picture_faces not in PICTURE_SETS:
        raise ValueError(f"picture_faces must be one of {sorted(k for k in PICTURE_SETS if k)} or None")
    if n_dice < 0:
        raise ValueError("n_dice must be 0 or more")
    if faces is not None and (len(faces) != n_dice or any(f not in _PIPS for f in faces)):
        raise ValueError("faces must give one top face (1-6) per die")
    if colours is not None and not set(colours) <= set(COLOURS):
        raise ValueError(f"unknown colour in {colours}; use {COLOURS}")
    scene_rng = np.random.default_rng([seed if scene_seed is None else scene_seed, 11])
    rng = np.random.default_rng([seed, 23])
    scene = _make_scene(scene_rng, size, view, hard, cut=cut, outside=outside)
    scene.pictures = PICTURE_SETS[picture_faces]
    if hard and not (edge or stacked or cut or outside) and n_dice >= 4:
        edge, stacked, cut, outside = _random_specials(rng, n_dice, scene)
    n_plain = n_dice - edge - 2 * stacked - cut - outside
    if n_plain < 0:
        raise ValueError("more special dice asked for than n_dice")
    lo, hi = die_px if die_px else _die_range(size)
    base = rng.uniform(lo, hi)
    spread = 0.08 if hard else 0.03
    sizes = np.clip(base * rng.uniform(1 - spread, 1 + spread, n_dice), lo * 0.9, hi * 1.1)
    top_faces = list(faces) if faces is not None else list(rng.integers(1, 7, n_dice))
    palette = _palette(rng, n_dice, colours, hard)
    cluster_p = (0.45 if hard else 0.1) if clusters is None else clusters
    kinds = ["plain"] * n_plain + ["edge"] * edge + ["cut"] * cut + ["outside"] * outside + ["stacked"] * stacked
    placed = _Layout(scene, rng)
    dice: list[_Die] = []
    k = 0
    for kind in kinds:
        s = float(sizes[k])
        if kind == "stacked":
            pair = _stacked_pair(placed, rng, scene, s, top_faces[k:k + 2], palette[k:k + 2])
            k += 2
            if pair is None:
                raise NoRoom(f"no room for {n_dice} dice of {s:.0f} px on this tray (seed {seed}); ask for fewer or smaller dice")
            dice.extend(pair)
            continue
        spot = placed.find(kind, s, cluster_p)
        k += 1
        if spot is None:
            raise NoRoom(f"no room for {n_dice} dice of {s:.0f} px on this tray (seed {seed}); ask for fewer or smaller dice")
        center, angle = spot
        colour, style = palette[k - 1]
        if kind == "edge":
            die = _edge_die(rng, scene, center, angle, s, top_faces[k - 1], colour, style)
        else:
            die = _flat_die(rng, scene, center, angle, s, top_faces[k - 1], colour, style)
            if kind == "outside":
                die.truth["flags"].append("outside")
        dice.append(die)
    if keystone is None:
        keystone = rng.uniform(0.02, 0.1) if hard and rng.random() < 0.5 else 0.0
    image = _draw(scene, scene_rng, rng, dice, jpeg=jpeg, blur=blur, noise=noise, keystone=keystone)
    truth = [d.truth for d in dice]
    for item in truth:
        _finish_truth(item, scene, seat_colours)
    return image, TrayTruth(truth, _scene_json(scene, picture_faces))


def render_reveal(
    dice_by_seat: dict[str, list[int]],
    seat_colours: dict[str, str],
    view: str = "above",
    seed: int = 0,
    size: tuple[int, int] = PI_CAMERA,
    *,
    picture_faces: str | None = None,
    hard: bool = False,
    edge: int = 0,
) -> tuple[np.ndarray, TrayTruth]:
    """Render what the table camera sees after a reveal: each seat's dice (top faces given) in
    the seat's colour, in a loose zone of the tray of its own. Truth as for `render_tray`, with
    `seat` filled. `edge` stands that many of the dice (picked by the seed) on an edge, so the
    reader must flag them and the table ask for a re-roll."""
    missing = [seat for seat in dice_by_seat if seat not in seat_colours]
    if missing:
        raise ValueError(f"no colour given for seat(s) {missing}")
    seats = list(dice_by_seat)
    faces = [int(f) for seat in seats for f in dice_by_seat[seat]]
    if any(f < 1 or f > 6 for f in faces):
        raise ValueError("faces must be 1-6")
    owner = [seat for seat in seats for _ in dice_by_seat[seat]]
    if not 0 <= edge <= len(faces):
        raise ValueError(f"edge must be between 0 and the {len(faces)} dice shown")
    rng = np.random.default_rng([seed, 37])
    on_edge = set(int(i) for i in rng.choice(len(faces), edge, replace=False)) if edge else set()
    scene = _make_scene(np.random.default_rng([seed, 41]), size, view, hard, cut=0, outside=0, plain=True)
    scene.pictures = PICTURE_SETS[picture_faces]
    lo, hi = _die_range(size)
    base = rng.uniform(lo, min(hi, lo * 1.8))
    zones = _seat_zones(scene, max(1, len(seats)))
    placed = _Layout(scene, rng)
    dice = []
    for index, (face, seat) in enumerate(zip(faces, owner)):
        s = base * rng.uniform(0.98, 1.02)
        kind = "edge" if index in on_edge else "plain"
        spot = placed.find(kind, s, 0.0, zone=zones[seats.index(seat)])
        if spot is None:
            spot = placed.find(kind, s, 0.0)
        if spot is None:
            raise ValueError(f"{len(faces)} dice do not fit on the tray at this size")
        make = _edge_die if kind == "edge" else _flat_die
        die = make(rng, scene, spot[0], spot[1], s, face, seat_colours[seat], "solid")
        die.truth["seat"] = seat
        dice.append(die)
    image = _draw(scene, np.random.default_rng([seed, 43]), rng, dice, jpeg=None, blur=None, noise=None,
                  keystone=0.0)
    truth = [d.truth for d in dice]
    for item in truth:
        _finish_truth(item, scene, None)
    return image, TrayTruth(truth, _scene_json(scene, picture_faces))


def render_face(value: int, size: int = 64, *, colour: str = "white", picture_faces: str | None = None,
                angle: float = 0.0, mirrored: bool = False, seed: int = 0) -> np.ndarray:
    """A single die face seen square-on, filling a `size`×`size` image (for teaching face readers).

    `angle` turns it (degrees); `mirrored` shows it as the camera under the tray sees it; `seed`
    picks the pip style and colour from those such dice are sold with."""
    if value not in _PIPS:
        raise ValueError("value must be 1-6")
    rng = np.random.default_rng([seed, 53])
    body, pips = _BODY[colour]
    canvas = np.full((size, size, 3), body, np.uint8)
    matrix = _rotation(angle) * (size * 0.98)
    if mirrored:
        matrix = matrix @ np.diag([-1.0, 1.0])
    middle = (size - 1) / 2
    face = _Face(value, matrix, np.array([middle, middle]), PICTURE_SETS[picture_faces].get(value))
    style = _pip_style(rng)
    _draw_face_marks(canvas, face, np.zeros(2), pips[int(rng.integers(len(pips)))], body, style,
                     np.array([0.0, -1.0]))
    return canvas


def phone_framed(image: np.ndarray, size: tuple[int, int] = PHONE, quality: int = 90) -> tuple[np.ndarray, float, int]:
    """A (real) photo as a phone would frame the same dice: scaled to the phone's height, widened
    with the board's colour (the median of the photo's left edge), JPEG-encoded again.

    Returns (image, scale, pad): a point (x, y) of the photo is (x * scale + pad, y * scale)."""
    width, height = size
    scale = height / image.shape[0]
    big = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
    board = [int(v) for v in np.median(image[:, :8].reshape(-1, 3), axis=0)]
    pad = max(0, width - big.shape[1]) // 2
    big = cv2.copyMakeBorder(big, 0, 0, pad, pad, cv2.BORDER_CONSTANT, value=board)
    return _jpeg(big, quality), scale, pad


def with_grain(image: np.ndarray, deviation: float, seed: int) -> np.ndarray:
    """A (real) photo as a small sensor at high ISO shows it: Gaussian noise of `deviation`
    (grey levels), drawn independently for every pixel and colour channel, seeded."""
    noise = np.random.default_rng(seed).normal(0.0, deviation, image.shape)
    return np.clip(image + noise, 0, 255).astype(np.uint8)


def _dark_and_grainy(image: np.ndarray, seed: int) -> np.ndarray:
    """A dim room at a fixed exposure: about half as bright, the shadows most, with the grain
    of a sensor pushed that far."""
    darker = ((image / 255.0) ** 1.6 * 0.55 * 255.0).astype(np.uint8)
    return with_grain(darker, 6.0, seed)


def _underexposed(image: np.ndarray, seed: int) -> np.ndarray:
    """A camera at its exposure limit in a dim room: 0.45 times the light, every tone in
    proportion, with the grain of a sensor pushed that far."""
    return with_grain((image * 0.45).astype(np.uint8), 6.0, seed)


def turned(image: np.ndarray, degrees: float) -> tuple[np.ndarray, np.ndarray]:
    """A (real) photo as a camera turned by `degrees` on its mount frames it: the frame grown to
    hold the whole photo, its new corners filled with the board's colour (the median of the
    photo's edges). Returns (image, H): the 3x3 matrix H takes a point of the photo to the new one."""
    h, w = image.shape[:2]
    a = math.radians(degrees)
    width = int(round(abs(w * math.cos(a)) + abs(h * math.sin(a))))
    height = int(round(abs(w * math.sin(a)) + abs(h * math.cos(a))))
    turn = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    turn[:, 2] += ((width - w) / 2, (height - h) / 2)
    edges = np.concatenate([image[0], image[-1], image[:, 0], image[:, -1]])
    board = tuple(int(v) for v in np.median(edges, axis=0))
    return cv2.warpAffine(image, turn, (width, height), borderValue=board), np.vstack([turn, (0.0, 0.0, 1.0)])


def tilted(image: np.ndarray, share: float) -> tuple[np.ndarray, np.ndarray]:
    """A (real) photo as a camera tilted towards the far side of the table frames it: the near
    (bottom) edge widened by `share` of the width on each side, past the frame, the far edge
    kept, so far dice look narrower than near ones. Dice near the bottom corners leave the
    photo. Returns (image, H) as `turned` does."""
    h, w = image.shape[:2]
    corners = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    H = cv2.getPerspectiveTransform(corners, np.float32([[0, 0], [w, 0], [w * (1 + share), h], [-w * share, h]]))
    return cv2.warpPerspective(image, H, (w, h), borderMode=cv2.BORDER_REPLICATE), H


# (real) photos as other cameras and other dice frame them: name -> f(image) -> (image, H), H
# (3x3) taking a point of the photo to the new one
REFRAMINGS = {
    "turned 25°": lambda image: turned(image, 25.0),       # a camera turned on its mount
    "turned 90°": lambda image: turned(image, 90.0),       # a phone held the other way round
    "at 0.75 size": lambda image: (cv2.resize(image, None, fx=0.75, fy=0.75, interpolation=cv2.INTER_AREA),
                                   np.diag([0.75, 0.75, 1.0])),          # a camera further off
    "tilted": lambda image: tilted(image, 0.15),           # a phone held at a slant over the table
    "red and blue swapped": lambda image: (np.ascontiguousarray(image[..., ::-1]), np.eye(3)),  # dice of other colours
}


def _jpeg(image: np.ndarray, quality: int) -> np.ndarray:
    """The image JPEG-encoded at `quality` and decoded again."""
    return cv2.imdecode(cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])[1], cv2.IMREAD_COLOR)


def _lit(image: np.ndarray, gains: tuple[float, float, float]) -> np.ndarray:
    """The image under a coloured light, the camera's white balance left as it is: each BGR
    channel scaled by its gain."""
    return np.clip(image * np.float32(gains), 0, 255).astype(np.uint8)


# (real) photos as other cameras and rooms spoil them: name -> f(image, seed) -> image
SPOILS = {
    "blurred": lambda image, seed: cv2.GaussianBlur(image, (0, 0), 1.6),   # out of focus
    "JPEG 50": lambda image, seed: _jpeg(image, 50),                       # sent on by a messenger
    "dark and grainy": _dark_and_grainy,
    "underexposed": _underexposed,
    "warm light": lambda image, seed: _lit(image, (0.8, 0.95, 1.05)),    # a tungsten bulb
    "cool light": lambda image, seed: _lit(image, (1.15, 1.0, 0.8)),     # a cold LED strip over a bar table
}


# ---------------------------------------------------------------------------------------------
# scene


def _die_range(size):
    """Die side in px that a camera at this resolution typically sees (30-150 px at Pi and phone scale)."""
    width = max(size)
    return (max(22.0, width * 0.019), max(34.0, width * 0.034)) if width < 2500 else (width * 0.022, width * 0.037)


def _make_scene(rng, size, view, hard, *, cut, outside, plain=False):
    """Table, tray, camera and light. Asked-for cut dice need the tray floor to run past the frame;
    asked-for outside dice need room around the tray; hard scenes pick one of the two at random."""
    width, height = int(size[0]), int(size[1])
    if width < 64 or height < 64:
        raise ValueError("image size must be at least 64×64")
    focal = width * rng.uniform(0.75, 1.3)
    principal = np.array([width / 2, height / 2]) + rng.normal(0, 0.02, 2) * (width, height)
    angle = rng.uniform(0, 2 * math.pi)
    light = np.array([math.cos(angle), math.sin(angle)])
    if cut and outside:
        raise ValueError("cut and outside dice cannot be asked for in the same photo")
    bare = not outside and not plain and rng.random() < 0.2      # dice on a bare table, no tray
    tray_bigger = bool(cut) or (not outside and hard and not plain and rng.random() < 0.5)
    if bare:
        margin = -0.3
    elif tray_bigger:      # the camera sees only the tray floor, which runs past the frame
        margin = -rng.uniform(0.03, 0.08)
    else:
        margin = rng.uniform(0.10, 0.16) if (outside or hard) and not plain else rng.uniform(0.03, 0.09)
    tilt = rng.uniform(-4, 4) if hard else rng.uniform(-1.5, 1.5)
    rim_w = 0.0 if bare else rng.uniform(0.025, 0.05) * min(width, height)
    mx, my = margin * width, margin * height
    rim = np.array([[mx, my], [width - mx, my], [width - mx, height - my], [mx, height - my]], float)
    rim += rng.normal(0, 0.006 * width, rim.shape) * (1 if hard else 0.4)
    rim = _rotate_about(rim, tilt, np.array([width / 2, height / 2]))
    floor = _shrink(rim, rim_w)
    return _Scene(width, height, view, focal, principal, light,
                  rng.uniform(0.15, 0.45) if hard else rng.uniform(0.08, 0.25),
                  floor, rim, hard)


def _shrink(quad, by):
    centre = quad.mean(axis=0)
    out = []
    for p in quad:
        d = centre - p
        out.append(p + d / np.abs(d) * by)
    return np.array(out)


def _rotate_about(points, degrees, centre):
    return (points - centre) @ _rotation(degrees).T + centre


def _rotation(degrees):
    a = math.radians(degrees)
    return np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])


def _random_specials(rng, n_dice, scene):
    """A few awkward dice per hard photo: the reader must flag them, not count them."""
    budget = max(1, n_dice // 6)
    counts = {"edge": 0, "stacked": 0, "cut": 0, "outside": 0}
    room_outside = scene.rim[0, 0] > 0
    for _ in range(int(rng.integers(0, budget + 1))):
        kind = str(rng.choice(["edge", "stacked", "cut" if not room_outside else "outside"]))
        counts[kind] += 1
    while counts["edge"] + 2 * counts["stacked"] + counts["cut"] + counts["outside"] > n_dice - 1:
        counts["stacked"] = max(0, counts["stacked"] - 1)
        counts["edge"] = max(0, counts["edge"] - 1)
    return counts["edge"], counts["stacked"], counts["cut"], counts["outside"]


def _palette(rng, n, colours, hard):
    names = list(colours) if colours else list(COLOURS)
    out = []
    for _ in range(n):
        colour = str(rng.choice(names))
        style = "solid"
        if hard and rng.random() < 0.22:
            style = str(rng.choice(_STYLES[1:]))
            if style == "translucent" and colour in ("white", "black"):
                style = "solid"
        out.append((colour, style))
    return out


def _seat_zones(scene, n):
    """Split the tray floor into n loose zones (a grid), one per seat, in seat order."""
    cols = math.ceil(math.sqrt(n * 4 / 3))
    rows = math.ceil(n / cols)
    x0, y0 = scene.floor.min(axis=0)
    x1, y1 = scene.floor.max(axis=0)
    zones = []
    for i in range(n):
        r, c = divmod(i, cols)
        zones.append((x0 + (x1 - x0) * c / cols, y0 + (y1 - y0) * r / rows,
                      x0 + (x1 - x0) * (c + 1) / cols, y0 + (y1 - y0) * (r + 1) / rows))
    return zones


# ---------------------------------------------------------------------------------------------
# layout


class _Layout:
    """Places dice without overlap: each die's footprint square is kept apart from the others'
    (separating-axis test), with `cluster_p` of them put deliberately side by side."""

    def __init__(self, scene, rng):
        self.scene = scene
        self.rng = rng
        self.boxes: list[tuple[np.ndarray, float, float]] = []   # (center, angle, half-extent)

    def find(self, kind, s, cluster_p, zone=None):
        scene, rng = self.scene, self.rng
        w, h = scene.width, scene.height
        for _ in range(300):
            angle = rng.uniform(0, 360)
            if kind == "cut":
                center = self._edge_spot(s)
            elif kind == "outside":
                center = np.array([rng.uniform(0, w), rng.uniform(0, h)])
            elif self.boxes and rng.random() < cluster_p:
                other, other_angle, other_half = self.boxes[int(rng.integers(len(self.boxes)))]
                angle = other_angle + rng.normal(0, 4)
                side = math.radians(other_angle + 90 * int(rng.integers(4)) + rng.normal(0, 6))
                dist = other_half + s / 2 + rng.uniform(0.5, 0.06 * s)
                center = other + dist * np.array([math.cos(side), math.sin(side)])
            elif zone is not None:
                center = np.array([rng.uniform(zone[0], zone[2]), rng.uniform(zone[1], zone[3])])
            else:
                x0, y0 = np.maximum(scene.floor.min(axis=0), 0)
                x1, y1 = np.minimum(scene.floor.max(axis=0), (w, h))
                center = np.array([rng.uniform(x0, x1), rng.uniform(y0, y1)])
            if kind == "edge":
                half = s * 0.75
            else:
                half = s / 2
            if not self._fits(kind, center, s, half, zone):
                continue
            if self.boxes and _gaps(center, angle, half, self.boxes).min() < 1.0:
                continue
            self.boxes.append((center, angle % 360, half))
            return center, angle % 360
        return None

    def _edge_spot(self, s):
        rng, scene = self.rng, self.scene
        side = int(rng.integers(4))
        depth = rng.uniform(0.05, 0.25) * s        # centre inside the frame, a corner well outside
        if side in (0, 1):
            along = rng.uniform(s, scene.height - s)
            x = depth if side == 0 else scene.width - depth
            return np.array([x, along])
        along = rng.uniform(s, scene.width - s)
        y = depth if side == 2 else scene.height - depth
        return np.array([along, y])

    def _fits(self, kind, center, s, half, zone):
        scene = self.scene
        reach = half * 1.45
        inside_floor = cv2.pointPolygonTest(scene.floor.astype(np.float32), tuple(map(float, center)), True)
        x, y = center
        in_frame = reach + 2 <= x <= scene.width - reach - 2 and reach + 2 <= y <= scene.height - reach - 2
        if kind == "cut":
            return inside_floor > -s and not in_frame
        if kind == "outside":      # on the rim or out on the table, well clear of the floor
            return in_frame and inside_floor < -reach
        if zone is not None and not (zone[0] <= x <= zone[2] and zone[1] <= y <= zone[3]):
            return False
        return in_frame and inside_floor > reach


def _gaps(c1, a1, h1, boxes):
    """Lower bound on the distance from one square (centre, angle, half side) to each of `boxes`,
    by the separating-axis test."""
    centres = np.array([b[0] for b in boxes], float).reshape(-1, 2)
    angles = np.array([b[1] for b in boxes], float)
    halves = np.array([b[2] for b in boxes], float)
    axes = np.radians(np.stack([np.full_like(angles, a1), np.full_like(angles, a1 + 90), angles, angles + 90], 1))
    d = np.abs((centres[:, 0] - c1[0])[:, None] * np.cos(axes) + (centres[:, 1] - c1[1])[:, None] * np.sin(axes))
    spread = lambda a: np.abs(np.cos(a)) + np.abs(np.sin(a))      # noqa: E731
    r1 = h1 * spread(math.radians(a1) - axes)
    r2 = halves[:, None] * spread(np.radians(angles)[:, None] - axes)
    return (d - r1 - r2).max(axis=1)


def _stacked_pair(placed, rng, scene, s, faces, palette):
    """A die resting on another: both must be re-rolled, so both carry the `stacked` flag.

    The upper die sits off-centre; seen from below it hides behind the lower one, so there it
    is shifted further, enough to stick out past it (a die wholly hidden could not be seen)."""
    grow = 1 + s / scene.focal
    lift = grow if scene.view == "above" else 1 / grow          # higher up: bigger from above
    shift = (0.15, 0.4) if scene.view == "above" else (0.32, 0.45)
    for _ in range(20):
        spot = placed.find("plain", s, 0.0)
        if spot is None:
            return None
        center, angle = spot
        lower_box = placed.boxes[-1]
        for _ in range(30):
            heading = rng.uniform(0, 2 * math.pi)
            offset = rng.uniform(*shift) * s * np.array([math.cos(heading), math.sin(heading)])
            top_center = center + offset          # as seen: off the lower die's centre by that much
            box = (top_center, 0.0, s * lift * 0.72)
            others = [b for b in placed.boxes if b is not lower_box]
            if not others or _gaps(top_center, 0.0, s * lift * 0.72, others).min() >= 1.0:
                lower = _flat_die(rng, scene, center, angle, s, int(faces[0]), *palette[0])
                upper = _flat_die(rng, scene, top_center, rng.uniform(0, 360), s * lift, int(faces[1]),
                                  *palette[1], layer=1)
                placed.boxes.append(box)
                for die in (lower, upper):
                    die.truth["flags"].append("stacked")
                return [lower, upper]
        placed.boxes.pop()          # this die's spot leaves no room for one on top: try another
    return None


# ---------------------------------------------------------------------------------------------
# dice geometry


@lru_cache(maxsize=None)
def _rounded_square(radius: float, per_corner: int = 5) -> np.ndarray:
    """Canonical rounded square outline in [-0.5, 0.5]², corner radius `radius` (face sides)."""
    pts = []
    inner = 0.5 - radius
    for cx, cy, start in ((inner, inner, 0), (-inner, inner, 90), (-inner, -inner, 180), (inner, -inner, 270)):
        for k in range(per_corner + 1):
            t = math.radians(start + 90 * k / per_corner)
            pts.append((cx + radius * math.cos(t), cy + radius * math.sin(t)))
    return np.array(pts)


def _flat_die(rng, scene, center, angle, s, top, colour, style, layer=0):
    """A die lying flat: the near face is the top one from above, the bottom one from below."""
    center = np.asarray(center, float)
    seen = top if scene.view == "above" else 7 - top
    matrix = _rotation(angle) * s
    if scene.view == "below":
        matrix = matrix @ np.diag([-1.0, 1.0])      # seen through the glass: mirrored
    face = _Face(seen, matrix, center, scene.pictures.get(seen), int(rng.integers(4)))
    corner_r = rng.uniform(0.08, 0.16)
    near = center + _rounded_square(round(corner_r, 2)) @ matrix.T
    shrink = 1 / (1 + s / scene.focal)
    far_center = scene.principal + (center - scene.principal) * shrink
    far = far_center + (near - center) * shrink
    corners = center + np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]]) @ (_rotation(angle) * s).T
    quads = _side_quads(scene, corners, far_center + (corners - center) * shrink, center, far_center)
    die = _new_die(rng, scene, [face], near, far, quads, colour, style, layer)
    die.truth.update(face=int(top), seen=int(seen), center=[float(center[0]), float(center[1])],
                     size=float(s), angle=float(angle % 90), corners=corners.tolist(),
                     picture=face.picture)
    return die


def _edge_die(rng, scene, center, angle, s, top, colour, style):
    """A die standing on an edge or leaning: two faces show, each foreshortened."""
    tilt = math.radians(rng.uniform(22, 45))
    ca, sa = math.cos(tilt), math.sin(tilt)
    width = s * (ca + sa)
    rot = _rotation(angle)
    second = int(rng.choice([f for f in range(1, 7) if f not in (top, 7 - top)]))
    pair = (top, second) if scene.view == "above" else (7 - top, 7 - second)
    mirror = np.diag([-1.0, 1.0]) if scene.view == "below" else np.eye(2)
    centre_a = center + rot @ np.array([-width / 2 + s * ca / 2, 0])
    centre_b = center + rot @ np.array([width / 2 - s * sa / 2, 0])
    face_a = _Face(pair[0], rot @ np.diag([s * ca, s]) @ mirror, centre_a, scene.pictures.get(pair[0]),
                   int(rng.integers(4)))
    face_b = _Face(pair[1], rot @ np.diag([s * sa, s]) @ mirror, centre_b, scene.pictures.get(pair[1]),
                   int(rng.integers(4)))
    corners = center + np.array([[-width / 2, -s / 2], [width / 2, -s / 2], [width / 2, s / 2],
                                 [-width / 2, s / 2]]) @ rot.T
    near = _rounded_outline(corners, 0.1 * s)
    shrink = 1 / (1 + s * (ca + sa) / scene.focal)
    far_center = scene.principal + (center - scene.principal) * shrink
    far = far_center + (near - center) * shrink
    quads = _side_quads(scene, corners, far_center + (corners - center) * shrink, center, far_center)
    die = _new_die(rng, scene, [face_a, face_b], near, far, quads, colour, style, 0)
    split = rot @ np.array([-width / 2 + s * ca, 0])
    half_b = np.array([corners[1], corners[2], center + split + rot @ np.array([0, s / 2]),
                       center + split + rot @ np.array([0, -s / 2])])
    die.tops = [(near, 1.0), (half_b, 0.55 + 0.3 * ca)]     # the steeper face catches less light
    die.truth.update(face=int(top), seen=int(pair[0]), center=[float(center[0]), float(center[1])],
                     size=float(s), angle=float(angle % 90), corners=corners.tolist(),
                     picture=face_a.picture, flags=["edge"])
    return die


def _rounded_outline(corners, radius):
    pts = []
    n = len(corners)
    for i in range(n):
        p, prev, nxt = corners[i], corners[i - 1], corners[(i + 1) % n]
        a = p + (prev - p) / np.linalg.norm(prev - p) * radius
        b = p + (nxt - p) / np.linalg.norm(nxt - p) * radius
        for t in np.linspace(0, 1, 4):
            pts.append((1 - t) ** 2 * a + 2 * (1 - t) * t * p + t ** 2 * b)
    return np.array(pts)


def _side_quads(scene, near_corners, far_corners, near_center, far_center):
    """Side faces the camera can see (those facing the principal point), with their shading."""
    shift = far_center - near_center
    quads = []
    if float(np.hypot(*shift)) < 0.3:
        return quads
    for i in range(4):
        a, b = near_corners[i], near_corners[(i + 1) % 4]
        edge = b - a
        normal = np.array([edge[1], -edge[0]])
        normal /= np.linalg.norm(normal) + 1e-9
        if np.dot(normal, a - near_center) < 0:
            normal = -normal
        if np.dot(normal, shift) <= 0:
            continue
        shade = 0.5 + 0.32 * max(0.0, float(np.dot(normal, scene.light)))
        quad = np.array([a, b, far_corners[(i + 1) % 4], far_corners[i]])
        quads.append((quad, shade))
    return quads


def _new_die(rng, scene, faces, near, far, quads, colour, style, layer):
    body, pips = _BODY[colour]
    jitter = rng.normal(0, 6, 3)
    body = tuple(int(np.clip(c + j, 0, 255)) for c, j in zip(body, jitter))
    if not scene.hard:
        pips = pips[:2]         # dark-red pips on black dice only in hard scenes
    pip = pips[int(rng.integers(len(pips)))]
    marble = None
    if style == "marbled":     # a swirl of a second colour that keeps the pips as clear as the body does
        grey = lambda bgr: 0.114 * bgr[0] + 0.587 * bgr[1] + 0.299 * bgr[2]     # noqa: E731
        side = grey(body) > grey(pip)
        others = [c for c in COLOURS if c != colour and (grey(_BODY[c][0]) > grey(pip) + 60) == side
                  and abs(grey(_BODY[c][0]) - grey(pip)) > 60]
        if others:
            marble = tuple(int(c) for c in _BODY[str(rng.choice(others))][0])
    style = style if style != "marbled" or marble else "solid"
    truth = {"colour": colour if style != "marbled" else "other", "style": style, "seat": None,
             "flags": [], "layer": layer}
    shine = rng.uniform(0.25, 0.55) if scene.hard and scene.view == "above" and rng.random() < 0.25 else 0.0
    alpha = rng.uniform(0.6, 0.8) if style == "translucent" else 1.0
    return _Die(faces, near, far, quads, body, pip, style, alpha, layer, shine, marble, truth)


def _finish_truth(item, scene, seat_colours):
    pts = np.array(item.pop("_outline"))
    x0, y0 = pts.min(axis=0)
    x1, y1 = pts.max(axis=0)
    x0, y0 = max(0.0, x0), max(0.0, y0)
    x1, y1 = min(float(scene.width), x1), min(float(scene.height), y1)
    item["bbox"] = [round(float(v), 1) for v in (x0, y0, x1 - x0, y1 - y0)]
    corners = np.array(item["corners"])
    inside = ((corners >= 0) & (corners <= (scene.width - 1, scene.height - 1))).all()
    if not inside and "cut" not in item["flags"]:
        item["flags"].append("cut")
    if seat_colours and item["seat"] is None:
        by_colour = {c: seat for seat, c in seat_colours.items()}
        item["seat"] = by_colour.get(item["colour"])
    item["center"] = [round(v, 2) for v in item["center"]]
    item["size"] = round(item["size"], 2)
    item["angle"] = round(item["angle"], 2)
    item["corners"] = [[round(x, 2), round(y, 2)] for x, y in item["corners"]]
    item.pop("layer")


def _scene_json(scene, picture_faces):
    return {"width": scene.width, "height": scene.height, "view": scene.view,
            "tray": scene.floor.round(1).tolist(), "rim": scene.rim.round(1).tolist(),
            "picture_faces": picture_faces, "hard": scene.hard}


# ---------------------------------------------------------------------------------------------
# drawing

_SHIFT = 4
_ONE = 1 << _SHIFT

# pip centres in face units, for the face value (before the random quarter turn)
_PIPS = {
    1: [(0, 0)],
    2: [(-1, -1), (1, 1)],
    3: [(-1, -1), (0, 0), (1, 1)],
    4: [(-1, -1), (1, -1), (-1, 1), (1, 1)],
    5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
    6: [(-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)],
}


def _fix(points):
    return np.round(np.asarray(points) * _ONE).astype(np.int32)


def _draw(scene, scene_rng, rng, dice, *, jpeg, blur, noise, keystone):
    canvas = _background(scene, scene_rng)
    if scene.hard and scene.view == "above" and rng.random() < 0.5:
        _distractors(canvas, scene, rng, dice)
    order = sorted(dice, key=lambda d: ((d.layer if scene.view == "above" else -d.layer),
                                        -float(np.hypot(*(d.faces[0].center - scene.principal)))))
    for layer in sorted({d.layer for d in order}, reverse=scene.view == "below"):
        group = [d for d in order if d.layer == layer]
        if scene.view == "above":
            _draw_shadows(canvas, scene, group)
        for die in group:
            _draw_die(canvas, scene, rng, die)
    _light(canvas, scene, scene_rng)
    if keystone:
        canvas = _keystone(canvas, scene, rng, dice, keystone)
    return _camera(canvas, scene, rng, jpeg=jpeg, blur=blur, noise=noise)


def _keystone(canvas, scene, rng, dice, amount):
    """A camera not square to the table: one edge of the frame seen nearer (bigger) than the other.

    The part of the picture inside a quadrilateral is stretched to fill the frame; the quad is
    shrunk until every die lies inside it, and the truth is moved with the same transform."""
    h, w = canvas.shape[:2]
    full = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    a = int(rng.integers(4))
    b = (a + 1) % 4
    for _ in range(5):
        src = full.copy()
        src[a] += (full[b] - full[a]) * amount
        src[b] += (full[a] - full[b]) * amount
        if all(_keeps(src, d.truth, w, h) for d in dice):
            break
        amount /= 2
    else:
        return canvas
    matrix = cv2.getPerspectiveTransform(src, full)
    warped = cv2.warpPerspective(canvas, matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)

    def move(points):
        return cv2.perspectiveTransform(np.float32(points).reshape(-1, 1, 2), matrix).reshape(-1, 2)

    for die in dice:
        t = die.truth
        t["center"] = move([t["center"]])[0].tolist()
        corners = move(t["corners"])
        t["corners"] = corners.tolist()
        t["_outline"] = move(t["_outline"]).tolist()
        sides = np.linalg.norm(corners - np.roll(corners, -1, axis=0), axis=1)
        t["size"] = float(sides.mean()) if "edge" not in t["flags"] else float(sides[1::2].mean())
        dx, dy = corners[1] - corners[0]
        t["angle"] = math.degrees(math.atan2(dy, dx)) % 90
    scene.floor, scene.rim = move(scene.floor).astype(float), move(scene.rim).astype(float)
    return warped


def _keeps(src, truth, w, h):
    """A die stays whole in the frame after the stretch (a die already cut: its centre stays in)."""
    outline = np.array(truth["_outline"])
    whole = ((outline >= 0) & (outline <= (w - 1, h - 1))).all()
    points = outline if whole else [truth["center"]]
    return all(cv2.pointPolygonTest(src, (float(x), float(y)), False) > 0 for x, y in points)


def _background(scene, rng):
    w, h = scene.width, scene.height
    small = (max(8, w // 4), max(8, h // 4))
    if scene.view == "above":
        table = _texture(rng, str(rng.choice(_TABLES)), small)
        floor = _texture(rng, str(rng.choice(_FLOORS)), small)
        rim_colour = np.array(rng.choice([(30, 30, 34), (60, 90, 130), (200, 200, 200), (40, 60, 90)]), float)
        rim = np.empty_like(table)
        rim[:] = rim_colour + rng.normal(0, 4, 3)
    else:
        # through the clear tray the camera sees the room above: dim, out of focus, a lamp or two
        table = _texture(rng, "dark_cloth", small)
        floor = _room(rng, small)
        rim = np.empty_like(table)
        rim[:] = np.array((70, 72, 74)) + rng.normal(0, 6, 3)
    scale = np.array([small[0] / w, small[1] / h])
    canvas = table
    rim_mask = np.zeros(small[::-1], np.uint8)
    cv2.fillPoly(rim_mask, [_fix(scene.rim * scale)], 255, cv2.LINE_AA, _SHIFT)
    floor_mask = np.zeros(small[::-1], np.uint8)
    cv2.fillPoly(floor_mask, [_fix(scene.floor * scale)], 255, cv2.LINE_AA, _SHIFT)
    # the tray's inner wall: a band inside the rim, shaded, as seen in a box lid from above
    wall = cv2.GaussianBlur(255 - floor_mask, (0, 0), max(1.0, small[0] * 0.004))
    a = rim_mask.astype(np.float32)[..., None] / 255
    canvas = canvas * (1 - a) + rim * a
    f = floor_mask.astype(np.float32)[..., None] / 255
    canvas = canvas * (1 - f) + floor * f
    canvas *= 1 - 0.25 * (wall.astype(np.float32)[..., None] / 255) * f
    return cv2.resize(canvas.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)


def _texture(rng, material, small):
    base, grain, streak = _MATERIALS[material]
    w, h = small
    tex = np.empty((h, w, 3), np.float32)
    tex[:] = np.array(base, np.float32) + rng.normal(0, 6, 3).astype(np.float32)
    blotch = cv2.resize(rng.normal(0, 1, (max(2, h // 24), max(2, w // 24))).astype(np.float32), (w, h),
                        interpolation=cv2.INTER_CUBIC)
    tex += (blotch * grain * 0.6)[..., None]
    if streak:
        angle = rng.uniform(-0.2, 0.2)
        ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
        phase = ys * math.cos(angle) + xs * math.sin(angle)
        waves = np.sin(phase / rng.uniform(3, 8) + blotch * 0.8) + 0.5 * np.sin(phase / rng.uniform(1.2, 2.5))
        tex += (waves * streak * 0.5)[..., None]
    return tex


def _room(rng, small):
    w, h = small
    tex = np.empty((h, w, 3), np.float32)
    tex[:] = np.array((60, 62, 66), np.float32) * rng.uniform(0.35, 1.0)     # far and dim: lit from below, dice stand out
    blobs = cv2.resize(rng.normal(0, 1, (4, 5)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
    tex += (blobs * 18)[..., None]
    for _ in range(int(rng.integers(0, 3))):   # a ceiling lamp, far out of focus
        lamp = np.zeros((h, w), np.float32)
        cv2.circle(lamp, (int(rng.uniform(0, w)), int(rng.uniform(0, h))), int(w * rng.uniform(0.03, 0.08)), 1.0, -1)
        tex += (cv2.GaussianBlur(lamp, (0, 0), w * 0.03) * rng.uniform(60, 140))[..., None]
    return tex


_NOISE_TILE = 1024


@lru_cache(maxsize=1)
def _noise_tile() -> np.ndarray:
    """Unit Gaussian noise, made once; each photo uses a random window of it (tiled for big frames)."""
    return np.random.default_rng(7919).normal(0, 1, (_NOISE_TILE, _NOISE_TILE, 3)).astype(np.float32)


def _add_noise(canvas, rng, sigma):
    """Sensor noise, in place: the tile shifted at random, laid over the frame block by block."""
    shift = tuple(int(v) for v in rng.integers(0, _NOISE_TILE, 2))
    tile = np.roll(_noise_tile(), shift, axis=(0, 1)) * np.float32(sigma)
    h, w = canvas.shape[:2]
    for y in range(0, h, _NOISE_TILE):
        for x in range(0, w, _NOISE_TILE):
            block = canvas[y:y + _NOISE_TILE, x:x + _NOISE_TILE]
            block += tile[:block.shape[0], :block.shape[1]]


def _distractors(canvas, scene, rng, dice):
    """Things on a bar table that are not dice: coins and screw heads (round), a pencil or a
    clip (long). None is square, so a reader has no excuse to count one."""
    sizes = [float(np.linalg.norm(d.faces[0].matrix[:, 0])) for d in dice] or [0.03 * scene.width]
    s = float(np.median(sizes))
    centres = [d.faces[0].center for d in dice]
    for _ in range(int(rng.integers(1, 4))):
        for _attempt in range(30):
            at = np.array([rng.uniform(0, scene.width), rng.uniform(0, scene.height)])
            if all(np.hypot(*(at - c)) > 2.2 * s for c in centres):
                break
        else:
            continue
        tone = np.array(rng.choice([(150, 150, 152), (60, 110, 170), (40, 40, 40), (200, 200, 205)]), float)
        x0, y0, x1, y1 = _box(np.array([at]), 2.5 * s, canvas.shape)
        patch = canvas[y0:y1, x0:x1]
        mask = np.zeros(patch.shape[:2], np.uint8)
        local = at - (x0, y0)
        if rng.random() < 0.6:
            radius = s * rng.uniform(0.3, 0.6)
            cv2.circle(mask, tuple(_fix(local)), int(radius * _ONE), 255, -1, cv2.LINE_AA, _SHIFT)
        else:
            length, width = s * rng.uniform(1.6, 2.4), s * rng.uniform(0.15, 0.3)
            box = cv2.boxPoints(((float(local[0]), float(local[1])), (length, width), float(rng.uniform(0, 180))))
            cv2.fillPoly(mask, [_fix(box)], 255, cv2.LINE_AA, _SHIFT)
        a = mask.astype(np.float32)[..., None] / 255
        patch[:] = patch * (1 - a) + tone * a


def _draw_shadows(canvas, scene, dice):
    """Soft shadows cast away from the light, drawn together on a quarter-size mask and blurred once."""
    if not dice:
        return
    h, w = canvas.shape[:2]
    small = (max(8, w // 4), max(8, h // 4))
    scale = np.array([small[0] / w, small[1] / h])
    mask = np.zeros(small[::-1], np.uint8)
    sizes = []
    for die in dice:
        s = float(np.linalg.norm(die.faces[0].matrix[:, 0]))
        pts = np.vstack([die.far, die.far - scene.light * s * scene.shadow])
        hull = cv2.convexHull(pts.astype(np.float32)).reshape(-1, 2)
        cv2.fillPoly(mask, [_fix(hull * scale)], 255, cv2.LINE_AA, _SHIFT)
        sizes.append(s)
    mask = cv2.GaussianBlur(mask, (0, 0), max(0.6, float(np.median(sizes)) * 0.12 * scale[0]))
    shade = 1 - 0.45 * cv2.resize(mask, (w, h), interpolation=cv2.INTER_LINEAR).astype(np.float32) / 255
    canvas *= shade[..., None]


def _box(points, pad, shape):
    x0, y0 = np.floor(points.min(axis=0) - pad).astype(int)
    x1, y1 = np.ceil(points.max(axis=0) + pad).astype(int)
    return max(0, x0), max(0, y0), min(shape[1], x1), min(shape[0], y1)


def _draw_die(canvas, scene, rng, die):
    silhouette = cv2.convexHull(np.vstack([die.near, die.far]).astype(np.float32)).reshape(-1, 2)
    die.truth["_outline"] = silhouette.tolist()
    x0, y0, x1, y1 = _box(silhouette, 3, canvas.shape)
    if x1 <= x0 or y1 <= y0:
        return
    origin = np.array([x0, y0], float)
    ph, pw = y1 - y0, x1 - x0
    layer = np.empty((ph, pw, 3), np.uint8)
    layer[:] = die.body
    if die.marble is not None:
        swirl = cv2.resize(rng.normal(0, 1, (5, 5)).astype(np.float32), (pw, ph), interpolation=cv2.INTER_CUBIC)
        mix = (np.sin(swirl * 2.5) * 0.35 + 0.35)[..., None]
        layer[:] = (layer * (1 - mix) + np.array(die.marble) * mix).astype(np.uint8)
    shade = np.zeros((ph, pw), np.float32)
    cv2.fillPoly(shade, [_fix(silhouette - origin)], 0.45, cv2.LINE_AA, _SHIFT)
    for quad, value in die.quads:
        cv2.fillPoly(shade, [_fix(quad - origin)], value, cv2.LINE_AA, _SHIFT)
    for part, light in die.tops or [(die.near, 1.0)]:
        cv2.fillPoly(shade, [_fix(part - origin)], light, cv2.LINE_AA, _SHIFT)
    if not die.tops:
        _bevel(shade, die.faces[0], origin, scene.light)
    layer = (layer.astype(np.float32) * shade[..., None])
    layer = np.clip(layer, 0, 255).astype(np.uint8)
    style = _pip_style(rng)
    if die.alpha < 1 and not die.tops:
        _ghost_marks(layer, die, origin, style, scene.light)
    for face in die.faces:
        _draw_face_marks(layer, face, origin, die.pip, die.body, style, scene.light)
    alpha = np.zeros((ph, pw), np.uint8)
    cv2.fillPoly(alpha, [_fix(silhouette - origin)], 255, cv2.LINE_AA, _SHIFT)
    a = alpha.astype(np.float32)[..., None] / 255 * die.alpha
    if die.alpha < 1:   # translucent dice: light through the body, the marks are opaque paint
        marks = np.zeros((ph, pw), np.uint8)
        for face in die.faces:
            _draw_face_marks(marks, face, origin, (255,), (0,), dict(style, depth=1.0), scene.light)
        a = np.maximum(a, marks.astype(np.float32)[..., None] / 255)
        layer = cv2.add(layer, np.full_like(layer, 25))
    out = canvas[y0:y1, x0:x1] * (1 - a) + layer.astype(np.float32) * a
    if die.shine:
        spot = np.zeros((ph, pw), np.float32)
        face = die.faces[0]
        s = float(np.linalg.norm(face.matrix[:, 0]))
        where = face.center - origin + face.matrix @ rng.uniform(-0.3, 0.3, 2)
        cv2.circle(spot, tuple(_fix(where)), int(s * rng.uniform(0.12, 0.25) * _ONE), 1.0, -1, cv2.LINE_AA, _SHIFT)
        spot = cv2.GaussianBlur(spot, (0, 0), max(1.0, s * 0.08)) * die.shine * (alpha / 255.0)
        out += spot[..., None] * (255 - out)
    canvas[y0:y1, x0:x1] = out


def _ghost_marks(layer, die, origin, style, light):
    """Through a translucent die the far face's pips show faintly, mirrored: a classic misread."""
    near = die.faces[0]
    far_center = die.far.mean(axis=0)
    shrink = float(np.linalg.norm(die.far[0] - die.far.mean(axis=0)) /
                   (np.linalg.norm(die.near[0] - die.near.mean(axis=0)) + 1e-9))
    ghost = _Face(7 - near.value, near.matrix @ np.diag([-1.0, 1.0]) * shrink, far_center, None, near.turn)
    marks = layer.copy()
    _draw_face_marks(marks, ghost, origin, die.pip, die.body, style, light)
    cv2.addWeighted(layer, 0.75, marks, 0.25, 0, dst=layer)


def _bevel(shade, face, origin, light):
    """The near face's rounded edges: lit on the side towards the light, dark on the far side,
    and the face itself a touch brighter towards the light."""
    s = float(np.linalg.norm(face.matrix[:, 0]))
    ph, pw = shade.shape
    ys, xs = np.mgrid[0:ph, 0:pw].astype(np.float32)
    cx, cy = face.center - origin
    ramp = 1 + 0.08 * ((xs - cx) * light[0] + (ys - cy) * light[1]) / s
    inside = np.zeros((ph, pw), np.uint8)
    corners = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]]) * 0.96
    cv2.fillPoly(inside, [_fix(face.center - origin + corners @ face.matrix.T)], 1)
    shade[inside == 1] *= ramp[inside == 1]
    width = max(1, int(round(s * 0.06)))
    for i in range(4):
        a = face.center - origin + corners[i] @ face.matrix.T
        b = face.center - origin + corners[(i + 1) % 4] @ face.matrix.T
        normal = (a + b) / 2 - (face.center - origin)
        normal /= np.linalg.norm(normal) + 1e-9
        tone = 0.9 + 0.25 * float(np.dot(normal, light))
        cv2.line(shade, tuple(_fix(a)), tuple(_fix(b)), float(tone), width, cv2.LINE_AA, _SHIFT)


def _pip_style(rng):
    """Per set: pip spacing and radius (face units), corner turn, and how deep the pips look."""
    return {"spacing": rng.uniform(0.24, 0.29), "radius": rng.uniform(0.075, 0.1),
            "ace": rng.uniform(1.0, 1.6), "depth": rng.uniform(0.55, 0.8)}


@lru_cache(maxsize=None)
def _circle(n: int = 20) -> np.ndarray:
    t = np.linspace(0, 2 * math.pi, n, endpoint=False)
    return np.stack([np.cos(t), np.sin(t)], axis=1)


def _draw_face_marks(layer, face, origin, pip, body, style, light):
    """Pips (or the face's picture) in canonical face units, mapped onto the image by the face's matrix."""
    turn = np.linalg.matrix_power(np.array([[0.0, -1.0], [1.0, 0.0]]), face.turn)
    to_image = face.matrix @ turn
    centre = face.center - origin
    pip_dark = tuple(int(c * style["depth"]) for c in pip)
    if face.picture:
        for polys, painted in _PICTURES[face.picture]():
            cv2.fillPoly(layer, [_fix(centre + p @ to_image.T) for p in polys], pip if painted else body,
                         cv2.LINE_AA, _SHIFT)
        return
    spacing, radius = style["spacing"], style["radius"]
    outer, inner = [], []
    # pips are dimples: a dark rim on the side towards the light, the paint beside it
    dent = np.linalg.solve(to_image, -light) if abs(np.linalg.det(to_image)) > 1e-6 else np.zeros(2)
    dent = dent / (np.linalg.norm(dent) + 1e-9) * radius * 0.22
    for x, y in _PIPS[face.value]:
        r = radius * (style["ace"] if face.value == 1 else 1.0)
        c = np.array([x, y]) * spacing
        outer.append(_fix(centre + (c + _circle() * r) @ to_image.T))
        inner.append(_fix(centre + (c + dent + _circle() * r * 0.8) @ to_image.T))
    cv2.fillPoly(layer, outer, pip_dark, cv2.LINE_AA, _SHIFT)
    cv2.fillPoly(layer, inner, pip, cv2.LINE_AA, _SHIFT)


def _ellipse(cx, cy, rx, ry, degrees=0.0, n=24):
    pts = _circle(n) * (rx, ry)
    return pts @ _rotation(degrees).T + (cx, cy)


@lru_cache(maxsize=None)
def _paco():
    """A toucan ("paco"): body, head, big curved beak, tail, perch; eye and chest left in body colour.

    Pictures are drawn as layers of (polygons, painted?): painted in the mark colour, else body colour."""
    fill = [
        _ellipse(-0.06, 0.06, 0.16, 0.24, -18),
        _ellipse(0.02, -0.17, 0.11, 0.1),
        np.array([(0.07, -0.24), (0.2, -0.25), (0.36, -0.19), (0.42, -0.1), (0.33, -0.12), (0.2, -0.1), (0.08, -0.1)]),
        np.array([(-0.13, 0.24), (-0.26, 0.43), (-0.14, 0.43), (-0.03, 0.28)]),
        np.array([(-0.3, 0.26), (0.3, 0.26), (0.3, 0.3), (-0.3, 0.3)]),
    ]
    holes = [
        _ellipse(0.04, -0.19, 0.032, 0.032, n=12),
        _ellipse(0.04, -0.04, 0.05, 0.1, -10, n=16),
        np.array([(0.1, -0.2), (0.3, -0.18), (0.28, -0.16), (0.1, -0.16)]),
    ]
    return [(fill, True), (holes, False)]


@lru_cache(maxsize=None)
def _skull():
    fill = [_ellipse(0, -0.07, 0.27, 0.25), np.array([(-0.15, 0.08), (0.15, 0.08), (0.13, 0.33), (-0.13, 0.33)])]
    holes = [
        _ellipse(-0.1, -0.06, 0.075, 0.07, n=14),
        _ellipse(0.1, -0.06, 0.075, 0.07, n=14),
        np.array([(0, 0.04), (0.04, 0.12), (-0.04, 0.12)]),
        np.array([(-0.06, 0.2), (-0.04, 0.2), (-0.04, 0.33), (-0.06, 0.33)]),
        np.array([(0.04, 0.2), (0.06, 0.2), (0.06, 0.33), (0.04, 0.33)]),
    ]
    return [(fill, True), (holes, False)]


@lru_cache(maxsize=None)
def _emblem():
    """A star in a ring (the emblem some sets print on the 6)."""
    t = np.array([math.radians(-90 + 36 * k) for k in range(10)])
    r = np.where(np.arange(10) % 2 == 0, 0.3, 0.12)
    star = np.stack([np.cos(t) * r, np.sin(t) * r], axis=1)
    return [([_circle(40) * 0.4], True), ([_circle(40) * 0.34], False), ([star], True)]


_PICTURES = {"paco": _paco, "skull": _skull, "emblem": _emblem}


def _light(canvas, scene, rng):
    """Uneven light: a gradient across the tray, vignetting, a colour cast, and glare (hard scenes)."""
    h, w = canvas.shape[:2]
    sw, sh = max(8, w // 16), max(8, h // 16)
    ys, xs = np.mgrid[0:sh, 0:sw].astype(np.float32)
    xs, ys = xs / sw - 0.5, ys / sh - 0.5
    strength = rng.uniform(0.2, 0.55) if scene.hard else rng.uniform(0.03, 0.18)
    direction = rng.uniform(0, 2 * math.pi)
    gain = 1 + strength * (xs * math.cos(direction) + ys * math.sin(direction)) * 2 * 0.5
    gain *= 1 - rng.uniform(0.05, 0.3 if scene.hard else 0.15) * (xs ** 2 + ys ** 2) * 2
    gain *= rng.uniform(0.8, 1.15) if scene.hard else rng.uniform(0.92, 1.05)
    cast = 1 + rng.normal(0, 0.06 if scene.hard else 0.025, 3)
    gain3 = cv2.resize((gain[..., None] * cast).astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    cv2.multiply(canvas, gain3, dst=canvas)
    if scene.hard and rng.random() < 0.6:
        glare = np.zeros((sh, sw), np.float32)
        for _ in range(int(rng.integers(1, 3))):
            cv2.ellipse(glare, (int(rng.uniform(0, sw)), int(rng.uniform(0, sh))),
                        (int(sw * rng.uniform(0.04, 0.12)), int(sh * rng.uniform(0.03, 0.1))),
                        rng.uniform(0, 180), 0, 360, float(rng.uniform(0.25, 0.55)), -1)
        glare = cv2.resize(cv2.GaussianBlur(glare, (0, 0), sw * 0.03), (w, h), interpolation=cv2.INTER_LINEAR)
        canvas += glare[..., None] * (255 - canvas)


def _camera(canvas, scene, rng, *, jpeg, blur, noise):
    """What the sensor adds: focus blur, noise, JPEG compression."""
    if blur is None:
        blur = rng.uniform(0.3, 1.3) if scene.hard else rng.uniform(0.0, 0.6)
    if blur > 0.2:
        canvas = cv2.GaussianBlur(canvas, (0, 0), blur)
    if noise is None:
        noise = rng.uniform(2, 7) if scene.hard else rng.uniform(0.5, 2.5)
    if noise > 0:
        _add_noise(canvas, rng, noise)
    canvas = cv2.convertScaleAbs(canvas)     # rounds and saturates to uint8
    if jpeg is None:
        jpeg = int(rng.integers(45, 90)) if scene.hard else int(rng.integers(80, 96))
    if jpeg:
        canvas = _jpeg(canvas, int(jpeg))
    return canvas
