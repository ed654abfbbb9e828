"""Camera backends with real image files, a real OpenCV capture and the synthetic tray renderer."""
import builtins
import sys

import cv2
import numpy as np
import pytest

from hardware.camera import (
    NOT_FOUND,
    STOPPED,
    Camera,
    CameraError,
    FolderCamera,
    OpenCVCamera,
    PiCamera,
    SimulatedCamera,
    open_camera,
    picamera2_to_bgr,
)


def photo(shade: int, size=(64, 48)) -> np.ndarray:
    """A small photo whose blue channel tells which one it is."""
    image = np.zeros((size[1], size[0], 3), np.uint8)
    image[:, :, 0] = shade
    image[:, :, 2] = 255 - shade
    return image


# ---------------------------------------------------------------- folder

def test_folder_replays_photos_in_natural_name_order_then_loops(tmp_path):
    for name, shade in (("tray10.png", 30), ("tray2.png", 20), ("tray1.png", 10)):
        cv2.imwrite(str(tmp_path / name), photo(shade))
    (tmp_path / "notes.txt").write_text("not a photo")
    camera = open_camera({"backend": "folder", "folder": str(tmp_path), "view": "below"})
    shades = [int(camera.capture()[0, 0, 0]) for _ in range(4)]
    assert shades == [10, 20, 30, 10]
    assert camera.last_path.name == "tray1.png"
    assert isinstance(camera, Camera)


def test_folder_without_loop_says_when_every_photo_is_used(tmp_path):
    cv2.imwrite(str(tmp_path / "a.jpg"), photo(10))
    camera = FolderCamera(tmp_path, loop=False)
    assert camera.capture().shape == (48, 64, 3)
    with pytest.raises(CameraError, match="every photo .* has been used"):
        camera.capture()


def test_folder_picks_up_photos_added_while_running(tmp_path):
    cv2.imwrite(str(tmp_path / "1.png"), photo(10))
    camera = FolderCamera(tmp_path, loop=False)
    camera.capture()
    cv2.imwrite(str(tmp_path / "2.png"), photo(20))
    assert camera.capture()[0, 0, 0] == 20


def test_folder_corrupt_photo_is_a_camera_error_and_is_skipped_next_time(tmp_path):
    (tmp_path / "1.jpg").write_bytes(b"\xff\xd8\xff\xe0 this is not really a jpeg")
    cv2.imwrite(str(tmp_path / "2.jpg"), photo(20))
    camera = FolderCamera(tmp_path)
    with pytest.raises(CameraError, match="1.jpg is corrupt or not an image"):
        camera.capture()
    assert camera.capture().shape == (48, 64, 3)


def test_folder_grey_photo_comes_back_as_bgr(tmp_path):
    cv2.imwrite(str(tmp_path / "grey.png"), np.full((20, 30), 128, np.uint8))
    assert FolderCamera(tmp_path).capture().shape == (20, 30, 3)


def test_empty_or_missing_folder_fails_at_start(tmp_path):
    with pytest.raises(CameraError, match="no photos in"):
        FolderCamera(tmp_path)
    with pytest.raises(CameraError, match="does not exist"):
        FolderCamera(tmp_path / "nope")


# ---------------------------------------------------------------- OpenCV

def test_opencv_missing_device_says_to_check_the_cable():
    with pytest.raises(CameraError) as error:
        OpenCVCamera(97)
    assert str(error.value).startswith(NOT_FOUND)


@pytest.fixture
def video(tmp_path):
    """A real 12-frame MJPEG file: OpenCV reads it through the same VideoCapture as a webcam."""
    path = tmp_path / "tray.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    if not writer.isOpened():
        pytest.skip("this OpenCV build cannot write MJPEG")
    for index in range(12):
        writer.write(photo(index * 20))
    writer.release()
    return path


def test_opencv_warms_up_drops_stale_frames_and_gives_bgr(video):
    camera = open_camera({"backend": "opencv", "device": str(video), "warmup": 3, "flush": 2})
    first = camera.capture()
    assert first.shape == (48, 64, 3) and first.dtype == np.uint8
    # 3 warm-up frames and 2 flushed: the photo is frame 5 (shade 100), give or take MJPEG loss
    assert abs(int(first[24, 32, 0]) - 100) < 8
    camera.close()


def test_opencv_source_that_stops_giving_frames(video):
    camera = OpenCVCamera(str(video), warmup=0, flush=0)
    for _ in range(12):
        camera.capture()
    with pytest.raises(CameraError, match=STOPPED):
        camera.capture()
    # the next capture reopens the source, as after a cable is pushed back in
    assert camera.capture().shape == (48, 64, 3)
    camera.close()


# ---------------------------------------------------------------- Pi camera

def test_pi_camera_without_picamera2_says_how_to_install_it(monkeypatch):
    real_import = builtins.__import__

    def no_picamera2(name, *args, **kwargs):
        if name.split(".")[0] in ("picamera2", "libcamera"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "picamera2", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_picamera2)
    with pytest.raises(CameraError, match="apt install python3-picamera2.*--system-site-packages"):
        open_camera({"backend": "pi"})


@pytest.mark.parametrize("fmt, channels, order", [
    ("RGB888", 3, (0, 1, 2)),     # stored B, G, R
    ("BGR888", 3, (2, 1, 0)),     # stored R, G, B
    ("XRGB8888", 4, (0, 1, 2)),   # stored B, G, R, A
    ("XBGR8888", 4, (2, 1, 0)),   # stored R, G, B, A
])
def test_picamera2_formats_become_bgr(fmt, channels, order):
    blue, green, red = 200, 120, 40
    stored = [(blue, green, red)[i] for i in order] + [255] * (channels - 3)
    array = np.empty((4, 6, channels), np.uint8)
    array[:] = stored
    bgr = picamera2_to_bgr(array, fmt)
    assert bgr.shape == (4, 6, 3) and tuple(bgr[0, 0]) == (blue, green, red)


def test_picamera2_unknown_format_is_a_camera_error():
    with pytest.raises(CameraError, match="YUV420"):
        picamera2_to_bgr(np.zeros((6, 4), np.uint8), "YUV420")


# ---------------------------------------------------------------- config

@pytest.mark.parametrize("config, message", [
    ({"backend": "webcam"}, "unknown camera backend 'webcam'; choose one of simulated, pi, opencv, folder"),
    ({"backend": "opencv", "devise": 0}, "unknown option devise for camera backend 'opencv'; known: device"),
    ({"backend": "folder"}, "camera backend 'folder' needs folder"),
    ({"backend": "opencv", "size": [640]}, r"camera size must be \[width, height\]"),
    ({"backend": "folder", "folder": ".", "view": "sideways"}, "camera view must be one of above, below"),
])
def test_camera_config_mistakes_are_named(config, message):
    with pytest.raises(ValueError, match=message):
        open_camera(config)
