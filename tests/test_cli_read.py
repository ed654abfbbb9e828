"""`companion read` run as a user runs it: a real process, real image files, real exit codes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision import synth
from vision.imageio import load_image
from vision.reader import read_tray

REPO = Path(__file__).resolve().parents[1]
DIE_KEYS = {"face", "seen", "center", "size", "angle", "confidence", "colour", "seat", "flags"}


def companion(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "companion", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd or REPO, timeout=120)


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    """Two synthetic tray photos (JPEG from above, PNG from below), a text file and a cut-off JPEG."""
    folder = tmp_path_factory.mktemp("photos")
    above, _ = synth.render_tray(31, 8, colours=["red", "blue", "yellow", "white"])
    below, _ = synth.render_tray(32, 6, view="below")
    cv2.imwrite(str(folder / "above.jpg"), above)
    cv2.imwrite(str(folder / "below.png"), below)
    (folder / "notes.jpg").write_text("not a photo\n")
    data = (folder / "above.jpg").read_bytes()
    (folder / "cut.jpg").write_bytes(data[: len(data) // 2])
    return folder


def test_json_is_one_object_per_photo_matching_the_reader(photos):
    run = companion("read", photos / "above.jpg", photos / "below.png", "--json")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.strip().splitlines()
    assert len(lines) == 2
    first = json.loads(lines[0])
    assert set(first) == {"image", "view", "status", "dice", "counts", "warnings"}
    assert first["image"] == str(photos / "above.jpg") and first["status"] in ("ok", "check")
    assert set(first["counts"]) == {"1", "2", "3", "4", "5", "6"}
    assert all(set(d) == DIE_KEYS for d in first["dice"])
    # the CLI adds nothing and loses nothing: same as reading the file in this process
    expected = read_tray(load_image(photos / "above.jpg")).to_json(str(photos / "above.jpg"))
    assert (first["status"], first["counts"], first["warnings"]) == \
        (expected["status"], expected["counts"], list(expected["warnings"]))
    key = lambda d: (d["face"], d["seen"], d["colour"], d["flags"], round(d["center"][0]), round(d["center"][1]))  # noqa: E731
    assert [key(d) for d in first["dice"]] == [key(d) for d in expected["dice"]]


def test_below_view_reports_top_face_opposite_the_seen_one(photos):
    run = companion("read", photos / "below.png", "--json", "--view", "below")
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["view"] == "below"
    read = [d for d in result["dice"] if d["seen"] is not None]
    assert read, "no die read at all from below"
    assert all(d["face"] == 7 - d["seen"] for d in read)


def test_bad_files_are_reported_and_the_rest_still_read(photos):
    run = companion("read", photos / "notes.jpg", photos / "above.jpg", photos / "missing.jpg",
                    photos / "cut.jpg", "--json")
    assert run.returncode == 1
    results = [json.loads(line) for line in run.stdout.strip().splitlines()]
    assert [Path(r["image"]).name for r in results] == ["notes.jpg", "above.jpg", "missing.jpg", "cut.jpg"]
    assert "dice" in results[1] and "error" not in results[1]
    assert "not an image" in results[0]["error"]
    assert "no such file" in results[2]["error"]
    assert "truncated" in results[3]["error"]
    errors = run.stderr.strip().splitlines()
    assert len(errors) == 3 and all(line.startswith("companion read: ") for line in errors)
    assert "Traceback" not in run.stderr


def test_human_table_lists_each_die(photos):
    run = companion("read", photos / "above.jpg")
    assert run.returncode == 0, run.stderr
    result = read_tray(load_image(photos / "above.jpg"))
    lines = run.stdout.strip().splitlines()
    assert f"status {result.status}" in lines[0] and "counts 1:" in lines[0]
    die_rows = [line for line in lines[2:] if not line.lstrip().startswith("!")]
    assert len(die_rows) == len(result.dice)


def test_annotate_one_photo_writes_a_picture_opencv_reads(photos, tmp_path):
    out = tmp_path / "evidence.png"
    run = companion("read", photos / "above.jpg", "--annotate", out)
    assert run.returncode == 0, run.stderr
    picture = cv2.imread(str(out))
    original = cv2.imread(str(photos / "above.jpg"))
    assert picture is not None and picture.shape == original.shape
    assert np.abs(picture.astype(int) - original).max(axis=2).mean() > 0.5    # boxes and labels drawn


def test_annotate_several_photos_into_a_folder_or_template(photos, tmp_path):
    run = companion("read", photos / "above.jpg", photos / "below.png", "--annotate", tmp_path / "out")
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["above.read.png", "below.read.png"]
    run = companion("read", photos / "above.jpg", photos / "below.png", "--annotate", tmp_path / "t" / "{index}-{stem}.jpg")
    assert run.returncode == 0, run.stderr
    assert cv2.imread(str(tmp_path / "t" / "2-below.jpg")) is not None


def test_calibration_file_maps_colours_to_seats(photos, tmp_path):
    from vision.calibration import Calibration

    cal = tmp_path / "table-cal.json"
    Calibration(seats={"red": "Ana", "blue": "Ben"}).save(cal)
    run = companion("read", photos / "above.jpg", "--json", "--calibration", cal)
    assert run.returncode == 0, run.stderr
    dice = json.loads(run.stdout)["dice"]
    assert all(d["seat"] == {"red": "Ana", "blue": "Ben"}.get(d["colour"]) for d in dice)
    assert {"Ana", "Ben"} & {d["seat"] for d in dice}


@pytest.mark.parametrize("args, message", [
    (["--annotate", "out/{stem}.png"], "same name"),           # two photos called above.*
    (["--annotate", "evidence.txt"], "end the name in .png or .jpg"),
    (["--calibration", "no-such-calibration.json"], "no such calibration file"),
])
def test_bad_options_exit_2_before_reading(photos, tmp_path, args, message):
    images = [photos / "above.jpg", photos / "above.jpg"] if "{stem}" in args[1] else [photos / "above.jpg"]
    run = companion("read", *images, *args, cwd=tmp_path)
    assert run.returncode == 2
    assert message in run.stderr and run.stdout == ""
