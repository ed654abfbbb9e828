"""The judge's verdict on whole records: the format of issue 3, shape errors, rule breaks."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from companion.rules import RecordError
from companion.rules.record import judge

EXAMPLES = Path(__file__).resolve().parents[2] / "companion" / "examples"

ISSUE_RECORD = {
    "variant": "perudo", "options": {"calza": True},
    "players": ["Ana", "Ben", "Cyd"],
    "dice": {"Ana": 5, "Ben": 5, "Cyd": 5},
    "starter": "Ana",
    "rounds": [
        {"bids": [["Ana", 3, 4], ["Ben", 4, 4], ["Cyd", 3, 1]],
         "call": {"type": "dudo", "by": "Ana"},
         "dice": {"Ana": [1, 4, 4, 2, 6], "Ben": [3, 3, 5, 6, 1], "Cyd": [2, 2, 4, 5, 6]}},
    ],
}


def record(**changes):
    out = copy.deepcopy(ISSUE_RECORD)
    out.update(changes)
    return out


def test_the_issues_example_verdict_exactly():
    assert judge(ISSUE_RECORD) == {
        "rounds": [{"special": None, "bid": ["Cyd", 3, 1], "call": "dudo", "by": "Ana", "count": 2,
                    "loser": "Cyd", "gainer": None, "eliminated": [], "next_starter": "Cyd"}],
        "dice": {"Ana": 5, "Ben": 5, "Cyd": 4}, "bag": 1, "winner": None, "error": None}


def test_defaults_options_dice_and_starter_may_be_omitted():
    short = {k: v for k, v in ISSUE_RECORD.items() if k not in ("options", "dice", "starter")}
    assert judge(short) == judge(ISSUE_RECORD)


def test_bag_starts_with_the_dice_players_are_missing():
    verdict = judge(record(dice={"Ana": 3, "Ben": 5, "Cyd": 4}, rounds=[]))
    assert (verdict["bag"], verdict["dice"], verdict["rounds"]) == (3, {"Ana": 3, "Ben": 5, "Cyd": 4}, [])


def test_out_of_turn_bid_stops_judging_at_that_bid():
    bad = record(rounds=ISSUE_RECORD["rounds"] * 2)
    verdict = judge(bad)
    assert verdict["rounds"] == judge(ISSUE_RECORD)["rounds"]
    assert verdict["dice"] == {"Ana": 5, "Ben": 5, "Cyd": 4}
    assert verdict["error"] == {"round": 2, "bid": 1, "reason": "Ana bid 3×4: it is Cyd's turn, not Ana's"}


def test_illegal_raise_reports_the_bid_number_within_the_round():
    bad = record()
    bad["rounds"][0]["bids"] = [["Ana", 3, 4], ["Ben", 4, 4], ["Cyd", 1, 1]]
    assert judge(bad)["error"] == {"round": 1, "bid": 3,
                                   "reason": "Cyd bid 1×1: a bid on aces needs at least 2 after 4×4"}


def test_call_by_a_player_who_may_not_make_it_has_no_bid_number():
    bad = record()
    bad["rounds"][0]["call"] = {"type": "dudo", "by": "Ben"}
    error = judge(bad)["error"]
    assert (error["round"], error["bid"]) == (1, None)
    assert error["reason"] == "Ben called dudo: only Ana, whose turn it is, may call dudo"


def test_calza_by_the_last_bidder_is_a_rule_break_in_the_boxed_game():
    bad = record()
    bad["rounds"][0]["call"] = {"type": "calza", "by": "Cyd"}
    assert "Cyd made the last bid" in judge(bad)["error"]["reason"]


def test_a_call_with_no_bid_before_it_is_a_rule_break():
    bad = record()
    bad["rounds"][0]["bids"] = []
    assert judge(bad)["error"]["bid"] is None and "no bid" in judge(bad)["error"]["reason"]


def test_revealed_dice_that_do_not_match_are_a_rule_break():
    bad = record()
    bad["rounds"][0]["dice"]["Ben"] = [3, 3, 5, 6]
    assert judge(bad)["error"] == {"round": 1, "bid": None, "reason": "Ben holds 5 dice but 4 were revealed"}
    assert judge(bad)["rounds"] == []


def test_a_round_after_the_game_is_over_is_a_rule_break():
    data = json.loads((EXAMPLES / "perudo_demo.json").read_text())
    data["rounds"].append(data["rounds"][-1])
    verdict = judge(data)
    assert verdict["winner"] == "Ben" and len(verdict["rounds"]) == 6
    assert verdict["error"]["round"] == 7 and verdict["error"]["bid"] is None
    assert verdict["rounds"][-1]["next_starter"] is None


@pytest.mark.parametrize("change, message", [
    ({"variant": "yahtzee"}, "unknown variant"),
    ({"variant": 3}, "variant"),
    ({"options": {"calzone": True}}, "unknown option"),
    ({"options": {"calza": "yes"}}, "calza"),
    ({"options": {"raise_mode": "sideways"}}, "raise_mode"),
    ({"options": [1]}, "options"),
    ({"players": ["Ana", "Ana", "Cyd"]}, "different name"),
    ({"players": ["Ana"]}, "two players"),
    ({"players": ["P%d" % i for i in range(7)], "dice": None, "starter": None, "rounds": []}, "at most 6"),
    ({"dice": {"Ana": 6}}, "1 to 5"),
    ({"dice": {"Ana": 0}}, "1 to 5"),
    ({"dice": {"Zed": 3}}, "Zed"),
    ({"starter": "Zed"}, "starter"),
    ({"starter": ["Ana"]}, "starter"),
    ({"starter": {"name": "Ana"}}, "starter"),
    ({"rounds": {}}, "rounds"),
    ({"rounds": [{"bids": [["Ana", 3, 7]], "call": {"type": "dudo", "by": "Ben"}, "dice": {}}]}, "face"),
    ({"rounds": [{"bids": [["Ana", 0, 4]], "call": {"type": "dudo", "by": "Ben"}, "dice": {}}]}, "quantity"),
    ({"rounds": [{"bids": [["Ana", True, 4]], "call": {"type": "dudo", "by": "Ben"}, "dice": {}}]}, "quantity"),
    ({"rounds": [{"bids": [["Zed", 3, 4]], "call": {"type": "dudo", "by": "Ben"}, "dice": {}}]}, "Zed"),
    ({"rounds": [{"bids": [["Ana", 3, 4]], "dice": {}}]}, "no call"),
    ({"rounds": [{"bids": [["Ana", 3, 4]], "call": {"type": "dudo", "by": "Ben"}}]}, "no revealed dice"),
    ({"rounds": [{"bids": [["Ana", 3, 4]], "call": {"type": "liar", "by": "Ben"}, "dice": {}}]}, "dudo or calza"),
    ({"rounds": [{"bids": [["Ana", 3, 4]], "call": {"type": "dudo", "by": "Ben"},
                  "dice": {"Ana": [1, 2, 3, 4, 7]}}]}, "faces 1 to 6"),
])
def test_malformed_records_are_record_errors(change, message):
    with pytest.raises(RecordError, match=message):
        judge(record(**change))


def test_shape_is_checked_everywhere_before_any_rule():
    """A face of 7 in round 2 is malformed even though round 1 already breaks a rule."""
    bad = record()
    bad["rounds"][0]["bids"][0] = ["Ben", 3, 4]  # out of turn
    bad["rounds"].append({"bids": [["Cyd", 3, 7]], "call": {"type": "dudo", "by": "Ana"}, "dice": {}})
    with pytest.raises(RecordError):
        judge(bad)


def test_a_record_that_is_not_an_object():
    with pytest.raises(RecordError):
        judge([1, 2, 3])
    with pytest.raises(RecordError, match="rounds"):
        judge({"variant": "perudo", "players": ["A", "B"]})


@pytest.mark.parametrize("name, winner, final_dice", [
    ("perudo_demo", "Ben", {"Ana": 0, "Ben": 3, "Cyd": 0}),
    ("kozak_palafico", "Petro", {"Oksana": 0, "Petro": 2, "Ivan": 0, "Marta": 0}),
    ("club_maputa", "Vera", {"Anton": 0, "Boris": 0, "Vera": 1}),
    ("wiki_maputo", "Dima", {"Sasha": 0, "Dima": 1}),
    ("blog_house_rules", None, {"Olya": 0, "Taras": 4, "Yurko": 5}),
    ("snyd_stairs", None, {"Mads": 1, "Freja": 0, "Emil": 0}),
])
def test_bundled_examples_end_as_worked_out_by_hand(name, winner, final_dice):
    verdict = judge(json.loads((EXAMPLES / f"{name}.json").read_text()))
    assert (verdict["error"], verdict["winner"], verdict["dice"]) == (None, winner, final_dice)


def test_examples_show_each_special_round_rule_as_worked_out_by_hand():
    kozak = judge(json.loads((EXAMPLES / "kozak_palafico.json").read_text()))["rounds"]
    assert [r["special"] for r in kozak] == [None, "palifico", None, None, None, "palifico", "palifico", None]
    club = judge(json.loads((EXAMPLES / "club_maputa.json").read_text()))["rounds"]
    assert club[1]["special"] is None  # three players with one die each: no maputa (23.07.2013)
    blog = judge(json.loads((EXAMPLES / "blog_house_rules.json").read_text()))["rounds"]
    assert [r["next_starter"] for r in blog] == ["Olya", "Yurko", "Taras", "Taras"]
    snyd = judge(json.loads((EXAMPLES / "snyd_stairs.json").read_text()))["rounds"]
    assert [r["count"] for r in snyd] == [6, 3, 6, 3, 2, 0]


def test_dispute_example_points_at_the_illegal_bid():
    verdict = judge(json.loads((EXAMPLES / "perudo_dispute.json").read_text()))
    assert verdict["error"] == {"round": 2, "bid": 3, "reason": "Ana bid 7×2: after 7×4 the face may not go "
                                                              "down: raise the quantity of fours or name a higher face"}
