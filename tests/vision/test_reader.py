"""vision.reader.read_tray: locate + faces put together, on synthetic trays with exact truth."""
from __future__ import annotations

import numpy as np
import pytest

from vision import faces, synth
from vision.calibration import Calibration
from vision.reader import read_tray
from vision.types import CUT, ImageError

needs_face_model = pytest.mark.skipif(not faces.MODEL_PATH.exists(),
                                      reason=f"face model {faces.MODEL_PATH.name} not built yet")


def nearest(reading, truth_die):
    tx, ty = truth_die["center"]
    return min(reading.dice, key=lambda d: np.hypot(d.center[0] - tx, d.center[1] - ty))


@needs_face_model
def test_a_cut_die_puts_the_photo_in_check_with_a_warning_naming_it():
    image, truth = synth.render_tray(0, 8, cut=1)
    reading = read_tray(image)
    assert reading.status == "check"
    cut_die = nearest(reading, next(d for d in truth if "cut" in d["flags"]))
    assert CUT in cut_die.flags and not cut_die.counted
    x, y = cut_die.center
    assert any(f"({x:.0f},{y:.0f})" in w and "cut off" in w for w in reading.warnings)


@needs_face_model
def test_counts_never_include_flagged_dice():
    image, _ = synth.render_tray(4, 8, edge=1)
    reading = read_tray(image)
    assert sum(reading.counts.values()) == sum(1 for d in reading.dice if d.counted)
    assert sum(reading.counts.values()) < len(reading.dice)


@needs_face_model
def test_below_view_reports_the_top_face_opposite_the_seen_one():
    image, truth = synth.render_tray(5, 8, view="below")
    reading = read_tray(image, view="below")
    read = [d for d in reading.dice if d.seen is not None]
    assert read
    assert all(d.face == 7 - d.seen for d in read)


@needs_face_model
def test_seats_come_from_the_calibrated_colours():
    image, truth = synth.render_tray(3, 6, colours=["red", "blue"])
    cal = Calibration(seats={"red": "Ana", "blue": "Ben"})
    reading = read_tray(image, calibration=cal)
    for die in reading.dice:
        assert die.seat == {"red": "Ana", "blue": "Ben"}[die.colour]


def test_black_photo_is_refused():
    with pytest.raises(ImageError):
        read_tray(np.zeros((480, 640, 3), np.uint8))


def test_unknown_view_is_refused():
    image, _ = synth.render_tray(0, 6)
    with pytest.raises(ValueError, match="view"):
        read_tray(image, view="sideways")
