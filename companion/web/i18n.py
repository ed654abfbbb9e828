"""The page's languages: gettext catalogues chosen per request, and the rules' own words.

Babel's CLDR data has no Crimean Tatar (`crh`), so Flask-Babel's locale machinery cannot be
used for it; this module loads the compiled catalogues with `babel.support.Translations`
directly and picks the language itself: `?lang=` on any page (remembered in the session),
then the browser's Accept-Language, then the table's default (`app.config["TABLE_LANGUAGE"]`).
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from babel.support import NullTranslations, Translations
from flask import Flask, current_app, g, request, session

TRANSLATIONS_DIR = Path(__file__).parent / "translations"
DOMAIN = "messages"

# Code -> the language's own name, in the order the switcher shows them.
LANGUAGES: dict[str, str] = {
    "en": "English",
    "uk": "Українська",
    "crh": "Qırımtatarca",
    "pl": "Polski",
    "be": "Беларуская",
    "ru": "Русский",
    "fr": "Français",
    "nl": "Nederlands",
}
DEFAULT_LANGUAGE = "en"


@lru_cache(maxsize=None)
def translations_for(language: str) -> NullTranslations:
    """The compiled catalogue for one language (English is the source text itself)."""
    if language == DEFAULT_LANGUAGE:
        return NullTranslations()
    return Translations.load(str(TRANSLATIONS_DIR), [language], DOMAIN)


def table_default_language() -> str:
    """The table's own language from its config (`language = "uk"`), English if unknown."""
    config = current_app.extensions.get("companion", {}).get("config")
    language = getattr(config, "language", None) or current_app.config.get("TABLE_LANGUAGE")
    return language if language in LANGUAGES else DEFAULT_LANGUAGE


def select_language() -> str:
    """Language for this request: explicit choice, then the browser, then the table default."""
    asked = request.args.get("lang")
    if asked in LANGUAGES:
        session["lang"] = asked
        return asked
    remembered = session.get("lang")
    if remembered in LANGUAGES:
        return remembered
    return browser_language() or table_default_language()


def browser_language() -> str | None:
    """The browser's most preferred language that the page speaks. Regional tags count for
    their language ("nl-BE" is Dutch), in the browser's order of preference."""
    for tag, _quality in request.accept_languages:   # already sorted by quality
        language = tag.replace("_", "-").split("-")[0].lower()
        if language in LANGUAGES:
            return language
    return None


def current_language() -> str:
    if "page_language" not in g:
        g.page_language = select_language()
    return g.page_language


def gettext(msgid: str, /, **params) -> str:
    text = translations_for(current_language()).gettext(msgid)
    return text % params if params else text


def ngettext(singular: str, plural: str, n: int, /, **params) -> str:
    params.setdefault("num", n)
    return translations_for(current_language()).ngettext(singular, plural, n) % params


_ = gettext


# --- The rules' own words --------------------------------------------------------------------
# Each rule text names the calls and the special round in its own words (seeds 000-004):
# the Ukrainian text says "не вірю" and "точно", the Russian one "не верю" and "мапута"...
# These msgids are looked up in the catalogue like any other string.
def rule_word(word: str) -> str:
    """Translated name of a call ("dudo", "calza") or special round ("palifico", "maputa"...)."""
    words = {
        "dudo": _("dudo"),
        "calza": _("calza"),
        "palifico": _("palifico"),
        "palafico": _("palafico"),
        "maputa": _("maputa"),
        "maputo": _("maputo"),
    }
    return words.get(word, word)


def face_name(face: int, quantity: int = 2) -> str:
    """A face as players say it; face 1 is the ace (the paco on the boxed set)."""
    if face == 1:
        return ngettext("ace", "aces", quantity)
    return str(face)


# --- The engine's refusal reasons ------------------------------------------------------------
# The rules engine (companion/rules/game.py) and the controller explain a refusal in English
# ("a bid on aces needs at least 2 after 4×4"). Each of their sentence templates is matched here
# and rebuilt in the page's language; the parts (names, bids, faces) are kept or translated. A
# reason no pattern knows is shown in English under a translated heading rather than hidden.
# Extraction: the templates are marked with `_reason(pattern, "msgid")` (pybabel -k _reason:2).
REASON_PATTERNS: list[tuple[re.Pattern[str], str]] = []
BID = r"\d+×\d"
FACES = r"aces|twos|threes|fours|fives|sixes"
_FACE_DIGITS = {"twos": 2, "threes": 3, "fours": 4, "fives": 5, "sixes": 6}


def _reason(pattern: str, template: str) -> None:
    pattern = (pattern.replace("{bid}", f"(?P<bid>{BID})").replace("{need}", f"(?P<need>{BID})")
               .replace("{faces}", f"(?P<faces>{FACES})").replace("{n}", r"(?P<n>\d+)")
               .replace("{face}", r"(?P<face>\d)").replace("{special}", r"(?P<special>\w+)")
               .replace("{player}", r"'?(?P<player>.+?)'?").replace("{other}", r"(?P<other>.+?)")
               .replace("{message}", r"(?P<message>.+)"))
    REASON_PATTERNS.append((re.compile("^" + pattern + "$", re.IGNORECASE | re.DOTALL), template))


# companion/rules/game.py: bids
_reason(r"{bid} was already bid this round: each number of aces may be bid only once per round",
        "%(bid)s was already bid this round: each number of aces may be bid only once per round")
_reason(r"{bid} names more dice than the {n} in play", "%(bid)s names more dice than the %(n)s in play.")
_reason(r"bids on aces are not played at this table", "Bids on aces are not played at this table.")
_reason(r"a round may not open on aces", "A round may not open on aces.")
_reason(r"a bid needs at least one die", "A bid needs at least one die.")
_reason(r"the {special} round may not open on aces", "The %(special)s round may not open on aces.")
_reason(r"only {player} may open the {special} round on aces",
        "Only %(player)s may open the %(special)s round on aces.")
_reason(r"after {bid} bid more aces \(at least {need}\)",
        "After %(bid)s bid more aces (at least %(need)s).")
_reason(r"after {bid} bid more {faces} \(at least {need}\)",
        "After %(bid)s bid more of face %(faces)s (at least %(need)s).")
_reason(r"in the {special} round the face stays {face}: bid at least {need}",
        "In the %(special)s round the face stays %(face)s: bid at least %(need)s.")
_reason(r"in the {special} round the face stays {face}: bid at least {need} "
        r"\(only a player with one die may change the face\)",
        "In the %(special)s round the face stays %(face)s: bid at least %(need)s "
        "(only a player with one die may change the face).")
_reason(r"in the {special} round the face stays {face}: bid at least {need} "
        r"\(only a one-die player whose own \w+ is over may change it\)",
        "In the %(special)s round the face stays %(face)s: bid at least %(need)s "
        "(only a one-die player whose own %(special)s round is over may change it).")
_reason(r"the face may only go up from {face} in the {special} round",
        "The face may only go up from %(face)s in the %(special)s round.")
_reason(r"changing the face may not lower the quantity: at least {need}",
        "Changing the face may not lower the quantity: at least %(need)s.")
_reason(r"a bid on aces needs at least {n} after {bid}",
        "A bid on aces needs at least %(n)s after %(bid)s.")
_reason(r"after {bid} a bid on {faces} needs at least {n} \(twice the aces, plus one\)",
        "After %(bid)s a bid on face %(faces)s needs at least %(n)s (twice the aces, plus one).")
_reason(r"after {bid} the face may not go down: raise the quantity of {faces} or name a higher face",
        "After %(bid)s the face may not go down: raise the quantity of %(faces)s or name a "
        "higher face.")
_reason(r"raise the quantity or the face, not both: after {bid} a bid on {faces} is exactly {need}",
        "Raise the quantity or the face, not both: after %(bid)s a bid on face %(faces)s is "
        "exactly %(need)s.")
_reason(r"a bid may not lower the quantity: after {bid} at least {need}",
        "A bid may not lower the quantity: after %(bid)s at least %(need)s.")
_reason(r"after {bid} a lower face needs a higher quantity: at least {need}",
        "After %(bid)s a lower face needs a higher quantity: at least %(need)s.")
# companion/rules/game.py: turns and calls
_reason(r"the game is over", "The game is over.")
_reason(r"the round has been called: reveal the dice", "The round has been called: reveal the dice.")
_reason(r"nobody has called dudo or calza yet", "Nobody has called dudo or calza yet.")
_reason(r"{player} is not playing at this table", "%(player)s is not playing at this table.")
_reason(r"{player} is out of the game", "%(player)s is out of the game.")
_reason(r"it is {player}'s turn, not {other}'s", "It is %(player)s's turn, not %(other)s's.")
_reason(r"there is no bid to call yet: {player} must open the round",
        "There is no bid to call yet: %(player)s must open the round.")
_reason(r"{player} cannot call dudo on his own bid", "%(player)s cannot call dudo on their own bid.")
_reason(r"calza is not played at this table", "Calza is not played at this table.")
_reason(r"no calza in the {special} round", "No calza in the %(special)s round.")
_reason(r"no calza when only two players are left", "No calza when only two players are left.")
_reason(r"{player} made the last bid and cannot call calza on it",
        "%(player)s made the last bid and cannot call calza on it.")
_reason(r"{player}, whose turn it is, cannot call calza",
        "%(player)s, whose turn it is, cannot call calza.")
_reason(r"only {player}, whose turn it is, may call dudo",
        "Only %(player)s, whose turn it is, may call dudo.")
_reason(r"only {player}, whose turn it is, may call calza",
        "Only %(player)s, whose turn it is, may call calza.")
# companion/table/controller.py
_reason(r"cannot .+ now: the table is in '\w+' \(only in .+\)",
        "That cannot be done now: the table has moved on. Look again.")
_reason(r"stale request: .+", "The table has moved on since: look again and retry.")
_reason(r"unknown (player|caller) {player}; players: .*", "%(player)s is not playing at this table.")
_reason(r"'players' must be a list of at least 2 names", "Name at least two players.")
_reason(r"player names must be 1-{n} characters: .*", "Player names must be 1 to %(n)s characters.")
_reason(r"player names must differ", "Player names must differ.")
_reason(r"(?P<variant>\w+) is for at most {n} players", "%(variant)s is for at most %(n)s players.")
_reason(r"tie between (?P<players>.+) with {face}: they roll again",
        "Tie between %(players)s with %(face)s: they roll again.")
_reason(r"dice missing for (?P<players>.+)", "Dice missing for %(players)s.")
_reason(r"{player} holds {n} dice, (?P<given>\d+) given", "%(player)s holds %(n)s dice, %(given)s given.")
_reason(r"{message}: enter the dice by hand, or fix it and capture again",
        "%(message)s: enter the dice by hand, or fix it and capture again.")
_reason(r"{message}: enter the rolls by hand, or fix it and roll again",
        "%(message)s: enter the rolls by hand, or fix it and roll again.")
_reason(r"the rules engine refused the dice: {message}", "The rules engine refused the dice: %(message)s")
# hardware/camera.py
_reason(r"no camera is configured", "no camera is configured")
_reason(r"camera not found: is the ribbon cable / USB plugged in\?",
        "camera not found: is the ribbon cable / USB plugged in?")
_reason(r"camera stopped answering", "camera stopped answering")


def translate_reason(reason: str, heading: bool = True) -> str:
    """The engine's (or the table's) English reason in the page's language; one no pattern
    knows comes back as it is, under a translated heading unless `heading` is false."""
    text = (reason or "").strip()
    for pattern, template in REASON_PATTERNS:
        match = pattern.match(text)
        if match:
            params = {k: _translate_param(k, v) for k, v in match.groupdict().items()}
            return gettext(template, **params) if params else gettext(template)
    if current_language() == DEFAULT_LANGUAGE or not heading:
        return text
    return gettext("Not allowed (%(reason)s)", reason=text)


def _translate_param(name: str, value: str | None) -> str:
    if value is None:
        return ""
    if name == "special":
        return rule_word(value.lower())
    if name == "faces":
        return face_name(1) if value.lower() == "aces" else str(_FACE_DIGITS[value.lower()])
    if name == "message":   # a camera's or reader's own message, translated where known
        return translate_reason(value, heading=False)
    return value


def init_app(app: Flask) -> None:
    """Expose the chosen language and the translation helpers to every template."""

    # Globals, not a context processor: imported macro templates see globals only.
    app.jinja_env.globals.update(_=gettext, gettext=gettext, ngettext=ngettext,
                                 rule_word=rule_word, face_name=face_name, languages=LANGUAGES)

    @app.context_processor
    def _language_context():
        return {"page_language": current_language()}




def compile_catalogues(directory: Path = TRANSLATIONS_DIR) -> list[Path]:
    """Compile every messages.po to messages.mo. `pybabel compile` refuses `crh` (no CLDR
    data), so the catalogues are read without a locale: plural rules come from each header."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    written = []
    for po_path in sorted(directory.glob(f"*/LC_MESSAGES/{DOMAIN}.po")):
        with open(po_path, "rb") as handle:
            catalog = read_po(handle, domain=DOMAIN)
        mo_path = po_path.with_suffix(".mo")
        with open(mo_path, "wb") as handle:
            write_mo(handle, catalog, use_fuzzy=False)
        written.append(mo_path)
    return written


if __name__ == "__main__":
    import sys

    if sys.argv[1:] != ["compile"]:
        sys.exit("usage: python -m companion.web.i18n compile")
    for path in compile_catalogues():
        print(path)
