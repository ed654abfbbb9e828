"""vision.focus on real photos: a blurred photo's faces are read from a sharpened copy, a sharp
photo's (and a phone's, blurred in pixels but not on its big dice) from the photo itself."""
from __future__ import annotations

import cv2
import pytest

from vision import focus, synth
from vision.locate import find_dice
from vision.reader import read_tray

PHOTO = "IMG_20191208_111919.jpg"   # byler-d6 train: 20 dice of many colours on the tray


@pytest.fixture(scope="module")
def photo(byler_truth):
    row = next(r for r in byler_truth if r["image"].endswith(PHOTO))
    assert row["split"] == "train"
    return row, cv2.imread(row["path"])


def dice_seen(image):
    """The centres and sides of the dice the locator finds, as the reader measures focus on them."""
    found = [c for c in find_dice(image) if not c.flags]
    return [c.center for c in found], [c.size for c in found]


def test_soft_edges_are_told_at_the_dice_scale(photo):
    _, image = photo
    seen = dice_seen(image)
    assert focus.edges_per_side(image, *seen) > focus.BLURRED_EDGES
    assert focus.in_focus(image, *seen) is image
    blurred = cv2.GaussianBlur(image, (0, 0), 1.6)
    assert focus.edges_per_side(blurred, *dice_seen(blurred)) <= focus.BLURRED_EDGES
    # a phone's photo of the same dice: upscaled 4.7 times, soft in pixels, sharp on a die
    phone, _, _ = synth.phone_framed(image)
    assert focus.edges_per_side(phone, *dice_seen(phone)) > focus.BLURRED_EDGES


def test_a_photo_with_no_die_of_any_contrast_says_nothing_of_focus(photo):
    _, image = photo
    grey = cv2.cvtColor(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    flat = cv2.GaussianBlur(grey, (0, 0), 40)   # every square nearly one grey: no edges to measure
    assert focus.edges_per_side(flat, [(320, 320)], [30.0]) is None
    assert focus.in_focus(flat, [(320, 320)], [30.0]) is flat


def test_an_out_of_focus_photo_is_read_whole(photo):
    # blurred by 1.6 px (a camera focused off the tray): a 4 and a 2 were refused, their soft
    # pips splitting the face reader's two cues, and the photo went to `check`; read from the
    # sharpened copy every die is read right and the count stands
    row, image = photo
    reading = read_tray(cv2.GaussianBlur(image, (0, 0), 1.6))
    assert reading.status == "ok"
    assert reading.counts == {str(f): sum(d["face"] == f for d in row["dice"]) for f in range(1, 7)}
