"""What was seen on the tray, die by die, and what still needs the table's attention.

A reveal is a list of entries, one per die: whose it is (from the reading's seat, else its colour),
its top face, its flags, and whether a person corrected it. The table can settle only when no die
is in doubt and every player shows exactly as many dice as the engine says he holds.
"""
from __future__ import annotations

from vision.types import OUTSIDE

FLAG_ADVICE = {
    "edge": "stands on an edge or leans: re-roll it in the open and capture again, or set its face",
    "stacked": "rests on another die: re-roll it in the open and capture again, or set its face",
    "cut": "is cut off by the edge of the photo: move it onto the tray and capture again",
    "unreadable": "could not be read with confidence: set its face by hand or capture again",
}


def entries_from_reading(reading_json: dict, owner_of_colour: dict[str, str], players: list[str]) -> list[dict]:
    """One entry per die the reader found on the tray (dice outside it are left out)."""
    entries = []
    for index, die in enumerate(reading_json.get("dice", [])):
        flags = [f for f in die.get("flags", [])]
        if OUTSIDE in flags:
            continue
        seat = die.get("seat")
        player = seat if seat in players else owner_of_colour.get(die.get("colour"))
        entries.append({"die": index, "player": player, "face": die.get("face"),
                        "colour": die.get("colour"), "flags": flags, "corrected": False,
                        "removed": False})
    return entries


def entries_from_dice(dice: dict[str, list[int]], colour_of: dict[str, str]) -> list[dict]:
    """Entries for dice entered by hand: every one counts as corrected."""
    entries = []
    for player, faces in dice.items():
        for face in faces:
            entries.append({"die": None, "player": player, "face": face,
                            "colour": colour_of.get(player), "flags": [], "corrected": True,
                            "removed": False})
    return entries


def counted(entry: dict) -> bool:
    return not entry["removed"] and not entry["flags"] and entry["face"] is not None


def dice_by_player(entries: list[dict], players: list[str]) -> dict[str, list[int]]:
    dice: dict[str, list[int]] = {p: [] for p in players}
    for entry in entries:
        if counted(entry) and entry["player"] in dice:
            dice[entry["player"]].append(entry["face"])
    return dice


def problems(entries: list[dict], held: dict[str, int]) -> list[dict]:
    """Everything that keeps the round from being settled, each with a message and its parts
    (kind, die index in `entries`, player) so a page can point at the die and translate it."""
    found = []
    for position, entry in enumerate(entries):
        if entry["removed"]:
            continue
        owner = entry["player"] or f"a {entry['colour'] or 'unknown'} die"
        for flag in entry["flags"]:
            found.append({"kind": flag, "entry": position, "player": entry["player"],
                          "message": f"die {position + 1} ({owner}) "
                                     + FLAG_ADVICE.get(flag, f"is flagged '{flag}'")})
        if not entry["flags"] and entry["face"] is None:
            found.append({"kind": "unreadable", "entry": position, "player": entry["player"],
                          "message": f"die {position + 1} ({owner}) " + FLAG_ADVICE["unreadable"]})
        if entry["player"] is None:
            found.append({"kind": "owner", "entry": position, "player": None,
                          "message": f"die {position + 1}: its colour ({entry['colour'] or 'unknown'})"
                                     " belongs to no player: say whose die it is"})
    shown: dict[str, int] = {p: 0 for p in held}
    for entry in entries:
        if not entry["removed"] and entry["player"] in shown:
            shown[entry["player"]] += 1
    for player, count in held.items():
        if shown[player] != count:
            found.append({"kind": "count", "entry": None, "player": player, "held": count,
                          "seen": shown[player],
                          "message": f"{player} holds {count} dice but {shown[player]} are on the tray"})
    return found
