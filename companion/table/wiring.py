"""Builds a running table from its config: store, camera, panel, reader, controller.

This is the one place that knows the hardware package; the controller is handed what it needs.
A camera that will not open at start-up does not stop the table: every capture then reports why,
and the dice are entered by hand until it is fixed and the table restarted.
"""
from __future__ import annotations

import logging

from companion.table.config import TableConfig
from companion.table.controller import TableController, VisionReader
from companion.table.store import EventStore

log = logging.getLogger(__name__)


class UnavailableCamera:
    """Stands in for a camera that failed to open; each capture repeats the reason."""

    def __init__(self, reason: str):
        self.reason = reason
        self.name = "no camera"

    def capture(self, expected=None):
        from hardware.camera import CameraError
        raise CameraError(self.reason)

    def close(self) -> None:
        """Nothing to release."""


def open_camera_for(config: TableConfig):
    from hardware.camera import CameraError, open_camera
    options = {k: v for k, v in config.camera.items() if k != "calibration"}
    try:
        return open_camera(options)
    except CameraError as exc:
        log.warning("camera: %s", exc)
        return UnavailableCamera(str(exc))


def load_calibration(config: TableConfig):
    path = config.camera.get("calibration")
    if not path:
        return None
    from vision.calibration import Calibration
    return Calibration.load(path)


def open_table(config: TableConfig, *, pin_factory=None) -> TableController:
    """A controller over the configured store, camera, panel and reader (closed by `close_table`)."""
    from hardware.panel import open_panel
    camera = open_camera_for(config)       # a config mistake stops here, before any file is made
    panel = store = None
    try:
        panel = open_panel(config.panel, pin_factory=pin_factory)
        reader = VisionReader(config.view, load_calibration(config))
        store = EventStore(config.db_path)
        return TableController(store, camera, panel, reader, table_id=config.table_id,
                               colours=config.colours)
    except BaseException:
        for part in (camera, panel, store):
            if part is not None:
                part.close()
        raise


def close_table(controller: TableController) -> None:
    controller.close()
    controller.store.close()
