"""The two ways a game can go wrong: a broken rule, or input that is not a game at all."""
from __future__ import annotations


class RuleError(Exception):
    """A move the rules forbid (out of turn, too low a bid, a call not allowed, dice that don't match).

    The message is the reason, worded for the players at the table.
    """


class RecordError(ValueError):
    """Input that cannot be judged at all: unknown variant or option, a face of 7, a malformed record."""
