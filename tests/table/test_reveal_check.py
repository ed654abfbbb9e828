"""What keeps a reveal from being settled: flagged dice, dice of no player, wrong counts."""
from __future__ import annotations

from companion.table import reveal as rv

READING = {"dice": [
    {"face": 4, "colour": "red", "seat": None, "flags": []},
    {"face": None, "colour": "red", "seat": None, "flags": ["edge"]},
    {"face": 2, "colour": "blue", "seat": None, "flags": []},
    {"face": 6, "colour": "other", "seat": None, "flags": []},
    {"face": 5, "colour": "blue", "seat": None, "flags": ["outside"]},   # on the rim: ignored
    {"face": 3, "colour": "green", "seat": "Ben", "flags": []},          # calibrated seat wins
]}


def test_each_die_in_doubt_is_named_and_counts_are_checked():
    entries = rv.entries_from_reading(READING, {"red": "Ana", "blue": "Ben"}, ["Ana", "Ben"])
    assert [(e["die"], e["player"]) for e in entries] == [(0, "Ana"), (1, "Ana"), (2, "Ben"), (3, None),
                                                          (5, "Ben")]
    problems = rv.problems(entries, {"Ana": 2, "Ben": 3})
    assert [(p["kind"], p["entry"], p["player"]) for p in problems] == [
        ("edge", 1, "Ana"), ("owner", 3, None), ("count", None, "Ben")]
    assert "re-roll it in the open" in problems[0]["message"]
    assert problems[2]["message"] == "Ben holds 3 dice but 2 are on the tray"
    assert rv.dice_by_player(entries, ["Ana", "Ben"]) == {"Ana": [4], "Ben": [2, 3]}


def test_a_fixed_reveal_has_nothing_in_doubt():
    entries = rv.entries_from_reading(READING, {"red": "Ana", "blue": "Ben"}, ["Ana", "Ben"])
    entries[1].update(face=1, flags=[], corrected=True)
    entries[3].update(player="Ben", corrected=True)
    assert rv.problems(entries, {"Ana": 2, "Ben": 3}) == []
    assert rv.dice_by_player(entries, ["Ana", "Ben"]) == {"Ana": [4, 1], "Ben": [2, 6, 3]}
