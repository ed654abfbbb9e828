"""An underexposed photo (dim and grainy) is read as a usual exposure would show it."""
from __future__ import annotations

import zlib

import cv2
import numpy as np

from companion.bench_vision import _turned_nearer
from vision import synth
from vision.exposure import NOISY, lifted, sensor_noise
from vision.reader import read_tray
from vision.types import UNREADABLE


def train_row(byler_truth, name: str) -> dict:
    row = next(r for r in byler_truth if r["image"].endswith(name))
    assert row["split"] == "train"
    return row


def in_box(box, dice):
    """Dice whose centre lies in a real photo's truth box (x, y, w, h)."""
    x, y, w, h = box
    return [d for d in dice if x <= d.center[0] <= x + w and y <= d.center[1] <= y + h]


def underexposed(image: np.ndarray) -> np.ndarray:
    """The photo a camera at its exposure limit takes (`vision.synth.SPOILS`): 0.45 times the
    light, and grain of deviation 6 in each colour channel (3.9 grey levels)."""
    return synth.SPOILS["underexposed"](image, 0)


def grey_level(image: np.ndarray, percent: float) -> float:
    return float(np.percentile(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), percent))


def test_sensor_noise_is_measured_and_a_clean_photo_has_little():
    # grain of deviation 3 in each colour channel, independent: 2.0 in the grey (0.67 times)
    flat = np.full((480, 640, 3), 128, np.uint8)
    assert 1.8 < sensor_noise(synth.with_grain(flat, 3.0, seed=0)) < 2.2
    image, _ = synth.render_tray(20240001, 12, hard=True)
    assert sensor_noise(image) <= NOISY


def test_a_well_exposed_photo_and_a_dark_table_well_lit_are_left_as_taken(byler_truth):
    photo = cv2.imread(train_row(byler_truth, "IMG_20191209_100026.jpg")["path"])
    assert lifted(photo) is photo
    # a dark board and dark dice under even light: as dim as an underexposed photo, but clean
    dark_table, _ = synth.render_tray(20240003, 10)
    assert grey_level(dark_table, 99) < 70
    assert lifted(dark_table) is dark_table


def test_a_dim_grainy_photo_is_brought_up_with_its_grain_smoothed(byler_truth):
    photo = cv2.imread(train_row(byler_truth, "IMG_20191209_100026.jpg")["path"])
    dim = underexposed(photo)
    up = lifted(dim)
    assert grey_level(dim, 99) < 100
    assert 180 <= grey_level(up, 99) <= 210
    gain = grey_level(up, 50) / grey_level(dim, 50)
    assert 1.8 < gain < 2.4
    # brightened alone, the grain would grow by the gain; smoothed first, it is below the dim photo's
    assert sensor_noise(up) < sensor_noise(dim)


def test_an_underexposed_photo_is_read_as_a_usual_exposure(byler_truth):
    # before the lift, the grain broke each of the four dice into pieces: all four flagged
    # (stacked, unreadable), the photo `check`; lifted, it reads as the photo as taken does
    row = train_row(byler_truth, "IMG_20191209_100026.jpg")
    reading = read_tray(underexposed(cv2.imread(row["path"])))
    assert reading.status == "ok"
    assert len(reading.dice) == len(row["dice"])
    for die in row["dice"]:
        (hit,) = in_box(die["bbox"], reading.dice)
        assert hit.face == die["face"]


def test_a_black_die_a_dim_room_hides_is_found_once_the_photo_is_lifted(byler_truth):
    # dark and grainy as the bench spoils it: the black die with dark red pips by the tray's
    # wall was lost and the photo was `ok` one die short; lifted, it is found (its face too dim
    # to read on the first crop: flagged until its face further out from the photo's middle was
    # read, right) and every other die is read right
    name = "IMG_20191208_112920.jpg"
    row = train_row(byler_truth, name)
    reading = read_tray(synth.SPOILS["dark and grainy"](cv2.imread(row["path"]), zlib.crc32(name.encode())))
    for die in row["dice"]:
        (hit,) = in_box(die["bbox"], reading.dice)
        assert hit.face == die["face"] or UNREADABLE in hit.flags
    assert sum(UNREADABLE in d.flags for d in reading.dice) <= 1
    truth = {str(face): sum(die["face"] == face for die in row["dice"]) for face in range(1, 7)}
    assert reading.status == "check" or reading.counts == truth


def test_a_die_only_the_dark_photo_shows_is_flagged_not_left_out(byler_truth):
    # byler-d6 TEST split, the bench's dark row framed otherwise (turned 30°, 1.2 times
    # nearer): on the lifted copy a dark marbled 5 in the tray's corner merges with the black
    # wall and is not found, and the photo was `ok` one die short; the photo as taken shows
    # it, so it is flagged and every die is in the reading
    name = "IMG_20191208_111423.jpg"
    row = next(r for r in byler_truth if r["image"].endswith(name))
    framed, to_framed = _turned_nearer(cv2.imread(row["path"]))
    reading = read_tray(synth.SPOILS["dark and grainy"](framed, zlib.crc32(name.encode())))
    assert reading.status == "check"
    for die in row["dice"]:
        x, y, w, h = die["bbox"]
        centre = (to_framed @ np.array([x + w / 2, y + h / 2, 1.0]))[:2]
        assert any(np.hypot(*(np.array(d.center) - centre)) < 0.6 * d.size for d in reading.dice), die
