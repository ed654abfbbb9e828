"""One game at one table: whose turn it is, which bids are legal and why not, and what a reveal settles.

The state changes only through `bid`, `call` and `reveal`, and nothing in it is random, so replaying
the same calls always rebuilds the same state (the table does this after a restart).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import ceil
from typing import Any

from companion.rules.bid import FACES, Bid, face_word, is_count
from companion.rules.errors import RecordError, RuleError
from companion.rules.variants import Variant, find_variant

CALLS = ("dudo", "calza")
SPECIAL = "palifico"  # the one spelling results use for every preset's special round


@dataclass(frozen=True)
class RoundResult:
    """What one reveal settled."""

    round: int
    special: str | None
    bidder: str
    bid: Bid
    call: str
    by: str
    count: int
    loser: str | None
    gainer: str | None
    eliminated: list[str]
    next_starter: str | None
    revealed: dict[str, list[int]] = field(default_factory=dict)
    dice_after: dict[str, int] = field(default_factory=dict)
    bids: tuple[tuple[str, Bid], ...] = ()
    aces_wild: bool = True  # how this round counted: the odds of its bid use the same

    def to_json(self) -> dict[str, Any]:
        return {
            "special": self.special,
            "bid": [self.bidder, self.bid.quantity, self.bid.face],
            "call": self.call,
            "by": self.by,
            "count": self.count,
            "loser": self.loser,
            "gainer": self.gainer,
            "eliminated": list(self.eliminated),
            "next_starter": self.next_starter,
        }


@dataclass(frozen=True)
class _Range:
    """Quantities allowed for one face after the current bid, or why that face is not allowed at all."""

    low: int | None  # None: the face is not allowed
    high: int | None  # None: no upper limit
    reason: str


class Game:
    """A game from its first round: dice held, the bag, the round in progress and every result so far."""

    def __init__(self, variant: Variant | str, players: list[str], dice: dict[str, int] | None = None,
                 starter: str | None = None) -> None:
        self.variant = find_variant(variant) if isinstance(variant, str) else variant
        self.options = self.variant.options
        self.players = _check_players(players, self.variant)
        start = self.variant.start_dice
        held = {name: start for name in self.players}
        if dice is not None:
            if not isinstance(dice, dict):
                raise RecordError("dice must map each player to the number of dice he holds")
            for name, count in dice.items():
                if name not in held:
                    raise RecordError(f"dice given for {name!r}, who is not among the players")
                if not is_count(count) or not 1 <= count <= start:
                    raise RecordError(f"{name} must start with 1 to {start} dice, not {count!r}")
                held[name] = count
        self._dice = held
        self.bag = sum(start - n for n in held.values())
        if starter is None:
            starter = self.players[0]
        if not isinstance(starter, str) or starter not in held:
            raise RecordError(f"starter {starter!r} is not among the players")
        self._opening = (dict(held), starter)
        self.history: list[RoundResult] = []
        self.winner: str | None = None
        self.loser: str | None = None
        self.round_number = 0
        self._special_rounds: dict[str, list[int]] = {}  # player -> rounds that were his special round
        owner = None
        if self.options["special_at_start"] and held[starter] == 1:
            owner = self._special_owner_after([starter], starter)
        self._start_round(starter, owner)

    # -- what the table and page read --------------------------------------------------------

    @property
    def dice(self) -> dict[str, int]:
        return dict(self._dice)

    @property
    def dice_in_play(self) -> int:
        return sum(self._dice.values())

    @property
    def active_players(self) -> list[str]:
        return [p for p in self.players if self._dice[p] > 0]

    @property
    def current_bid(self) -> Bid | None:
        return self.bids[-1][1] if self.bids else None

    @property
    def last_bidder(self) -> str | None:
        return self.bids[-1][0] if self.bids else None

    @property
    def pending_call(self) -> tuple[str, str] | None:
        """(kind, caller) once the round has been called and waits for the reveal."""
        return self._call

    @property
    def visible_bag(self) -> int | None:
        """Dice in the bag where the table plays it open (bag_visible), None where lost dice stay hidden."""
        return self.bag if self.options["bag_visible"] else None

    @property
    def special_name(self) -> str:
        """This table's word for the special round, for sentences."""
        return self.variant.special_name or SPECIAL

    def to_record(self) -> dict[str, Any]:
        """The finished rounds as a game record that `companion judge` replays to the same verdict."""
        dice, starter = self._opening
        custom = {k: v for k, v in self.options.items() if v != self.variant.preset_value(k)}
        return {
            "variant": self.variant.name, "options": custom, "players": list(self.players),
            "dice": dict(dice), "starter": starter,
            "rounds": [{"bids": [[p, b.quantity, b.face] for p, b in r.bids],
                        "call": {"type": r.call, "by": r.by},
                        "dice": {p: list(faces) for p, faces in r.revealed.items()}} for r in self.history],
        }

    # -- bids ---------------------------------------------------------------------------------

    def bid_error(self, player: str, bid: Bid) -> str | None:
        """Why `player` may not make `bid` now, in words; None when the bid is legal."""
        problem = self._turn_problem(player)
        if problem:
            return problem
        if not isinstance(bid, Bid):
            return f"{bid!r} is not a bid"
        cap = self._quantity_cap()
        if cap is not None and bid.quantity > cap:
            return f"{bid} names more dice than the {cap} in play"
        allowed = self._range(player, bid.face)
        if allowed.low is None or bid.quantity < allowed.low or (allowed.high is not None and bid.quantity > allowed.high):
            return allowed.reason
        if bid.face == 1 and self.options["ace_quantity_once"] and bid.quantity in self._ace_quantities():
            return f"{bid} was already bid this round: each number of aces may be bid only once per round"
        return None

    def legal_bids(self, player: str | None = None) -> list[Bid]:
        """The lowest legal bid on each face `player` (default: whoever is to move) may bid now."""
        player = self.to_move if player is None else player
        if player is None or self._turn_problem(player):
            return []
        legal = []
        cap = self._quantity_cap()
        for face in FACES:
            allowed = self._range(player, face)
            if allowed.low is None:
                continue
            highs = [high for high in (allowed.high, cap) if high is not None]
            most = min(highs) if highs else None
            quantity = allowed.low
            while self.bid_error(player, Bid(quantity, face)) is not None:
                quantity += 1
                if most is not None and quantity > most:
                    break
            else:
                legal.append(Bid(quantity, face))
        return legal

    def bid(self, player: str, bid: Bid) -> None:
        """Record `player`'s bid; RuleError (and no change) when it is not legal."""
        problem = self.bid_error(player, bid)
        if problem:
            raise RuleError(problem)
        self.bids.append((player, bid))
        self.to_move = self._next_active(player)

    # -- calls --------------------------------------------------------------------------------

    def call_error(self, kind: str, by: str) -> str | None:
        """Why `by` may not call `kind` ("dudo" or "calza") now; None when he may."""
        if kind not in CALLS:
            return f"unknown call {kind!r}: dudo or calza"
        problem = self._phase_problem(by)
        if problem:
            return problem
        if not self.bids:
            return f"there is no bid to call yet: {self.to_move} must open the round"
        bidder = self.last_bidder
        if kind == "dudo":
            if self.options["dudo_callers"] == "next":
                return None if by == self.to_move else f"only {self.to_move}, whose turn it is, may call dudo"
            return f"{by} cannot call dudo on his own bid" if by == bidder else None
        return self._calza_problem(by, bidder)

    def callers(self, kind: str) -> list[str]:
        """Players who may call `kind` now, in seat order."""
        return [p for p in self.active_players if self.call_error(kind, p) is None]

    def call(self, kind: str, by: str) -> None:
        """Stop the bidding with dudo or calza; RuleError (and no change) when not allowed."""
        problem = self.call_error(kind, by)
        if problem:
            raise RuleError(problem)
        self._call = (kind, by)
        self.phase = "called"
        self.to_move = None

    def pick_call(self, claims: list[tuple[str, str]]) -> tuple[str, str] | None:
        """Of calls said at the same moment, the one that counts (boxed game's calza rules).

        A dudo said at the same moment beats calza; among several callers of the same kind the one
        nearest clockwise after the last bidder wins (the player whose turn it is first). Calls
        that are not allowed are ignored.
        """
        allowed = [(kind, by) for kind, by in claims if self.call_error(kind, by) is None]
        if not allowed:
            return None
        order = self._seats_after(self.last_bidder)
        return min(allowed, key=lambda claim: (claim[0] != "dudo", order.index(claim[1])))

    # -- reveal -------------------------------------------------------------------------------

    def expected_dice(self) -> dict[str, int]:
        """How many dice each player still in the game must reveal."""
        return {p: n for p, n in self._dice.items() if n > 0}

    def reveal(self, dice: dict[str, list[int]]) -> RoundResult:
        """Settle the called round with the revealed dice and start the next round (or end the game)."""
        if self.phase != "called":
            raise RuleError("the game is over" if self.phase == "over" else "nobody has called dudo or calza yet")
        hands = self._check_reveal(dice)
        bidder, bid = self.bids[-1]
        kind, caller = self._call
        count = self.variant.count(bid.face, hands.values(), self.aces_wild)
        loser = gainer = None
        if kind == "dudo":
            loser = bidder if count < bid.quantity else caller
        elif count == bid.quantity:
            if self._dice[caller] < self.variant.calza_cap and self.bag > 0:
                gainer = caller
        else:
            loser = caller
        losing = self._dice_losers(loser)
        for player in losing:
            self._dice[player] -= 1
            self.bag += 1
        if gainer:
            self._dice[gainer] += 1
            self.bag -= 1
        eliminated = [p for p in losing if self._dice[p] == 0]
        next_starter, owner = self._after_round(kind, caller, bidder, loser, losing)
        result = RoundResult(self.round_number, SPECIAL if self.special else None, bidder, bid, kind, caller,
                             count, loser, gainer, eliminated, next_starter, hands, self.dice, tuple(self.bids),
                             self.aces_wild)
        self.history.append(result)
        if next_starter is None:
            self.phase = "over"
            self.to_move = None
            self._call = None
        else:
            self._start_round(next_starter, owner)
        return result

    # -- inside ---------------------------------------------------------------------------------

    def _start_round(self, starter: str, owner: str | None) -> None:
        self.round_number += 1
        self.starter = starter
        self.special_owner = owner
        self.special = SPECIAL if owner else None
        if owner:
            self._special_rounds.setdefault(owner, []).append(self.round_number)
        self.aces_wild = self.options["special_aces_wild" if owner else "aces_wild"]
        self.bids: list[tuple[str, Bid]] = []
        self._call: tuple[str, str] | None = None
        self.phase = "bidding"
        self.to_move: str | None = starter

    def _phase_problem(self, player: str) -> str | None:
        if self.phase == "over":
            return "the game is over"
        if self.phase == "called":
            return "the round has been called: reveal the dice"
        if player not in self._dice:
            return f"{player!r} is not playing at this table"
        if self._dice[player] == 0:
            return f"{player} is out of the game"
        return None

    def _turn_problem(self, player: str) -> str | None:
        problem = self._phase_problem(player)
        if problem:
            return problem
        if player != self.to_move:
            return f"it is {self.to_move}'s turn, not {player}'s"
        return None

    def _calza_problem(self, by: str, bidder: str) -> str | None:
        opts = self.options
        if not opts["calza"]:
            return "calza is not played at this table"
        if self.special and not opts["calza_in_special"]:
            return f"no calza in the {self.special_name} round"
        if len(self.active_players) == 2 and not opts["calza_two_players"]:
            return "no calza when only two players are left"
        who = opts["calza_callers"]
        if who == "not_last_bidder" and by == bidder:
            return f"{by} made the last bid and cannot call calza on it"
        if who == "not_next" and by == self.to_move:
            return f"{by}, whose turn it is, cannot call calza"
        if who == "next" and by != self.to_move:
            return f"only {self.to_move}, whose turn it is, may call calza"
        return None

    def _quantity_cap(self) -> int | None:
        """Most dice a bid may name: None (any number, a bid above the dice in play is legal and
        false: our reading 7) unless the table caps bids at the dice in play."""
        return None if self.options["bids_above_dice"] else self.dice_in_play

    def _ace_quantities(self) -> set[int]:
        return {bid.quantity for _, bid in self.bids if bid.face == 1}

    def _range(self, player: str, face: int) -> _Range:
        """Which quantities of `face` may follow the current bid for `player` (the rules of the round)."""
        current = self.current_bid
        if self.special:
            return self._special_range(player, face, current)
        opts = self.options
        if face == 1 and not opts["ace_bids"]:
            return _Range(None, None, "bids on aces are not played at this table")
        if current is None:
            if face == 1 and not opts["ace_opening"]:
                return _Range(None, None, "a round may not open on aces")
            return _Range(1, None, "a bid needs at least one die")
        if self.aces_wild and (face == 1 or current.face == 1):
            return _wild_ace_range(current, face)
        return _ordinary_range(current, face, opts["raise_mode"])

    def _special_range(self, player: str, face: int, current: Bid | None) -> _Range:
        name = self.special_name
        if current is None:
            who = self.options["special_ace_opening"]
            if face == 1 and who == "no":
                return _Range(None, None, f"the {name} round may not open on aces")
            if face == 1 and who == "owner" and player != self.special_owner:
                return _Range(None, None, f"only {self.special_owner} may open the {name} round on aces")
            return _Range(1, None, "a bid needs at least one die")
        if face == current.face:
            return _Range(current.quantity + 1, None,
                          f"after {current} bid more {face_word(face)} (at least {current.quantity + 1}×{face})")
        keep = (f"in the {name} round the face stays {current.face}: "
                f"bid at least {current.quantity + 1}×{current.face}")
        rule = self.options["special_face"]
        if rule == "fixed":
            return _Range(None, None, keep)
        if self._dice[player] != 1:
            return _Range(None, None, f"{keep} (only a player with one die may change the face)")
        if rule == "veterans":
            if player not in self._special_rounds or self._special_rounds[player][0] >= self.round_number:
                return _Range(None, None, f"{keep} (only a one-die player whose own {name} is over may change it)")
            if face < current.face:
                return _Range(None, None, f"the face may only go up from {current.face} in the {name} round")
            return _Range(current.quantity, None,
                          f"changing the face may not lower the quantity: at least {current.quantity}×{face}")
        return _ordinary_range(current, face, self.options["raise_mode"])

    def _dice_losers(self, loser: str | None) -> list[str]:
        if loser is None:
            return []
        if self.options["scoring"] == "others_lose":
            return [p for p in self.active_players if p != loser]
        return [loser]

    def _after_round(self, kind: str, caller: str, bidder: str, loser: str | None,
                     losing: list[str]) -> tuple[str | None, str | None]:
        """(who starts the next round, whose special round it is); (None, None) when the game is over."""
        active = self.active_players
        if len(active) <= 1:
            last = active[0] if active else loser
            if self.options["last_with_dice"] == "wins":
                self.winner = last
            else:
                self.loser = last
            return None, None
        if kind == "calza":
            starter = caller if self.options["calza_starter"] == "caller" else bidder
        elif self.options["next_starter"] == "dudo_caller":
            starter = caller
        else:
            starter = loser
        if self._dice[starter] == 0:
            starter = self._next_active(starter)
        dropped = [p for p in self._seats_after(starter, include=True) if p in losing and self._dice[p] == 1]
        owner = self._special_owner_after(dropped, starter)
        if owner and self.options["special_opened_by_owner"]:
            starter = owner
        return starter, owner

    def _special_owner_after(self, dropped: list[str], starter: str) -> str | None:
        """The first player in `dropped` who is owed a special round now, if the table's rules allow one."""
        opts = self.options
        if not opts["special_round"] or not dropped:
            return None
        active = self.active_players
        if len(active) == 2 and not opts["special_two_players"]:
            return None
        if len(active) == 3 and all(self._dice[p] == 1 for p in active) and not opts["special_three_singles"]:
            return None
        for player in dropped:
            if not (opts["special_once"] and player in self._special_rounds):
                return player
        return None

    def _check_reveal(self, dice: dict[str, list[int]]) -> dict[str, list[int]]:
        if not isinstance(dice, dict):
            raise RuleError("the revealed dice must list each player's faces")
        hands: dict[str, list[int]] = {}
        for name, faces in dice.items():
            if name not in self._dice:
                raise RuleError(f"dice revealed for {name!r}, who is not playing at this table")
            if faces is not None and (not isinstance(faces, (list, tuple))
                                      or not all(is_count(f) and f in FACES for f in faces)):
                raise RuleError(f"{name}'s dice must be faces 1 to 6, not {faces!r}")
        for name in self.players:
            faces = list(dice.get(name) or [])
            held = self._dice[name]
            if held == 0 and faces:
                raise RuleError(f"{name} is out of the game but {len(faces)} {'die' if len(faces) == 1 else 'dice'} "
                                "were revealed for him")
            if len(faces) != held:
                raise RuleError(f"{name} holds {held} {'die' if held == 1 else 'dice'} "
                                f"but {len(faces)} were revealed")
            if held:
                hands[name] = faces
        return hands

    def _next_active(self, player: str) -> str:
        return self._seats_after(player)[0]

    def _seats_after(self, player: str, include: bool = False) -> list[str]:
        """Players still in the game clockwise from `player`'s left (`player` himself first when `include`, else last)."""
        i = self.players.index(player)
        order = self.players[i:] + self.players[:i] if include else self.players[i + 1:] + self.players[:i + 1]
        return [p for p in order if self._dice[p] > 0]


def _wild_ace_range(current: Bid, face: int) -> _Range:
    """Bids that involve aces while aces are wild: half rounded up to go to aces, 2n+1 to leave them."""
    if current.face != 1:
        need = ceil(current.quantity / 2)
        return _Range(need, None, f"a bid on aces needs at least {need} after {current}")
    if face == 1:
        return _Range(current.quantity + 1, None, f"after {current} bid more aces (at least {current.quantity + 1}×1)")
    need = 2 * current.quantity + 1
    return _Range(need, None, f"after {current} a bid on {face_word(face)} needs at least {need} "
                              f"(twice the aces, plus one)")


def _ordinary_range(current: Bid, face: int, mode: str) -> _Range:
    """Raises where every face is ordinary (aces lowest), in the standard or boxed-game `either` mode."""
    more = current.quantity + 1
    if face == current.face:
        return _Range(more, None, f"after {current} bid more {face_word(face)} (at least {more}×{face})")
    if mode == "either":
        if face < current.face:
            return _Range(None, None, f"after {current} the face may not go down: raise the quantity of "
                                      f"{face_word(current.face)} or name a higher face")
        return _Range(current.quantity, current.quantity,
                      f"raise the quantity or the face, not both: after {current} a bid on {face_word(face)} "
                      f"is exactly {current.quantity}×{face}")
    if face > current.face:
        return _Range(current.quantity, None,
                      f"a bid may not lower the quantity: after {current} at least {current.quantity}×{face}")
    return _Range(more, None, f"after {current} a lower face needs a higher quantity: at least {more}×{face}")


def _check_players(players: list[str], variant: Variant) -> list[str]:
    if not isinstance(players, (list, tuple)) or not all(isinstance(p, str) and p.strip() for p in players):
        raise RecordError("players must be a list of names")
    if len(set(players)) != len(players):
        raise RecordError("every player needs a different name")
    if len(players) < 2:
        raise RecordError("a game needs at least two players")
    most = variant.max_players
    if most is not None and len(players) > most:
        raise RecordError(f"{variant.name} is played by at most {most} players, not {len(players)}")
    return list(players)
