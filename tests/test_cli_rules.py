"""`companion judge` and `companion odds` as a user runs them: a real subprocess, exit codes, stdout, stderr."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECORD = {
    "variant": "perudo", "options": {"calza": True}, "players": ["Ana", "Ben", "Cyd"],
    "rounds": [{"bids": [["Ana", 3, 4], ["Ben", 4, 4], ["Cyd", 3, 1]], "call": {"type": "dudo", "by": "Ana"},
                "dice": {"Ana": [1, 4, 4, 2, 6], "Ben": [3, 3, 5, 6, 1], "Cyd": [2, 2, 4, 5, 6]}}],
}


def companion(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "companion", *args], input=stdin, capture_output=True,
                          text=True, cwd=ROOT, timeout=60)


def test_clean_record_from_a_file_exits_0_with_the_verdict(tmp_path):
    path = tmp_path / "game.json"
    path.write_text(json.dumps(RECORD))
    done = companion("judge", str(path))
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert verdict["rounds"][0]["loser"] == "Cyd" and verdict["dice"] == {"Ana": 5, "Ben": 5, "Cyd": 4}
    assert verdict["error"] is None and done.stderr == ""


def test_rule_break_from_stdin_exits_1_and_says_where():
    bad = json.loads(json.dumps(RECORD))
    bad["rounds"][0]["bids"][2] = ["Cyd", 4, 2]
    done = companion("judge", "-", stdin=json.dumps(bad))
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert (error["round"], error["bid"]) == (1, 3) and "4×2" in error["reason"]


@pytest.mark.parametrize("text, words", [
    ("{not json", "not valid JSON"),
    (json.dumps({**RECORD, "variant": "yahtzee"}), "unknown variant"),
    (json.dumps({**RECORD, "rounds": [{**RECORD["rounds"][0], "dice": {"Ana": [7, 1, 1, 1, 1]}}]}), "1 to 6"),
])
def test_malformed_input_exits_2_with_one_line_on_stderr(text, words):
    done = companion("judge", "-", stdin=text)
    assert done.returncode == 2 and done.stdout == ""
    assert words in done.stderr and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_missing_file_exits_2():
    done = companion("judge", "no-such-record.json")
    assert done.returncode == 2 and "no such file" in done.stderr


def test_bundled_example_judges_and_dispute_example_exits_1():
    done = companion("judge", "--example", "perudo_demo")
    assert done.returncode == 0 and json.loads(done.stdout)["winner"] == "Ben"
    assert companion("judge", "--example", "perudo_dispute").returncode == 1


def test_odds_prints_the_chance_the_bid_holds():
    done = companion("odds", "7x4", "--dice", "20", "--mine", "1,4,4,2,6")
    assert done.returncode == 0, done.stderr
    assert "bid holds (dudo loses):    79.08%" in done.stdout  # 3 known + Bin(15, 1/3) >= 4
    assert "<- bid" in done.stdout


def test_odds_json_without_wild_aces():
    done = companion("odds", "2x5", "--dice", "2", "--no-wild", "--json")
    data = json.loads(done.stdout)
    assert data["holds"] == pytest.approx(1 / 36) and data["distribution"] == pytest.approx([25 / 36, 10 / 36, 1 / 36])


def test_odds_bad_bid_exits_2():
    done = companion("odds", "7 fours", "--dice", "20")
    assert done.returncode == 2 and "QUANTITYxFACE" in done.stderr
