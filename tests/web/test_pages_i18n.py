"""The page's catalogues: complete in every language, and covering the engine's refusal reasons.

When the rules engine rewords a reason, the pattern in companion/web/i18n.py stops matching and
the page falls back to English under a heading; these tests catch that before a player does.
"""
from __future__ import annotations

import itertools
import re

import pytest
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po
from flask import Flask

from companion.rules import Bid, Game, find_variant, PRESETS
from companion.web import i18n

PLACEHOLDER = re.compile(r"%\(\w+\)s")
TRANSLATED = [code for code in i18n.LANGUAGES if code != "en"]


def catalogue(language: str):
    path = i18n.TRANSLATIONS_DIR / language / "LC_MESSAGES" / "messages.po"
    with open(path, "rb") as handle:
        return read_po(handle)


def as_key(value):
    """Plural entries come back as lists from .mo files and tuples from .po files."""
    return tuple(value) if isinstance(value, (list, tuple)) else value


def test_every_page_string_is_translated_in_every_language_with_the_same_placeholders():
    with open(i18n.TRANSLATIONS_DIR / "messages.pot", "rb") as handle:
        wanted = {m.id for m in read_po(handle) if m.id}
    for language in TRANSLATED:
        entries = {m.id: m for m in catalogue(language) if m.id}
        assert set(entries) >= wanted, (language, sorted(map(str, wanted - set(entries)))[:5])
        for msgid in wanted:
            singular = msgid[0] if isinstance(msgid, tuple) else msgid
            strings = entries[msgid].string
            for text in (strings if isinstance(strings, tuple) else (strings,)):
                assert text, (language, msgid)
                assert set(PLACEHOLDER.findall(text)) <= set(PLACEHOLDER.findall(str(msgid))), (language, text)
                if not isinstance(msgid, tuple):
                    assert set(PLACEHOLDER.findall(text)) == set(PLACEHOLDER.findall(singular))


def test_compiled_catalogues_match_their_sources():
    for language in TRANSLATED:
        with open(i18n.TRANSLATIONS_DIR / language / "LC_MESSAGES" / "messages.mo", "rb") as handle:
            compiled = {as_key(m.id): as_key(m.string) for m in read_mo(handle) if m.id}
        source = {as_key(m.id): as_key(m.string) for m in catalogue(language) if m.id}
        assert compiled == source, f"{language}: run python -m companion.web.i18n compile"


def test_every_option_doc_of_the_rules_is_in_the_catalogue():
    from companion.rules.variants import OPTIONS

    ids = {m.id for m in catalogue("uk")}
    missing = [spec.name for spec in OPTIONS if spec.doc not in ids]
    assert not missing, f"option docs changed in the rules: re-extract and translate {missing}"


def engine_reasons() -> set[str]:
    """Refusals the engine gives across every preset, in ordinary and special rounds."""
    reasons: set[str] = set()
    bids = [Bid(q, f) for q, f in itertools.product(range(1, 9), range(1, 7))]
    for name in PRESETS:
        # The second set-up opens Ana's special round (she holds one die from the start), its
        # bids capped at the five dice in play.
        for dice, options in (({"Ana": 5, "Ben": 5, "Cyd": 5}, {}),
                              ({"Ana": 1, "Ben": 1, "Cyd": 3}, {"special_at_start": True, "bids_above_dice": False})):
            variant = find_variant(name, options=options)
            dice = {p: min(n, variant.start_dice) for p, n in dice.items()}
            for opening in (None, Bid(3, 4), Bid(2, 1)):
                probe = Game(variant, players=["Ana", "Ben", "Cyd"], dice=dice, starter="Ana")
                if opening is not None and probe.bid_error("Ana", opening) is None:
                    probe.bid("Ana", opening)
                for player in ("Ana", "Ben", "Cyd", "Zed"):
                    for bid in bids:
                        reasons.add(probe.bid_error(player, bid))
                    for kind in ("dudo", "calza"):
                        reasons.add(probe.call_error(kind, player))
    reasons.discard(None)
    return reasons


@pytest.fixture(scope="module")
def reasons():
    return engine_reasons()


def test_the_engines_refusal_reasons_are_all_translated(reasons):
    app = Flask(__name__)
    app.secret_key = "test"
    assert len(reasons) > 25
    for language in TRANSLATED:
        with app.test_request_context(f"/?lang={language}"):
            fallback = i18n.translate_reason("zzz").replace("zzz", "")
            untranslated = [r for r in reasons if fallback in i18n.translate_reason(r)]
            assert not untranslated, (language, untranslated[:3])
