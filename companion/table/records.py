"""Past games read back from the event log: the history the page lists, and the game record
that `companion judge` accepts unchanged.

Only what was recorded is used: the set-up, the starter the roll-off chose, each round's bids,
its call and the dice of the round's last verdict (a correction after a verdict replaces it).
"""
from __future__ import annotations

from companion.rules import Bid, Game, find_variant
from companion.table.store import Event, EventStore


def photo_urls(event: Event) -> dict:
    """The URLs of the pictures an event kept (`photo_url`, `annotated_url`), only those it has."""
    return {f"{kind}_url": f"/api/photo/{event.seq}/{kind}" for kind in event.photo_kinds}


def summarise(events: list[Event]) -> dict:
    """One game's history from its events (all with the same game number, in order)."""
    created = next((e for e in events if e.type == "game_created"), None)
    if created is None:
        raise LookupError("no game set-up in these events")
    setup = created.payload
    variant = find_variant(setup["variant"], options=setup["options"])
    game = {"id": created.game, "table_id": created.table_id, "variant": setup["variant"],
            "options": setup["options"], "special_name": variant.special_name,
            "players": setup["players"], "colours": setup["colours"], "dice": setup["dice"],
            "starter": setup.get("starter"), "started": created.time, "finished": None,
            "abandoned": False, "over": False, "winner": None, "loser": None, "rounds": [],
            "last_seq": events[-1].seq, "last_hash": events[-1].hash}
    current: dict | None = None
    for event in events:
        p = event.payload
        if event.type == "rolloff" and p.get("rolls"):
            best = max(p["rolls"].values())
            tied = [name for name, face in p["rolls"].items() if face == best]
            if len(tied) == 1:
                game["starter"] = tied[0]
        elif event.type in ("bid", "call") and (current is None or current["round"] != p["round"]):
            current = {"round": p["round"], "bids": [], "call": None, "verdict": None,
                       "corrections": 0, "photo_url": None, "annotated_url": None}
            game["rounds"].append(current)
        if current is None:
            if event.type == "game_abandoned":
                game["abandoned"], game["finished"] = True, event.time
            continue
        if event.type == "bid":
            current["bids"].append({"player": p["player"], "quantity": p["quantity"],
                                    "face": p["face"]})
        elif event.type == "call":
            current["call"] = {"type": p["kind"], "by": p["by"]}
        elif event.type == "reading":
            current.update(photo_urls(event))
        elif event.type == "correction":
            current["corrections"] += 1
        elif event.type == "verdict":
            current["verdict"] = {**p["result"], "round": p["round"], "dice": p["dice"],
                                  "odds": p["odds"]}
        elif event.type == "game_abandoned":
            game["abandoned"], game["finished"] = True, event.time
    settled = [r for r in game["rounds"] if r["verdict"]]
    if settled and settled[-1]["verdict"]["next_starter"] is None:
        replayed = replay(to_record(game))
        game.update(over=True, winner=replayed.winner, loser=replayed.loser,
                    finished=game["finished"] or events[-1].time)
    return game


def game_record(store: EventStore, table_id: str, game: int | str = "last") -> dict:
    """A game (its number, or "last") as a record `companion judge` accepts unchanged, for the
    API, the page and `companion export` alike; LookupError names the games there are."""
    games = store.games(table_id)
    number = games[-1] if game == "last" and games else game
    if number not in games:
        known = f"games {games[0]}-{games[-1]} or 'last'" if games else "no games recorded"
        raise LookupError(f"no game '{game}' at table {table_id} ({known})")
    return to_record(summarise(store.events(table_id, game=number)))


def to_record(game: dict) -> dict:
    """The game as a judge record: set-up plus every settled round (bids, call, revealed dice)."""
    return {
        "variant": game["variant"],
        "options": dict(game["options"]),
        "players": list(game["players"]),
        "dice": dict(game["dice"]),
        "starter": game["starter"],
        "rounds": [{"bids": [[b["player"], b["quantity"], b["face"]] for b in r["bids"]],
                    "call": dict(r["call"]),
                    "dice": {name: list(faces) for name, faces in r["verdict"]["dice"].items()}}
                   for r in game["rounds"] if r["verdict"]],
    }


def replay(record: dict) -> Game:
    """Play a record's rounds through the engine (the record came from the table: all legal)."""
    game = Game(find_variant(record["variant"], options=record["options"]), record["players"],
                dice=record["dice"], starter=record["starter"])
    for round_ in record["rounds"]:
        for player, quantity, face in round_["bids"]:
            game.bid(player, Bid(quantity, face))
        game.call(round_["call"]["type"], round_["call"]["by"])
        game.reveal(round_["dice"])
    return game
