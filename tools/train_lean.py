"""Train the close-look classifier shipped in models/lean_cnn.onnx (`vision.lean`: flat, leaning or
stacked), and evaluate it.

Optional extra, not needed at runtime (`vision.lean` runs the exported model with OpenCV's dnn
module). Training needs torch and onnx, kept out of the project's dependencies:

    python3 -m venv /tmp/trainvenv
    /tmp/trainvenv/bin/pip install torch==2.13.0 onnx numpy opencv-python-headless
    nice /tmp/trainvenv/bin/python tools/train_lean.py train      # writes models/lean_cnn.onnx
    nice .venv/bin/python tools/train_lean.py evaluate            # held-out figures for the model card

Training data (seeded; the defaults reproduce the shipped model), each die cut out as
`vision.lean.lean_crop` cuts it at runtime, the usual die's side as `vision.locate` measures it:
* `vision.synth.render_tray` trays (exact truth): 4-30 dice, plain and hard, lone or touching,
  0-3 of them leaning or on an edge (22-45 degrees), a stacked pair in four of five (each die
  of it cut at its own centre and at the pair's middle, where the locator may see one die), from
  above and below, Pi-camera and phone sizes, a quarter of them picture-faced sets (the boxed
  set's paco on the ace, a skull, an emblem on the 6);
* the byler-d6 photos of the author's TRAIN split (`../shared/data/byler-d6/`), less every fifth
  photo (`train_faces.held_out`), as taken and framed as a phone photo: every die lies flat.
Each die is cut twice, its centre moved by up to JITTER of its side and its scale by up to ZOOM
(the locator's centre and usual side are that rough: its centre lies a median 0.2 of the side
from a leaning or stacked die's, 0.07 from a flat one's, on the bench's hard set); the net sees
them mirrored across the outward line, with colour channels swapped, exposure and blur varied,
and each with its die's reach from the photo's centre (`vision.lean.outward_reach`).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tools"))

from companion.bench_vision import real_truth  # noqa: E402
from train_faces import BYLER, byler_records, export_probabilities, held_out, train_steps  # noqa: E402
from vision import lean, locate, synth  # noqa: E402
from vision.lean import FLAT, LEANING, ON_ANOTHER  # noqa: E402

TRAY_SEED = 9_900_000      # first synthetic tray seed (far from the benchmark's and the tests')
CHECK_SEED = 9_950_000     # first synthetic tray seed kept for checking
JITTER = 0.2               # a crop's centre moved by up to this share of the usual die's side...
ZOOM = (0.87, 1.15)        # ...and its scale by up to this much
CUTS = 2                   # crops per die
STACKED_TRAYS = 0.8        # share of trays with a stacked pair
PICTURES = ("paco", "skull", "emblem")   # picture-faced sets of every fourth tray, in turn


def usual_side(image: np.ndarray) -> float:
    """The usual die's side in photo pixels, as the locator measures it."""
    view, _, _, expected = locate._survey(image)
    return expected / view.scale


def crops_of(rng, image: np.ndarray, centres) -> tuple[np.ndarray, np.ndarray]:
    """CUTS jittered `lean.lean_crop`s of every die at `centres`, and each die's `lean.outward_reach`."""
    side = usual_side(image)
    out = []
    for c in centres:
        for _ in range(CUTS):
            shift = rng.uniform(-JITTER, JITTER, 2) * side
            out.append(lean.lean_crop(image, np.asarray(c) + shift, side * rng.uniform(*ZOOM)))
    reaches = np.repeat([lean.outward_reach(image.shape, c) for c in centres], CUTS).astype(np.float32)
    return np.array(out, np.uint8).reshape(-1, lean.CROP, lean.CROP, 3), reaches


def tray_arguments(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    n_dice = int(rng.integers(4, 31))
    args = {"seed": seed, "n_dice": n_dice, "view": ("above", "below")[seed % 3 == 2], "hard": seed % 2 == 0,
            "clusters": float(rng.choice([0.1, 0.5, 0.9])), "edge": int(rng.integers(0, min(3, n_dice - 2) + 1)),
            "stacked": int(rng.random() < STACKED_TRAYS)}
    if seed % 5 == 4:
        args["size"] = synth.PHONE
    if seed % 4 == 1:
        args["picture_faces"] = PICTURES[(seed // 4) % len(PICTURES)]
    return args


def tray_crops(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(crops, reaches, labels: FLAT, LEANING or ON_ANOTHER) of one synthetic tray's dice on the floor,
    and of each stacked pair's middle."""
    try:
        image, truth = synth.render_tray(**tray_arguments(seed))
    except ValueError:
        return np.zeros((0, lean.CROP, lean.CROP, 3), np.uint8), np.zeros(0, np.float32), np.zeros(0, np.int64)
    dice = [d for d in truth if not {"cut", "outside"} & set(d["flags"])]
    centres = [d["center"] for d in dice]
    labels = [ON_ANOTHER if "stacked" in d["flags"] else LEANING if "edge" in d["flags"] else FLAT for d in dice]
    stacked = [d["center"] for d in dice if "stacked" in d["flags"]]
    for lower, upper in zip(stacked[::2], stacked[1::2]):      # synth gives each pair lower, upper
        centres.append((np.asarray(lower) + upper) / 2)
        labels.append(ON_ANOTHER)
    return (*crops_of(np.random.default_rng(seed), image, centres), np.repeat(labels, CUTS).astype(np.int64))


def byler_crops(names_ok) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(crops, reaches, labels: all FLAT) of the byler TRAIN photos' dice whose names pass
    `names_ok`, as taken and framed as a phone photo."""
    crops = []
    rng = np.random.default_rng(0)
    for record in byler_records("train"):
        if not names_ok(Path(record["image"]).name):
            continue
        image = cv2.imread(str(BYLER / record["image"]))
        centres = np.array([d["center"] for d in real_truth(record)], np.float32).reshape(-1, 2)
        big, scale, pad = synth.phone_framed(image)
        crops.append(crops_of(rng, image, centres))
        crops.append(crops_of(rng, big, centres * scale + np.float32([pad, 0])))
    reaches = np.concatenate([r for _, r in crops])
    return np.concatenate([c for c, _ in crops]), reaches, np.full(len(reaches), FLAT, np.int64)


def dataset(first: int, trays: int, byler_ok=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Crops, reaches and labels of `trays` synthetic trays from seed `first`, and of the byler photos
    whose names pass `byler_ok` (none without it)."""
    from multiprocessing import Pool

    with Pool(2) as pool:
        parts = pool.map(tray_crops, range(first, first + trays), chunksize=8)
    if byler_ok is not None:
        parts.append(byler_crops(byler_ok))
    return tuple(np.concatenate(column) for column in zip(*parts))


def build_net():
    import torch
    from torch import nn

    def stage(inputs: int, outputs: int, stride: int = 1) -> list:
        return [nn.Conv2d(inputs, outputs, 3, stride, padding=1, bias=False), nn.BatchNorm2d(outputs), nn.ReLU()]

    return nn.Sequential(*stage(4, 24, 2), *stage(24, 32), nn.MaxPool2d(2), *stage(32, 64), nn.MaxPool2d(2),
                         *stage(64, 96), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(96, 3))


def augment(rng, crops: np.ndarray, reaches: np.ndarray) -> np.ndarray:
    out = []
    for crop in crops:
        if rng.random() < 0.5:
            crop = crop[::-1]          # mirrored across the outward line: a lens shows the same
        if rng.random() < 0.5:
            crop = crop[..., rng.permutation(3)]
        crop = np.clip(crop.astype(np.float32) * rng.uniform(0.75, 1.25) + rng.uniform(-25, 25), 0, 255).astype(np.uint8)
        if rng.random() < 0.3:
            crop = cv2.GaussianBlur(crop, (0, 0), rng.uniform(0.3, 1.2))
        out.append(crop)
    return lean.net_input(np.array(out), reaches)


def fit(crops, reaches, labels, seed: int, steps: int, batch: int):
    import torch
    from torch.nn.functional import cross_entropy

    torch.manual_seed(seed)
    torch.set_num_threads(2)
    rng = np.random.default_rng(seed)
    net = build_net()
    flat, leaning, stacked = (np.flatnonzero(labels == label) for label in (FLAT, LEANING, ON_ANOTHER))

    def batch_loss():
        # a third of each batch leans and a quarter is stacked: both are rare on a tray
        picks = np.concatenate([rng.choice(leaning, batch // 3), rng.choice(stacked, batch // 4),
                                rng.choice(flat, batch - batch // 3 - batch // 4)])
        x = torch.from_numpy(augment(rng, crops[picks], reaches[picks]))
        return cross_entropy(net(x), torch.from_numpy(labels[picks]))

    return train_steps(net, steps, batch_loss, "loss")


def cmd_train(args) -> None:
    crops, reaches, labels = dataset(TRAY_SEED, args.trays, lambda name: not held_out(name))
    print(f"{len(crops)} crops, {np.sum(labels == LEANING)} leaning, {np.sum(labels == ON_ANOTHER)} stacked", flush=True)
    net = fit(crops, reaches, labels, args.seed, args.steps, args.batch)
    import torch

    export_probabilities(net, lambda t: torch.softmax(t, 1), torch.zeros(1, 4, lean.CROP, lean.CROP), args.out,
                         ("crop", "chances"), {"crop": {0: "n"}, "chances": {0: "n"}})
    print(f"wrote {args.out} ({Path(args.out).stat().st_size // 1024} kB)")


def caught(chances: np.ndarray, under: float, kind: int, other: int) -> str:
    """'N % (named right M %)': the share of these dice given under `under` of lying flat, and
    the share of those the net finds likelier `kind` than `other` (the flag they get)."""
    flagged = chances[chances[:, FLAT] < under]
    named = 100 * np.mean(flagged[:, kind] > flagged[:, other]) if len(flagged) else 0.0
    return f"{100 * len(flagged) / len(chances):.1f} % (named right {named:.0f} %)"


def cmd_evaluate(args) -> None:
    model = lean.LeanModel(Path(args.model))
    with_trays = dataset(CHECK_SEED, args.trays)
    sets = {f"{args.trays} fresh synthetic trays": with_trays,
            "byler train, every fifth photo (not trained on), as taken and phone-framed": byler_crops(held_out)}
    for title, (crops, reaches, labels) in sets.items():
        chances = np.concatenate([model.chances(crops[i:i + 256], reaches[i:i + 256]) for i in range(0, len(crops), 256)])
        flat, leaning, stacked = (chances[labels == label] for label in (FLAT, LEANING, ON_ANOTHER))
        print(f"{title}: {len(flat) // CUTS} flat dice, {len(leaning) // CUTS} leaning, {len(stacked) // CUTS} "
              f"stacked (with the pairs' middles; each cut {CUTS} times)")
        for t in args.scores:
            line = f"  flat under {t}: flat dice flagged {100 * np.mean(flat[:, FLAT] < t):.2f} %"
            if len(leaning):
                line += (f"; leaning dice caught {caught(leaning, t, LEANING, ON_ANOTHER)},"
                         f" stacked dice {caught(stacked, t, ON_ANOTHER, LEANING)}")
            print(line)
    crops, reaches = with_trays[0][:30], with_trays[1][:30]
    times = []
    for _ in range(50):
        start = time.perf_counter()
        model.chances(crops, reaches)
        times.append(time.perf_counter() - start)
    print(f"speed: {1000 * np.median(times):.2f} ms median for 30 dice, on this machine")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train")
    train.add_argument("--seed", type=int, default=7)
    train.add_argument("--steps", type=int, default=14000)
    train.add_argument("--batch", type=int, default=96)
    train.add_argument("--trays", type=int, default=1600, help="vision.synth trays to learn from")
    train.add_argument("--out", default=str(lean.MODEL_PATH))
    evaluate = sub.add_parser("evaluate")
    evaluate.add_argument("--trays", type=int, default=150, help="fresh synthetic trays to check on")
    evaluate.add_argument("--model", default=str(lean.MODEL_PATH))
    evaluate.add_argument("--scores", type=float, nargs="+", default=[0.5, 0.2, 0.1, 0.05, 0.02],
                          help="chances of lying flat under which a die is flagged")
    args = parser.parse_args(argv)
    {"train": cmd_train, "evaluate": cmd_evaluate}[args.command](args)


if __name__ == "__main__":
    main()
