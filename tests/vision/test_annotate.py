"""The evidence picture: counted dice boxed in green, flagged ones in orange with the reason."""
from __future__ import annotations

import numpy as np
import pytest

from vision.annotate import COUNTED, FLAGGED, IGNORED, draw_reading
from vision.types import Die, Reading


def _die(face, x, y, flags=()):
    return Die(face=face, seen=face, center=(x, y), size=60.0, angle=0.0, confidence=0.99,
               colour="red", flags=tuple(flags))


def _has_colour(image, box, colour):
    x0, y0, x1, y1 = box
    patch = image[y0:y1, x0:x1].astype(int)
    return bool((np.abs(patch - colour).max(axis=2) < 30).any())


def test_boxes_take_the_die_state_colour():
    photo = np.full((600, 800, 3), 90, np.uint8)
    reading = Reading("above", (_die(4, 200, 300), _die(None, 500, 300, ["edge"]), _die(2, 700, 500, ["outside"])))
    out = draw_reading(photo, reading)
    assert out.shape == photo.shape and not np.array_equal(out, photo)
    assert np.array_equal(photo, np.full((600, 800, 3), 90, np.uint8))        # the input is left alone
    # the left edge of each die's box (x = centre - 30)
    assert _has_colour(out, (165, 280, 175, 320), COUNTED)
    assert _has_colour(out, (465, 280, 475, 320), FLAGGED)
    assert _has_colour(out, (665, 480, 675, 520), IGNORED)
    assert not _has_colour(out, (465, 280, 475, 320), COUNTED)


def test_banner_shows_the_status_colour():
    photo = np.full((600, 800, 3), 90, np.uint8)
    ok = draw_reading(photo, Reading("above", (_die(3, 300, 300),)))
    check = draw_reading(photo, Reading("above", (_die(None, 300, 300, ["unreadable"]),)))
    assert _has_colour(ok, (0, 0, 6, 30), COUNTED)
    assert _has_colour(check, (0, 0, 6, 30), FLAGGED)


def test_rejects_a_non_image():
    with pytest.raises(ValueError):
        draw_reading(np.zeros((10, 10)), Reading("above", ()))


def test_an_underexposed_photo_is_shown_as_the_reader_saw_it_lifted():
    # dim and grainy: a camera at its exposure limit; the players must see their dice in it
    rng = np.random.default_rng(0)
    dim = np.clip(rng.normal(60, 6, (600, 800, 3)), 0, 255).astype(np.uint8)
    dim[200:260, 170:230] = 100                                             # a die, brighter than the board
    out = draw_reading(dim, Reading("above", (_die(4, 200, 230),)))
    assert np.median(out[400:, 400:]) > 1.5 * np.median(dim[400:, 400:])  # the board brought up
    assert _has_colour(out, (165, 210, 175, 250), COUNTED)
    # a photo taken in good light is drawn on as it is
    photo = np.full((600, 800, 3), 160, np.uint8)
    assert np.median(draw_reading(photo, Reading("above", ()))[400:, 400:]) == 160
