"""Loading photos: usable pictures decode to BGR; anything else is a clear ImageError, never a count."""
from __future__ import annotations

import struct

import cv2
import numpy as np
import pytest

from vision import synth
from vision.imageio import load_image
from vision.types import ImageError


@pytest.fixture(scope="module")
def tray_jpeg() -> bytes:
    image, _ = synth.render_tray(3, 6, jpeg=0)
    return cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()


def _png(image) -> bytes:
    return cv2.imencode(".png", image)[1].tobytes()


def test_path_and_bytes_give_the_same_bgr_image(tmp_path, tray_jpeg):
    path = tmp_path / "tray.jpg"
    path.write_bytes(tray_jpeg)
    from_path = load_image(path)
    assert from_path.shape == (1232, 1640, 3) and from_path.dtype == np.uint8
    assert np.array_equal(from_path, load_image(str(path)))
    assert np.array_equal(from_path, load_image(tray_jpeg))


def test_grey_png_comes_back_as_three_channels():
    image, _ = synth.render_tray(3, 4, size=(320, 240))
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    assert load_image(_png(grey)).shape == (240, 320, 3)


def test_real_photo_loads(byler_truth):
    row = byler_truth[0]
    assert load_image(row["path"]).shape == (row["height"], row["width"], 3)


def test_phone_photo_taken_sideways_is_turned_upright():
    """Phones store the picture as shot and a tag saying how to turn it (EXIF orientation 6: 90°)."""
    picture = np.zeros((200, 300, 3), np.uint8)
    picture[:, :150] = 255                                        # left half white
    picture[::7] = 90
    jpeg = cv2.imencode(".jpg", picture)[1].tobytes()
    tiff = b"MM\x00*" + struct.pack(">IH", 8, 1) + struct.pack(">HHIHH", 0x0112, 3, 1, 6, 0) + bytes(4)
    exif = b"\xff\xe1" + struct.pack(">H", 8 + len(tiff)) + b"Exif\x00\x00" + tiff
    upright = load_image(jpeg[:2] + exif + jpeg[2:])
    assert upright.shape == (300, 200, 3)
    assert upright[:20].mean() > 200 and upright[-20:].mean() < 60     # the white half is now on top


def test_data_after_the_jpeg_end_is_accepted(tray_jpeg):
    """Phones append a motion clip after the picture; the picture itself is whole."""
    assert load_image(tray_jpeg + b"\x00\x00ftypmp42" + bytes(range(256)) * 8).shape == (1232, 1640, 3)


@pytest.mark.parametrize("cut", [0.3, 0.9, 0.999])
def test_truncated_jpeg_is_refused(tray_jpeg, cut):
    with pytest.raises(ImageError, match="truncated"):
        load_image(tray_jpeg[: int(len(tray_jpeg) * cut)])


def test_truncated_png_is_refused():
    data = _png(synth.render_tray(3, 4, size=(320, 240))[0])
    with pytest.raises(ImageError, match="truncated"):
        load_image(data[: len(data) // 2])


@pytest.mark.parametrize("data, message", [
    (b"", "empty"),
    (b"dice: 4 5 6\n" * 20, "not an image"),
    (b"\x89PNG\r\n\x1a\n" + bytes(300) + b"IEND\xaeB`\x82", "not an image"),
])
def test_non_images_are_refused(data, message):
    with pytest.raises(ImageError, match=message):
        load_image(data)


def test_iphone_heic_photo_gets_advice():
    heic = b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + bytes(500)
    with pytest.raises(ImageError, match="HEIC.*JPEG"):
        load_image(heic)


def test_missing_file_and_folder_are_refused(tmp_path):
    with pytest.raises(ImageError, match="no such file"):
        load_image(tmp_path / "nope.jpg")
    with pytest.raises(ImageError, match="folder"):
        load_image(tmp_path)


def test_black_photo_is_too_dark():
    rng = np.random.default_rng(0)
    black = rng.integers(0, 12, (480, 640, 3), dtype=np.uint8)      # a covered lens: sensor noise only
    with pytest.raises(ImageError, match="dark"):
        load_image(_png(black))


def test_blank_photo_is_refused():
    with pytest.raises(ImageError, match="blank"):
        load_image(_png(np.full((480, 640, 3), (200, 190, 180), np.uint8)))


def test_tiny_picture_is_refused():
    with pytest.raises(ImageError, match="too small"):
        load_image(_png(np.random.default_rng(0).integers(0, 255, (20, 20, 3), dtype=np.uint8)))


def test_dark_but_real_photo_from_below_still_loads():
    """A dim shot through the tray is dark, not black: it must reach the reader."""
    image, _ = synth.render_tray(5, 10, view="below", jpeg=0)
    dim = (image * 0.35).astype(np.uint8)
    assert load_image(_png(dim)).shape == image.shape
