"""Train the stacked branch of the dice detector shipped in models/dice_centres.onnx, and evaluate
the whole detector: die centres, each die's side, stacked and on-edge flags, and the die body mask.

Optional extra, not needed at runtime (`vision.detect` runs the exported model with OpenCV's dnn
module). Training needs torch and onnx, kept out of the project's dependencies:

    python3 -m venv /tmp/trainvenv
    /tmp/trainvenv/bin/pip install torch==2.13.0 onnx numpy opencv-python-headless
    nice /tmp/trainvenv/bin/python tools/train_detector.py train     # writes models/dice_centres.onnx
                                                                     # and models/dice_centres_head.onnx
    /tmp/trainvenv/bin/python tools/train_detector.py head           # only cuts the head from the model
    nice .venv/bin/python tools/train_detector.py evaluate           # held-out figures for the model card

What this script trains is the stacked head's own branch. Everything else is kept, frozen, from
the shipped model (`--frozen`, read back from its ONNX file): the trunk and centre head (trained
by this script's version at commit 15fc5c2: byler and synthetic trays, CenterNet's focal loss),
and the side and on-edge heads and body mask (trained by its version at commit 25d691b on the
same photos as here less the picture trays), so every output the locator reads but `stacked`
stays exactly as it was.

Training data (seeded; the defaults reproduce the shipped model):
* the byler-d6 photos of the author's TRAIN split only (`../shared/data/byler-d6/`), less every
  fifth photo (`train_faces.held_out`, kept to check thresholds), each also framed as a phone
  photo (`vision.synth.phone_framed`); all its dice lie flat;
* `vision.synth.render_tray` trays (exact truth): plain and hard, touching clusters, stacked
  pairs, both views, Pi-camera and phone sizes; trays of 6-14 dice with 1-3 stacked pairs and
  0-2 dice on their edge (the flags' positives); trays of 4-12 flat dice (their negatives);
  trays of picture-faced sets (the boxed set's paco, a skull, an emblem), about half their dice
  showing the picture, half the trays with stacked pairs: a picture is busier than pips, and
  the stacked head once took flat pacos for stacks.
Each photo is shrunk the way `vision.locate` does it and scaled so that the locator's usual die
side (`locate._survey`) becomes `detect.SIDE` pixels, exactly as at runtime. The net sees random
crops, turned, mirrored, rescaled (`ZOOM`: the usual die can be well off the dice's size, as on
a calibrated table), with colour channels swapped, and learns whether each die is one of a
stack near its centre.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tools"))

from companion.bench_vision import real_truth  # noqa: E402
from train_faces import BYLER, byler_quad, byler_records, export_probabilities, held_out, train_steps  # noqa: E402
from vision import detect, locate, synth  # noqa: E402

CROP = 80            # training crop side, net input pixels (about five dice)
SIGMA = 1.0          # how fast a die's stacked target fades from its centre: Gaussian sigma, cells
SYNTH_SEED = 9_000_000   # first synthetic tray seed (far from the benchmark's and the tests')
SPECIAL_SEED = 9_500_000  # first synthetic tray seed with dice stacked and on their edge
FEW_SEED = 9_600_000      # first synthetic tray seed with a few dice, all flat
PICTURE_SEED = 9_700_000  # first synthetic tray seed of picture-faced sets (the boxed set's paco...)
ATTRIBUTE_REACH = 1.5     # cells around a die's centre where its stacked flag is learned
ZOOM = (0.65, 1.5)        # crops rescaled by this much: the locator's usual die can be that far off the
                          # dice's size (a calibration's on a tray of other dice: they reach the net 0.6-1.45x)
STACKED_POSITIVE = 2.0    # weight of a stacked die's cells in the stacked head's loss (flat: 1)...
PICTURE_NEGATIVE = 3.0    # ...and of a flat die's showing a picture (the paco once read as a stack)
SPECIAL_PICK = 3.0        # a stacked or edge die, or a picture face, is that much likelier to centre a crop
PICTURE_SHOWN = 0.5       # share of a picture tray's dice showing their picture to the camera
PICTURE_KINDS = ("paco", "paco", "skull", "emblem")   # picture trays' sets, by seed: the paco twice as often

FLAT, UPPER, LOWER, EDGE = 0, 1, 2, 3   # a die's kind in the training truth


@dataclass
class Photo:
    """One training or checking photo, scaled as the net sees it at runtime, with its truth."""
    name: str
    image: np.ndarray        # BGR, usual die = detect.SIDE px
    centres: np.ndarray      # N×2
    sides: np.ndarray        # N, top-face sides
    kinds: np.ndarray        # N, FLAT UPPER LOWER EDGE
    body: np.ndarray         # uint8 0/255: die body (top face and visible sides)
    known: np.ndarray        # uint8 0/255: where the body mask is known
    pictures: np.ndarray     # N, the picture on the face the camera sees ("" for pips)
    view: str = "above"


def scaled_photo(image: np.ndarray, calibration=None):
    """(BGR photo scaled so the locator's usual die is detect.SIDE px, the map of the photo's
    points into it, its scale factor) as `vision.locate` + `vision.detect` see it at runtime."""
    view, _, _, expected = locate._survey(image, calibration)
    f = detect.SIDE / expected
    small = cv2.resize(view.small, None, fx=f, fy=f, interpolation=cv2.INTER_AREA if f < 1 else cv2.INTER_LINEAR)

    def to_small(points):
        work = (np.asarray(points, np.float32) + 0.5) * view.scale - 0.5
        return (work + 0.5) * f - 0.5

    return small, to_small, view.scale * f


def fill(shape, polygons) -> np.ndarray:
    mask = np.zeros(shape[:2], np.uint8)
    for poly in polygons:
        cv2.fillPoly(mask, [np.round(np.asarray(poly) * 4).astype(np.int32)], 255, cv2.LINE_AA, 2)
    return mask


def byler_photos(names_ok) -> list[Photo]:
    """byler-d6 TRAIN photos whose names pass `names_ok`, each as taken and framed as a phone
    photo. A die's centre is its loose box's centre; its side and body, the square segmented in
    the box (`train_faces.byler_quad`); the body mask is known only on that square's inner part
    and on the board away from every box."""
    out = []
    for record in byler_records("train"):
        name = Path(record["image"]).name
        if not names_ok(name):
            continue
        image = cv2.imread(str(BYLER / record["image"]))
        dice = real_truth(record)
        centres = np.array([d["center"] for d in dice], np.float32).reshape(-1, 2)
        quads = [byler_quad(image, d["bbox"]) for d in dice]
        boxes = [np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float32)
                 for x, y, w, h in (d["bbox"] for d in dice)]
        big, scale, pad = synth.phone_framed(image)
        for suffix, photo, k0, shift in [("", image, 1.0, 0), ("@phone", big, scale, pad)]:
            small, to_small, k = scaled_photo(photo)

            def move(points, k0=k0, shift=shift, to_small=to_small):
                return to_small(np.asarray(points, np.float32) * k0 + np.float32([shift, 0]))

            inner = [move(q.mean(axis=0) + 0.8 * (q - q.mean(axis=0))) for q in quads]
            wide = [move(b.mean(axis=0) + 1.25 * (b - b.mean(axis=0))) for b in boxes]
            body = fill(small.shape, inner)
            known = np.where(fill(small.shape, wide) > 0, body, 255).astype(np.uint8)
            sides = np.array([np.linalg.norm(q[1] - q[0]) for q in quads], np.float32) * k0 * k
            out.append(Photo(name + suffix, small, move(centres), sides, np.full(len(dice), FLAT),
                             body, known, np.full(len(dice), "")))
    return out


def tray_photo(name: str, image: np.ndarray, truth, calibration=None) -> Photo:
    """A synthetic tray with its exact truth, seen as the locator sees it (with `calibration`,
    if any). A die's body is the hull of its top face and of its far face (the top face moved to
    the far corner of its box: the sides the camera sees)."""
    small, to_small, k = scaled_photo(image, calibration)
    bodies, kinds = [], []
    stacked_seen = 0
    for die in truth:
        corners = np.array(die["corners"], np.float32)
        x, y, w, h = die["bbox"]
        lo, hi = corners.min(axis=0), corners.max(axis=0)
        reach_lo, reach_hi = np.float32([x, y]) - lo, np.float32([x + w, y + h]) - hi
        shift = np.where(-reach_lo > reach_hi, reach_lo, reach_hi)
        bodies.append(to_small(cv2.convexHull(np.vstack([corners, corners + shift])).reshape(-1, 2)))
        if "stacked" in die["flags"]:
            kinds.append(UPPER if stacked_seen % 2 else LOWER)   # render_tray lists a pair lower, upper
            stacked_seen += 1
        else:
            kinds.append(EDGE if "edge" in die["flags"] else FLAT)
    centres = to_small(np.array([d["center"] for d in truth], np.float32).reshape(-1, 2))
    sides = np.array([d["size"] for d in truth], np.float32) * k
    return Photo(name, small, centres, sides, np.array(kinds, int), fill(small.shape, bodies),
                 np.full(small.shape[:2], 255, np.uint8),
                 np.array([die.get("picture") or "" for die in truth], dtype=object), truth.scene["view"])


def tray_photos(name: str, first: int, count: int, arguments) -> list[Photo]:
    """Seeded synthetic trays: `arguments(seed, rng, view)` gives `render_tray`'s other arguments
    (drawn from `rng`, seeded by the tray's seed); every third tray from below, every fifth at
    phone size; a tray with no room for its dice is skipped."""
    out = []
    for seed in range(first, first + count):
        view = ("above", "below")[seed % 3 == 2]
        args = {"seed": seed, "view": view, **arguments(seed, np.random.default_rng(seed), view)}
        if seed % 5 == 4:
            args["size"] = synth.PHONE
        try:
            out.append(tray_photo(f"{name}{seed}", *synth.render_tray(**args)))
        except synth.NoRoom:
            continue   # no room on this tray for so many dice
    return out


def synth_photos(first: int, count: int) -> list[Photo]:
    """Seeded synthetic trays of many kinds."""
    def arguments(seed, rng, view):
        kind = seed % 4
        return {"n_dice": int(rng.integers(6, 31)), "hard": kind != 0, "clusters": (None, 0.6, 0.9, 0.9)[kind],
                "stacked": int(rng.integers(0, 3)) if kind == 3 else 0}
    return tray_photos("synth", first, count, arguments)


def special_photos(first: int, count: int) -> list[Photo]:
    """Seeded synthetic trays of 6-14 dice, 1-3 pairs stacked and 0-2 dice on their edge among
    touching dice: the cases the stacked and on-edge heads learn."""
    def arguments(seed, rng, view):
        return {"n_dice": int(rng.integers(6, 15)), "hard": seed % 2 == 0, "clusters": 0.7,
                "stacked": int(rng.integers(1, 4)), "edge": int(rng.integers(0, 3))}
    return tray_photos("special", first, count, arguments)


def few_photos(first: int, count: int) -> list[Photo]:
    """Seeded synthetic trays of 4-12 flat dice, lone or touching: what most stacked-looking
    dice are not (lone dice on small trays)."""
    def arguments(seed, rng, view):
        return {"n_dice": int(rng.integers(4, 13)), "clusters": float(rng.choice([0.1, 0.5, 0.9]))}
    return tray_photos("few", first, count, arguments)


def picture_faces(rng, n_dice: int, kind: str, view: str) -> list[int]:
    """Top faces for a tray of `kind` picture dice: about PICTURE_SHOWN of them show the picture
    to the camera (from below the camera sees the face opposite the top), the rest any face."""
    picture = next(iter(synth.PICTURE_SETS[kind]))
    shown = picture if view == "above" else 7 - picture
    return [shown if rng.random() < PICTURE_SHOWN else int(rng.integers(1, 7)) for _ in range(n_dice)]


def picture_photos(first: int, count: int) -> list[Photo]:
    """Seeded synthetic trays of picture-faced sets (the boxed set's paco on the ace, a skull, a
    6's emblem), many dice showing the picture, half the trays with 1-2 stacked pairs: a picture
    is busier than pips, and the stacked head must not take it for a stack."""
    def arguments(seed, rng, view):
        n_dice, kind = int(rng.integers(6, 15)), PICTURE_KINDS[seed % len(PICTURE_KINDS)]
        return {"n_dice": n_dice, "hard": seed % 2 == 0, "picture_faces": kind,
                "clusters": float(rng.choice([0.1, 0.5, 0.9])), "stacked": int(rng.integers(1, 3)) * (rng.random() < 0.5),
                "faces": picture_faces(rng, n_dice, kind, view)}
    return tray_photos("picture", first, count, arguments)


def targets(centres: np.ndarray, kinds: np.ndarray, pictures: np.ndarray, cells: int) -> np.ndarray:
    """Per-cell stacked target and weight (2 × cells × cells): the nearest die's within
    ATTRIBUTE_REACH cells of a cell (both dice of a stacked pair are `stacked`), weighted by a
    Gaussian of the distance (0 farther), STACKED_POSITIVE times that on a stacked die and
    PICTURE_NEGATIVE times on a flat die showing a picture."""
    out = np.zeros((2, cells, cells), np.float32)
    if len(centres):
        ys, xs = np.mgrid[0:cells, 0:cells]
        grid = (centres + 0.5) / detect.STRIDE - 0.5
        d2 = (xs[None] - grid[:, 0, None, None]) ** 2 + (ys[None] - grid[:, 1, None, None]) ** 2
        nearest = d2.argmin(axis=0)
        weight = np.exp(-d2.min(axis=0) / (2 * SIGMA ** 2)) * (d2.min(axis=0) <= ATTRIBUTE_REACH ** 2)
        stacked = np.isin(kinds[nearest], (UPPER, LOWER))
        hard = (kinds[nearest] == FLAT) & (pictures[nearest] != "")
        out[0] = stacked
        out[1] = weight * np.where(stacked, STACKED_POSITIVE, np.where(hard, PICTURE_NEGATIVE, 1.0))
    return out


def sample(rng, photo: Photo):
    """One augmented training crop (Lab, CROP×CROP) and its per-cell stacked targets."""
    zoom = float(np.exp(rng.uniform(*np.log(ZOOM))))
    reach = CROP / zoom
    h, w = photo.image.shape[:2]
    centres = photo.centres
    if len(centres) and rng.random() < 0.75:
        odds = np.where((photo.kinds == FLAT) & (photo.pictures == ""), 1.0, SPECIAL_PICK)
        cx, cy = centres[rng.choice(len(centres), p=odds / odds.sum())] + rng.uniform(-reach / 3, reach / 3, 2)
    else:
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
    angle = float(rng.choice([0, 90, 180, 270]))
    m = cv2.getRotationMatrix2D((float(cx), float(cy)), angle, zoom)
    m[:, 2] += CROP / 2 - np.array([cx, cy])
    if rng.random() < 0.5:
        m[0] = -m[0]
        m[0, 2] += CROP - 1
    crop = cv2.warpAffine(photo.image, m, (CROP, CROP), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    moved = centres @ m[:, :2].T + m[:, 2] if len(centres) else centres
    if rng.random() < 0.5:
        crop = crop[..., rng.permutation(3)]
    crop = np.clip(crop.astype(np.float32) * rng.uniform(0.75, 1.25) + rng.uniform(-25, 25), 0, 255).astype(np.uint8)
    if rng.random() < 0.3:
        crop = cv2.GaussianBlur(crop, (0, 0), rng.uniform(0.3, 1.0))
    lab = cv2.cvtColor(crop, cv2.COLOR_BGR2LAB)
    return detect.net_input(lab)[0], targets(moved, photo.kinds, photo.pictures, CROP // detect.STRIDE)


FROZEN = [(16, 3, 3), (24, 16, 3), (32, 24, 3), (32, 32, 3), (32, 32, 3), (32, 32, 3),   # trunk
          (1, 32, 1),                                                                    # centre head
          (16, 32, 1), (16, 40, 3), (16, 16, 3),                                         # squeeze, 1/2 branch
          (32, 48, 3), (32, 32, 3), (3, 32, 1),                                          # side, (old) stacked, on-edge
          (1, 16, 1)]                                                                    # body
"""(outputs, inputs, kernel) of the frozen model's convolutions, in the exported graph's order."""


def frozen_weights(path: Path) -> list[tuple[np.ndarray, np.ndarray]]:
    """(weight, bias) of the frozen model's convolutions (batch-norm folded in), read from an
    exported model: its first convolutions in the graph, `FROZEN`'s shapes (the model shipped
    before the stacked branch, or one with it: the branch comes after them)."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    init = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    convs = [(init[n.input[1]], init[n.input[2]]) for n in graph.node if n.op_type == "Conv"][:len(FROZEN)]
    if [w.shape for w, _ in convs] != [(o, i, k, k) for o, i, k in FROZEN]:
        raise ValueError(f"{path}: its first convolutions are not the dice detector's (centres, sides, "
                         "on-edge, body) that the stacked branch is trained on")
    return convs


def build_net(frozen: list[tuple[np.ndarray, np.ndarray]]):
    """The shipped detector (trunk, centre, side and on-edge heads, body mask), frozen with the
    weights `frozen` (so every output the locator reads but `stacked` stays exactly as it
    was), plus what is learned here: the stacked head's own branch on the trunk's 1/4-size
    features and the body branch's, pooled, with a third, wider-reaching layer (dilation 4:
    about two dice around each cell) to compare a die with its neighbours."""
    import torch
    from torch import nn

    def conv(inputs: int, outputs: int, dilation: int = 1) -> list:
        return [nn.Conv2d(inputs, outputs, 3, padding=dilation, dilation=dilation, bias=False),
                nn.BatchNorm2d(outputs), nn.ReLU()]

    def fixed(inputs: int, outputs: int, kernel: int, stride: int = 1, dilation: int = 1):
        layer = nn.Conv2d(inputs, outputs, kernel, stride, padding=dilation * (kernel // 2), dilation=dilation)
        w, b = weights.pop(0)
        layer.weight.data, layer.bias.data = torch.from_numpy(w.copy()), torch.from_numpy(b.copy())
        return layer.requires_grad_(False)

    weights = list(frozen)

    class Detector(nn.Module):
        def __init__(self):
            super().__init__()
            relu = nn.ReLU
            self.halves = nn.Sequential(fixed(3, 16, 3, 2), relu(), fixed(16, 24, 3), relu())
            self.quarters = nn.Sequential(fixed(24, 32, 3, 2), relu(), fixed(32, 32, 3), relu(),
                                          fixed(32, 32, 3, dilation=2), relu(), fixed(32, 32, 3, dilation=4), relu())
            self.centre = fixed(32, 1, 1)
            self.squeeze = nn.Sequential(fixed(32, 16, 1), relu())
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.fine = nn.Sequential(fixed(24 + 16, 16, 3), relu(), fixed(16, 16, 3, dilation=2), relu())
            self.pool = nn.AvgPool2d(2)
            self.coarse = nn.Sequential(fixed(32 + 16, 32, 3), relu(), fixed(32, 32, 3, dilation=2), relu(),
                                        fixed(32, len(detect.HEADS) - 1, 1))
            self.body = fixed(16, 1, 1)
            self.stacked = nn.Sequential(*conv(32 + 16, 24), *conv(24, 24, 2), *conv(24, 24, 4), nn.Conv2d(24, 1, 1))

        def outputs(self, x):
            """Centre, side/stacked/on-edge (the shipped head's), body and stacked (the branch's) logits."""
            half = self.halves(x)
            quarter = self.quarters(half)
            centre = self.centre(quarter)
            fine = self.fine(torch.cat([half, self.up(self.squeeze(quarter))], 1))
            joined = torch.cat([quarter, self.pool(fine)], 1)
            others = self.coarse(joined)
            body = self.body(fine)
            return centre, others, body, self.stacked(joined)

        def forward(self, x):
            """As trained: the stacked branch alone."""
            centre, others, body, stacked = self.outputs(x)
            return torch.cat([centre, others[:, :1], stacked, others[:, 2:]], 1), body

        def shipped(self, x):
            """As exported: the stacked score from the mean of the branch's and the shipped
            head's logits (it took pictures for stacks, but tells pip dice better)."""
            centre, others, body, stacked = self.outputs(x)
            return torch.cat([centre, others[:, :1], (stacked + others[:, 1:2]) / 2, others[:, 2:]], 1), body

    net = Detector()
    assert not weights, "every frozen weight used"
    return net


def stacked_loss(heads, cells):
    """The stacked head's cross-entropy, weighted per cell (`targets`)."""
    from torch.nn.functional import binary_cross_entropy_with_logits as bce

    loss = bce(heads[:, 2], cells[:, 0], reduction="none")
    return (loss * cells[:, 1]).sum() / cells[:, 1].sum().clamp(min=1e-3)


def fit(photos: list[Photo], frozen, seed: int, steps: int, batch: int):
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    rng = np.random.default_rng(seed)
    net = build_net(frozen)

    def batch_loss():
        picks = rng.integers(len(photos), size=batch)
        xs, cells = zip(*(sample(rng, photos[i]) for i in picks))
        x, cells = torch.from_numpy(np.stack(xs)), torch.from_numpy(np.stack(cells))
        return stacked_loss(net(x)[0], cells)

    return train_steps(net, steps, batch_loss, "stacked")


def export_onnx(net, path: str) -> None:
    """The net as shipped (`shipped`) with its sigmoids, two outputs (per-cell heads, body
    mask), any input size."""
    import torch

    class Shipped(torch.nn.Module):
        def __init__(self, detector):
            super().__init__()
            self.detector = detector

        def forward(self, x):
            return self.detector.shipped(x)

    export_probabilities(Shipped(net), lambda outputs: tuple(torch.sigmoid(o) for o in outputs),
                         torch.zeros(1, 3, CROP, CROP), path, ("lab", "heads", "body"),
                         {"lab": {2: "h", 3: "w"}, "heads": {2: "h4", 3: "w4"}, "body": {2: "h2", 3: "w2"}})
    heads, body = detect.CentreModel(Path(path)).run(np.full((64, 96, 3), 128, np.uint8))
    assert heads.shape == (len(detect.HEADS), 16, 24) and body.shape == (32, 48), (heads.shape, body.shape)


def cut_centre_head(path: str) -> Path:
    """Write the model's trunk and centre head alone (its centre logits, before the sigmoid) as a
    model of their own beside it (`detect.head_path`): OpenCV runs a graph whole, and the
    locator's count over a whole photo needs only this part."""
    import onnx
    import onnx.utils

    model = onnx.load(path)
    centre = next(n for n in model.graph.node if n.name == "/inner/centre/Conv")
    out = detect.head_path(Path(path))
    onnx.utils.extract_model(path, str(out), [model.graph.input[0].name], [centre.output[0]])
    head = onnx.load(str(out))
    head.graph.node[-1].output[0] = head.graph.output[0].name = "centre"
    onnx.checker.check_model(head)
    onnx.save(head, str(out))
    whole, alone = detect.CentreModel(Path(path)), np.full((64, 96, 3), 128, np.uint8)
    assert np.allclose(whole.heatmap(alone), whole.run(alone)[0][0], rtol=0, atol=1e-5)
    return out


def training_photos(trays: int, specials: int, few: int, pictures: int) -> list[Photo]:
    photos = byler_photos(lambda name: not held_out(name))
    print(f"{len(photos)} byler train photos (as taken and phone-framed)", flush=True)
    photos += synth_photos(SYNTH_SEED, trays)
    photos += special_photos(SPECIAL_SEED, specials)
    photos += few_photos(FEW_SEED, few)
    photos += picture_photos(PICTURE_SEED, pictures)
    print(f"{len(photos)} photos with synthetic trays", flush=True)
    return photos


def cmd_train(args) -> None:
    frozen = frozen_weights(Path(args.frozen))
    photos = training_photos(args.trays, args.specials, args.few, args.pictures)
    net = fit(photos, frozen, args.seed, args.steps, args.batch)
    export_onnx(net, args.out)
    print(f"wrote {args.out} ({Path(args.out).stat().st_size // 1024} kB)")
    cmd_head(argparse.Namespace(model=args.out))


def cmd_head(args) -> None:
    out = cut_centre_head(args.model)
    print(f"wrote {out} ({out.stat().st_size // 1024} kB)")


def match(found: np.ndarray, truth: np.ndarray, reach: float) -> list[tuple[int, int]]:
    """(truth index, found index) for truth centres with a found centre within `reach`, each
    found centre used once."""
    used, pairs = set(), []
    for i, t in enumerate(truth):
        if len(found) == 0:
            break
        d = np.hypot(*(found - t).T)
        d[list(used)] = np.inf
        j = int(np.argmin(d))
        if d[j] < reach:
            used.add(j)
            pairs.append((i, j))
    return pairs


def flag_trays(first: int, count: int, **specials) -> list[Photo]:
    """Fresh 6-dice trays with the given special dice (stacked=1, edge=1), half seen from below."""
    return [tray_photo(f"flag{seed}", *synth.render_tray(seed, 6, view=("above", "below")[seed % 2], **specials))
            for seed in range(first, first + count)]


def picture_flag_trays(first: int, count: int) -> list[Photo]:
    """Fresh 6-dice trays of picture-faced sets (paco, skull, emblem in turn), one stacked pair
    each, about half the dice showing their picture, half seen from below."""
    out = []
    for seed in range(first, first + count):
        rng = np.random.default_rng(seed)
        kind, view = ("paco", "skull", "emblem")[seed % 3], ("above", "below")[seed % 2]
        out.append(tray_photo(f"flag{seed}", *synth.render_tray(
            seed, 6, view=view, stacked=1, picture_faces=kind, faces=picture_faces(rng, 6, kind, view))))
    return out


def calibrated_trays(seed: int, n_dice: int, tables: int) -> list[Photo]:
    """The benchmark's calibrated boxed-set trays (`companion bench vision`'s, paco on the ace),
    with their truth, seen at the scale each table's calibration gives (the calibration's die
    size, not these dice's): where the stacked head's whole-photo run once took pacos for stacks."""
    from companion.bench_vision import _calibrated_items

    return [tray_photo(f"calibrated{i}", image, synth.TrayTruth(truth, {"view": view}), source["calibration_object"])
            for i, (source, image, truth, view) in enumerate(_calibrated_items(seed, n_dice, tables))
            if "calibration_object" in source]


FACE_KINDS = {"": "pips", "paco": "paco"}   # any other picture: "other pictures"


def stacked_scores(photos: list[Photo], model) -> list[tuple[str, str, str, float]]:
    """(role, face kind, view, stacked score at its peak) for every stacked pair (role "pair":
    the best peak on either die; its face kind is the face the camera sees, the upper die's from
    above, the lower's from below) and every flat die ("flat") matched to a peak; dice without
    a peak score 0."""
    out = []
    for photo in photos:
        seen = detect.detect_dice(cv2.cvtColor(photo.image, cv2.COLOR_BGR2LAB), detect.SIDE, model)
        score = dict(match(seen.centres, photo.centres, 0.4 * detect.SIDE))
        kinds = [FACE_KINDS.get(p, "other pictures") for p in photo.pictures]
        for i, kind in enumerate(photo.kinds):
            if kind == FLAT and i in score:
                out.append(("flat", kinds[i], photo.view, float(seen.stacked[score[i]])))
            elif kind == UPPER:
                values = [float(seen.stacked[score[t]]) for t in (i - 1, i) if t in score]
                shown = kinds[i] if photo.view == "above" else kinds[i - 1]
                out.append(("pair", shown, photo.view, max(values, default=0.0)))
    return out


def print_stacked_table(title: str, scores, threshold: float) -> None:
    """Stacked pairs caught and flat dice falsely flagged at `threshold`, by face kind and view."""
    print(f"{title}: stacked >= {threshold}, by face kind and view")
    for kind in ("pips", "paco", "other pictures"):
        for view in ("above", "below"):
            pairs = [v for r, k, w, v in scores if r == "pair" and k == kind and w == view]
            flat = [v for r, k, w, v in scores if r == "flat" and k == kind and w == view]
            if pairs or flat:
                caught = f"{sum(v >= threshold for v in pairs)}/{len(pairs)}" if pairs else "-"
                alarms = f"{sum(v >= threshold for v in flat)}/{len(flat)}" if flat else "-"
                print(f"  {kind:>14} {view:>5}: pairs caught {caught:>7}, false alarms {alarms:>8}")


def cmd_evaluate(args) -> None:
    """Each head's figures on held-out photos: byler TRAIN split's fifth, fresh synthetic trays,
    fresh trays with a stacked pair or a die on its edge."""
    sets = {"byler train held out": byler_photos(held_out),
            "synthetic (fresh seeds)": synth_photos(SYNTH_SEED + 100_000, args.trays),
            "one stacked pair in 6 (fresh)": flag_trays(SYNTH_SEED + 200_000, args.trays, stacked=1),
            "one die on its edge in 6 (fresh)": flag_trays(SYNTH_SEED + 300_000, args.trays, edge=1)}
    model = detect.CentreModel(Path(args.model))
    for title, photos in sets.items():
        truths = found = 0
        hits, side_errors, flags, flat, specials, inter, union, body_hits, body_truth, body_said = [], [], [], [], [], 0, 0, 0, 0, 0
        for photo in photos:
            lab = cv2.cvtColor(photo.image, cv2.COLOR_BGR2LAB)
            seen = detect.detect_dice(lab, detect.SIDE, model)
            pairs = match(seen.centres, photo.centres, 0.4 * detect.SIDE)
            truths += len(photo.centres)
            found += len(seen.centres)
            hits += pairs
            side_errors += [seen.sides[j] / photo.sides[i] - 1 for i, j in pairs]
            flat += [(seen.stacked[j], seen.on_edge[j]) for i, j in pairs if photo.kinds[i] == FLAT]
            for kind in (UPPER, EDGE):
                # a special die is caught when a peak on it (or on the die under it) is flagged
                for i in np.flatnonzero(photo.kinds == kind):
                    group = {i, i - 1} if kind == UPPER else {i}
                    values = [(seen.stacked if kind == UPPER else seen.on_edge)[j] for t, j in pairs if t in group]
                    specials.append((kind, max(values, default=0.0)))
            known = photo.known > 127
            said, truth = seen.body >= 0.5, photo.body > 127
            inter += int((said & truth & known).sum())
            union += int(((said | truth) & known).sum())
            body_said += int((said & known).sum())
            body_truth += int((truth & known).sum())
        side_errors = np.abs(np.array(side_errors))
        print(f"{title}: {len(photos)} photos, {truths} dice")
        print(f"  centres (score {detect.PEAK_SCORE}): recall {100 * len(hits) / max(truths, 1):.2f} %, "
              f"precision {100 * len(hits) / max(found, 1):.2f} %")
        if len(side_errors):
            print(f"  side: median error {100 * np.median(side_errors):.1f} %, 90th percentile "
                  f"{100 * np.percentile(side_errors, 90):.1f} %, within 10 % {100 * np.mean(side_errors <= 0.1):.1f} %")
        print(f"  body mask >= 0.5 where known: IoU {100 * inter / max(union, 1):.1f} %, "
              f"precision {100 * inter / max(body_said, 1):.1f} %, recall {100 * inter / max(body_truth, 1):.1f} %")
        flat = np.array(flat).reshape(-1, 2)
        for kind, name, column in ((UPPER, "stacked (pairs)", 0), (EDGE, "on-edge", 1)):
            caught = np.array([v for k, v in specials if k == kind])
            for t in args.flag_scores:
                line = f"  {name} >= {t}: false alarms on flat dice {100 * np.mean(flat[:, column] >= t):.2f} % of {len(flat)}"
                if len(caught):
                    line += f"; caught {np.sum(caught >= t)} of {len(caught)} ({100 * np.mean(caught >= t):.1f} %)"
                print(line)
    flagged = {"one stacked pair in 6 (fresh), pips and picture sets":
               sets["one stacked pair in 6 (fresh)"] + picture_flag_trays(SYNTH_SEED + 400_000, 3 * args.trays),
               "the benchmark's calibrated boxed-set trays (seed 2024, 500 dice, whole photos)":
               calibrated_trays(2024, 500, 6)}
    for title, photos in flagged.items():
        scores = stacked_scores(photos, model)
        for threshold in args.flag_scores:
            print_stacked_table(title, scores, threshold)
    crop = cv2.cvtColor(sets["byler train held out"][0].image[:4 * detect.SIDE, :4 * detect.SIDE], cv2.COLOR_BGR2LAB)
    times = []
    for _ in range(200):
        start = time.perf_counter()
        detect.detect_dice(crop, detect.SIDE, model)
        times.append(time.perf_counter() - start)
    print(f"speed: {1000 * np.median(times):.2f} ms median per {crop.shape[1]}x{crop.shape[0]} crop (a cluster of about "
          f"4x4 dice), on this machine")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train")
    train.add_argument("--seed", type=int, default=7)
    train.add_argument("--steps", type=int, default=8000)
    train.add_argument("--batch", type=int, default=32)
    train.add_argument("--trays", type=int, default=300, help="vision.synth trays to learn from")
    train.add_argument("--specials", type=int, default=500, help="trays with stacked and edge dice to learn from")
    train.add_argument("--few", type=int, default=200, help="trays of a few flat dice to learn from")
    train.add_argument("--pictures", type=int, default=400, help="trays of picture-faced dice to learn from")
    train.add_argument("--out", default=str(detect.MODEL_PATH))
    train.add_argument("--frozen", default=str(detect.MODEL_PATH),
                       help="model whose layers but the stacked branch are kept, frozen (the shipped one)")
    head = sub.add_parser("head", help="only cut the trunk and centre head from a model (needs onnx, not torch)")
    head.add_argument("--model", default=str(detect.MODEL_PATH))
    evaluate = sub.add_parser("evaluate")
    evaluate.add_argument("--trays", type=int, default=60, help="fresh synthetic trays to check on")
    evaluate.add_argument("--model", default=str(detect.MODEL_PATH))
    evaluate.add_argument("--flag-scores", type=float, nargs="+", default=[0.3, detect.STACKED_SCORE, 0.7])
    args = parser.parse_args(argv)
    {"train": cmd_train, "head": cmd_head, "evaluate": cmd_evaluate}[args.command](args)


if __name__ == "__main__":
    main()
