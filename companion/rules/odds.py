"""Exact odds of a bid: the distribution of the count the reveal will show, from one player's view.

The asker knows his own dice; every other die is an independent fair roll, so the count among the
unknown dice is binomial: a die counts with probability 1/6 (the face itself, or aces on an ace
bid or where aces are not wild) or 2/6 (the face or an ace, aces wild). Snyd's stairs make a hand
count as a whole, so with `stairs` each unknown hand is enumerated exactly instead.
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from itertools import product
from math import comb

from companion.rules.bid import FACES, Bid, is_count
from companion.rules.variants import is_stairs


def die_chance(face: int, aces_wild: bool) -> Fraction:
    """Chance that one unknown die counts for a bid on `face`."""
    return Fraction(2 if aces_wild and face != 1 else 1, 6)


def known_count(face: int, known: list[int], aces_wild: bool, stairs: bool = False) -> int:
    """How many of the asker's own dice count for `face` (his whole hand is one stairs run or not)."""
    if stairs and is_stairs(list(known)):
        return len(known) + 1
    return sum(1 for die in known if die == face or (aces_wild and die == 1 and face != 1))


def exact_distribution(unknown_dice: int, face: int, aces_wild: bool, known: list[int] = (),
                       *, stairs: bool = False, hands: list[int] | None = None) -> list[Fraction]:
    """P(count == k) for k = 0.. as exact fractions (see `count_distribution`)."""
    _check(unknown_dice, face, known)
    base = known_count(face, list(known), aces_wild, stairs)
    if stairs:
        sizes = list(hands) if hands is not None else ([unknown_dice] if unknown_dice else [])
        if sum(sizes) != unknown_dice or any(not is_count(n) or n < 1 for n in sizes):
            raise ValueError("hands must list the unknown hands' sizes, adding up to the unknown dice")
        spread = [Fraction(1)]
        for size in sizes:
            spread = _convolve(spread, _hand_distribution(size, face, aces_wild))
    else:
        p = die_chance(face, aces_wild)
        spread = [comb(unknown_dice, k) * p ** k * (1 - p) ** (unknown_dice - k) for k in range(unknown_dice + 1)]
    return [Fraction(0)] * base + spread


def count_distribution(unknown_dice: int, face: int, aces_wild: bool, known: list[int] = (),
                       *, stairs: bool = False, hands: list[int] | None = None) -> list[float]:
    """P(count == k) for k = 0 .. the most the count can reach (index = count).

    `known` are the asker's own dice (their count is certain); `unknown_dice` are everyone else's.
    With `stairs` (Snyd) give `hands`, the sizes of the unknown hands.
    """
    return [float(p) for p in exact_distribution(unknown_dice, face, aces_wild, known, stairs=stairs, hands=hands)]


def bid_probability(bid: Bid, unknown_dice: int, known_dice: list[int] = (), aces_wild: bool = True,
                    *, stairs: bool = False, hands: list[int] | None = None) -> float:
    """Probability that `bid` holds (count ≥ quantity) given the asker's dice."""
    spread = exact_distribution(unknown_dice, bid.face, aces_wild, known_dice, stairs=stairs, hands=hands)
    return float(sum(spread[bid.quantity:], Fraction(0)))


def exact_probability(bid: Bid, unknown_dice: int, known_dice: list[int] = (), aces_wild: bool = True,
                      *, stairs: bool = False, hands: list[int] | None = None) -> float:
    """Probability that the count is exactly the bid's quantity (a calza would be right)."""
    spread = exact_distribution(unknown_dice, bid.face, aces_wild, known_dice, stairs=stairs, hands=hands)
    return float(spread[bid.quantity]) if bid.quantity < len(spread) else 0.0


def _check(unknown_dice: int, face: int, known: list[int]) -> None:
    if not is_count(unknown_dice) or unknown_dice < 0:
        raise ValueError(f"the number of unknown dice must be 0 or more, not {unknown_dice!r}")
    if face not in FACES:
        raise ValueError(f"face must be 1 to 6, not {face!r}")
    if any(not is_count(die) or die not in FACES for die in known):
        raise ValueError(f"your dice must be faces 1 to 6, not {list(known)!r}")


@lru_cache(maxsize=None)
def _hand_distribution(size: int, face: int, aces_wild: bool) -> tuple[Fraction, ...]:
    """Exact spread of one hidden hand's contribution, stairs included (6**size outcomes, size ≤ ~6)."""
    counts = [0] * (size + 2)
    for hand in product(FACES, repeat=size):
        counts[known_count(face, list(hand), aces_wild, stairs=True)] += 1
    total = 6 ** size
    return tuple(Fraction(c, total) for c in counts)


def _convolve(a: list[Fraction], b: tuple[Fraction, ...]) -> list[Fraction]:
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out
