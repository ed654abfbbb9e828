"""Odds against brute force: every outcome of a few dice enumerated and counted by the game itself."""
from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import product

import pytest

from companion.rules import Bid, find_variant
from companion.rules.odds import bid_probability, count_distribution, exact_distribution, exact_probability


def brute(unknown: int, face: int, wild: bool, known: list[int], stairs: bool = False, hands=None):
    """P(count == k) by enumerating every roll and counting with the variant's own counting hook."""
    variant = find_variant("snyd" if stairs else "perudo")
    sizes = hands if hands is not None else [unknown]
    tally: Counter[int] = Counter()
    for roll in product(range(1, 7), repeat=unknown):
        parts, i = [], 0
        for size in sizes:
            parts.append(list(roll[i:i + size]))
            i += size
        tally[variant.count(face, [list(known), *parts], wild)] += 1
    top = max(tally)
    return [Fraction(tally[k], 6 ** unknown) for k in range(top + 1)]


@pytest.mark.parametrize("unknown, face, wild, known", [
    (3, 4, True, []), (4, 4, True, [1, 4, 2]), (4, 1, True, [1, 1]), (3, 6, False, [1, 6]), (0, 2, True, [2, 1]),
])
def test_distribution_is_exact(unknown, face, wild, known):
    got = exact_distribution(unknown, face, wild, known)
    want = brute(unknown, face, wild, known)
    assert got[:len(want)] == want and not any(got[len(want):])
    assert sum(got) == 1
    assert count_distribution(unknown, face, wild, known) == pytest.approx([float(p) for p in got])


def test_stairs_hands_are_enumerated_exactly():
    got = exact_distribution(4, 5, True, [1, 2], stairs=True, hands=[2, 2])
    want = brute(4, 5, True, [1, 2], stairs=True, hands=[2, 2])
    assert got[:len(want)] == want and not any(got[len(want):])


def test_bid_probability_and_exact_chance():
    # one unknown die, aces wild: a bid of 1×4 holds with 2/6; with your own four it always holds
    assert bid_probability(Bid(1, 4), 1, [], True) == pytest.approx(1 / 3)
    assert bid_probability(Bid(1, 4), 1, [4], True) == 1.0
    assert bid_probability(Bid(2, 4), 1, [4], False) == pytest.approx(1 / 6)
    assert exact_probability(Bid(2, 4), 1, [4], True) == pytest.approx(1 / 3)
    assert bid_probability(Bid(9, 4), 3, [], True) == 0.0


def test_bad_odds_questions_are_value_errors():
    with pytest.raises(ValueError):
        count_distribution(-1, 4, True)
    with pytest.raises(ValueError):
        count_distribution(3, 7, True)
    with pytest.raises(ValueError):
        count_distribution(3, 4, True, [0])
    with pytest.raises(ValueError):
        count_distribution(3, 4, True, stairs=True, hands=[2, 2])
