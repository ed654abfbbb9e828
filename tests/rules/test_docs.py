"""docs/rules.md must list every option with each preset's real default (the README links it)."""
from __future__ import annotations

from pathlib import Path

from companion.rules import OPTIONS, PRESETS

DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def shown(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def test_options_table_matches_the_engine():
    text = DOC.read_text(encoding="utf-8")
    for spec in OPTIONS:
        row = f"| `{spec.name}` | " + " | ".join(shown(cls.preset_value(spec.name)) for cls in PRESETS.values()) + " |"
        assert row in text, f"docs/rules.md is out of date for {spec.name}: expected {row}"
        assert f"**`{spec.name}`**" in text, f"docs/rules.md does not explain {spec.name}"
    for cls in PRESETS.values():
        assert all(f"`{alias}`" in text for alias in (cls.name, *cls.aliases))
