"""vision.calibration and `companion calibrate`: real files, real photos, real exit codes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import pytest

from vision import synth
from vision.calibration import Calibration, CalibrationError, parse_seat

REPO = Path(__file__).resolve().parents[2]


def companion(*args):
    return subprocess.run([sys.executable, "-m", "companion", *map(str, args)], capture_output=True,
                          text=True, cwd=REPO, timeout=180)


def test_save_and_load_keep_everything(tmp_path):
    cal = Calibration(image_size=(1640, 1232), tray_outline=[[10, 10], [1600, 12], [1590, 1200], [12, 1190]],
                      background={"lab_mean": [150, 128, 130], "lab_std": [4, 1, 1]}, die_size=58.5,
                      seats={"red": "Ana"}, faces={"1": {"face": 1, "kind": "picture", "side": 24, "templates": []}})
    cal.save(tmp_path / "cal.json")
    back = Calibration.load(tmp_path / "cal.json")
    assert back == cal
    assert back.seat_for_colour("red") == "Ana" and back.seat_for_colour("blue") is None


def test_scaled_to_another_photo_size():
    cal = Calibration(image_size=(1640, 1232), tray_outline=[[100, 100], [1540, 100], [1540, 1132]], die_size=60)
    half = cal.scaled_to(820, 616)
    assert half.tray_outline[1] == [770, 50]
    assert half.die_size == pytest.approx(30)


@pytest.mark.parametrize("text,message", [
    ("{not json", "bad JSON"),
    ('{"version": 99}', "version 99"),
    ('{"version": 1, "seats": {"pink": "Ana"}}', "unknown seat colour"),
    ('{"version": 1, "tray_outline": [[1, 2]]}', "at least 3 points"),
])
def test_broken_files_give_clear_errors(tmp_path, text, message):
    path = tmp_path / "cal.json"
    path.write_text(text)
    with pytest.raises(CalibrationError, match=message):
        Calibration.load(path)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(CalibrationError, match="no such calibration file"):
        Calibration.load(tmp_path / "nope.json")


@pytest.mark.parametrize("text", ["red", "=Ana", "pink=Ana", "red="])
def test_bad_seat_arguments(text):
    with pytest.raises(CalibrationError):
        parse_seat(text)


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    """An empty tray and a photo of the same tray with paco dice face 1 up (same table and light)."""
    folder = tmp_path_factory.mktemp("cal")
    empty, _ = synth.render_tray(7, 0, scene_seed=100)
    dice, truth = synth.render_tray(8, 6, scene_seed=100, faces=[1] * 6, picture_faces="paco",
                                    colours=["red"], clusters=0.0)
    cv2.imwrite(str(folder / "empty.png"), empty)
    cv2.imwrite(str(folder / "paco.png"), dice)
    (folder / "notes.txt").write_text("not a photo")
    return folder, truth


def test_calibrate_command_learns_size_seats_and_the_paco(photos, tmp_path):
    folder, truth = photos
    out = tmp_path / "table-cal.json"
    run = companion("calibrate", "--tray", folder / "empty.png", "--dice", folder / "paco.png", "--face", "1",
                    "--seat", "red=Ana", "--seat", "blue=Ben", "-o", out)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "[1/2] empty.png:" in run.stdout and "[2/2] paco.png:" in run.stdout
    data = json.loads(out.read_text())
    assert data["version"] == 1
    assert data["seats"] == {"red": "Ana", "blue": "Ben"}
    assert data["faces"]["1"]["templates"]
    true_size = sum(d["size"] for d in truth) / len(truth)
    assert data["die_size"] == pytest.approx(true_size, rel=0.35)
    cal = Calibration.load(out)
    assert cal.image_size == (1640, 1232)


def test_calibrate_reports_a_bad_photo_and_fails(photos, tmp_path):
    folder, _ = photos
    out = tmp_path / "cal.json"
    run = companion("calibrate", "--dice", folder / "notes.txt", folder / "paco.png", "-o", out)
    assert run.returncode == 1
    assert "notes.txt: FAILED" in run.stdout and "not an image" in run.stdout
    assert "paco.png: 6 dice" in run.stdout or "paco.png:" in run.stdout
    assert json.loads(out.read_text())["die_size"] > 0


def test_calibrate_needs_something_to_learn(tmp_path):
    run = companion("calibrate", "-o", tmp_path / "cal.json")
    assert run.returncode == 2 and "nothing to learn" in run.stderr
    assert not (tmp_path / "cal.json").exists()
