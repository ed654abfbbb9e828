"""A full game, from set-up to the end, for every preset: bids through the API, the roll-off,
calls and next rounds through the panel's buttons (gpiozero MockFactory), the reveal photographed
by the simulated camera and read by the real reader. Where the reader is unsure or wrong, the
table corrects it through the API, as people at a real table would; the recorded game is then
judged again and must give the same verdicts."""
from __future__ import annotations

import pytest

from companion.rules import PRESETS
from companion.rules.record import judge

CALZA_PLAYED = ("perudo", "kozak", "blog")   # optional in the first two, always in the blog's rules


def fix_reveal(rig, state: dict) -> dict:
    """Make the reveal match what is really on the tray (the simulated camera's truth)."""
    truth = {p: sorted(f) for p, f in rig.camera.last_truth.items() if f}
    seen = {p: sorted(f) for p, f in (state["reveal"] or {}).get("dice", {}).items() if f}
    if state["phase"] == "check" or seen != truth:
        state = rig.post("/api/reading", {"dice": truth})
    assert state["phase"] == "verdict", state
    assert {p: sorted(f) for p, f in state["verdict"]["dice"].items()} == truth
    return state


def roll_off(rig) -> dict:
    state = rig.state()
    while state["phase"] == "rolloff":
        contenders = state["rolloff"]["contenders"]
        state = rig.press("confirm")            # the camera reads one die per contender
        if state["phase"] == "rolloff" and state["rolloff"]["contenders"] == contenders:
            truth = {p: f[0] for p, f in rig.camera.last_truth.items()}   # reader unsure: typed in
            state = rig.post("/api/rolloff", {"rolls": truth})
    return state


@pytest.mark.parametrize("variant", sorted(PRESETS))
def test_a_whole_game_through_buttons_and_the_api(rig, variant):
    players = ["Ana", "Ben", "Cyd"]
    state = rig.post("/api/game", {"variant": variant, "players": players,
                                   "dice": {p: 2 for p in players},
                                   "options": {"bag_visible": True,
                                               "calza": variant in CALZA_PLAYED}})
    assert state["phase"] == "rolloff" and rig.panel.status == "ready"
    state = roll_off(rig)
    assert state["phase"] == "bidding"
    assert rig.camera.last_truth is not None
    calza_tried = False
    rounds = 0
    while state["phase"] != "over":
        rounds += 1
        assert rounds < 40
        assert state["phase"] == "bidding" and rig.panel.status == "ready"
        photos_before = rig.camera.last_image
        legal = state["legal"]["bids"]
        opening = legal[len(legal) // 2]
        state = rig.post("/api/bid", {"player": state["to_move"], "quantity": opening["quantity"],
                                      "face": opening["face"]})
        assert rig.camera.last_image is photos_before      # no photo while bidding
        if not calza_tried:
            calza_tried = True
            may_calza = state["to_move"] in state["legal"]["calls"]["calza"]
            after = rig.press("calza")
            if not may_calza:    # refused with the engine's reason; nothing changed
                assert after["phase"] == "bidding" and after["message"] and after["seq"] == state["seq"]
                after = rig.press("dudo")
        else:
            after = rig.press("dudo")
        assert after["phase"] in ("verdict", "check")
        state = fix_reveal(rig, after)
        verdict = state["verdict"]
        assert rig.panel.status == "verdict"
        seat_lights = {players[i]: light for i, light in rig.panel.seats.items()}
        if verdict["loser"]:
            assert seat_lights.get(verdict["loser"]) == "lost"
        if verdict["gainer"]:
            assert seat_lights.get(verdict["gainer"]) == "gained"
        state = rig.press("confirm")
    ending = state["winner"] or state["loser"]
    assert ending in players
    record = rig.client.get("/api/export/last").json
    judged = judge(record)
    assert judged["error"] is None
    history = rig.client.get("/api/history").json[-1]
    assert judged["rounds"] == [{k: r["verdict"][k] for k in judged["rounds"][0]} for r in history["rounds"]]
    assert judged["winner"] == state["winner"]
    assert history["over"] and (history["winner"], history["loser"]) == (state["winner"], state["loser"])
