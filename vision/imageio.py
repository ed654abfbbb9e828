"""Load a photo for the reader, refusing anything that is not a usable picture of a tray.

A reader handed a corrupt, truncated, blank or black file must say so instead of counting zero
dice, so every check here raises `ImageError` with a message a person can act on."""
from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np

from vision.types import ImageError

MIN_SIDE = 32          # px: smaller than this cannot hold a readable die
BLANK_SPREAD = 3.0     # grey-level standard deviation below which the picture shows nothing
DARK_LEVEL = 24        # grey level that even the brightest 0.5 % of a readable photo exceeds

_JPEG_START = b"\xff\xd8"
_PNG_START = b"\x89PNG\r\n\x1a\n"
_PNG_END = b"IEND\xaeB`\x82"
_HEIF_BRANDS = {b"ftyp" + brand for brand in (b"heic", b"heix", b"hevc", b"heim", b"heis", b"mif1", b"msf1", b"avif")}


def load_image(path_or_bytes: str | os.PathLike | bytes | bytearray | memoryview) -> np.ndarray:
    """Decode a photo (file path or encoded bytes) to a BGR uint8 array, or raise `ImageError`."""
    name, data = _read(path_or_bytes)
    if not data:
        raise ImageError(f"{name}: the file is empty")
    _check_complete(name, data)
    image = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_COLOR)
    if image is None and data[4:12] in _HEIF_BRANDS:
        raise ImageError(f"{name}: a HEIC/HEIF photo (an iPhone's default), which cannot be read here: "
                         "take it as JPEG (Settings > Camera > Formats > Most Compatible) or convert it")
    if image is None:
        raise ImageError(f"{name}: not an image, or the image data is corrupt")
    check_image(image, name)
    return image


def check_image(image: np.ndarray, name: str = "image") -> None:
    """Raise `ImageError` if a decoded picture is too small, blank (one flat colour) or black."""
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ImageError(f"{name}: expected a BGR colour image, got shape {image.shape} {image.dtype}")
    height, width = image.shape[:2]
    if min(height, width) < MIN_SIDE:
        raise ImageError(f"{name}: the picture is only {width}×{height} px, too small to show dice")
    step = max(1, min(height, width) // 256)
    grey = cv2.cvtColor(image[::step, ::step], cv2.COLOR_BGR2GRAY)
    if np.percentile(grey, 99.5) < DARK_LEVEL:
        raise ImageError(f"{name}: the picture is black or too dark to read (is the light on, the lens covered?)")
    if float(grey.std()) < BLANK_SPREAD:
        raise ImageError(f"{name}: the picture is blank (one flat colour, nothing to read)")


def _read(source) -> tuple[str, bytes]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return "image bytes", bytes(source)
    if not isinstance(source, (str, os.PathLike)):
        raise ImageError(f"cannot load an image from a {type(source).__name__}")
    path = Path(source)
    try:
        return str(path), path.read_bytes()
    except FileNotFoundError:
        raise ImageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ImageError(f"{path}: is a folder, not an image file") from None
    except PermissionError:
        raise ImageError(f"{path}: permission denied") from None
    except OSError as error:
        raise ImageError(f"{path}: cannot be read ({error.strerror or error})") from None


def _check_complete(name: str, data: bytes) -> None:
    """OpenCV fills the missing part of a cut-off JPEG with grey and says nothing: catch it here."""
    if data.startswith(_JPEG_START) and not _jpeg_has_end(data):
        raise ImageError(f"{name}: the JPEG is truncated (the file was cut off before its end)")
    if data.startswith(_PNG_START) and _PNG_END not in data:
        raise ImageError(f"{name}: the PNG is truncated (the file was cut off before its end)")


def _jpeg_has_end(data: bytes) -> bool:
    """Walk the JPEG's segments to its end-of-image marker (data a phone appends after it is fine)."""
    pos = 2
    size = len(data)
    while pos + 2 <= size:
        if data[pos] != 0xFF:
            return False
        marker = data[pos + 1]
        if marker == 0xFF:                      # fill byte
            pos += 1
            continue
        if marker == 0xD9:
            return True
        if 0xD0 <= marker <= 0xD7 or marker == 0x01:
            pos += 2
            continue
        pos += 2 + int.from_bytes(data[pos + 2:pos + 4], "big")
        if marker == 0xDA:                      # entropy-coded scan: runs to the next real marker
            while True:
                pos = data.find(b"\xff", pos)
                if pos < 0 or pos + 1 >= size:
                    return False
                following = data[pos + 1]
                if following == 0x00 or 0xD0 <= following <= 0xD7 or following == 0xFF:
                    pos += 1 if following == 0xFF else 2
                    continue
                break
    return False
