"""Loading the shipped ONNX models through OpenCV's dnn module, with one clear error for a model
that is missing or unreadable, naming the command that makes it."""
from __future__ import annotations

from pathlib import Path

import cv2


def read_net(path: Path, what: str, command: str) -> cv2.dnn.Net:
    """The ONNX model at `path`; `what` names it and `command` makes it, in the error raised."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{what} missing: {path} (run {command})")
    try:
        return cv2.dnn.readNetFromONNX(str(path))
    except cv2.error as exc:
        raise ValueError(f"{what} unreadable: {path} is not a valid ONNX model "
                         f"(run {command} again): {str(exc).strip()[:200]}") from None
