"""A whole table on a laptop: real SQLite log, simulated camera rendering the held dice, the
real vision reader, and a gpiozero panel on MockFactory pins that tests press and read."""
from __future__ import annotations

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from companion.table.controller import TableController, VisionReader
from companion.table.store import EventStore
from companion.web import create_app
from hardware.camera import SimulatedCamera
from hardware.panel import DEFAULT_PINS, Panel

PIN = "4321"
AUTH = {"X-Table-Pin": PIN}


class Rig:
    """Everything a test touches: the app's client, the controller, camera, pins and store."""

    def __init__(self, tmp_path, seed: int = 11):
        self.tmp_path = tmp_path
        self.pins = MockFactory(pin_class=MockPWMPin)
        self.camera = SimulatedCamera(seed=seed)
        self.panel = Panel(pin_factory=self.pins, bounce_s=None)
        self.store = EventStore(tmp_path / "table.sqlite")
        self.controller = TableController(self.store, self.camera, self.panel, VisionReader())
        self.app = create_app({"table": {"data_dir": str(tmp_path), "pin": PIN}},
                              controller=self.controller)
        self.client = self.app.test_client()

    def post(self, path: str, body: dict | None = None, status: int = 200) -> dict:
        response = self.client.post(path, json=body or {}, headers=AUTH)
        assert response.status_code == status, (path, body, response.json)
        return response.json

    def state(self) -> dict:
        return self.client.get("/api/table").json

    def press(self, button: str) -> dict:
        """Press and release a panel button (wired to ground, pulled up)."""
        pin = self.pins.pin(DEFAULT_PINS[button])
        pin.drive_low()
        pin.drive_high()
        return self.state()

    def close(self):
        self.controller.close()
        self.store.close()


@pytest.fixture
def rig(tmp_path):
    rig = Rig(tmp_path)
    yield rig
    rig.close()
