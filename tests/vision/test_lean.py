"""vision.lean (the close look that tells a flat die from a leaning or a stacked one) and the locator's use of it."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision import lean, locate, synth
from vision.reader import read_tray
from vision.lean import FLAT, LEANING, ON_ANOTHER
from vision.types import EDGE, STACKED


def test_the_crop_turns_the_way_out_of_the_photo_to_the_right():
    # a lens shows a flat die's sides on the side facing the photo's centre: after the turn they
    # always fall on the left, whichever corner of the photo the die lies in
    for dx, dy in [(1, 0), (-1, 0), (0, 1), (-1, -1), (1, -1)]:
        image = np.zeros((600, 800, 3), np.uint8)
        die = np.array([400 + 250 * dx, 300 + 200 * dy], float)
        outward = (die - (399.5, 299.5)) / np.hypot(*(die - (399.5, 299.5)))
        spot = die + 30 * outward                       # a mark 30 px further out than the die's centre
        cv2.circle(image, tuple(int(v) for v in np.round(spot)), 6, (255, 255, 255), -1)
        crop = lean.lean_crop(image, die, side=40.0)
        ys, xs = np.nonzero(crop[..., 0] > 128)
        middle = (lean.CROP - 1) / 2
        assert xs.mean() - middle == pytest.approx(30 * lean.DIE / 40, abs=1.5)
        assert abs(ys.mean() - middle) < 1.5


def test_the_reach_is_the_distance_from_the_photos_centre_in_photo_widths():
    assert lean.outward_reach((600, 800, 3), (399.5, 299.5)) == 0
    assert lean.outward_reach((600, 800, 3), (799.5, 299.5)) == pytest.approx(0.5)


def test_leaning_dice_are_told_from_flat_ones_on_fresh_trays():
    # trays never trained on (tools/train_lean.py uses seeds from 9,900,000): 2 leaning dice in
    # each, plain and hard, lone and touching, from above and below
    leaning, flat = [], []
    for seed in range(61_000, 61_012):
        image, truth = synth.render_tray(seed, 8, edge=2, hard=seed % 2 == 0, view=("above", "below")[seed % 3 == 2])
        view, _, _, expected = locate._survey(image)
        dice = [d for d in truth if not {"stacked", "cut", "outside"} & set(d["flags"])]
        chances = lean.lean_chances(image, [d["center"] for d in dice], expected / view.scale)
        for die, chance in zip(dice, chances):
            (leaning if EDGE in die["flags"] else flat).append(chance)
    leaning, flat = np.array(leaning), np.array(flat)
    assert len(leaning) == 24 and len(flat) > 60
    flagged = leaning[:, FLAT] < locate.FLAT_CHANCE
    assert np.mean(flagged) >= 0.75
    assert np.all(leaning[flagged, LEANING] > leaning[flagged, ON_ANOTHER])     # flagged `edge`
    assert np.mean(flat[:, FLAT] < locate.FLAT_CHANCE) <= 0.03


def test_stacked_dice_are_told_from_flat_ones_on_fresh_trays():
    # a die resting on another off its centre, from above (it hides most of the lower one) and
    # from below (the lower one hides most of it); trays never trained on
    stacked, flat = [], []
    for seed in range(62_000, 62_012):
        image, truth = synth.render_tray(seed, 9, stacked=2, hard=seed % 2 == 0, view=("above", "below")[seed % 3 == 2])
        view, _, _, expected = locate._survey(image)
        dice = [d for d in truth if not {"cut", "outside"} & set(d["flags"])]
        chances = lean.lean_chances(image, [d["center"] for d in dice], expected / view.scale)
        for die, chance in zip(dice, chances):
            (stacked if STACKED in die["flags"] else flat).append(chance)
    stacked, flat = np.array(stacked), np.array(flat)
    assert len(stacked) >= 40 and len(flat) > 50
    flagged = stacked[:, FLAT] < locate.FLAT_CHANCE
    assert np.mean(flagged) >= 0.5
    assert np.mean(stacked[flagged, ON_ANOTHER] > stacked[flagged, LEANING]) >= 0.9        # flagged `stacked`
    assert np.mean(flat[:, FLAT] < locate.FLAT_CHANCE) <= 0.03


def test_no_die_on_real_photos_is_taken_for_a_leaning_or_stacked_one(byler_truth):
    # every byler-d6 die lies flat: on the author's test split (never trained on) the close
    # look sees none of them leaning or stacked
    chances = []
    for row in [r for r in byler_truth if r["split"] == "test"]:
        image = cv2.imread(row["path"])
        view, _, _, expected = locate._survey(image)
        centres = [(x + w / 2, y + h / 2) for x, y, w, h in (d["bbox"] for d in row["dice"])]
        chances.extend(lean.lean_chances(image, centres, expected / view.scale))
    chances = np.array(chances)
    assert len(chances) > 300
    assert chances[:, FLAT].min() >= locate.FLAT_CHANCE


@pytest.mark.parametrize("seed, n_dice, options", [
    # bench hard set, seed 7: a die leaning at about 45 degrees, its two half-seen faces taken
    # for one 6; its outline passed for a flat die's seen at a slant, and the detector's on-edge
    # score was low; the photo read `ok` one 6 too many
    (70043, 5, {}),
    # untuned bench seeds (hard 23; close 7, a phone close over the dice): the locator counts a
    # leaning die where it sees its top face, a fifth of its side off its middle; a close look
    # taught on dice cut at their middles saw a flat die there (0.76; and 0.70, from a first
    # retraining of the net) and the photo read `ok` a 2 (an ace) too many
    (230099, 16, {}),
    (70081, 7, {"size": synth.PHONE, "die_px": (200.0, 300.0)}),
    # untuned crowded seed 47: a die leaning alone, its outline 1.4 times as long as wide but
    # small for two dice, passed for a flat die's seen at a slant; the close look found it
    # likelier leaning (0.67) than flat (0.33): the photo read `ok` a 5 too many
    (470097, 9, {"clusters": 0.9}),
])
def test_a_die_leaning_in_a_hard_scene_is_flagged_not_read_as_a_face(seed, n_dice, options):
    image, truth = synth.render_tray(seed, n_dice, hard=True, **options)
    (leaning,) = [d for d in truth if EDGE in d["flags"]]
    reading = read_tray(image)
    (hit,) = [d for d in reading.dice if np.hypot(d.center[0] - leaning["center"][0], d.center[1] - leaning["center"][1]) < 0.6 * leaning["size"]]
    assert EDGE in hit.flags and not hit.counted
    assert reading.status == "check"


@pytest.mark.parametrize("seed, n_dice, options", [
    # bench hard set, seed 7, a phone-sized photo: a red die resting on a white one hides all but
    # its rim; the locator saw one die there and the photo read `ok` one die short
    (70063, 8, {"size": synth.PHONE}),
    # untuned bench seeds (hard 17 and 11, crowded 23): a die resting on another of another
    # colour (yellow on yellow, purple on red, green on white) a fifth of a side off; the
    # close look gave the top die 0.65, 0.14 and 0.13 of lying flat, and each photo read `ok`
    # one die short
    (170108, 20, {}),
    (110048, 6, {}),
    (230091, 9, {"clusters": 0.9}),
    # untuned crowded seed 47: a purple die squarely on a yellow one, slivers of it beside the
    # top die; the close look gave 0.051 of lying flat (FLAT_CHANCE 0.05) and the detector 0.91
    # of a die on another: the photo read `ok` one ace for two dice
    (470013, 9, {"clusters": 0.9}),
])
def test_a_die_resting_on_another_is_flagged_not_counted_as_one(seed, n_dice, options):
    image, truth = synth.render_tray(seed, n_dice, hard=True, **options)
    pair = [d for d in truth if STACKED in d["flags"]]
    reading = read_tray(image)
    near = [d for d in reading.dice if min(np.hypot(d.center[0] - t["center"][0], d.center[1] - t["center"][1])
                                           for t in pair) < 0.6 * pair[0]["size"]]
    assert near and all(STACKED in d.flags and not d.counted for d in near)
    assert reading.status == "check"


def test_a_missing_or_corrupt_model_file_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="lean model missing.*train_lean"):
        lean.LeanModel(tmp_path / "lean_cnn.onnx")
    bad = tmp_path / "lean_cnn.onnx"
    bad.write_bytes(b"this is not an ONNX model" * 10)
    with pytest.raises(ValueError, match="lean model unreadable"):
        lean.LeanModel(bad)
