"""Every worked example in RULES.md, played through the engine as the texts tell them."""
from __future__ import annotations

import pytest

from companion.rules import Bid, Game, find_variant


def play(game: Game, *bids: tuple[str, int, int]) -> None:
    for player, quantity, face in bids:
        game.bid(player, Bid(quantity, face))


def test_seed000_four_players_six_aces_called_with_only_four_aces():
    """P2's 6×1 after 12×2 is legal (half rounded up); four aces on the table: P2 loses, opens with 4 dice."""
    game = Game(find_variant("kozak"), ["P1", "P2", "P3", "P4"])
    play(game, ("P1", 8, 4), ("P2", 8, 6), ("P3", 10, 2), ("P4", 11, 2), ("P1", 12, 2), ("P2", 6, 1))
    game.call("dudo", "P3")
    result = game.reveal({"P1": [1, 2, 2, 3, 4], "P2": [1, 5, 5, 6, 6], "P3": [1, 3, 4, 5, 6],
                          "P4": [1, 2, 3, 4, 5]})
    assert (result.count, result.loser, result.next_starter) == (4, "P2", "P2")
    assert game.dice["P2"] == 4 and game.to_move == "P2" and game.bag == 1


def test_seed002_dutch_walkthrough_21_dice():
    """A 4×4, B 6×4, C 4×1 (3×1 also legal), D 9×5 (2·4+1), E dudo: four 5s and five pacos make 9."""
    game = Game(find_variant("perudo"), ["A", "B", "C", "D", "E"], dice={"A": 5, "B": 4, "C": 4, "D": 4, "E": 4})
    assert game.dice_in_play == 21
    play(game, ("A", 4, 4), ("B", 6, 4))
    assert game.bid_error("C", Bid(3, 1)) is None
    assert game.bid_error("C", Bid(2, 1)) == "a bid on aces needs at least 3 after 6×4"
    play(game, ("C", 4, 1))
    assert game.bid_error("D", Bid(8, 5)) is not None
    play(game, ("D", 9, 5))
    game.call("dudo", "E")
    result = game.reveal({"A": [4, 4, 2, 3, 6], "B": [4, 4, 1, 6], "C": [1, 1, 2, 3], "D": [5, 5, 1, 6],
                          "E": [1, 2, 5, 5]})
    assert (result.count, result.loser, result.next_starter) == (9, "E", "E")


@pytest.mark.parametrize("before", [Bid(5, 5), Bid(6, 6)])
def test_seed003_three_aces_after_five_fives_or_six_sixes(before):
    game = Game(find_variant("wiki"), ["A", "B"])
    play(game, ("A", before.quantity, before.face))
    assert game.bid_error("B", Bid(3, 1)) is None
    assert game.bid_error("B", Bid(2, 1)) is not None


def test_seed003_after_two_aces_five_of_a_face_or_three_aces():
    game = Game(find_variant("wiki"), ["A", "B", "C"])
    play(game, ("A", 4, 3), ("B", 2, 1))
    assert set(game.legal_bids()) == {Bid(3, 1)} | {Bid(5, face) for face in range(2, 7)}
    assert game.bid_error("C", Bid(4, 6)) == "after 2×1 a bid on sixes needs at least 5 (twice the aces, plus one)"


@pytest.mark.parametrize("before, ace_bid", [(Bid(4, 3), Bid(2, 1)), (Bid(5, 3), Bid(3, 1))])
def test_seed004_half_rounded_up(before, ace_bid):
    game = Game(find_variant("blog", {"ace_bids": True}), ["A", "B", "C"])
    play(game, ("A", before.quantity, before.face))
    assert game.bid_error("B", ace_bid) is None
    assert game.bid_error("B", Bid(ace_bid.quantity - 1, 1)) is not None


def test_seed004_seven_twos_after_three_aces():
    game = Game(find_variant("blog", {"ace_bids": True}), ["A", "B", "C"])
    play(game, ("A", 5, 3), ("B", 3, 1))
    assert game.bid_error("C", Bid(7, 2)) is None
    assert game.bid_error("C", Bid(6, 6)) is not None


def table_with_three_aces_and_one_four(kind: str) -> Game:
    game = Game(find_variant("blog"), ["A", "B", "C"])
    play(game, ("A", 2, 4), ("B", 4, 4))
    game.call(kind, "C")
    return game


def test_seed004_four_fours_true_with_three_aces_and_a_four_dudo_loses():
    game = table_with_three_aces_and_one_four("dudo")
    result = game.reveal({"A": [1, 2, 2, 3, 5], "B": [1, 1, 6, 6, 2], "C": [4, 2, 3, 5, 6]})
    assert (result.count, result.loser) == (4, "C")


def test_seed004_four_fours_true_with_three_aces_and_a_four_calza_wins_a_die():
    game = Game(find_variant("blog"), ["A", "B", "C"], dice={"C": 3})
    play(game, ("A", 2, 4), ("B", 4, 4))
    game.call("calza", "C")
    result = game.reveal({"A": [1, 2, 2, 3, 5], "B": [1, 1, 6, 6, 2], "C": [4, 2, 3]})
    assert (result.count, result.gainer, result.loser, result.next_starter) == (4, "C", None, "C")
    assert game.dice["C"] == 4 and game.bag == 1


def test_seed000_example_as_a_judged_record():
    from companion.rules.record import judge
    verdict = judge({
        "variant": "kozak", "players": ["P1", "P2", "P3", "P4"],
        "rounds": [{"bids": [["P1", 8, 4], ["P2", 8, 6], ["P3", 10, 2], ["P4", 11, 2], ["P1", 12, 2], ["P2", 6, 1]],
                    "call": {"type": "dudo", "by": "P3"},
                    "dice": {"P1": [1, 2, 2, 3, 4], "P2": [1, 5, 5, 6, 6], "P3": [1, 3, 4, 5, 6],
                             "P4": [1, 2, 3, 4, 5]}}]})
    assert verdict["rounds"] == [{"special": None, "bid": ["P2", 6, 1], "call": "dudo", "by": "P3", "count": 4,
                                  "loser": "P2", "gainer": None, "eliminated": [], "next_starter": "P2"}]
    assert verdict["dice"]["P2"] == 4 and verdict["bag"] == 1 and verdict["error"] is None


def test_seed002_walkthrough_as_a_judged_record():
    from companion.rules.record import judge
    verdict = judge({
        "variant": "perudo", "players": ["A", "B", "C", "D", "E"], "dice": {"B": 4, "C": 4, "D": 4, "E": 4},
        "rounds": [{"bids": [["A", 4, 4], ["B", 6, 4], ["C", 4, 1], ["D", 9, 5]], "call": {"type": "dudo", "by": "E"},
                    "dice": {"A": [4, 4, 2, 3, 6], "B": [4, 4, 1, 6], "C": [1, 1, 2, 3], "D": [5, 5, 1, 6],
                             "E": [1, 2, 5, 5]}}]})
    assert verdict["rounds"][0]["count"] == 9 and verdict["rounds"][0]["loser"] == "E"
    assert verdict["rounds"][0]["next_starter"] == "E" and verdict["dice"]["E"] == 3 and verdict["bag"] == 5
