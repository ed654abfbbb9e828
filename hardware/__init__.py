"""Camera backends and the gpiozero panel (buttons and LEDs); nothing here knows the rules."""
from hardware.camera import (
    Camera,
    CameraError,
    FolderCamera,
    OpenCVCamera,
    PiCamera,
    SimulatedCamera,
    open_camera,
)
from hardware.panel import NoPanel, Panel, PanelError, open_panel

__all__ = [
    "Camera", "CameraError", "FolderCamera", "OpenCVCamera", "PiCamera", "SimulatedCamera", "open_camera",
    "NoPanel", "Panel", "PanelError", "open_panel",
]
