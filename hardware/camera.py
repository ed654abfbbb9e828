"""Cameras that photograph the revealed dice: one small interface, several backends.

Every backend returns a BGR uint8 photo from `capture()` and raises `CameraError` with a
sentence a person at the table understands when it cannot. The table calls `capture()` only
after a dudo or calza, never during bidding.

Backends:
- `PiCamera`: a Raspberry Pi camera through picamera2 (installed from apt on Raspberry Pi OS).
- `OpenCVCamera`: any OpenCV `VideoCapture` source (USB webcam index, video file, stream URL).
- `FolderCamera`: photos from a folder, replayed in name order.
- `SimulatedCamera`: renders the round's dice with the synthetic tray generator, so a laptop
  runs the whole loop.
"""
from __future__ import annotations

import inspect
import logging
import random
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol, runtime_checkable

import cv2
import numpy as np

from vision.types import VIEWS

log = logging.getLogger(__name__)

NOT_FOUND = "camera not found: is the ribbon cable / USB plugged in?"
STOPPED = "camera stopped answering"
PICAMERA2_MISSING = (
    "picamera2 is not installed: on Raspberry Pi OS run `sudo apt install python3-picamera2` and make "
    "the virtual environment with `python3 -m venv --system-site-packages` (see docs/raspberry-pi.md)"
)
PHOTO_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")
STILL_SIZE = (1640, 1232)  # the v1/v2 Pi camera's full-field 2x2-binned mode: whole tray, fast


class CameraError(RuntimeError):
    """The camera gave no usable photo; the message says what to check."""


@runtime_checkable
class Camera(Protocol):
    """What the table needs from a camera."""

    name: str

    def capture(self, expected: Mapping[str, int] | None = None) -> np.ndarray:
        """A fresh BGR photo of the tray. `expected` is {seat: dice held}; real cameras ignore it."""
        ...

    def close(self) -> None: ...


def _size(size) -> tuple[int, int]:
    """(width, height) from a tuple or a TOML list; a clear error for anything else."""
    try:
        width, height = (int(v) for v in size)
    except (TypeError, ValueError):
        raise ValueError(f"camera size must be [width, height], got {size!r}") from None
    if width < 16 or height < 16:
        raise ValueError(f"camera size {width}x{height} is too small")
    return width, height


def _as_bgr(frame: np.ndarray) -> np.ndarray:
    """Grey or BGRA frames from a device become 3-channel BGR, like every other photo."""
    if frame.ndim == 2:
        return cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    if frame.shape[2] == 4:
        return cv2.cvtColor(frame, cv2.COLOR_BGRA2BGR)
    return frame


# --------------------------------------------------------------------------------------------
# Raspberry Pi camera (picamera2)

# picamera2 names formats after libcamera's DRM fourcc, so "RGB888" arrays are stored B, G, R.
_PICAMERA2_TO_BGR = {
    "RGB888": None,                      # pixels are [B, G, R]: already OpenCV order
    "BGR888": cv2.COLOR_RGB2BGR,         # pixels are [R, G, B]
    "XRGB8888": cv2.COLOR_BGRA2BGR,      # pixels are [B, G, R, 255]
    "XBGR8888": cv2.COLOR_RGBA2BGR,      # pixels are [R, G, B, 255]
}


def picamera2_to_bgr(array: np.ndarray, fmt: str) -> np.ndarray:
    """Convert a picamera2 `capture_array` result in format `fmt` to a BGR photo."""
    if fmt not in _PICAMERA2_TO_BGR:
        raise CameraError(f"the Pi camera delivered format {fmt}, which this program cannot read; "
                          f"use one of {', '.join(_PICAMERA2_TO_BGR)}")
    code = _PICAMERA2_TO_BGR[fmt]
    return np.ascontiguousarray(array if code is None else cv2.cvtColor(array, code))


class PiCamera:
    """A Raspberry Pi camera module, kept running so exposure is settled when a call comes.

    `hflip`/`vflip` only correct how the module is mounted; do not use them to un-mirror the
    view from below the tray, the reader handles that from the configured view.
    """

    def __init__(self, size=STILL_SIZE, camera_num: int = 0, hflip: bool = False, vflip: bool = False,
                 timeout_s: float = 5.0, warmup: int = 3):
        self.size = _size(size)
        self.timeout_s = float(timeout_s)
        self.name = f"Pi camera {camera_num} ({self.size[0]}x{self.size[1]})"
        self._lock = threading.Lock()
        try:
            from picamera2 import Picamera2
        except ImportError as exc:
            raise CameraError(PICAMERA2_MISSING) from exc
        try:
            if not Picamera2.global_camera_info():
                raise CameraError(NOT_FOUND + " (libcamera sees no camera)")
            self._cam = Picamera2(camera_num)
        except CameraError:
            raise
        except Exception as exc:  # picamera2 raises RuntimeError/IndexError when none or busy
            raise CameraError(f"{NOT_FOUND} ({exc})") from exc
        try:
            config = self._cam.create_still_configuration(
                main={"size": self.size, "format": "RGB888"}, transform=self._transform(hflip, vflip))
            self._cam.configure(config)
            self._format = self._cam.camera_configuration()["main"]["format"]
            self._cam.start()
            for _ in range(warmup):  # let auto-exposure and white balance settle
                self._grab()
        except CameraError:
            self.close()
            raise
        except Exception as exc:
            self.close()
            raise CameraError(f"the Pi camera would not start ({exc})") from exc

    @staticmethod
    def _transform(hflip: bool, vflip: bool):
        from libcamera import Transform  # comes with picamera2
        return Transform(hflip=int(bool(hflip)), vflip=int(bool(vflip)))

    def _grab(self) -> np.ndarray:
        job = self._cam.capture_array("main", wait=False)
        try:
            return self._cam.wait(job, timeout=self.timeout_s)
        except TimeoutError as exc:
            raise CameraError(f"{STOPPED} (no frame in {self.timeout_s:g} s)") from exc
        except Exception as exc:
            raise CameraError(f"{STOPPED} ({exc})") from exc

    def capture(self, expected: Mapping[str, int] | None = None) -> np.ndarray:
        with self._lock:
            if getattr(self, "_cam", None) is None:
                raise CameraError(f"{STOPPED} (the camera was closed)")
            return picamera2_to_bgr(self._grab(), self._format)

    def close(self) -> None:
        cam, self._cam = getattr(self, "_cam", None), None
        if cam is not None:
            try:
                cam.stop()
            finally:
                cam.close()


# --------------------------------------------------------------------------------------------
# OpenCV VideoCapture (USB webcam, video file, stream)

class OpenCVCamera:
    """Any OpenCV capture source: a device index (USB webcam), a video file or a stream URL.

    Webcams buffer a few frames, so each capture drops `flush` frames first: the photo must be
    taken after the call, not a moment before it. After a failure the next capture reopens the
    device, so a cable pushed back in works again without a restart.
    """

    def __init__(self, device: int | str = 0, size=None, warmup: int = 5, flush: int = 2):
        self.device = int(device) if isinstance(device, str) and device.isdigit() else device
        self.size = None if size is None else _size(size)
        self.warmup = int(warmup)
        self.flush = int(flush)
        kind = "device" if isinstance(self.device, int) else "source"
        self.name = f"OpenCV {kind} {self.device}"
        self._lock = threading.Lock()
        self._cap = None
        self._open()

    def _open(self) -> None:
        cap = cv2.VideoCapture(self.device)
        if not cap.isOpened():
            cap.release()
            raise CameraError(f"{NOT_FOUND} (OpenCV could not open {self.name})")
        cap.set(cv2.CAP_PROP_BUFFERSIZE, 1)  # ignored where unsupported
        if self.size:
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.size[0])
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.size[1])
        self._cap = cap
        for _ in range(self.warmup):  # auto-exposure needs a few frames
            self._read()

    def _read(self) -> np.ndarray:
        ok, frame = self._cap.read()
        if not ok or frame is None or frame.size == 0:
            self._release()
            raise CameraError(f"{STOPPED} ({self.name} gave no frame)")
        return frame

    def _release(self) -> None:
        cap, self._cap = self._cap, None
        if cap is not None:
            cap.release()

    def capture(self, expected: Mapping[str, int] | None = None) -> np.ndarray:
        with self._lock:
            if self._cap is None:
                self._open()
            for _ in range(self.flush):
                self._cap.grab()
            return _as_bgr(self._read())

    def close(self) -> None:
        with self._lock:
            self._release()


# --------------------------------------------------------------------------------------------
# A folder of photos

def _natural_key(name: str) -> list:
    """'tray2.jpg' sorts before 'tray10.jpg'."""
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", name)]


class FolderCamera:
    """Photos from a folder, one per capture, in name order ('tray2' before 'tray10').

    The folder is listed again at every capture, so photos dropped in while the table runs are
    picked up in order. At the end it starts again from the first photo (`loop=True`, the
    default, for demos) or raises CameraError (`loop=False`, for replaying a recorded game).
    """

    def __init__(self, folder: str | Path, loop: bool = True):
        self.folder = Path(folder).expanduser()
        self.loop = bool(loop)
        self.name = f"photos in {self.folder}"
        self.last_path: Path | None = None
        self._photos()  # fail now, at start-up, when there is nothing to replay

    def _photos(self) -> list[Path]:
        if not self.folder.is_dir():
            raise CameraError(f"photo folder {self.folder} does not exist")
        photos = sorted((p for p in self.folder.iterdir()
                         if p.suffix.lower() in PHOTO_SUFFIXES and p.is_file()),
                        key=lambda p: _natural_key(p.name))
        if not photos:
            raise CameraError(f"no photos in {self.folder} (looking for {', '.join(PHOTO_SUFFIXES)})")
        return photos

    def _next(self) -> Path:
        photos = self._photos()
        if self.last_path is None:
            return photos[0]
        last = _natural_key(self.last_path.name)
        later = [p for p in photos if _natural_key(p.name) > last]
        if later:
            return later[0]
        if self.loop:
            log.info("replayed every photo in %s: starting again from the first", self.folder)
            return photos[0]
        raise CameraError(f"every photo in {self.folder} has been used ({len(photos)} photos)")

    def capture(self, expected: Mapping[str, int] | None = None) -> np.ndarray:
        path = self._next()
        self.last_path = path  # a corrupt photo is skipped next time, not retried forever
        try:
            data = np.fromfile(path, dtype=np.uint8)
        except OSError as exc:
            raise CameraError(f"photo {path.name} could not be read ({exc.strerror})") from exc
        image = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
        if image is None:
            raise CameraError(f"photo {path.name} is corrupt or not an image")
        return image

    def close(self) -> None:
        """Nothing to release."""


# --------------------------------------------------------------------------------------------
# Simulated camera

class SimulatedCamera:
    """Rolls the dice each seat holds and renders them as a photo, in the configured view.

    `last_truth` ({seat: top faces}), `last_dice` (the renderer's record of every die drawn:
    seat, face, centre, flags) and `last_image` tell tests and the simulator what was on the
    tray. `stage(dice)` shows exactly those dice at the next capture (even if the counts
    differ from what players hold: that is how a test produces a miscounted tray), and
    `unplug()` makes captures fail the way a pulled cable does.
    """

    def __init__(self, seat_colours: Mapping[str, str] | None = None, view: str = "above",
                 seed: int | None = None, size=STILL_SIZE):
        if view not in VIEWS:
            raise ValueError(f"camera view must be one of {', '.join(VIEWS)}, got {view!r}")
        from vision.synth import render_reveal
        self._render = render_reveal
        self.seat_colours = dict(seat_colours or {})
        self.view = view
        self.size = _size(size)
        self.name = f"simulated camera ({view})"
        self.last_truth: dict[str, list[int]] | None = None
        self.last_dice: list[dict] | None = None
        self.last_image: np.ndarray | None = None
        self._rng = random.Random(seed)
        self._staged: dict[str, list[int]] | None = None
        self._plugged = True

    def stage(self, dice_by_seat: Mapping[str, list[int]]) -> None:
        """Show exactly these top faces at the next capture."""
        for seat, faces in dice_by_seat.items():
            if any(not isinstance(f, int) or not 1 <= f <= 6 for f in faces):
                raise ValueError(f"seat {seat!r}: faces must be 1-6, got {list(faces)!r}")
        self._staged = {seat: list(faces) for seat, faces in dice_by_seat.items()}

    def unplug(self) -> None:
        """From now on captures fail as with a pulled cable."""
        self._plugged = False

    def plug(self) -> None:
        self._plugged = True

    def _roll(self, expected: Mapping[str, int]) -> dict[str, list[int]]:
        dice = {}
        for seat, held in expected.items():
            if isinstance(held, bool) or not isinstance(held, int) or held < 0:
                raise ValueError(f"seat {seat!r}: dice held must be a count >= 0, got {held!r}")
            dice[seat] = [self._rng.randint(1, 6) for _ in range(held)]
        return dice

    def capture(self, expected: Mapping[str, int] | None = None) -> np.ndarray:
        if not self._plugged:
            raise CameraError(NOT_FOUND)
        if self._staged is not None:
            dice, self._staged = self._staged, None
        else:
            dice = self._roll(expected or {})
        on_tray = {seat: faces for seat, faces in dice.items() if faces}
        missing = sorted(seat for seat in on_tray if seat not in self.seat_colours)
        if missing:
            raise CameraError(f"the simulated camera has no dice colour for {', '.join(missing)}")
        try:
            image, truth = self._render(on_tray, {seat: self.seat_colours[seat] for seat in on_tray},
                                        view=self.view, seed=self._rng.randrange(2**31), size=self.size)
        except ValueError as exc:  # e.g. more dice than fit on the tray at this size
            raise CameraError(f"the simulated camera could not draw the tray: {exc}") from exc
        self.last_truth = dice
        self.last_dice = list(truth)
        self.last_image = image
        return image

    def close(self) -> None:
        """Nothing to release."""


# --------------------------------------------------------------------------------------------

BACKENDS = {
    "simulated": SimulatedCamera,
    "pi": PiCamera,
    "opencv": OpenCVCamera,
    "folder": FolderCamera,
}


def open_camera(config: Mapping | None = None) -> Camera:
    """The camera a config section asks for: {"backend": name, option: value, ...}.

    Options are the backend's constructor arguments (e.g. `device` and `size` for opencv,
    `folder` and `loop` for folder). `view` (where the camera sits: above or below the tray) is
    accepted for every backend, since the reader needs it; only the simulated camera uses it.
    A typo gets a ValueError naming the options that exist; a camera that cannot be opened
    raises CameraError.
    """
    options = dict(config or {})
    backend = options.pop("backend", "simulated")
    if backend not in BACKENDS:
        raise ValueError(f"unknown camera backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    view = options.pop("view", "above")
    if view not in VIEWS:
        raise ValueError(f"camera view must be one of {', '.join(VIEWS)}, got {view!r}")
    cls = BACKENDS[backend]
    params = inspect.signature(cls.__init__).parameters
    if "view" in params:
        options["view"] = view
    known = [name for name in params if name != "self"]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"unknown option {', '.join(unknown)} for camera backend {backend!r}; "
                         f"known: {', '.join(known)}")
    needed = [name for name in known if params[name].default is inspect.Parameter.empty]
    absent = [name for name in needed if name not in options]
    if absent:
        raise ValueError(f"camera backend {backend!r} needs {', '.join(absent)}")
    return cls(**options)
