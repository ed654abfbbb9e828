"""The rules engine: bids, variants, a game's state, odds and the record judge.

It imports nothing else of ours, so the judge, the table and any future hub use it the same way.
"""
from companion.rules.bid import Bid
from companion.rules.errors import RecordError, RuleError
from companion.rules.game import Game, RoundResult
from companion.rules.variants import OPTIONS, PRESETS, Variant, find_variant

__all__ = ["Bid", "Game", "OPTIONS", "PRESETS", "RecordError", "RoundResult", "RuleError", "Variant", "find_variant"]
