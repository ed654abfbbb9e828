"""The table's JSON API (used by the page and by scripts); it holds no game logic.

Reads are open on the local network; every change needs the PIN (`X-Table-Pin` header or a
logged-in page session) and a JSON object body. Errors are {"error": message}: 400 bad input,
401 wrong or missing PIN, 429 slowed down, 423 locked out, 404 unknown, 409 refused by the rules
or the table's phase (the reason a person understands). A refused request changes nothing.
State-changing bodies may carry "round" and/or "seq" (the `seq` of the state the client saw) so
a stale double-submit from a second phone is refused with 409.
"""
from __future__ import annotations

import json
import queue

from flask import Blueprint, Response, abort, current_app, jsonify, request

from companion.rules import PRESETS, find_variant
from companion.table.controller import TableController, TableError
from companion.web.auth import require_pin

bp = Blueprint("api", __name__, url_prefix="/api")

KEEPALIVE_S = 15.0
PHOTO_KINDS = ("photo", "annotated")
EXPECT_KEYS = ("round", "seq")


def controller() -> TableController:
    return current_app.extensions["companion"]["controller"]


class BadBody(Exception):
    pass


def body(allowed: tuple[str, ...], required: tuple[str, ...] = ()) -> dict:
    """The request's JSON object, with only known keys and every required one."""
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise BadBody("send a JSON object with Content-Type: application/json")
    unknown = sorted(set(data) - set(allowed) - set(EXPECT_KEYS))
    if unknown:
        raise BadBody(f"unknown field(s): {', '.join(unknown)}; expected: {', '.join(allowed)}")
    missing = [key for key in required if key not in data]
    if missing:
        raise BadBody(f"missing field(s): {', '.join(missing)}")
    return data


def expect(data: dict) -> dict:
    return {key: data[key] for key in EXPECT_KEYS if key in data}


@bp.errorhandler(BadBody)
def _bad_body(exc):
    return jsonify({"error": str(exc)}), 400


@bp.errorhandler(TableError)
def _refused(exc: TableError):
    return jsonify({"error": str(exc), "seq": controller().state()["seq"]}), exc.status


@bp.errorhandler(413)
def _too_large(exc):
    return jsonify({"error": "request too large"}), 413


@bp.errorhandler(404)
def _not_found(exc):
    return jsonify({"error": getattr(exc, "description", "not found")}), 404


@bp.get("/table")
def table():
    """Phase, variant, players and dice, bag, round, special round, whose turn, legal moves,
    bids so far, the reveal being checked and the last verdict."""
    return jsonify(controller().state())


@bp.get("/variants")
def variants():
    """The presets with every option's default and what it changes, for the set-up page."""
    out = {}
    for name in PRESETS:
        variant = find_variant(name)
        out[name] = {"title": variant.title, "special_name": variant.special_name,
                     "start_dice": variant.start_dice, "max_players": variant.max_players,
                     "options": {k: {"default": d, "doc": doc}
                                 for k, (d, doc) in variant.option_docs().items()}}
    return jsonify(out)


@bp.post("/game")
@require_pin
def new_game():
    data = body(("variant", "options", "players", "colours", "dice", "starter", "rolloff", "replace"),
                required=("players",))
    config = current_app.extensions["companion"]["config"]
    return jsonify(controller().new_game(
        variant=data.get("variant", config.variant),
        options=data.get("options", config.options if "variant" not in data else None),
        players=data["players"], colours=data.get("colours"), dice=data.get("dice"),
        starter=data.get("starter"), rolloff=bool(data.get("rolloff", config.rolloff)),
        replace=data.get("replace") is True))


@bp.post("/rolloff")
@require_pin
def rolloff():
    """Photograph the roll-off dice, or take {"rolls": {"Ana": 6, ...}} entered by hand."""
    data = body(("rolls",))
    return jsonify(controller().roll_off(rolls=data.get("rolls"), expect=expect(data)))


@bp.post("/bid")
@require_pin
def bid():
    data = body(("player", "quantity", "face"), required=("player", "quantity", "face"))
    return jsonify(controller().bid(data["player"], data["quantity"], data["face"], expect=expect(data)))


@bp.post("/call")
@require_pin
def call():
    """Dudo or calza: captures, reads and settles; `verdict` then holds the judge's round fields."""
    data = body(("type", "by"), required=("type", "by"))
    return jsonify(controller().call(data["type"], data["by"], expect=expect(data)))


@bp.post("/capture")
@require_pin
def capture():
    """Photograph the tray again (after re-rolling a cocked die, or after a restart)."""
    data = body(())
    return jsonify(controller().capture(expect=expect(data)))


@bp.post("/reading")
@require_pin
def reading():
    """Manual entry {"dice": {player: [faces]}} or corrections {"changes": [...]}; recorded."""
    data = body(("dice", "changes"))
    return jsonify(controller().reading(dice=data.get("dice"), changes=data.get("changes"),
                                        expect=expect(data)))


@bp.post("/confirm")
@require_pin
def confirm():
    """Accept the verdict: the next round starts, or the game is over."""
    data = body(())
    return jsonify(controller().confirm(expect=expect(data)))


@bp.get("/history")
def history():
    return jsonify(controller().history())


@bp.get("/export/<game>")
def export(game: str):
    """A game (number, or "last") as a record `companion judge` accepts unchanged."""
    if game != "last" and not game.isdigit():
        abort(404, description="a game is a number, or 'last'")
    try:
        return jsonify(controller().export(int(game) if game.isdigit() else game))
    except LookupError as exc:
        abort(404, description=str(exc))


@bp.get("/photo/<int:seq>/<kind>")
def photo(seq: int, kind: str):
    """A reveal's photo or its annotated picture, as recorded (hashed into the chain)."""
    if kind not in PHOTO_KINDS:
        abort(404, description=f"kind is one of {', '.join(PHOTO_KINDS)}")
    table = controller()
    found = table.store.photo(table.table_id, seq, kind)
    if found is None:
        abort(404, description=f"no {kind} recorded with event {seq}")
    mime, data = found
    response = Response(data, mimetype=mime)
    response.headers["Cache-Control"] = "public, max-age=31536000, immutable"
    return response


def sse(message: dict) -> str:
    return f"id: {message['seq']}\ndata: {json.dumps(message, separators=(',', ':'))}\n\n"


@bp.get("/events")
def events():
    """Server-Sent Events: one message {"seq", "type", "table"} for every change, starting with
    the current state; a comment every KEEPALIVE_S keeps proxies and phones from hanging up."""
    table = controller()
    feed = table.subscribe()

    def stream():
        try:
            yield "retry: 2000\n\n"
            state = table.state()   # one snapshot: its seq and its table belong together
            yield sse({"seq": state["seq"], "type": "state", "table": state})
            while True:
                try:
                    message = feed.get(timeout=KEEPALIVE_S)
                except queue.Empty:
                    yield ": keep-alive\n\n"
                    continue
                if message is None:   # the table is shutting down
                    return
                yield sse(message)
        finally:
            table.unsubscribe(feed)

    return Response(stream(), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
