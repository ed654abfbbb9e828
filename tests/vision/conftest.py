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
