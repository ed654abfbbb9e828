"""A game's life: resolution, the bag, eliminations, who starts, the special rounds, calza and Snyd."""
from __future__ import annotations

import pytest

from companion.rules import Bid, Game, RecordError, RuleError, find_variant


def play(game: Game, bids, call: tuple[str, str], dice: dict[str, list[int]]):
    for player, quantity, face in bids:
        game.bid(player, Bid(quantity, face))
    game.call(*call)
    return game.reveal(dice)


def new(name: str, players: str = "ABC", dice: dict[str, int] | None = None, starter: str | None = None,
        **options) -> Game:
    return Game(find_variant(name, options), list(players), dice=dice, starter=starter)


# -- dudo, the bag, elimination, who starts -------------------------------------------------

def test_dudo_on_a_false_bid_costs_the_bidder_a_die_into_the_bag():
    game = new("perudo")
    result = play(game, [("A", 3, 5)], ("dudo", "B"), {"A": [5, 2, 2, 3, 3], "B": [1, 2, 2, 3, 3], "C": [4] * 5})
    assert (result.count, result.loser, result.next_starter) == (2, "A", "A")
    assert game.dice == {"A": 4, "B": 5, "C": 5} and game.bag == 1 and game.dice_in_play == 14
    assert game.round_number == 2 and game.to_move == "A" and game.bids == []


def test_dudo_on_a_true_bid_costs_the_caller_and_the_caller_starts():
    game = new("perudo")
    result = play(game, [("A", 2, 5)], ("dudo", "B"), {"A": [5, 2, 2, 3, 3], "B": [1, 2, 2, 3, 3], "C": [4] * 5})
    assert (result.loser, result.next_starter, game.to_move) == ("B", "B", "B")


def test_only_the_player_in_turn_may_call_dudo_and_not_before_a_bid():
    game = new("perudo")
    assert game.call_error("dudo", "B") == "there is no bid to call yet: A must open the round"
    game.bid("A", Bid(2, 3))
    assert game.call_error("dudo", "C") == "only B, whose turn it is, may call dudo"
    assert game.callers("dudo") == ["B"]
    with pytest.raises(RuleError, match="only B"):
        game.call("dudo", "C")
    assert game.phase == "bidding"


def test_out_of_turn_bid_is_refused_with_whose_turn_it_is():
    game = new("perudo")
    assert game.bid_error("B", Bid(2, 3)) == "it is A's turn, not B's"
    with pytest.raises(RuleError):
        game.bid("B", Bid(2, 3))
    assert game.bids == []


def test_eliminated_loser_next_clockwise_starts_and_is_skipped_afterwards():
    game = new("perudo", "ABCD", dice={"B": 1}, starter="A")
    result = play(game, [("A", 2, 3), ("B", 9, 3)], ("dudo", "C"),
                  {"A": [2] * 5, "B": [3], "C": [2] * 5, "D": [2] * 5})
    assert (result.loser, result.eliminated, result.next_starter) == ("B", ["B"], "C")
    assert game.dice["B"] == 0 and game.active_players == ["A", "C", "D"]
    game.bid("C", Bid(2, 2))
    game.bid("D", Bid(3, 2))
    assert game.to_move == "A"
    game.bid("A", Bid(4, 2))
    assert game.to_move == "C"
    assert game.bid_error("B", Bid(5, 2)) == "B is out of the game"


def test_elimination_of_the_last_seat_wraps_to_the_first():
    game = new("club", "ABC", dice={"C": 1, "A": 3}, starter="C")
    result = play(game, [("C", 5, 6)], ("dudo", "A"), {"A": [2, 2, 2], "B": [2] * 5, "C": [3]})
    assert (result.eliminated, result.next_starter) == (["C"], "A")


def test_last_player_with_dice_wins_and_nothing_more_is_accepted():
    game = new("perudo", "AB", dice={"A": 1, "B": 1})
    result = play(game, [("A", 2, 4)], ("dudo", "B"), {"A": [4], "B": [2]})
    assert (result.loser, result.next_starter, game.winner, game.phase) == ("A", None, "B", "over")
    assert game.to_move is None
    assert game.bid_error("B", Bid(1, 2)) == "the game is over"
    with pytest.raises(RuleError):
        game.reveal({"B": [2]})


def test_revealed_dice_must_match_what_each_player_holds():
    game = new("perudo", dice={"B": 3})
    game.bid("A", Bid(2, 3))
    game.call("dudo", "B")
    with pytest.raises(RuleError, match="B holds 3 dice but 2 were revealed"):
        game.reveal({"A": [1] * 5, "B": [2, 2], "C": [3] * 5})
    with pytest.raises(RuleError, match="not playing"):
        game.reveal({"A": [1] * 5, "B": [2, 2, 2], "C": [3] * 5, "Zed": [1]})
    assert game.phase == "called" and game.dice["B"] == 3  # nothing changed
    game.reveal({"A": [1] * 5, "B": [2, 2, 2], "C": [3] * 5})


def test_an_eliminated_players_dice_may_be_missing_or_empty_but_not_present():
    game = new("perudo", "ABC", dice={"C": 1})
    play(game, [("A", 3, 3)], ("dudo", "B"), {"A": [3] * 5, "B": [3] * 5, "C": [2]})  # B loses
    play(game, [("B", 1, 3)], ("dudo", "C"), {"A": [3] * 5, "B": [3] * 4, "C": [2]})  # C loses, out
    assert game.dice["C"] == 0 and game.to_move == "A"
    game.bid("A", Bid(2, 3))
    game.call("dudo", "B")
    with pytest.raises(RuleError, match="C is out"):
        game.reveal({"A": [3] * 5, "B": [2] * 4, "C": [4]})
    game.reveal({"A": [3] * 5, "B": [2] * 4, "C": []})


def test_bad_setups_are_record_errors():
    with pytest.raises(RecordError):
        new("perudo", "A")
    with pytest.raises(RecordError):
        Game(find_variant("perudo"), ["A", "A"])
    with pytest.raises(RecordError):
        new("perudo", dice={"A": 6})
    with pytest.raises(RecordError):
        new("perudo", dice={"A": 0})
    with pytest.raises(RecordError):
        new("perudo", starter="Zed")
    with pytest.raises(RecordError, match="at most 6"):
        new("perudo", "ABCDEFG")
    new("kozak", "ABCDEFGH")
    with pytest.raises(RecordError):
        find_variant("yahtzee")
    with pytest.raises(RecordError):
        find_variant("perudo", {"calza": "yes"})
    with pytest.raises(RecordError):
        find_variant("perudo", {"calzone": True})
    with pytest.raises(RecordError, match="calza_cap 6"):
        find_variant("perudo", {"calza_cap": 6})


def test_presets_are_found_by_their_special_round_names():
    assert find_variant("Maputa").name == "club"
    assert find_variant("maputo").name == "wiki"
    assert find_variant("palafico").name == "kozak"
    assert find_variant("palifico").name == "perudo"
    assert [find_variant(n).special_name for n in ("perudo", "kozak", "club", "wiki", "blog", "snyd")] == [
        "palifico", "palafico", "maputa", "maputo", "palafico", None]


# -- the special round -------------------------------------------------------------------------

def drop_a_to_one(game: Game, caller: str = "B") -> None:
    """A (holding 2 dice) overbids and loses a die to `caller`'s dudo: A is left with one."""
    others = {p: [2] * n for p, n in game.dice.items() if p != "A" and n}
    game.bid("A", Bid(20, 6))
    while game.to_move != caller:
        game.bid(game.to_move, Bid(game.current_bid.quantity + 1, 6))
    game.call("dudo", caller)
    game.reveal({"A": [3, 3], **others})


def test_perudo_palifico_face_fixed_aces_not_wild_owner_may_open_on_aces():
    game = new("perudo", "ABC", dice={"A": 2})
    drop_a_to_one(game)
    assert (game.special, game.special_owner, game.to_move, game.aces_wild) == ("palifico", "A", "A", False)
    assert game.bid_error("A", Bid(1, 1)) is None
    game.bid("A", Bid(2, 3))
    assert game.legal_bids() == [Bid(3, 3)]
    assert game.bid_error("B", Bid(3, 4)) == "in the palifico round the face stays 3: bid at least 3×3"
    game.bid("B", Bid(3, 3))
    game.call("dudo", "C")
    result = game.reveal({"A": [3], "B": [1, 1, 1, 1, 3], "C": [3, 1, 1, 1, 1]})
    assert (result.special, result.count, result.loser) == ("palifico", 3, "C")  # aces not counted


def test_perudo_palifico_only_the_owner_opens_on_aces_even_if_someone_else_starts():
    game = new("perudo", "ABC", dice={"A": 2}, special_opened_by_owner=False, next_starter="dudo_caller")
    drop_a_to_one(game)
    assert (game.special_owner, game.to_move) == ("A", "B")
    assert game.bid_error("B", Bid(2, 1)) == "only A may open the palifico round on aces"


def test_perudo_palifico_each_time_a_player_newly_drops_to_one():
    game = new("perudo", "ABC", dice={"A": 2}, calza=True)
    drop_a_to_one(game)
    assert game.special_owner == "A"
    # A wins a die back by calza in his own palifico round (allowed in the boxed game)
    result = play(game, [("A", 2, 4)], ("calza", "B"), {"A": [4], "B": [4, 2, 2, 2, 2], "C": [2] * 5})
    assert result.gainer is None and game.dice["B"] == 5  # B already holds 5: nothing moves
    result = play(game, [("B", 1, 4)], ("calza", "A"), {"A": [4], "B": [2] * 5, "C": [2] * 5})
    assert (result.gainer, game.dice["A"], game.special, game.to_move) == ("A", 2, None, "A")
    drop_a_to_one(game)
    assert game.special_owner == "A"


def test_kozak_palafico_once_per_game_and_not_with_two_players():
    game = new("kozak", "ABC", dice={"A": 2}, calza=True)
    drop_a_to_one(game)
    assert game.special == "palifico" and game.special_owner == "A"
    game.bid("A", Bid(1, 1))
    assert game.call_error("calza", "C") == "no calza in the palafico round"
    game.bid("B", Bid(2, 1))
    assert game.bid_error("C", Bid(2, 2)) is not None  # not a veteran, face stays
    game.call("dudo", "C")
    game.reveal({"A": [1], "B": [1, 2, 2, 2, 2], "C": [2] * 5})  # two aces: C loses
    assert game.special is None and game.aces_wild
    # A wins his die back with a calza on his own bid, then drops to one again: no second palafico
    result = play(game, [("C", 1, 2), ("A", 2, 2)], ("calza", "A"), {"A": [2], "B": [3] * 5, "C": [2, 3, 3, 3]})
    assert (result.gainer, game.dice["A"]) == ("A", 2)
    drop_a_to_one(game)
    assert game.dice["A"] == 1 and game.special is None


def test_kozak_veteran_may_raise_the_face_upward_only_later_bidders_follow():
    game = new("kozak", "ABCD", dice={"A": 2, "B": 2})
    drop_a_to_one(game)  # A's palafico
    play(game, [("A", 1, 5)], ("dudo", "B"), {"A": [5], "B": [2, 2], "C": [2] * 5, "D": [2] * 5})  # B loses
    assert (game.special_owner, game.to_move, game.dice["B"]) == ("B", "B", 1)
    game.bid("B", Bid(2, 3))
    game.bid("C", Bid(3, 3))
    assert game.bid_error("D", Bid(3, 4)) is not None  # D holds five dice
    game.bid("D", Bid(4, 3))
    assert game.bid_error("A", Bid(4, 2)) == "the face may only go up from 3 in the palafico round"
    assert game.bid_error("A", Bid(3, 5)) == "changing the face may not lower the quantity: at least 4×5"
    assert game.bid_error("A", Bid(4, 5)) is None
    game.bid("A", Bid(4, 5))
    assert game.bid_error("B", Bid(5, 6)) is not None  # B's own palafico is this round
    assert game.legal_bids("B") == [Bid(5, 5)]


def test_kozak_two_players_left_is_an_ordinary_round_and_no_calza():
    game = new("kozak", "AB", dice={"A": 2}, calza=True)
    drop_a_to_one(game)
    assert game.special is None and game.aces_wild
    game.bid("A", Bid(1, 3))
    assert game.call_error("calza", "A") == "no calza when only two players are left"


def test_club_maputa_any_opener_on_aces_and_not_when_three_single_dice_remain():
    game = new("club", "ABC", dice={"A": 2})
    drop_a_to_one(game)
    assert game.special == "palifico" and game.bid_error("A", Bid(1, 1)) is None
    three = new("club", "ABC", dice={"A": 2, "B": 1, "C": 1})
    drop_a_to_one(three)
    assert three.dice == {"A": 1, "B": 1, "C": 1} and three.special is None and three.aces_wild


def test_club_maputa_still_played_with_four_single_dice():
    game = new("club", "ABCD", dice={"A": 2, "B": 1, "C": 1, "D": 1})
    drop_a_to_one(game)
    assert game.special_owner == "A"


def test_wiki_maputo_with_two_players_left():
    game = new("wiki", "AB", dice={"A": 2})
    drop_a_to_one(game)
    assert (game.special, game.special_owner) == ("palifico", "A")
    game.bid("A", Bid(1, 6))
    assert game.legal_bids() == [Bid(2, 6)]


def test_blog_palafico_one_die_players_change_the_face_others_raise_quantity():
    game = new("blog", "ABCD", dice={"A": 2, "C": 1})
    drop_a_to_one(game, caller="B")
    assert game.special_owner == "A" and not game.aces_wild
    game.bid("A", Bid(1, 1))  # ones may open: an ordinary face here
    assert game.legal_bids("B") == [Bid(2, 1)]
    game.bid("B", Bid(2, 1))
    assert game.bid_error("C", Bid(2, 4)) is None  # C holds one die
    assert set(game.legal_bids("C")) == {Bid(3, 1)} | {Bid(2, f) for f in range(2, 7)}
    game.bid("C", Bid(2, 4))
    assert game.bid_error("D", Bid(3, 5)) is not None


def test_blog_palafico_once_even_after_a_die_was_won_back():
    game = new("blog", "ABC", dice={"A": 2})
    drop_a_to_one(game)
    play(game, [("A", 1, 2)], ("calza", "B"), {"A": [3], "B": [2, 3, 3, 3, 3], "C": [3] * 5})  # B at 5 already
    play(game, [("B", 2, 3)], ("calza", "C"), {"A": [3], "B": [3] * 5, "C": [3] * 5})  # C wrong: loses
    play(game, [("C", 10, 3)], ("calza", "A"), {"A": [3], "B": [3] * 5, "C": [3] * 4})  # A right
    assert game.dice["A"] == 2
    play(game, [("A", 20, 6)], ("dudo", "B"), {"A": [3, 3], "B": [3] * 5, "C": [3] * 4})
    assert game.dice["A"] == 1 and game.special is None


def test_special_round_opened_by_owner_even_when_dudo_caller_starts():
    game = new("blog", "ABC", dice={"A": 2}, next_starter="dudo_caller")
    drop_a_to_one(game)
    assert (game.special_owner, game.to_move) == ("A", "A")
    play(game, [("A", 1, 5)], ("dudo", "B"), {"A": [5], "B": [2] * 5, "C": [2] * 5})
    assert game.to_move == "B"  # house rule: the dudo caller (and loser here) starts


def test_record_starting_with_one_die_owes_no_special_round():
    assert new("perudo", dice={"A": 1}).special is None
    assert new("perudo", dice={"A": 1}, special_at_start=True).special_owner == "A"


# -- calza -----------------------------------------------------------------------------------

def test_boxed_calza_anyone_but_the_last_bidder():
    game = new("perudo", "ABCD", calza=True)
    game.bid("A", Bid(2, 3))
    assert game.callers("calza") == ["B", "C", "D"]
    assert game.call_error("calza", "A") == "A made the last bid and cannot call calza on it"


def test_kozak_calza_anyone_but_the_player_in_turn_last_bidder_included():
    game = new("kozak", "ABCD", calza=True)
    game.bid("A", Bid(2, 3))
    assert game.callers("calza") == ["A", "C", "D"]


def test_blog_calza_only_the_player_in_turn():
    game = new("blog", "ABCD")
    game.bid("A", Bid(2, 3))
    assert game.callers("calza") == ["B"]


def test_calza_wrong_costs_the_caller_and_he_starts():
    game = new("perudo", "ABC", calza=True)
    result = play(game, [("A", 3, 3)], ("calza", "C"), {"A": [3] * 5, "B": [2] * 5, "C": [2] * 5})
    assert (result.count, result.loser, result.gainer, result.next_starter) == (5, "C", None, "C")


def test_calza_right_regains_a_lost_die_up_to_the_cap():
    game = new("perudo", "ABC", dice={"C": 3}, calza=True, calza_cap=4)
    result = play(game, [("A", 5, 3)], ("calza", "C"), {"A": [3] * 5, "B": [2] * 5, "C": [2] * 3})
    assert (result.gainer, game.dice["C"], game.bag) == ("C", 4, 1)
    result = play(game, [("C", 5, 3)], ("dudo", "A"), {"A": [3] * 5, "B": [2] * 5, "C": [2] * 4})
    assert game.to_move == "A"
    result = play(game, [("A", 5, 3)], ("calza", "C"), {"A": [3] * 4, "B": [3, 2, 2, 2, 2], "C": [2] * 4})
    assert (result.count, result.gainer, game.dice["C"]) == (5, None, 4)


def test_calza_not_played_where_the_rules_have_none():
    for name in ("club", "wiki", "snyd", "perudo", "kozak"):
        game = new(name)
        game.bid("A", Bid(2, 3))
        assert game.callers("calza") == []


def test_simultaneous_calls_dudo_in_turn_beats_calza_nearest_calza_caller_wins():
    game = new("perudo", "ABCD", calza=True)
    game.bid("A", Bid(2, 3))
    assert game.pick_call([("calza", "D"), ("calza", "C")]) == ("calza", "C")
    assert game.pick_call([("calza", "C"), ("dudo", "B")]) == ("dudo", "B")
    assert game.pick_call([("calza", "A")]) is None


def test_simultaneous_dudo_by_any_allowed_caller_beats_calza():
    """"A dudo said at the same moment beats calza", not only the next player's."""
    game = new("perudo", "ABCD", calza=True, dudo_callers="anyone")
    game.bid("A", Bid(2, 3))
    assert game.pick_call([("calza", "C"), ("dudo", "D")]) == ("dudo", "D")
    assert game.pick_call([("dudo", "D"), ("dudo", "C"), ("calza", "B")]) == ("dudo", "C")


def test_capped_bids_leave_no_legal_raise_above_the_dice_in_play():
    game = new("perudo", "AB", bids_above_dice=False)
    game.bid("A", Bid(10, 5))
    assert "more dice than the 10 in play" in game.bid_error("B", Bid(11, 5))
    assert game.legal_bids("B") == [Bid(5, 1), Bid(10, 6)]


# -- Snyd --------------------------------------------------------------------------------------

def test_snyd_the_loser_keeps_his_dice_every_other_player_puts_one_away():
    game = new("snyd", "ABC")
    result = play(game, [("A", 9, 6)], ("dudo", "B"), {"A": [2] * 4, "B": [2] * 4, "C": [2] * 4})
    assert result.loser == "A" and game.dice == {"A": 4, "B": 3, "C": 3} and game.bag == 2
    assert game.to_move == "A"


def test_snyd_stairs_count_as_wild_plus_one():
    game = new("snyd", "ABC")
    result = play(game, [("A", 8, 5)], ("dudo", "B"), {"A": [1, 2, 3, 4], "B": [2, 1, 3, 6], "C": [5, 1, 6, 6]})
    # A's 1-2-3-4 counts 5; B's dice are no run (one ace wild); C: a five and an ace
    assert result.count == 5 + 1 + 2


def test_snyd_last_player_holding_dice_loses_the_game():
    game = new("snyd", "ABC", dice={"A": 1, "B": 1, "C": 1})
    result = play(game, [("A", 1, 5)], ("dudo", "B"), {"A": [3], "B": [4], "C": [2]})
    assert result.loser == "A" and result.eliminated == ["B", "C"] and result.next_starter is None
    assert (game.loser, game.winner, game.phase) == ("A", None, "over")


def test_snyd_has_no_ace_bids():
    game = new("snyd", "ABC")
    game.bid("A", Bid(4, 4))
    assert game.bid_error("B", Bid(4, 1)) == "bids on aces are not played at this table"
