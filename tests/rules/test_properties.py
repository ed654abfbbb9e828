"""Invariants over many games: random players that only pick moves the engine calls legal.

If the engine ever refuses a move it listed as legal, loses or invents a die, accepts a bid that
is not higher, or lets a game run forever, these fail.
"""
from __future__ import annotations

import random

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from companion.rules import PRESETS, Bid, Game, RecordError, find_variant
from companion.rules.record import judge
from companion.rules.variants import OPTIONS

PRESET_NAMES = list(PRESETS)
MAX_ROUNDS = 400


def random_game(variant, rng: random.Random, players: int | None = None, with_dice: bool = True) -> Game:
    """Play one game to its end with random legal moves; checks invariants after every step."""
    count = players or rng.randint(2, min(6, variant.max_players or 6))
    names = [f"P{i}" for i in range(count)]
    start = variant.start_dice
    dice = {name: rng.randint(1, start) for name in names} if with_dice and rng.random() < 0.3 else None
    game = Game(variant, names, dice=dice, starter=rng.choice(names))
    total = game.dice_in_play + game.bag
    assert total == start * count
    for _ in range(MAX_ROUNDS):
        if game.phase == "over":
            break
        play_round(game, rng)
        assert game.dice_in_play + game.bag == total, "dice are conserved: players + bag"
        assert all(0 <= n <= start for n in game.dice.values())
    assert game.phase == "over", "every game ends"
    ends = [p for p in game.players if game.dice[p] > 0]
    assert len(ends) == 1
    assert (game.winner, game.loser) in ((ends[0], None), (None, ends[0]))
    return game


def play_round(game: Game, rng: random.Random) -> None:
    opener = game.to_move
    while True:
        calls = [(kind, by) for kind in ("dudo", "calza") for by in game.callers(kind)]
        legal = game.legal_bids()
        assert game.bids or not calls, "no call before the opening bid"
        assert legal or calls, f"{game.to_move} has no move at all"
        if calls and (not legal or rng.random() < 0.35):
            kind, by = rng.choice(calls)
            game.call(kind, by)
            break
        for lowest in legal:
            assert lowest.quantity == 1 or game.bid_error(game.to_move, Bid(lowest.quantity - 1, lowest.face))
        low = rng.choice(legal)
        steps = [step for step in (0, 0, 0, 1, 2)
                 if game.bid_error(game.to_move, Bid(low.quantity + step, low.face)) is None]
        bid = Bid(low.quantity + rng.choice(steps), low.face)
        previous = game.current_bid
        player = game.to_move
        assert game.bid_error(player, bid) is None, f"{bid} listed legal for {player} but refused"
        game.bid(player, bid)
        assert game.current_bid == bid and game.bids[-1] == (player, bid)
        if previous is not None:
            for _, earlier in game.bids[:-1]:
                assert game.bid_error(game.to_move, earlier) is not None, "an earlier bid is never legal again"
    assert game.bids[0][0] == opener
    held = game.expected_dice()
    result = game.reveal({p: [rng.randint(1, 6) for _ in range(n)] for p, n in held.items()})
    assert result.next_starter == game.to_move


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_random_legal_players_finish_a_thousand_games(name):
    rng = random.Random(f"games-{name}")
    variant = find_variant(name)
    winners = set()
    for _ in range(1000):
        game = random_game(variant, rng)
        winners.add(game.winner or game.loser)
    assert len(winners) > 1


def option_values(spec):
    if spec.kind is bool:
        return st.booleans()
    if spec.kind is int:
        low = spec.minimum or 1
        ints = st.integers(min_value=max(low, 2 if spec.name == "max_players" else low), max_value=6)
        return st.one_of(st.none(), ints) if spec.allow_none else ints
    return st.sampled_from(spec.choices)


def variant_or_reject(name, options):
    """The variant, or let hypothesis drop a mix the engine refuses (a calza cap above the starting dice)."""
    try:
        return find_variant(name, options)
    except RecordError:
        assume(False)


any_options = st.fixed_dictionaries({}, optional={spec.name: option_values(spec) for spec in OPTIONS
                                                 if spec.name != "max_players"})


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(PRESET_NAMES), options=any_options, seed=st.integers(0, 2 ** 32))
def test_any_option_mix_plays_to_one_survivor(name, options, seed):
    """Whatever options a table switches, games end and the engine accepts all it lists as legal."""
    random_game(variant_or_reject(name, options), random.Random(seed))


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(PRESET_NAMES), options=any_options, seed=st.integers(0, 2 ** 32))
def test_replaying_a_game_record_gives_the_same_verdict_twice(name, options, seed):
    game = random_game(variant_or_reject(name, options), random.Random(seed))
    record = game.to_record()
    first, second = judge(record), judge(record)
    assert first == second
    assert first["error"] is None
    assert first["rounds"] == [r.to_json() for r in game.history]
    assert (first["dice"], first["bag"], first["winner"]) == (game.dice, game.bag, game.winner)
