"""One row per option: the same situation under the preset's default and with the option switched.

Each scenario plays a small situation through the engine and returns what a player would notice.
"""
from __future__ import annotations

import random

import pytest

from companion.rules import Bid, Game, RecordError, find_variant
from companion.rules.variants import OPTIONS


def game(variant, players="ABC", dice=None, starter=None) -> Game:
    return Game(variant, list(players), dice=dice, starter=starter)


def drop_a(g: Game) -> Game:
    """A, holding two dice, overbids; B calls dudo; A is left with one die."""
    g.bid("A", Bid(30, 6))
    g.call("dudo", "B")
    g.reveal({p: [3] * n for p, n in g.expected_dice().items()})
    return g


def legal(g: Game, player: str, quantity: int, face: int) -> bool:
    return g.bid_error(player, Bid(quantity, face)) is None


def settle(g: Game, bids, call, dice):
    for player, quantity, face in bids:
        g.bid(player, Bid(quantity, face))
    g.call(*call)
    return g.reveal(dice)


def dice_in_play(v):
    return game(v).dice_in_play


def seven_players(v):
    try:
        game(v, "ABCDEFG")
    except RecordError:
        return "refused"
    return "seated"


def sixteen_threes_opening_with_fifteen_dice_in_play(v):
    return legal(game(v), "A", 16, 3)


def five_fives_after_four_fours(v):
    g = game(v)
    g.bid("A", Bid(4, 4))
    return legal(g, "B", 5, 5)


def count_of_two_fours(v):
    return settle(game(v), [("A", 2, 4)], ("dudo", "B"), {"A": [1, 4, 2, 2, 2], "B": [3] * 5, "C": [3] * 5}).count


def two_aces_after_four_fours(v):
    g = game(v)
    g.bid("A", Bid(4, 4))
    return legal(g, "B", 2, 1)


def open_on_aces(v):
    return legal(game(v), "A", 2, 1)


def ace_quantity_repeated(v):
    """Play random legal rounds: does any round name the same number of aces twice?"""
    rng = random.Random(7)
    for _ in range(300):
        g = game(v, "ABCD")
        while g.phase == "bidding" and len(g.bids) < 12:
            g.bid(g.to_move, rng.choice(g.legal_bids()))
        aces = [b.quantity for _, b in g.bids if b.face == 1]
        if len(aces) != len(set(aces)):
            return True
    return False


def special_after_drop(v):
    return drop_a(game(v, "ABC", {"A": 2})).special_owner


def special_on_first_round_for_a_one_die_starter(v):
    return game(v, "ABC", {"A": 1}).special_owner


def second_special_after_winning_a_die_back(v):
    g = drop_a(game(v, "ABC", {"A": 2}))
    settle(g, [("A", 1, 3), ("B", 6, 3)], ("calza", "C"), {"A": [3], "B": [3] * 5, "C": [4] * 5})  # C right
    settle(g, [("C", 5, 4)], ("calza", "A"), {"A": [3], "B": [3] * 5, "C": [4] * 5})  # A right: back to 2
    assert g.dice["A"] == 2 and g.to_move == "A"
    return drop_a(g).special_owner


def special_with_two_players(v):
    return drop_a(game(v, "AB", {"A": 2})).special_owner


def special_with_three_single_dice(v):
    return drop_a(game(v, "ABC", {"A": 2, "B": 1, "C": 1})).special_owner


def ace_counts_in_special(v):
    g = drop_a(game(v, "ABC", {"A": 2}))
    return settle(g, [("A", 1, 4)], ("dudo", "B"), {"A": [1], "B": [3] * 5, "C": [3] * 5}).count


def one_die_player_changes_face(v):
    g = drop_a(game(v, "ABC", {"A": 2, "B": 1}))
    g.bid("A", Bid(1, 3))
    return legal(g, "B", 1, 4)


def non_owner_opens_special_on_aces(v):
    g = drop_a(game(v, "ABC", {"A": 2}))
    assert g.to_move == "B"
    return legal(g, "B", 1, 1)


def owner_opens_special_on_aces(v):
    return legal(drop_a(game(v, "ABC", {"A": 2})), "A", 1, 1)


def special_opener(v):
    return drop_a(game(v, "ABC", {"A": 2})).to_move


def calza_callers(v):
    g = game(v, "ABCD")
    g.bid("A", Bid(2, 3))
    return g.callers("calza")


def calza_callers_in_special(v):
    g = drop_a(game(v, "ABC", {"A": 2}))
    g.bid("A", Bid(1, 3))
    return g.callers("calza")


def calza_callers_two_players(v):
    g = game(v, "AB")
    g.bid("A", Bid(2, 3))
    return g.callers("calza")


def calza_gain_at_four(v):
    g = game(v, "ABC", {"B": 4})
    return settle(g, [("A", 2, 3)], ("calza", "B"), {"A": [3, 3, 2, 2, 2], "B": [4] * 4, "C": [2] * 5}).gainer


def starter_after_calza(v):
    g = game(v, "ABC")
    return settle(g, [("A", 2, 3)], ("calza", "B"), {"A": [3] * 5, "B": [4] * 5, "C": [2] * 5}).next_starter


def dudo_callers(v):
    g = game(v, "ABCD")
    g.bid("A", Bid(2, 3))
    return g.callers("dudo")


def starter_after_a_lost_dudo(v):
    g = game(v)
    return settle(g, [("A", 9, 3)], ("dudo", "B"), {"A": [3] * 5, "B": [4] * 5, "C": [2] * 5}).next_starter


def bag_shown(v):
    return game(v, "ABC", {"A": 3}).visible_bag


def dice_after_a_lost_dudo(v):
    g = game(v)
    settle(g, [("A", 2, 3)], ("dudo", "B"), {p: [3] * n for p, n in g.expected_dice().items()})
    return g.dice


def end_of_a_duel(v):
    g = game(v, "AB", {"A": 1, "B": 1})
    settle(g, [("A", 3, 3)], ("dudo", "B"), {"A": [3], "B": [2]})
    return g.winner, g.loser


def count_with_a_run_from_one(v):
    g = game(v, "AB", {"A": 3, "B": 3})
    return settle(g, [("A", 2, 6)], ("dudo", "B"), {"A": [3, 1, 2], "B": [6, 5, 5]}).count


ROWS = [
    # option, preset, switched to, scenario, at the preset default, when switched
    ("start_dice", "perudo", 3, dice_in_play, 15, 9),
    ("max_players", "perudo", 8, seven_players, "refused", "seated"),
    ("raise_mode", "perudo", "standard", five_fives_after_four_fours, False, True),
    ("bids_above_dice", "perudo", False, sixteen_threes_opening_with_fifteen_dice_in_play, True, False),
    ("raise_mode", "kozak", "either", five_fives_after_four_fours, True, False),
    ("aces_wild", "perudo", False, count_of_two_fours, 2, 1),
    ("ace_bids", "blog", True, two_aces_after_four_fours, False, True),
    ("ace_bids", "perudo", False, two_aces_after_four_fours, True, False),
    ("ace_opening", "perudo", True, open_on_aces, False, True),
    ("special_round", "perudo", False, special_after_drop, "A", None),
    ("special_round", "club", False, special_after_drop, "A", None),
    ("special_at_start", "perudo", True, special_on_first_round_for_a_one_die_starter, None, "A"),
    ("special_once", "perudo", True, second_special_after_winning_a_die_back, "A", None),
    ("special_two_players", "kozak", True, special_with_two_players, None, "A"),
    ("special_two_players", "perudo", False, special_with_two_players, "A", None),
    ("special_three_singles", "club", True, special_with_three_single_dice, None, "A"),
    ("special_aces_wild", "perudo", True, ace_counts_in_special, 0, 1),
    ("special_face", "perudo", "one_die", one_die_player_changes_face, False, True),
    ("special_face", "blog", "fixed", one_die_player_changes_face, True, False),
    ("special_ace_opening", "perudo", "no", owner_opens_special_on_aces, True, False),
    ("special_opened_by_owner", "blog", False, special_opener, "A", "B"),
    ("calza", "perudo", True, calza_callers, [], ["B", "C", "D"]),
    ("calza_callers", "blog", "not_last_bidder", calza_callers, ["B"], ["B", "C", "D"]),
    ("calza_callers", "blog", "not_next", calza_callers, ["B"], ["A", "C", "D"]),
    ("calza_in_special", "blog", False, calza_callers_in_special, ["B"], []),
    ("calza_two_players", "blog", False, calza_callers_two_players, ["B"], []),
    ("calza_cap", "blog", 4, calza_gain_at_four, "B", None),
    ("calza_starter", "blog", "bidder", starter_after_calza, "B", "A"),
    ("dudo_callers", "perudo", "anyone", dudo_callers, ["B"], ["B", "C", "D"]),
    ("next_starter", "blog", "dudo_caller", starter_after_a_lost_dudo, "A", "B"),
    ("bag_visible", "perudo", True, bag_shown, None, 2),
    ("bag_visible", "club", False, bag_shown, 2, None),
    ("scoring", "perudo", "others_lose", dice_after_a_lost_dudo, {"A": 5, "B": 4, "C": 5}, {"A": 4, "B": 5, "C": 4}),
    ("last_with_dice", "perudo", "loses", end_of_a_duel, ("B", None), (None, "B")),
    ("stairs", "perudo", True, count_with_a_run_from_one, 2, 5),
    ("stairs", "snyd", False, count_with_a_run_from_one, 5, 2),
]


@pytest.mark.parametrize("option, preset, value, scenario, default, switched", ROWS,
                         ids=[f"{row[0]}-{row[1]}-{row[2]}" for row in ROWS])
def test_switching_one_option_changes_exactly_what_it_says(option, preset, value, scenario, default, switched):
    extra = {"next_starter": "dudo_caller"} if scenario is special_opener else {}
    if scenario in (calza_callers_in_special, calza_callers_two_players, calza_gain_at_four, starter_after_calza,
                    second_special_after_winning_a_die_back) and option != "calza":
        extra["calza"] = True
    assert scenario(find_variant(preset, extra)) == default
    assert scenario(find_variant(preset, {**extra, option: value})) == switched


@pytest.mark.parametrize("who, expected", [("owner", False), ("anyone", True)])
def test_special_ace_opening_by_a_player_the_round_does_not_belong_to(who, expected):
    v = find_variant("perudo", {"special_opened_by_owner": False, "next_starter": "dudo_caller",
                                "special_ace_opening": who})
    assert non_owner_opens_special_on_aces(v) is expected


def test_kozak_ace_quantity_once_can_never_bite_under_the_ace_conversions():
    """Going back from aces needs 2n+1, so the next ace bid is at least n+1: no quantity repeats anyway."""
    assert ace_quantity_repeated(find_variant("kozak", {"ace_quantity_once": False})) is False
    assert ace_quantity_repeated(find_variant("kozak")) is False


def test_every_option_is_tested_and_documented_with_its_preset_default():
    switched = {row[0] for row in ROWS} | {"special_ace_opening", "ace_quantity_once"}
    assert switched == {spec.name for spec in OPTIONS}
    for name in ("perudo", "kozak", "club", "wiki", "blog", "snyd"):
        v = find_variant(name)
        docs = v.option_docs()
        assert list(docs) == [spec.name for spec in OPTIONS]
        assert all(default == v.options[key] and len(text) > 30 for key, (default, text) in docs.items())
