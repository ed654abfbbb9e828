"""Judging a whole game record: the `companion judge` verdict.

A record is checked in the order RULES.md decides: its shape first, everywhere (malformed input
raises RecordError and nothing is judged), then round by round its bids, its call and its revealed
dice. The first broken rule stops judging; the rounds before it are still reported.
"""
from __future__ import annotations

from typing import Any

from companion.rules.bid import FACES, Bid, is_count
from companion.rules.errors import RecordError, RuleError
from companion.rules.game import CALLS, Game
from companion.rules.variants import find_variant


def judge(record: dict[str, Any]) -> dict[str, Any]:
    """Replay `record` and return the verdict: {"rounds", "dice", "bag", "winner", "error"}.

    Malformed records raise RecordError; a broken rule is reported in `error`, not raised.
    """
    game, rounds = load(record)
    verdict_rounds: list[dict[str, Any]] = []
    error = None
    for number, round_ in enumerate(rounds, start=1):
        error = _play_round(game, number, round_)
        if error:
            break
        verdict_rounds.append(game.history[-1].to_json())
    return {"rounds": verdict_rounds, "dice": game.dice, "bag": game.bag, "winner": game.winner, "error": error}


def load(record: Any) -> tuple[Game, list[dict[str, Any]]]:
    """Check the record's whole shape and set up its game; RecordError says what is malformed."""
    if not isinstance(record, dict):
        raise RecordError("a game record is a JSON object with variant, players and rounds")
    for key in ("variant", "players", "rounds"):
        if key not in record:
            raise RecordError(f"the record has no {key!r}")
    options = record.get("options")
    if options is not None and not isinstance(options, dict):
        raise RecordError("options must be an object of option: value")
    variant = find_variant(record["variant"], options)
    game = Game(variant, record["players"], record.get("dice"), record.get("starter"))
    rounds = record["rounds"]
    if not isinstance(rounds, list):
        raise RecordError("rounds must be a list")
    players = set(game.players)
    return game, [_check_round(number, round_, players) for number, round_ in enumerate(rounds, start=1)]


def _check_round(number: int, round_: Any, players: set[str]) -> dict[str, Any]:
    where = f"round {number}"
    if not isinstance(round_, dict):
        raise RecordError(f"{where} must be an object with bids, call and dice")
    bids = round_.get("bids", [])
    if not isinstance(bids, list):
        raise RecordError(f"{where}: bids must be a list of [player, quantity, face]")
    checked_bids = []
    for index, entry in enumerate(bids, start=1):
        if not isinstance(entry, list) or len(entry) != 3:
            raise RecordError(f"{where}, bid {index}: a bid is [player, quantity, face], not {entry!r}")
        player, quantity, face = entry
        _check_player(player, players, f"{where}, bid {index}")
        if not is_count(quantity) or quantity < 1:
            raise RecordError(f"{where}, bid {index}: quantity must be a whole number of at least 1, not {quantity!r}")
        if not is_count(face) or face not in FACES:
            raise RecordError(f"{where}, bid {index}: face must be 1 to 6 (1 = ace), not {face!r}")
        checked_bids.append((player, Bid(quantity, face)))
    call = round_.get("call")
    if not isinstance(call, dict):
        raise RecordError(f"{where} has no call (an object with type and by)")
    if call.get("type") not in CALLS:
        raise RecordError(f"{where}: call type must be dudo or calza, not {call.get('type')!r}")
    _check_player(call.get("by"), players, f"{where}, call")
    dice = round_.get("dice")
    if not isinstance(dice, dict):
        raise RecordError(f"{where} has no revealed dice (an object of player: [faces])")
    for name, faces in dice.items():
        _check_player(name, players, f"{where}, dice")
        if faces is None:
            continue
        if not isinstance(faces, list):
            raise RecordError(f"{where}: {name}'s dice must be a list of faces, not {faces!r}")
        for face in faces:
            if not is_count(face) or face not in FACES:
                raise RecordError(f"{where}: {name}'s dice must be faces 1 to 6, not {face!r}")
    return {"bids": checked_bids, "call": (call["type"], call["by"]),
            "dice": {name: list(faces or []) for name, faces in dice.items()}}


def _check_player(name: Any, players: set[str], where: str) -> None:
    if not isinstance(name, str) or name not in players:
        raise RecordError(f"{where}: {name!r} is not among the players")


def _play_round(game: Game, number: int, round_: dict[str, Any]) -> dict[str, Any] | None:
    """Play one checked round into `game`; the verdict's error object when it breaks a rule."""
    if game.phase == "over":
        return _error(number, None, f"the game is already over ({_ending(game)}): no further round is played")
    for index, (player, bid) in enumerate(round_["bids"], start=1):
        try:
            game.bid(player, bid)
        except RuleError as problem:
            return _error(number, index, f"{player} bid {bid}: {problem}")
    kind, by = round_["call"]
    try:
        game.call(kind, by)
        game.reveal(round_["dice"])
    except RuleError as problem:
        return _error(number, None, f"{by} called {kind}: {problem}" if game.phase == "bidding" else str(problem))
    return None


def _ending(game: Game) -> str:
    return f"{game.winner} won" if game.winner else f"{game.loser} lost"


def _error(round_number: int, bid: int | None, reason: str) -> dict[str, Any]:
    return {"round": round_number, "bid": bid, "reason": reason}
