"""Camera backends with real image files, a real OpenCV capture and the synthetic tray renderer.

Named test_hw_* because tests/ has no __init__.py: a plain test_camera.py elsewhere would clash.
"""
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


# ---------------------------------------------------------------- simulated

COLOURS = {"Ana": "red", "Ben": "blue", "Cyd": "green"}
SMALL = (640, 480)  # quicker to draw where the photo size does not matter


def faces_drawn(camera):
    """{seat: sorted top faces} of the dice the renderer really put in the photo."""
    drawn = {}
    for die in camera.last_dice:
        drawn.setdefault(die["seat"], []).append(die["face"])
    return {seat: sorted(faces) for seat, faces in drawn.items()}


def test_simulated_camera_photographs_the_dice_each_player_holds():
    camera = open_camera({"backend": "simulated", "seat_colours": COLOURS, "seed": 7})
    image = camera.capture(expected={"Ana": 5, "Ben": 3, "Cyd": 0})
    assert image.shape == (1232, 1640, 3) and image.dtype == np.uint8
    ok, jpeg = cv2.imencode(".jpg", image)
    assert ok and cv2.imdecode(jpeg, cv2.IMREAD_COLOR).shape == (1232, 1640, 3)
    truth = camera.last_truth
    assert {seat: len(faces) for seat, faces in truth.items()} == {"Ana": 5, "Ben": 3, "Cyd": 0}
    assert all(1 <= face <= 6 for faces in truth.values() for face in faces)
    assert faces_drawn(camera) == {seat: sorted(faces) for seat, faces in truth.items() if faces}
    assert {die["colour"] for die in camera.last_dice} == {"red", "blue"}
    assert camera.last_image is image


def test_simulated_rolls_differ_between_rounds_but_repeat_with_the_seed():
    first = SimulatedCamera(COLOURS, seed=3, size=SMALL)
    again = SimulatedCamera(COLOURS, seed=3, size=SMALL)
    rolls = []
    for _ in range(2):
        image = first.capture(expected={"Ana": 5, "Ben": 5})
        assert np.array_equal(image, again.capture(expected={"Ana": 5, "Ben": 5}))
        rolls.append(first.last_truth)
    assert rolls[0] != rolls[1]


def test_simulated_view_from_below():
    camera = open_camera({"backend": "simulated", "view": "below", "seat_colours": COLOURS,
                          "seed": 1, "size": list(SMALL)})
    camera.capture(expected={"Cyd": 2})
    assert camera.name == "simulated camera (below)"
    assert all(die["seen"] == 7 - die["face"] for die in camera.last_dice)  # the bottom face shows


def test_staged_dice_are_shown_as_given_even_when_counts_are_wrong():
    camera = SimulatedCamera(COLOURS, seed=1, size=SMALL)
    camera.stage({"Ana": [1, 1, 6], "Ben": [4]})
    camera.capture(expected={"Ana": 5, "Ben": 5})
    assert camera.last_truth == {"Ana": [1, 1, 6], "Ben": [4]}
    assert faces_drawn(camera) == {"Ana": [1, 1, 6], "Ben": [4]}
    camera.capture(expected={"Ana": 2})  # staging is for one capture only
    assert len(camera.last_truth["Ana"]) == 2
    with pytest.raises(ValueError, match="faces must be 1-6"):
        camera.stage({"Ana": [7]})


def test_unplugged_simulated_camera_fails_like_a_pulled_cable():
    camera = SimulatedCamera(COLOURS, size=SMALL)
    camera.unplug()
    with pytest.raises(CameraError, match="camera not found: is the ribbon cable / USB plugged in"):
        camera.capture(expected={"Ana": 1})
    camera.plug()
    assert camera.capture(expected={"Ana": 1}).shape == (480, 640, 3)


def test_simulated_seat_without_a_colour_is_a_camera_error():
    camera = SimulatedCamera({"Ana": "red"}, size=SMALL)
    with pytest.raises(CameraError, match="no dice colour for Dan"):
        camera.capture(expected={"Ana": 1, "Dan": 2})
    camera.seat_colours["Dan"] = "black"  # the table fills colours in when players sit down
    camera.capture(expected={"Ana": 1, "Dan": 2})
    assert faces_drawn(camera).keys() == {"Ana", "Dan"}


def test_simulated_bad_counts_and_view_are_refused():
    camera = SimulatedCamera(COLOURS, size=SMALL)
    with pytest.raises(ValueError, match="dice held must be a count"):
        camera.capture(expected={"Ana": -1})
    with pytest.raises(ValueError, match="camera view"):
        SimulatedCamera(COLOURS, view="side")
