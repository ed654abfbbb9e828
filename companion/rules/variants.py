"""Variants: every rule a table may play differently is a named option; presets are option sets.

Like python-chess's `variant.py`, a preset is a small class found by name or alias
(`find_variant("maputa")` is the club rules). The engine never asks which preset it plays:
it reads options, so a table can switch any one of them (`{"calza": true}`) and keep the rest.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from companion.rules.bid import is_count
from companion.rules.errors import RecordError


@dataclass(frozen=True)
class OptionSpec:
    """One switchable rule: its type, allowed values and what it changes, in words."""

    name: str
    default: Any
    doc: str
    choices: tuple[str, ...] | None = None  # for text options
    kind: type = bool
    minimum: int | None = None  # for numbers
    allow_none: bool = False  # numbers where None means "no limit" / "the starting count"

    def check(self, value: Any) -> Any:
        """Return `value` if it is allowed, else raise RecordError saying what is."""
        if value is None and self.allow_none:
            return None
        if self.kind is bool:
            if isinstance(value, bool):
                return value
            raise RecordError(f"option {self.name} is true or false, not {value!r}")
        if self.kind is int:
            if is_count(value) and (self.minimum is None or value >= self.minimum):
                return value
            extra = " or null" if self.allow_none else ""
            raise RecordError(f"option {self.name} is a whole number of at least {self.minimum}{extra}, not {value!r}")
        if isinstance(value, str) and value in (self.choices or ()):
            return value
        raise RecordError(f"option {self.name} is one of {', '.join(self.choices or ())}, not {value!r}")


# The defaults here are the boxed game's (`perudo`); each preset overrides what it plays differently.
OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("start_dice", 5, "Dice each player starts with (and the most a player may hold).",
               kind=int, minimum=1),
    OptionSpec("max_players", 6, "Most players at one table (null: no limit).", kind=int, minimum=2,
               allow_none=True),
    OptionSpec("raise_mode", "either",
               "How a bid beats the last one. standard: a higher quantity with any face, or the same "
               "quantity with a higher face. either (boxed game, \"choose one of the two\"): raise the "
               "quantity keeping the face, or raise the face keeping the quantity, never both.",
               choices=("standard", "either"), kind=str),
    OptionSpec("aces_wild", True, "In an ordinary round aces count for the face bid (a bid on aces counts aces only)."),
    OptionSpec("ace_bids", True,
               "Players may bid on aces in an ordinary round: after n×f at least ⌈n/2⌉ aces; after n×1 "
               "more aces or at least 2n+1 of another face. Off: no bids on aces (aces still wild)."),
    OptionSpec("bids_above_dice", True,
               "A bid may name more dice than are in play (legal, and surely false: our reading). Off: a "
               "bid's quantity may not exceed the dice in play."),
    OptionSpec("ace_opening", False, "An ordinary round may open with a bid on aces (the texts forbid it)."),
    OptionSpec("ace_quantity_once", False,
               "Kozak: each quantity of aces may be bid only once per round."),
    OptionSpec("special_round", True,
               "Play the special round (palifico/palafico/maputa/maputo) for a player who drops to one die."),
    OptionSpec("special_at_start", False,
               "A player who already holds one die when the record begins counts as having just dropped "
               "to one: if he starts round 1 it is his special round. Off (our reading): a record's "
               "history begins at its first round, nobody has dropped yet."),
    OptionSpec("special_once", False,
               "Each player gets the special round only once per game (even after winning a die back by "
               "calza). Off: every time a player newly drops to one die."),
    OptionSpec("special_two_players", True,
               "The special round is still played when only two players are left. Off: the final duel is "
               "an ordinary round (aces wild, face may change)."),
    OptionSpec("special_three_singles", True,
               "The special round is played when exactly three players are left with one die each. Off: "
               "the club's rule change of 23.07.2013, no maputa then."),
    OptionSpec("special_aces_wild", False, "Aces stay wild in the special round (all the texts say they are not)."),
    OptionSpec("special_face", "fixed",
               "Who may change the face in the special round. fixed: nobody, bids only raise the quantity "
               "of the opening face. veterans (kozak): a one-die player whose own special round is behind "
               "him may raise the face on his turn (quantity not lower, face higher, aces lowest); later "
               "bidders follow the new face. one_die (blog): any player holding one die may change the "
               "face by an ordinary raise; everybody else only raises the quantity.",
               choices=("fixed", "veterans", "one_die"), kind=str),
    OptionSpec("special_ace_opening", "owner",
               "Who may open the special round on aces (aces are an ordinary, lowest face there). owner: "
               "only the player the round belongs to. anyone: whoever opens it. no: nobody.",
               choices=("owner", "anyone", "no"), kind=str),
    OptionSpec("special_opened_by_owner", True,
               "The special round is opened by the player it belongs to, even where a house rule makes "
               "someone else start. Off: the ordinary next-starter rule applies."),
    OptionSpec("calza", False,
               "Calza: claim the last bid is exactly right. Right: the caller takes a die back from the bag; "
               "wrong: the caller loses a die."),
    OptionSpec("calza_callers", "not_last_bidder",
               "Who may call calza. not_last_bidder (boxed game): anyone but the player who made the last bid. "
               "not_next (kozak): anyone but the player whose turn it is, the last bidder included. next "
               "(blog): only the player whose turn it is.",
               choices=("not_last_bidder", "not_next", "next"), kind=str),
    OptionSpec("calza_in_special", True, "Calza may be called in the special round."),
    OptionSpec("calza_two_players", True, "Calza may be called when only two players are left."),
    OptionSpec("calza_cap", None,
               "Most dice a right calza can bring a player to (null: the starting number of dice). A right "
               "calza by a player already at the cap moves nothing.", kind=int, minimum=1, allow_none=True),
    OptionSpec("calza_starter", "caller",
               "Who starts the round after a calza, right or wrong. caller: the calza caller. bidder: the "
               "player whose bid was called.", choices=("caller", "bidder"), kind=str),
    OptionSpec("dudo_callers", "next",
               "Who may call dudo. next: the player whose turn it is. anyone: anyone but the last bidder.",
               choices=("next", "anyone"), kind=str),
    OptionSpec("next_starter", "loser",
               "Who starts the round after a dudo. loser: the player who lost the round. dudo_caller (blog "
               "house rule): the player who called dudo. If that player is out, the next player clockwise "
               "(to his left) starts.", choices=("loser", "dudo_caller"), kind=str),
    OptionSpec("bag_visible", False,
               "Lost dice lie open where everyone can count them (boxed game's optional rule, the club's "
               "centre), so the number of dice in play is public."),
    OptionSpec("scoring", "loser_loses",
               "Who gives up a die. loser_loses: the round's loser. others_lose (Snyd): the loser keeps his "
               "dice and every other player puts one away.", choices=("loser_loses", "others_lose"), kind=str),
    OptionSpec("last_with_dice", "wins",
               "The last player still holding dice wins the game (loses: Snyd, the others are safe).",
               choices=("wins", "loses"), kind=str),
    OptionSpec("stairs", False,
               "Snyd stairs: a player whose dice form a run from one (1, 1-2, 1-2-3, ...) counts every die "
               "of the run as wild plus one extra wild die (1-2-3-4 counts as 5)."),
)
OPTION_SPECS = {spec.name: spec for spec in OPTIONS}


class Variant:
    """A rule set: preset defaults plus a table's own option choices. Subclasses are the presets."""

    name = "custom"
    title = "Custom rules"
    source = ""
    aliases: tuple[str, ...] = ()
    spelling = "palifico"  # what this preset calls its special round
    defaults: dict[str, Any] = {}

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        if options is not None and not isinstance(options, dict):
            raise RecordError(f"options must be an object of name: value, not {options!r}")
        resolved = {spec.name: spec.default for spec in OPTIONS}
        resolved.update(self.defaults)
        for key, value in (options or {}).items():
            spec = OPTION_SPECS.get(key)
            if spec is None:
                raise RecordError(f"unknown option {key!r} (options: {', '.join(OPTION_SPECS)})")
            resolved[key] = spec.check(value)
        if resolved["calza_cap"] is not None and resolved["calza_cap"] > resolved["start_dice"]:
            raise RecordError(f"calza_cap {resolved['calza_cap']} is above the {resolved['start_dice']} dice "
                              "a player starts with: nobody may hold more")
        self.options: dict[str, Any] = resolved

    def __repr__(self) -> str:
        changed = {k: v for k, v in self.options.items() if v != self.preset_value(k)}
        return f"<Variant {self.name} {changed}>" if changed else f"<Variant {self.name}>"

    @classmethod
    def preset_value(cls, option: str) -> Any:
        return cls.defaults.get(option, OPTION_SPECS[option].default)

    def option_docs(self) -> dict[str, tuple[Any, str]]:
        """{option: (this preset's default, what the option changes in words)} for the page and docs."""
        return {spec.name: (self.preset_value(spec.name), spec.doc) for spec in OPTIONS}

    @property
    def start_dice(self) -> int:
        return self.options["start_dice"]

    @property
    def max_players(self) -> int | None:
        return self.options["max_players"]

    @property
    def special_name(self) -> str | None:
        """How this table names its special round, or None when it plays none."""
        return self.spelling if self.options["special_round"] else None

    @property
    def calza_cap(self) -> int:
        cap = self.options["calza_cap"]
        return self.start_dice if cap is None else cap

    # -- hooks the game calls --------------------------------------------------------------

    def count(self, face: int, hands: Iterable[list[int]], aces_wild: bool) -> int:
        """Dice that count for a bid on `face` among the revealed hands."""
        return sum(self.hand_count(face, hand, aces_wild) for hand in hands)

    def hand_count(self, face: int, hand: list[int], aces_wild: bool) -> int:
        if self.options["stairs"] and is_stairs(hand):
            return len(hand) + 1
        return sum(1 for die in hand if die == face or (aces_wild and die == 1 and face != 1))


def is_stairs(hand: list[int]) -> bool:
    """True when a hand is exactly a run from one: [1], [1, 2], [2, 1, 3], ..."""
    return bool(hand) and sorted(hand) == list(range(1, len(hand) + 1))


class Perudo(Variant):
    name = "perudo"
    title = "Perudo, the boxed game by Cosmo Fry"
    source = "seed 002 (French and Dutch rules of the boxed set)"
    aliases = ("palifico", "boxed", "cosmo-fry", "dudo")
    spelling = "palifico"
    defaults: dict[str, Any] = {}


class Kozak(Variant):
    name = "kozak"
    title = "Perudo by Kozak Games"
    source = "seed 000 (Ukrainian box rules)"
    aliases = ("palafico", "kozak-games")
    spelling = "palafico"
    defaults = {
        "max_players": 8,
        "raise_mode": "standard",
        "ace_quantity_once": True,
        "special_once": True,
        "special_two_players": False,
        "special_face": "veterans",
        "calza_callers": "not_next",
        "calza_in_special": False,
        "calza_two_players": False,
    }


class Club(Variant):
    name = "club"
    title = "Club rules with maputa"
    source = "seed 001 (club rules, amended 23.07.2013)"
    aliases = ("maputa",)
    spelling = "maputa"
    defaults = {
        "raise_mode": "standard",
        "special_once": True,
        "special_two_players": False,
        "special_three_singles": False,
        "special_ace_opening": "anyone",
        "bag_visible": True,
    }


class Wiki(Variant):
    name = "wiki"
    title = "Perudo as the Russian Wikipedia describes it"
    source = "seed 003"
    aliases = ("maputo", "wikipedia")
    spelling = "maputo"
    defaults = {
        "max_players": 10,
        "raise_mode": "standard",
        "special_once": True,
        "special_ace_opening": "anyone",
    }


class Blog(Variant):
    name = "blog"
    title = "Perudo as the blog plays it"
    source = "seed 004"
    aliases = ("blog-palafico",)
    spelling = "palafico"
    defaults = {
        "max_players": None,
        "raise_mode": "standard",
        "ace_bids": False,
        "special_once": True,
        "special_two_players": False,
        "special_face": "one_die",
        "special_ace_opening": "anyone",
        "calza": True,
        "calza_callers": "next",
    }


class Snyd(Variant):
    name = "snyd"
    title = "Snyd, the Danish game"
    source = "seed 004"
    aliases = ("danish",)
    spelling = "palifico"
    defaults = {
        "start_dice": 4,
        "max_players": None,
        "raise_mode": "standard",
        "ace_bids": False,
        "special_round": False,
        "scoring": "others_lose",
        "last_with_dice": "loses",
        "stairs": True,
    }


PRESETS: dict[str, type[Variant]] = {cls.name: cls for cls in (Perudo, Kozak, Club, Wiki, Blog, Snyd)}
_BY_NAME = {alias: cls for cls in PRESETS.values() for alias in (cls.name, *cls.aliases)}


def find_variant(name: str, options: dict[str, Any] | None = None) -> Variant:
    """The preset called `name` (or one of its aliases), with `options` switched on top of it."""
    if not isinstance(name, str):
        raise RecordError(f"variant must be a name such as perudo, not {name!r}")
    cls = _BY_NAME.get(name.strip().lower())
    if cls is None:
        raise RecordError(f"unknown variant {name!r} (presets: {', '.join(PRESETS)})")
    return cls(options)


__all__ = ["OPTIONS", "OPTION_SPECS", "OptionSpec", "PRESETS", "Variant", "find_variant", "is_stairs"]
