"""HTML pages for people at the table: table view, bid entry, reveal, set-up, history.

The pages hold no game logic: they read the table's state from the controller (the same dict
`GET /api/table` serves), turn it into what a person sees, in their language, and send moves to
the controller. Every state-changing form needs the table PIN once per device (the session
cookie of `companion.web.auth`) and a CSRF token bound to that session.
"""
from __future__ import annotations

import secrets
from functools import lru_cache, wraps

import segno
from flask import (Blueprint, Response, abort, current_app, flash, jsonify, redirect,
                   render_template, request, session, url_for)
from markupsafe import Markup

from companion.table.controller import TableError

from . import auth, i18n
from .i18n import gettext as _, rule_word

bp = Blueprint("pages", __name__, template_folder="templates", static_folder="static",
               static_url_path="/static/pages")

SEAT_CSS = {"white": "#f4f1e8", "black": "#111", "red": "#e53935", "blue": "#1e88e5",
            "green": "#43a047", "yellow": "#fdd835", "purple": "#8e24aa", "orange": "#fb8c00"}


@bp.record_once
def _setup_language(state) -> None:
    """The pages bring their own language handling; the app factory need not know about it."""
    i18n.init_app(state.app)
    state.app.jinja_env.globals["csrf_token"] = csrf_token


# --- CSRF ------------------------------------------------------------------------------------
def csrf_token() -> str:
    """The session's CSRF token (made on first use); every page form carries it."""
    token = session.get("csrf_token")
    if not token:
        token = session["csrf_token"] = secrets.token_urlsafe(24)
    return token


def _csrf_ok() -> bool:
    sent = request.headers.get("X-CSRF-Token") or request.form.get("csrf_token") or ""
    expected = session.get("csrf_token") or ""
    return bool(expected) and secrets.compare_digest(sent, expected)


def _wants_json() -> bool:
    return "application/json" in request.headers.get("Accept", "")


def _answer(error: str | None = None, status: int = 200):
    """JSON for the page's script, a redirect with a flashed message for a plain form post."""
    if _wants_json():
        return jsonify({"ok": error is None, "error": error}), (status if error else 200)
    if error:
        flash(error, "error")
    return redirect(url_for("pages.table"))


def state_changing(view):
    """Guard for form posts: a logged-in device (table PIN) and a matching CSRF token."""

    @wraps(view)
    def wrapper(*args, **kwargs):
        if not _csrf_ok():
            return _answer(_("This form has expired: reload the page and try again."), 400)
        if not auth.is_authorised():
            if _wants_json():
                return _answer(_("Enter the table PIN first."), 401)
            return redirect(url_for("pages.pin", next=request.referrer or url_for("pages.table")))
        return view(*args, **kwargs)

    return wrapper


# --- The controller and its state ------------------------------------------------------------
def _controller():
    table = current_app.extensions.get("companion", {}).get("controller")
    if table is None:
        abort(503, description="the table controller is not running")
    return table


def _table_state() -> dict | None:
    """The dict `GET /api/table` serves, or None before any game was set up."""
    state = _controller().state()
    return state if state and state.get("players") else None


# --- Building what the page shows ------------------------------------------------------------
def _bid(value) -> dict | None:
    if not value:
        return None
    if isinstance(value, dict):
        return {"quantity": int(value["quantity"]), "face": int(value["face"])}
    if isinstance(value, (list, tuple)):   # a judge result's bid: [player, quantity, face]
        return {"quantity": int(value[-2]), "face": int(value[-1])}
    return {"quantity": int(value.quantity), "face": int(value.face)}


def bid_text(value) -> str:
    """A bid as words for headlines: "4 × 5", "3 × ace"."""
    b = _bid(value)
    if not b:
        return "—"
    return f"{b['quantity']} × {i18n.face_name(b['face'], b['quantity'])}"


def view_model(state: dict) -> dict:
    """What the table page shows, from the controller's state dict (all text translated)."""
    legal = state.get("legal") or {}
    calls = legal.get("calls") or {}
    legal_bids = [_bid(b) for b in legal.get("bids", [])]
    lowest = {b["face"]: b["quantity"] for b in legal_bids}
    current = _bid(state.get("current_bid"))
    suggested = _suggested_bid(lowest, current)
    to_move = state.get("to_move")
    players = []
    for player in state.get("players", []):
        colour = player.get("colour")
        dice = player.get("dice")
        players.append({
            "name": player["name"], "dice": dice, "colour": colour,
            "colour_css": SEAT_CSS.get(colour or "", "#888"),
            "out": player.get("out", dice == 0),
        })
    variant = state.get("variant") or {}
    special = state.get("special")
    reveal = state.get("reveal") or {}
    revealing = state.get("phase") in ("called", "capturing", "reading", "check", "verdict")
    view = {
        "phase": state.get("phase"),
        "players": players,
        "to_move": to_move,
        "round": reveal.get("round", state.get("round")) if revealing else state.get("round"),
        "revealing": revealing,
        "bag": state.get("bag"),
        "dice_in_play": state.get("dice_in_play"),
        "special": special,
        "special_name": variant.get("special_name") or special,
        "special_owner": state.get("special_owner"),
        "aces_wild": state.get("aces_wild", True),
        "variant_label": variant.get("name", ""),
        "bids": [dict(_bid(b), player=b["player"]) for b in state.get("bids", [])],
        "current_bid": _bid(reveal.get("bid")) if revealing and reveal.get("bid") else current,
        "bids_hidden": state.get("phase") == "verdict",
        "lowest_quantity": lowest,
        "suggested": suggested,
        "dudo_callers": calls.get("dudo", []),
        "calza_callers": calls.get("calza", []),
        "message": i18n.translate_reason(state["message"]) if state.get("message") else None,
        "rolloff": rolloff_view(state),
        "last_verdict": verdict_words(state["last_verdict"]) if state.get("last_verdict") else None,
        "winner": state.get("winner"),
        "loser": state.get("loser"),
        "camera_error": (i18n.translate_reason(state["camera_error"], heading=False)
                         if state.get("camera_error") else None),
        "reveal": reveal_view(state),
    }
    return view


def _suggested_bid(lowest: dict, current: dict | None) -> dict:
    """Preselect the current bid's face at its lowest legal raise, else the first legal face."""
    if current and current["face"] in lowest:
        face = current["face"]
    elif lowest:
        face = next((f for f in (2, 3, 4, 5, 6, 1) if f in lowest))
    else:
        return {"face": 0, "quantity": 1}
    return {"face": face, "quantity": lowest[face]}


def reveal_view(state: dict) -> dict | None:
    """The last reveal: dice per seat, dice in doubt, photo, verdict in words, the bid's odds.

    The controller describes a reveal as entries, one per die on the tray (player, face, flags,
    corrected, removed), and problems pointing at an entry or a player (companion.table.reveal).
    """
    reveal = state.get("reveal")
    if not reveal:
        return None
    problems = reveal.get("problems") or []
    doubt = {}
    for problem in problems:
        if problem.get("entry") is not None:
            doubt.setdefault(int(problem["entry"]), problem_text(problem))
    seats: dict[str, list[dict]] = {p["name"]: [] for p in state.get("players", [])}
    for position, entry in enumerate(reveal.get("entries") or []):
        if entry.get("removed"):
            continue
        owner = entry.get("player") or _("Whose die? (%(colour)s)", colour=_colour(entry.get("colour")))
        seats.setdefault(owner, []).append({
            "entry": position, "face": entry.get("face"), "doubt": doubt.get(position),
            "corrected": bool(entry.get("corrected")),
        })
    verdict = state.get("verdict") if state.get("phase") == "verdict" else None
    view = {
        "seats": {owner: dice for owner, dice in seats.items() if dice},
        # A failed capture is told once, in the camera notice above the reveal.
        "problems": [problem_text(p) for p in problems if p.get("kind") != "camera"],
        "verdict": verdict,
        "photo_url": reveal.get("photo_url"), "annotated_url": reveal.get("annotated_url"),
        "odds": None,
    }
    if verdict:
        view.update(verdict_words(verdict))
        view["odds"] = odds_chart(verdict)
    return view


def _colour(name: str | None) -> str:
    words = {"white": _("white"), "black": _("black"), "red": _("red"), "blue": _("blue"),
             "green": _("green"), "yellow": _("yellow"), "purple": _("purple"),
             "orange": _("orange")}
    return words.get(name or "", _("unknown colour"))


def verdict_words(verdict: dict) -> dict:
    """The verdict as the page says it: a headline, the count against the bid, who is out.

    `verdict` is the round's RoundResult.to_json() fields, with the dice, odds and photos
    beside them (the controller's verdict and the history's rounds alike).
    """
    result = _result(verdict)
    bid = _bid(result.get("bid"))
    count = result.get("count")
    call, by = result.get("call"), result.get("by")
    if result.get("gainer"):
        headline = _("%(player)s wins a die back", player=result["gainer"])
    elif result.get("loser"):
        headline = _("%(player)s loses the round", player=result["loser"])
    else:
        headline = _("Exactly right: %(player)s already has all the dice", player=by)
    if call == "calza":
        judged = _("exactly right") if bid and count == bid["quantity"] else _("not exact")
    else:
        judged = (_("the bid stands") if bid and count is not None and count >= bid["quantity"]
                  else _("the bid was too high"))
    count_line = _("%(call)s by %(player)s: %(count)s on the table against a bid of %(bid)s — "
                   "%(judged)s", call=rule_word(call or ""), player=by, count=count,
                   bid=bid_text(bid), judged=judged)
    out = result.get("eliminated") or []
    if isinstance(out, str):
        out = [out]
    detail = " ".join(_("%(player)s is out.", player=name) for name in out)
    if verdict.get("corrected"):
        detail = (detail + " " + _("Dice corrected by hand.")).strip()
    return {"headline": headline, "count_line": count_line, "detail": detail,
            "count": count, "bid": bid}


def _result(verdict: dict) -> dict:
    """The judge's fields of a verdict, whether nested under "result" or beside the rest."""
    return verdict.get("result") or verdict


def rolloff_view(state: dict) -> dict | None:
    """The opening roll-off: who still rolls, the rolls so far, and what needs a check."""
    rolloff = state.get("rolloff")
    if not rolloff or state.get("phase") != "rolloff":
        return None
    rounds = rolloff.get("rolls") or []
    return {
        "contenders": rolloff.get("contenders", []),
        "rolls": [r.get("rolls", {}) for r in rounds],
        "tied": len(rounds) > 0,
        "problems": [problem_text(p) for p in rolloff.get("problems", [])],
        "photo_url": (rolloff.get("photo") or {}).get("annotated_url")
                     or (rounds[-1].get("annotated_url") if rounds else None),
    }


def problem_text(problem: dict) -> str:
    """Why a die (or a player's dice) needs a check, in the page's language."""
    kind = problem.get("kind") or ""
    player = problem.get("player")
    entry = problem.get("entry")
    die = _("die %(n)s (%(owner)s)", n=(entry or 0) + 1, owner=player or "?")
    texts = {
        "edge": _("%(die)s stands on an edge or leans: re-roll it in the open and capture again, "
                  "or set its face", die=die),
        "stacked": _("%(die)s rests on another die: re-roll it in the open and capture again, "
                     "or set its face", die=die),
        "cut": _("%(die)s is cut off by the edge of the photo: move it onto the tray and capture "
                 "again", die=die),
        "unreadable": _("%(die)s could not be read with confidence: set its face by hand or "
                        "capture again", die=die),
        "owner": _("die %(n)s: its colour belongs to no player: say whose die it is",
                   n=(entry or 0) + 1),
        "count": _("%(player)s holds %(held)s dice but %(seen)s are on the tray",
                   player=player, held=problem.get("held", "?"), seen=problem.get("seen", "?")),
    }
    if kind in texts:
        return texts[kind]
    return i18n.translate_reason(problem.get("message") or kind)


def odds_chart(verdict: dict) -> dict | None:
    """The count's distribution before the reveal (nobody's dice known), bid marked, as SVG."""
    odds = verdict.get("odds") or {}
    dist = odds.get("distribution") or []
    if not dist or not odds.get("quantity"):
        return None
    q = int(odds["quantity"])
    calza = _result(verdict).get("call") == "calza"
    chance = odds.get("p_exact", 0.0) if calza else odds.get("p_at_least", 0.0)
    width, height, base = 320, 122, 100
    step = width / len(dist)
    top = max(dist) or 1
    label = Markup.escape(_("Chance of each count"))
    parts = [f'<svg viewBox="0 0 {width} {height}" role="img" aria-label="{label}">']
    for k, p in enumerate(dist):
        h = 0 if p == 0 else max(1.0, p / top * (base - 14))
        hit = (k == q) if calza else (k >= q)
        parts.append(f'<rect class="bar{" hit" if hit else ""}" x="{k * step + 1:.1f}" '
                     f'y="{base - h:.1f}" width="{max(step - 2, 1):.1f}" height="{h:.1f}">'
                     f'<title>{k}: {p * 100:.1f}%</title></rect>')
        if len(dist) <= 16 or k % 5 == 0 or k == q:
            parts.append(f'<text x="{k * step + step / 2:.1f}" y="{base + 14}" '
                         f'text-anchor="middle">{k}</text>')
    x = q * step
    parts.append(f'<line class="mark" x1="{x:.1f}" y1="2" x2="{x:.1f}" y2="{base}"/>')
    count = _result(verdict).get("count")
    if count is not None and count < len(dist):
        cx = count * step + step / 2
        parts.append(f'<text class="count" x="{cx:.1f}" y="11" text-anchor="middle">▼ {count}</text>')
    parts.append("</svg>")
    return {"svg": Markup("".join(parts)), "quantity": q, "percent": f"{chance * 100:.0f}%",
            "calza": calza}


def special_rules_text(state: dict) -> str:
    """What the special round changes at this table, in words, from the table's own options."""
    options = (state.get("variant") or {}).get("options") or {}
    owner = state.get("special_owner") or ""
    said = []
    if state.get("aces_wild") is False:
        said.append(_("Aces are not wild: they count only as aces."))
    face_rule = options.get("special_face", "fixed")
    said.append({
        "fixed": _("The opening bid's face holds for the whole round: the others only raise "
                   "the quantity."),
        "veterans": _("The others only raise the quantity; a one-die player whose own round is "
                      "behind him may raise the face."),
        "one_die": _("Only players holding one die may change the face; the others only raise "
                     "the quantity."),
    }.get(face_rule, ""))
    aces = options.get("special_ace_opening", "owner")
    if aces == "owner":
        said.append(_("Only %(player)s may open on aces.", player=owner))
    elif aces == "anyone":
        said.append(_("The round may open on aces."))
    return " ".join(part for part in said if part)


def phase_text(phase: str | None) -> str:
    return {
        "called": _("Called: lift the cups."),
        "capturing": _("Taking the photo…"),
        "reading": _("Reading the dice…"),
    }.get(phase or "", "")


@lru_cache(maxsize=8)
def qr_for(address: str) -> Markup:
    """An inline SVG QR code of the page's address (made here: the table has no internet).
    Kept per address: every phone re-renders the table part on every event, and the address
    rarely changes."""
    svg = segno.make(address, error="m").svg_inline(border=2, dark="#000", light="#fff",
                                                    omitsize=True)
    return Markup(svg)


def page_address() -> str:
    """The address phones should open. A page opened on the Pi itself (localhost) shows the
    Pi's address on the local network instead, so the QR code works from a phone."""
    host = request.host.rsplit(":", 1)[0].strip("[]")
    if host not in ("localhost", "127.0.0.1", "::1"):
        return request.host_url
    port = request.host.rsplit(":", 1)[1] if ":" in request.host else ""
    return f"http://{lan_ip()}{':' + port if port else ''}/"


def lan_ip() -> str:
    """This machine's address on the local network (no packet is sent), else 127.0.0.1."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))
            return probe.getsockname()[0]
        except OSError:
            return "127.0.0.1"


def _table_context() -> dict:
    state = _controller().state() or {}
    t = view_model(state) if state.get("players") else None
    address = page_address()
    return {
        "t": t, "authed": auth.is_authorised(),
        # What the page shows, as the live updates name it: event number and phase (a capture
        # changes the phase without recording an event).
        "version": f"{state.get('seq')}:{state.get('phase')}",
        "special_rules_text": special_rules_text(state) if state.get("special") else "",
        "phase_text": phase_text(t["phase"]) if t else "",
        "qr_svg": qr_for(address), "page_address": address,
    }


# --- Pages -----------------------------------------------------------------------------------
@bp.get("/")
def table():
    """The table view: players, bag, whose turn, bids, reveal; updated live from /api/events."""
    return render_template("table.html", **_table_context())


@bp.get("/part/table")
def table_part():
    """The table view's live part alone: the page's script swaps it in on every event."""
    context = _table_context()
    response = Response(render_template("_table.html", **context))
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Table-Version"] = context["version"]
    return response


@bp.route("/pin", methods=["GET", "POST"])
def pin():
    """Ask the table PIN once; the device then stays logged in (session cookie)."""
    target = request.values.get("next") or url_for("pages.table")
    if not target.startswith("/") or target.startswith("//"):
        target = url_for("pages.table")
    error = None
    if request.method == "POST":
        if not _csrf_ok():
            error = _("This form has expired: reload the page and try again.")
        else:
            result = auth.login(request.form.get("pin", ""))
            if result.ok:
                return redirect(target)
            error = pin_refusal(result)
    return render_template("pin.html", error=error, next=target), (401 if error else 200)


def pin_refusal(result) -> str:
    if result.status == 429:
        return _("Too many wrong PINs: wait %(seconds)s s and try again.", seconds=result.retry_after)
    if result.status == 423:
        return _("Too many wrong PINs: this device is locked out for %(minutes)s min.",
                 minutes=result.retry_after // 60 + 1)
    return _("Wrong PIN.")


# --- Moves -----------------------------------------------------------------------------------
def _form_int(name: str) -> int | None:
    try:
        return int(request.form.get(name, ""))
    except ValueError:
        return None


def _refused(exc: TableError):
    """The engine's (or the table's) reason, in the page's language; nothing changed."""
    return _answer(i18n.translate_reason(str(exc)), getattr(exc, "status", 409))


def _move(make_move):
    """Make one move on the table: the page's answer, or the refusal in the page's language."""
    try:
        make_move()
    except TableError as exc:
        return _refused(exc)
    return _answer()


@bp.post("/play/bid")
@state_changing
def act_bid():
    player = request.form.get("player", "")
    quantity, face = _form_int("quantity"), _form_int("face")
    if quantity is None or face is None:
        return _answer(_("Choose a quantity and a face."), 400)
    return _move(lambda: _controller().bid(player, quantity, face))


@bp.post("/play/call")
@state_changing
def act_call():
    kind = request.form.get("type", "")
    if kind not in ("dudo", "calza"):
        return _answer(_("Unknown call."), 400)
    return _move(lambda: _controller().call(kind, request.form.get("by", "")))


@bp.post("/play/correct")
@state_changing
def act_correct():
    """Correct one die of the reveal (its face, its owner, or leave it out); the controller
    records each correction, and the history marks the round as corrected."""
    entry = _form_int("entry")
    player = request.form.get("player") or None
    if entry is None:
        return _answer(_("Choose the face the die shows."), 400)
    change: dict = {"entry": entry}
    if request.form.get("remove"):
        change["remove"] = True
    elif request.form.get("owner"):
        if not player:
            return _answer(_("Choose whose die it is."), 400)
        change["player"] = player
    else:
        face = _form_int("face")
        if face not in range(1, 7):
            return _answer(_("Choose the face the die shows."), 400)
        change["face"] = face
        if player:
            change["player"] = player
    return _move(lambda: _controller().reading(changes=[change]))


@bp.post("/play/confirm")
@state_changing
def act_confirm():
    """The page's CONFIRM: next round after a verdict; photograph again during a check."""
    action = request.form.get("action", "next")
    table = _controller()
    return _move({"capture": table.capture, "rolloff": table.roll_off}.get(action, table.confirm))


@bp.post("/play/rolls")
@state_changing
def act_rolls():
    """Roll-off faces typed in by hand (when the camera cannot read them)."""
    state = _table_state() or {}
    contenders = (state.get("rolloff") or {}).get("contenders", [])
    rolls = {}
    for name in contenders:
        try:
            rolls[name] = int(request.form.get("roll_" + name, ""))
        except ValueError:
            return _answer(_("Enter a face 1-6 for every player who rolls."), 400)
    return _move(lambda: _controller().roll_off(rolls=rolls))


# --- Set-up ----------------------------------------------------------------------------------
def _option_fields(variant_name: str) -> list[dict]:
    """Each option of a preset with its default and the rule it changes, in the page's language."""
    from companion.rules import find_variant
    from companion.rules.variants import OPTION_SPECS

    variant = find_variant(variant_name)
    fields = []
    for name, (default, doc) in variant.option_docs().items():
        spec = OPTION_SPECS.get(name)
        choices = list(getattr(spec, "choices", None) or [])
        kind = ("bool" if isinstance(default, bool) else "choice" if choices else
                "int" if getattr(spec, "kind", None) is int else "text")
        fields.append({"name": name, "default": default, "kind": kind, "choices": choices,
                       "doc": i18n.gettext(doc), "label": name.replace("_", " ")})
    return fields, variant


def _parse_options(fields: list[dict]) -> dict:
    """Form values -> option values, only those the form changed from the preset's default."""
    options = {}
    for field in fields:
        key = "opt_" + field["name"]
        if field["kind"] == "bool":
            value = key in request.form
        elif key not in request.form or request.form[key].strip() == "":
            continue
        elif field["kind"] == "int":
            try:
                value = int(request.form[key])
            except ValueError:
                raise ValueError(_("%(option)s must be a whole number", option=field["label"]))
        elif field["kind"] == "choice" and request.form[key] not in field["choices"]:
            raise ValueError(_("%(option)s must be one of: %(choices)s", option=field["label"],
                               choices=", ".join(field["choices"])))
        else:
            value = request.form[key].strip()
        if value != field["default"]:
            options[field["name"]] = value
    return options


@bp.route("/setup", methods=["GET", "POST"])
def setup():
    """Choose the preset, switch its options (each with the rule it changes), name the players."""
    from companion.rules import PRESETS

    presets = list(PRESETS)
    default_variant = getattr(_config(), "variant", None) or presets[0]
    variant_name = request.values.get("variant") or default_variant
    if variant_name not in presets:
        variant_name = presets[0]
    fields, variant = _option_fields(variant_name)
    names = [n.strip() for n in request.form.getlist("player")] if request.method == "POST" else []
    error = None
    if request.method == "POST":
        if not _csrf_ok():
            error = _("This form has expired: reload the page and try again.")
        elif not auth.is_authorised():
            result = auth.login(request.form.get("pin", ""))
            if not result.ok:
                error = pin_refusal(result)
        if error is None:
            players = [name for name in names if name]
            try:
                options = _parse_options(fields)
                _controller().new_game(variant_name, options, players,
                                       rolloff="rolloff" in request.form, replace=True)
            except (TableError, ValueError) as exc:
                error = i18n.translate_reason(str(exc))
            else:
                return redirect(url_for("pages.table"))
    return render_template("setup.html", presets=presets, variant_name=variant_name,
                           variant=variant, fields=fields, seats=_seats(variant, names),
                           error=error, authed=auth.is_authorised(),
                           rolloff_default=getattr(_config(), "rolloff", True),
                           in_progress=(_table_state() or {}).get("phase") not in (None, "setup", "over")
                           ), (409 if error else 200)


def _seats(variant, names: list[str]) -> list[dict]:
    """One name field per seat the preset allows, with the seat's dice colour."""
    colours = list(getattr(_config(), "colours", None) or SEAT_CSS)
    count = min(int(getattr(variant, "max_players", 6) or 6), len(colours), 10)
    return [{"number": i + 1, "colour": colours[i], "css": SEAT_CSS.get(colours[i], "#888"),
             "name": names[i] if i < len(names) else ""} for i in range(count)]


def _config():
    return current_app.extensions.get("companion", {}).get("config")


# --- History ---------------------------------------------------------------------------------
def _history() -> list[dict]:
    """Past games, newest first, each round with its verdict in words and its photos."""
    games = []
    for game in _controller().history():
        rounds = []
        for number, rnd in enumerate(game.get("rounds", []), start=1):
            verdict = rnd.get("verdict") or {}
            words = (verdict_words(verdict) if verdict
                     else {"headline": _("Not settled"), "count_line": ""})
            call = rnd.get("call") or {}
            rounds.append({
                "number": number, "special": verdict.get("special"),
                "special_name": game.get("special_name") or verdict.get("special") or "",
                "bids": [dict(_bid(b), player=b["player"]) for b in rnd.get("bids", [])],
                "call": call.get("type", ""), "by": call.get("by", ""),
                "corrections": int(rnd.get("corrections") or 0),
                "photo_url": rnd.get("photo_url"), "annotated_url": rnd.get("annotated_url"),
                "verdict": verdict, **words,
            })
        games.append({**game, "rounds": rounds})
    return sorted(games, key=lambda g: g["id"], reverse=True)


@bp.get("/history")
def history():
    return render_template("history.html", games=_history())


@bp.get("/history/<int:game>/record.json")
def download_record(game: int):
    """The game as a record `companion judge` accepts unchanged."""
    try:
        record = _controller().export(game)
    except LookupError:
        abort(404)
    response = jsonify(record)
    response.headers["Content-Disposition"] = f'attachment; filename="game-{game}.json"'
    return response


@bp.get("/history/<int:game>/rounds.csv")
def download_csv(game: int):
    """One line per round: bids, call, count, loser, gainer, corrections (for spreadsheets)."""
    import csv
    import io

    found = next((g for g in _history() if g["id"] == game), None)
    if found is None:
        abort(404)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["game", "round", "special", "bids", "call", "by", "bid", "count",
                     "loser", "gainer", "eliminated", "corrections"])
    for rnd in found["rounds"]:
        verdict = rnd["verdict"]
        bids = " ".join(f"{b['player']}:{b['quantity']}x{b['face']}" for b in rnd["bids"])
        last = _bid(verdict.get("bid"))
        eliminated = verdict.get("eliminated") or []
        writer.writerow([game, rnd["number"], verdict.get("special") or "", bids, rnd["call"],
                         rnd["by"], f"{last['quantity']}x{last['face']}" if last else "",
                         verdict.get("count", ""), verdict.get("loser") or "",
                         verdict.get("gainer") or "",
                         " ".join(eliminated if isinstance(eliminated, list) else [eliminated]),
                         rnd["corrections"]])
    response = Response(out.getvalue(), mimetype="text/csv")
    response.headers["Content-Disposition"] = f'attachment; filename="game-{game}.csv"'
    return response


@bp.post("/play/manual")
@state_changing
def act_manual():
    """Every player's revealed faces typed in: settles the round when the camera cannot."""
    state = _table_state() or {}
    dice = {}
    for player in state.get("players", []):
        if player.get("out"):
            continue
        text = request.form.get("dice_" + player["name"], "")
        try:
            dice[player["name"]] = [int(x) for x in text.replace(",", " ").split()]
        except ValueError:
            return _answer(_("Faces are numbers 1-6, e.g. 1 4 4 2 6."), 400)
    return _move(lambda: _controller().reading(dice=dice))
