"""Every bid after every bid, checked against the raise rules written out plainly from RULES.md."""
from __future__ import annotations

from math import ceil

import pytest

from companion.rules import Bid, Game, find_variant

FACES = range(1, 7)


def reference_higher(prev: Bid, new: Bid, mode: str, ace_bids: bool) -> bool:
    """Core rules 3-5 of RULES.md for an ordinary round with wild aces."""
    if new.face == 1 and not ace_bids:
        return False
    if prev.face != 1 and new.face == 1:
        return new.quantity >= ceil(prev.quantity / 2)
    if prev.face == 1 and new.face == 1:
        return new.quantity > prev.quantity
    if prev.face == 1:
        return new.quantity >= 2 * prev.quantity + 1
    if mode == "either":
        return ((new.face == prev.face and new.quantity > prev.quantity)
                or (new.quantity == prev.quantity and new.face > prev.face))
    return new.quantity > prev.quantity or (new.quantity == prev.quantity and new.face > prev.face)


def game_after(variant, prev: Bid) -> Game:
    """A four-player game where `prev` stands (opened by A, or B's aces after A's 2n×6) and C is to bid."""
    game = Game(variant, ["A", "B", "C", "D"], starter="B" if prev.face != 1 else "A")
    if prev.face == 1:
        game.bid("A", Bid(2 * prev.quantity, 6))
    game.bid("B", prev)
    return game


@pytest.mark.parametrize("name, mode, ace_bids", [
    ("perudo", "either", True), ("kozak", "standard", True), ("club", "standard", True),
    ("wiki", "standard", True), ("blog", "standard", False), ("snyd", "standard", False),
    ("blog", "standard", True), ("perudo", "standard", True), ("club", "either", True),
])
def test_every_raise_matches_the_written_rule(name, mode, ace_bids):
    variant = find_variant(name, {"raise_mode": mode, "ace_bids": ace_bids})
    prevs = [Bid(q, f) for q in range(1, 9) for f in FACES
             if f != 1 or ace_bids]
    for prev in prevs:
        game = game_after(variant, prev)
        legal = set(game.legal_bids())
        for q in range(1, 20):
            for f in FACES:
                new = Bid(q, f)
                expected = reference_higher(prev, new, mode, ace_bids)
                problem = game.bid_error("C", new)
                assert (problem is None) == expected, f"{name}/{mode}: {new} after {prev}: {problem}"
                if problem is not None:
                    assert len(problem) > 10 and "Traceback" not in problem
        lowest = {f: min((q for q in range(1, 20) if reference_higher(prev, Bid(q, f), mode, ace_bids)),
                         default=None) for f in FACES}
        assert legal == {Bid(q, f) for f, q in lowest.items() if q is not None}


@pytest.mark.parametrize("name", ["perudo", "kozak", "club", "wiki", "blog", "snyd"])
def test_no_preset_opens_an_ordinary_round_on_aces(name):
    game = Game(find_variant(name), ["A", "B", "C"])
    assert game.bid_error("A", Bid(3, 1)) is not None
    assert Bid(1, 1) not in game.legal_bids()
    assert game.legal_bids() == [Bid(1, f) for f in range(2, 7)]
