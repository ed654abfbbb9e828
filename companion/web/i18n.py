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
    browser = request.accept_languages.best_match(list(LANGUAGES))
    return browser or table_default_language()


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
# The rules engine explains a refusal in English ("a bid on aces needs at least 2 after 4×4").
# Its templates are matched here and rebuilt in the page's language; a reason no pattern knows
# is shown in English under a translated heading rather than hidden.
_BID = r"(?P<{0}>\d+×\d)"
REASON_PATTERNS: list[tuple[re.Pattern[str], str]] = []


def _reason(pattern: str, template: str) -> None:
    REASON_PATTERNS.append((re.compile("^" + pattern + "$", re.IGNORECASE), template))


def translate_reason(reason: str) -> str:
    """The engine's English reason in the page's language (params kept as they were)."""
    text = (reason or "").strip()
    for pattern, template in REASON_PATTERNS:
        match = pattern.match(text)
        if match:
            params = {k: _translate_param(v) for k, v in match.groupdict().items()}
            return gettext(template, **params)
    if current_language() == DEFAULT_LANGUAGE:
        return text
    return gettext("Not allowed (%(reason)s)", reason=text)


def _translate_param(value: str | None) -> str:
    if value is None:
        return ""
    if value.lower() in {"dudo", "calza", "palifico", "palafico", "maputa", "maputo"}:
        return rule_word(value.lower())
    if value.lower() in {"ace", "aces"}:
        return face_name(1, 2 if value.lower() == "aces" else 1)
    return value


def init_app(app: Flask) -> None:
    """Expose the chosen language and the translation helpers to every template."""

    # Globals, not a context processor: imported macro templates see globals only.
    app.jinja_env.globals.update(_=gettext, gettext=gettext, ngettext=ngettext,
                                 rule_word=rule_word, face_name=face_name, languages=LANGUAGES)

    @app.context_processor
    def _language_context():
        return {"page_language": current_language()}


