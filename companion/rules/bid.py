"""A bid: `quantity × face`, "at least this many dice show this face on the whole table"."""
from __future__ import annotations

import re
from dataclasses import dataclass

FACES = (1, 2, 3, 4, 5, 6)
_FACE_WORDS = {1: "aces", 2: "twos", 3: "threes", 4: "fours", 5: "fives", 6: "sixes"}
_BID_TEXT = re.compile(r"^\s*(\d+)\s*[x×*]\s*(\d+)\s*$", re.IGNORECASE)


def face_word(face: int) -> str:
    """Plural name of a face for sentences: 1 -> "aces", 4 -> "fours"."""
    return _FACE_WORDS[face]


def is_count(value: object) -> bool:
    """True for a real int (JSON `true` is not a quantity)."""
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True, order=False)
class Bid:
    """`Bid(7, 4)` claims at least seven fours (aces counted as the round says)."""

    quantity: int
    face: int

    def __post_init__(self) -> None:
        if not is_count(self.quantity) or self.quantity < 1:
            raise ValueError(f"a bid's quantity must be a whole number of at least 1, not {self.quantity!r}")
        if not is_count(self.face) or self.face not in FACES:
            raise ValueError(f"a bid's face must be 1 to 6 (1 = ace), not {self.face!r}")

    @classmethod
    def parse(cls, text: str) -> "Bid":
        """Read "7x4", "7×4" or "7*4" (quantity first, then face)."""
        match = _BID_TEXT.match(text or "")
        if not match:
            raise ValueError(f"a bid is written QUANTITYxFACE, e.g. 7x4, not {text!r}")
        return cls(int(match.group(1)), int(match.group(2)))

    @property
    def is_aces(self) -> bool:
        return self.face == 1

    def __str__(self) -> str:
        return f"{self.quantity}×{self.face}"
