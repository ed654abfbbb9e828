"""The synthetic tray generator: its truth must be exact, or every reader test built on it lies."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision import synth
from vision.imageio import load_image

CLEAN = dict(jpeg=0, blur=0, noise=0)


def test_same_seed_same_photo_and_truth(easy_tray):
    image, truth = synth.render_tray(7, 12)
    assert np.array_equal(image, easy_tray[0])
    assert list(truth) == list(easy_tray[1])
    other, _ = synth.render_tray(8, 12)
    assert not np.array_equal(image, other)


def test_truth_describes_each_die(easy_tray):
    image, truth = easy_tray
    assert image.shape == (1232, 1640, 3) and image.dtype == np.uint8
    assert len(truth) == 12
    for die in truth:
        assert 1 <= die["face"] <= 6 and die["seen"] == die["face"]
        assert die["colour"] in synth.COLOURS and die["flags"] == []
        x, y, w, h = die["bbox"]
        assert x <= die["center"][0] <= x + w and y <= die["center"][1] <= y + h
        assert 0 <= die["angle"] < 90 and 22 <= die["size"] <= 60


def test_dice_lie_where_truth_says():
    """Against the same scene with no dice, pixels change at every truth centre and nowhere far from a die."""
    empty, _ = synth.render_tray(3, 0, scene_seed=99, **CLEAN)
    image, truth = synth.render_tray(3, 15, scene_seed=99, faces=[2] * 15, **CLEAN)
    diff = np.abs(image.astype(int) - empty.astype(int)).max(axis=2)
    near = np.zeros(diff.shape, np.uint8)
    for die in truth:
        x, y = (int(round(v)) for v in die["center"])
        assert diff[y, x] > 25, f"nothing drawn at the centre of {die}"
        bx, by, bw, bh = die["bbox"]
        pad = die["size"]             # room for the shadow
        cv2.rectangle(near, (int(bx - pad), int(by - pad)), (int(bx + bw + pad), int(by + bh + pad)), 1, -1)
    assert diff[near == 0].max() == 0


@pytest.mark.parametrize("view, keystone", [("above", 0), ("below", 0), ("above", 0.12)])
def test_pips_match_the_seen_face(view, keystone):
    """Count dark blobs on white dice: the count is `seen`; from below it is 7 − the top face.
    With the camera tilted (keystone) the truth corners move with the picture."""
    image, truth = synth.render_tray(21, 12, view=view, colours=["white"], die_px=(80, 90),
                                     faces=[1, 2, 3, 4, 5, 6] * 2, keystone=keystone, **CLEAN)
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    for die in truth:
        corners = np.array(die["corners"])
        inner = (corners - die["center"]) * 0.85 + die["center"]
        mask = np.zeros(grey.shape, np.uint8)
        cv2.fillConvexPoly(mask, inner.round().astype(np.int32), 1)
        dark = ((grey < 110) & (mask == 1)).astype(np.uint8)
        n, _, stats, _ = cv2.connectedComponentsWithStats(dark)
        blobs = sum(1 for area in stats[1:, cv2.CC_STAT_AREA] if area > 20)
        expected = die["face"] if view == "above" else 7 - die["face"]
        assert die["seen"] == expected
        assert blobs == expected, die


def test_picture_faces_follow_the_set():
    _, paco = synth.render_tray(4, 18, picture_faces="paco", faces=[1, 6, 3] * 6)
    assert {d["picture"] for d in paco if d["seen"] == 1} == {"paco"}
    assert {d["picture"] for d in paco if d["seen"] != 1} == {None}
    # from below the paco shows when the 6 is up: it sits opposite the 6
    _, below = synth.render_tray(4, 18, view="below", picture_faces="paco", faces=[1, 6, 3] * 6)
    assert {d["face"] for d in below if d["picture"] == "paco"} == {6}
    _, emblem = synth.render_tray(4, 6, picture_faces="emblem", faces=[6, 6, 6, 2, 2, 2])
    assert [d["picture"] for d in emblem].count("emblem") == 3


def test_below_view_shows_the_picture_mirrored():
    face = synth.render_face(1, 96, picture_faces="paco")
    mirrored = synth.render_face(1, 96, picture_faces="paco", mirrored=True)
    assert np.abs(cv2.flip(face, 1).astype(int) - mirrored).mean() < 1
    assert np.abs(face.astype(int) - mirrored).mean() > 10      # a toucan is not symmetric


def _face_marks(view, top):
    """The near face of a lone big white paco die, cut out square along its truth corners."""
    image, truth = synth.render_tray(12, 1, view=view, faces=[top], colours=["white"], die_px=(110, 120),
                                     picture_faces="paco", **CLEAN)
    square = np.float32([[0, 0], [64, 0], [64, 64], [0, 64]])
    warp = cv2.getPerspectiveTransform(np.float32(truth[0]["corners"]), square)
    face = cv2.cvtColor(cv2.warpPerspective(image, warp, (64, 64)), cv2.COLOR_BGR2GRAY)[8:56, 8:56]
    return face < 120, truth[0]


def test_tray_seen_from_below_shows_the_paco_mirrored():
    above, top = _face_marks("above", 1)
    below, bottom = _face_marks("below", 6)          # same die, same place, turned over
    assert top["center"] == bottom["center"] and top["picture"] == bottom["picture"] == "paco"
    assert (below == above[:, ::-1]).mean() > 0.9
    assert (below == above).mean() < 0.8


def test_awkward_dice_carry_their_flags():
    image, truth = synth.render_tray(4, 12, edge=2, stacked=1, cut=2)
    flags = [tuple(d["flags"]) for d in truth]
    assert flags.count(("edge",)) == 2 and flags.count(("stacked",)) == 2 and flags.count(("cut",)) == 2
    h, w = image.shape[:2]
    for die in truth:
        corners = np.array(die["corners"])
        inside = ((corners >= 0) & (corners < (w, h))).all()
        assert inside == ("cut" not in die["flags"])
        x, y = die["center"]
        assert 0 <= x < w and 0 <= y < h


def test_a_stacked_die_seen_from_below_sticks_out_past_the_one_under_it():
    """From below the lower die hides the upper one: it must overhang, or no camera could see it."""
    for seed in range(8):
        _, truth = synth.render_tray(seed, 6, stacked=2, view="below")
        pairs = [d for d in truth if "stacked" in d["flags"]]
        assert len(pairs) == 4
        for lower, upper in zip(pairs[::2], pairs[1::2]):
            assert np.hypot(*np.subtract(lower["center"], upper["center"])) > 0.3 * lower["size"]


def test_outside_dice_lie_off_the_tray_floor():
    _, truth = synth.render_tray(6, 10, outside=3)
    floor = np.array(truth.scene["tray"], np.float32)
    for die in truth:
        distance = cv2.pointPolygonTest(floor, tuple(die["center"]), True)
        if "outside" in die["flags"]:
            assert distance < -die["size"] / 2
        else:
            assert distance > die["size"] / 2


def test_hard_set_has_touching_clusters(hard_tray):
    image, truth = hard_tray
    flat = [d for d in truth if not d["flags"]]
    closest = min(np.hypot(*np.subtract(a["center"], b["center"])) / max(a["size"], b["size"])
                  for i, a in enumerate(flat) for b in flat[i + 1:])
    assert closest < 1.2      # side by side, touching or nearly


@pytest.mark.parametrize("settings", [dict(jpeg=20, blur=2.0, noise=8), dict(jpeg=95, blur=0, noise=0)])
def test_camera_settings_give_valid_photos(settings):
    image, truth = synth.render_tray(2, 6, hard=True, **settings)
    ok, png = cv2.imencode(".png", image)
    assert load_image(png.tobytes()).shape == (1232, 1640, 3)
    assert len(truth) == 6


def test_phone_sized_photo_has_bigger_dice():
    image, truth = synth.render_tray(1, 8, size=synth.PHONE)
    assert image.shape == (3024, 4032, 3)
    assert all(85 <= d["size"] <= 160 for d in truth)


@pytest.mark.parametrize("how", list(synth.SPOILS))
def test_spoiled_photos_keep_their_frame_and_change_as_told(easy_tray, how):
    image, _ = easy_tray
    spoiled = synth.SPOILS[how](image, 7)
    assert spoiled.shape == image.shape and spoiled.dtype == np.uint8
    assert np.array_equal(spoiled, synth.SPOILS[how](image, 7))   # seeded: the same every run
    assert np.abs(spoiled.astype(int) - image).mean() > 0.1


@pytest.mark.parametrize("how", list(synth.REFRAMINGS))
def test_a_reframed_photo_carries_each_point_where_its_matrix_says(how):
    image = np.full((300, 400, 3), 200, np.uint8)
    points = [(60, 50), (330, 90), (200, 150), (120, 240)]
    for x, y in points:
        cv2.circle(image, (x, y), 4, (0, 0, 0), -1)
    framed, moves = synth.REFRAMINGS[how](image)
    assert framed.dtype == np.uint8 and framed.ndim == 3
    for x, y in points:
        u, v, w = moves @ (x, y, 1.0)
        u, v = int(round(u / w)), int(round(v / w))
        if 3 <= u < framed.shape[1] - 3 and 3 <= v < framed.shape[0] - 3:
            assert framed[v - 1:v + 2, u - 1:u + 2].mean() < 100, (how, x, y)   # the dot is there


def test_dark_and_grainy_is_darker_and_noisier():
    image, _ = synth.render_tray(3, 6)
    dark = synth.SPOILS["dark and grainy"](image, 0)
    assert dark.mean() < 0.6 * image.mean()
    grain = lambda im: np.abs(cv2.Laplacian(cv2.cvtColor(im, cv2.COLOR_BGR2GRAY), cv2.CV_32F)).mean()  # noqa: E731
    assert grain(dark) > 2 * grain(image)


def test_reveal_puts_each_seat_in_its_colour_and_zone():
    dice = {"ana": [1, 2, 3, 4, 5], "ben": [6, 6], "cyd": [2, 2, 2, 2]}
    colours = {"ana": "red", "ben": "blue", "cyd": "yellow"}
    image, truth = synth.render_reveal(dice, colours, seed=3)
    for seat, faces in dice.items():
        mine = [d for d in truth if d["seat"] == seat]
        assert sorted(d["face"] for d in mine) == sorted(faces)
        assert {d["colour"] for d in mine} == {colours[seat]}
        assert all(not d["flags"] for d in mine)
    centres = {seat: np.mean([d["center"] for d in truth if d["seat"] == seat], axis=0) for seat in dice}
    assert np.hypot(*(centres["ana"] - centres["cyd"])) > 100
    below, truth_below = synth.render_reveal(dice, colours, view="below", seed=3)
    assert all(d["seen"] == 7 - d["face"] for d in truth_below)


def test_reveal_can_stand_dice_on_edge_and_show_an_empty_tray():
    dice = {"ana": [1, 2, 3], "ben": [4, 5, 6]}
    _, truth = synth.render_reveal(dice, {"ana": "red", "ben": "green"}, seed=9, edge=2)
    assert [d["flags"] for d in truth].count(["edge"]) == 2
    assert sorted(d["face"] for d in truth) == [1, 2, 3, 4, 5, 6]
    empty, nothing = synth.render_reveal({}, {}, seed=9)
    assert list(nothing) == [] and empty.shape == (1232, 1640, 3)


@pytest.mark.parametrize("call", [
    lambda: synth.render_tray(1, 3, view="sideways"),
    lambda: synth.render_tray(1, 3, picture_faces="unicorn"),
    lambda: synth.render_tray(1, 3, faces=[1, 2]),
    lambda: synth.render_tray(1, 2, faces=[1, 7]),
    lambda: synth.render_tray(1, -1),
    lambda: synth.render_tray(1, 3, colours=["pink"]),
    lambda: synth.render_tray(1, 3, edge=2, stacked=1),
    lambda: synth.render_tray(1, 40, die_px=(250, 260)),
    lambda: synth.render_reveal({"ana": [1]}, {}),
    lambda: synth.render_reveal({"ana": [7]}, {"ana": "red"}),
    lambda: synth.render_reveal({"ana": [3]}, {"ana": "red"}, edge=2),
])
def test_bad_requests_raise_value_error(call):
    with pytest.raises(ValueError):
        call()
