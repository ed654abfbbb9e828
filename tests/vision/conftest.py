"""Shared fixtures for the vision tests: seeded synthetic trays and the real byler-d6 photos."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from vision import synth

REPO = Path(__file__).resolve().parents[2]
BYLER = REPO.parent / "shared" / "data" / "byler-d6"


@pytest.fixture(scope="session")
def easy_tray():
    """12 dice, plain light, Pi camera size, seen from above: (image, truth)."""
    return synth.render_tray(7, 12)


@pytest.fixture(scope="session")
def hard_tray():
    """20 dice with bar light, glare, blur, JPEG, clusters and a few edge/stacked/cut/outside dice."""
    return synth.render_tray(11, 20, hard=True)


@pytest.fixture(scope="session")
def below_tray():
    """15 dice of the boxed Perudo set (paco on the ace) seen from under the clear tray."""
    return synth.render_tray(5, 15, view="below", picture_faces="paco")


@pytest.fixture(scope="session")
def byler_dir() -> Path:
    """The real photo set (../shared/data/byler-d6); tests that need it skip when it is absent."""
    if not (BYLER / "truth.jsonl").exists():
        pytest.skip("real photo set ../shared/data/byler-d6 not present")
    return BYLER


@pytest.fixture(scope="session")
def byler_truth(byler_dir) -> list[dict]:
    """truth.jsonl rows, with `path` (absolute image path) and `split` (author's train/test) added."""
    split = {}
    for line in (byler_dir / "author_split.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, part = line.split(",")
            split[name] = part
    rows = []
    for line in (byler_dir / "truth.jsonl").read_text().splitlines():
        row = json.loads(line)
        row["path"] = str(byler_dir / row["image"])
        row["split"] = split.get(Path(row["image"]).name)
        rows.append(row)
    return rows


@pytest.fixture(scope="session")
def train_die(byler_truth):
    """`train_die(name, (x, y))`: a byler-d6 train photo's truth row, and its truth die whose
    box holds the point."""
    def find(name: str, point) -> tuple[dict, dict]:
        row = next(r for r in byler_truth if r["image"].endswith(name))
        assert row["split"] == "train"
        die = next(d for d in row["dice"] if d["bbox"][0] <= point[0] <= d["bbox"][0] + d["bbox"][2]
                   and d["bbox"][1] <= point[1] <= d["bbox"][1] + d["bbox"][3])
        return row, die
    return find


@pytest.fixture(scope="session")
def boxed_set_table():
    """`boxed_set_table(scene, view)`: the calibration `companion calibrate` learns at one of the
    bench's boxed-set tables (`companion bench vision --only calibrated`): its empty tray, then
    six dice showing the paco to the camera (from below, the 6 up), the paco taught."""
    from vision.calibration import Calibration, learn_dice, learn_tray, teach_face

    def learn(scene: int, view: str) -> Calibration:
        cal = Calibration()
        learn_tray(cal, synth.render_tray(seed=scene, n_dice=0, scene_seed=scene, view=view)[0])
        lesson = synth.render_tray(seed=scene + 1, n_dice=6, scene_seed=scene, view=view, picture_faces="paco",
                                   faces=[1 if view == "above" else 6] * 6, clusters=0.0)[0]
        _, crops = learn_dice(cal, lesson, face=1)
        teach_face(cal, 1, crops)
        return cal
    return learn
