"""The real `companion serve` process: killed with SIGKILL at several phases of a round and
restarted, it shows the same state and has lost no acknowledged event; SIGTERM stops it cleanly;
with no options it runs on its defaults and prints its address and PIN."""
from __future__ import annotations

import http.client
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import cv2
import pytest

from vision.synth import render_reveal

PIN = "1357"


class Server:
    """One `companion serve` process; `start()` waits until it prints its address."""

    def __init__(self, args: list[str], cwd: Path):
        self.args = args
        self.cwd = cwd
        self.proc: subprocess.Popen | None = None
        self.port = None
        self.banner: list[str] = []

    def start(self) -> "Server":
        self.proc = subprocess.Popen([sys.executable, "-m", "companion", "serve", *self.args],
                                     cwd=self.cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        self.banner = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError("serve exited early:\n" + "".join(self.banner))
            self.banner.append(line)
            found = re.search(r"On this computer: +http://localhost:(\d+)/", line)
            if found:
                self.port = int(found.group(1))
            if line.startswith("Stop with Ctrl+C"):
                threading.Thread(target=self._drain, daemon=True).start()
                return self
        raise AssertionError("serve did not start in time")

    def _drain(self):
        for line in self.proc.stdout:
            self.banner.append(line)

    def request(self, method: str, path: str, body=None, timeout=30):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        headers = {"X-Table-Pin": PIN}
        if body is not None:
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = conn.getresponse()
        data = response.read()
        conn.close()
        return response.status, (json.loads(data) if data[:1] in (b"{", b"[") else data)

    def post(self, path, body):
        status, data = self.request("POST", path, body)
        assert status == 200, (path, status, data)
        return data

    def table(self):
        return self.request("GET", "/api/table")[1]

    def kill(self):
        self.proc.kill()   # SIGKILL: no clean-up of any kind
        self.proc.wait(10)


def chain(db: Path) -> list[tuple]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT seq, event_id, type, hash FROM events ORDER BY seq").fetchall()


@pytest.fixture
def photo_folder(tmp_path):
    """The 'camera' replays one real rendered photo: Ana's two red dice, nobody else's."""
    folder = tmp_path / "photos"
    folder.mkdir()
    image, _ = render_reveal({"Ana": [4, 4]}, {"Ana": "red"}, seed=7)
    cv2.imwrite(str(folder / "tray.png"), image)
    return folder


def test_kill_9_at_any_phase_loses_nothing(tmp_path, photo_folder):
    data = tmp_path / "data"
    config = tmp_path / "table.toml"
    config.write_text(f'[table]\npin = "{PIN}"\n[camera]\nbackend = "folder"\nfolder = "{photo_folder}"\n')
    server = Server(["--config", str(config), "--data-dir", str(data), "--port", "0",
                     "--host", "127.0.0.1"], tmp_path)

    def restart_and_compare():
        before = server.table()
        acknowledged = chain(data / "table.sqlite")
        server.kill()
        server.start()
        after = server.table()
        assert after == before
        assert chain(data / "table.sqlite") == acknowledged
        return after

    try:
        server.start()
        server.post("/api/game", {"variant": "perudo", "players": ["Ana", "Ben", "Cyd"]})
        assert restart_and_compare()["phase"] == "rolloff"

        server.post("/api/rolloff", {"rolls": {"Ana": 6, "Ben": 3, "Cyd": 1}})
        server.post("/api/bid", {"player": "Ana", "quantity": 3, "face": 4})
        server.post("/api/bid", {"player": "Ben", "quantity": 4, "face": 4})
        state = restart_and_compare()
        assert state["phase"] == "bidding" and [b["text"] for b in state["bids"]] == ["3×4", "4×4"]

        called = server.post("/api/call", {"type": "dudo", "by": "Cyd"})
        assert called["phase"] == "check"     # the photo shows 2 dice where 15 are held
        assert any(p["kind"] == "count" for p in called["reveal"]["problems"]) or called["camera_error"]
        assert restart_and_compare()["reveal"] == called["reveal"]

        dice = {"Ana": [4, 4, 1, 2, 3], "Ben": [6, 6, 6, 6, 6], "Cyd": [5, 5, 5, 5, 5]}
        settled = server.post("/api/reading", {"dice": dice})
        assert settled["verdict"]["loser"] == "Ben" and settled["verdict"]["count"] == 3
        assert restart_and_compare()["verdict"] == settled["verdict"]

        server.post("/api/confirm", {})
        server.post("/api/bid", {"player": "Ben", "quantity": 2, "face": 2})
        # SIGKILL while the call is being photographed and read
        def call_and_die():
            try:
                server.request("POST", "/api/call", {"type": "dudo", "by": "Cyd"})
            except (ConnectionError, http.client.HTTPException):
                pass   # killed before it answered: expected

        caller = threading.Thread(target=call_and_die)
        acknowledged = chain(data / "table.sqlite")
        caller.start()
        time.sleep(0.15)
        server.kill()
        caller.join(30)
        server.start()
        after = chain(data / "table.sqlite")
        assert after[:len(acknowledged)] == acknowledged
        state = server.table()
        assert state["phase"] in ("called", "check") and state["round"] == 2
        if state["phase"] == "called":   # died before the photo was recorded: CONFIRM/capture resumes
            assert server.post("/api/capture", {})["phase"] == "check"
        dice = {"Ana": [2, 2, 2, 2, 2], "Ben": [1, 3, 3, 3], "Cyd": [6, 6, 6, 6, 6]}
        assert server.post("/api/reading", {"dice": dice})["verdict"]["loser"] == "Cyd"
    finally:
        server.kill()
    result = subprocess.run([sys.executable, "-m", "companion", "verify", str(data)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_serve_on_defaults_then_sigterm_stops_cleanly(tmp_path):
    server = Server(["--port", "0"], tmp_path).start()
    try:
        banner = "".join(server.banner)
        pin = re.search(r"Table PIN: (\d{4}) ", banner).group(1)
        assert "simulated camera" in banner and (tmp_path / "companion-data" / "table.sqlite").exists()
        assert banner.count("running without buttons and LEDs") == 1   # no GPIO: said once
        assert server.request("GET", "/")[0] == 200
        # a phone watching the live feed must not keep the server from stopping
        feed = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        feed.request("GET", "/api/events")
        live = feed.getresponse()
        assert live.status == 200 and live.headers["Content-Type"].startswith("text/event-stream")
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("POST", "/api/game", body=json.dumps({"players": ["Ana", "Ben"]}),
                     headers={"X-Table-Pin": pin, "Content-Type": "application/json"})
        assert conn.getresponse().status == 200
        pushed = []
        while not any(m["type"] == "game_created" for m in pushed):   # pushed through waitress
            line = live.readline()
            if line.startswith(b"data: "):
                pushed.append(json.loads(line[6:]))
        assert pushed[0]["type"] == "state" and pushed[-1]["table"]["phase"] == "rolloff"
        started = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(20) == 0
        assert time.monotonic() - started < 10
        time.sleep(0.1)
        assert "companion serve: stopped" in "".join(server.banner)
    finally:
        if server.proc.poll() is None:
            server.kill()
    restarted = Server(["--port", "0"], tmp_path).start()   # same data folder: same PIN, same game
    try:
        assert f"Table PIN: {pin} " in "".join(restarted.banner)
        assert restarted.table()["phase"] == "rolloff"
    finally:
        restarted.kill()


def test_serve_refuses_a_bad_config_with_one_clear_line(tmp_path):
    config = tmp_path / "table.toml"
    config.write_text('[table]\npin = "12"\n')
    result = subprocess.run([sys.executable, "-m", "companion", "serve", "--config", str(config)],
                            capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert result.returncode == 2 and "PIN must be 4 to 12 digits" in result.stderr
    config.write_text('[camera]\nbackend = "webcam"\n')
    result = subprocess.run([sys.executable, "-m", "companion", "serve", "--config", str(config)],
                            capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert result.returncode == 2 and "unknown camera backend 'webcam'" in result.stderr
    assert not os.path.exists(tmp_path / "companion-data" / "table.sqlite")
