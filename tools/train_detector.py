"""Train (and evaluate) the dice-centre heatmap net shipped in models/dice_centres.onnx.

Optional extra, not needed at runtime (`vision.detect` runs the exported model with OpenCV's dnn
module). Training needs torch and onnx, kept out of the project's dependencies:

    python3 -m venv /tmp/trainvenv
    /tmp/trainvenv/bin/pip install torch onnx numpy opencv-python-headless
    nice /tmp/trainvenv/bin/python tools/train_detector.py train     # writes models/dice_centres.onnx
    nice .venv/bin/python tools/train_detector.py evaluate           # held-out figures for the model card

Training data (seeded; the defaults reproduce the shipped model):
* the byler-d6 photos of the author's TRAIN split only (`../shared/data/byler-d6/`), less every
  fifth photo (`train_faces.held_out`, kept to check thresholds), each also framed as a phone
  photo (`vision.synth.phone_framed`); a die's centre is its loose truth box's centre;
* `vision.synth.render_tray` trays (exact centres): plain and hard, touching clusters, stacked
  pairs, both views, Pi-camera and phone sizes.
Each photo is shrunk the way `vision.locate` does it and scaled so that the locator's usual die
side (`locate._survey`) becomes `detect.SIDE` pixels, exactly as at runtime. The net sees random
crops, turned, mirrored, rescaled a little, with colour channels swapped, and learns a Gaussian
bump (CenterNet's focal loss) at every die's centre, on a grid of `detect.STRIDE` pixels.
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
from train_faces import BYLER, byler_records, export_probabilities, held_out  # noqa: E402
from vision import detect, locate, synth  # noqa: E402

CROP = 80            # training crop side, net input pixels (about five dice)
SIGMA = 1.0          # Gaussian bump's sigma, heatmap cells
SYNTH_SEED = 9_000_000   # first synthetic tray seed (far from the benchmark's and the tests')


def scaled_photo(image: np.ndarray, centres: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(BGR photo scaled so the locator's usual die is detect.SIDE px, centres in its pixels), as
    `vision.locate` + `vision.detect` see it at runtime; None when the locator finds no dice."""
    view, _, _, expected = locate._survey(image)
    f = detect.SIDE / expected
    small = cv2.resize(view.small, None, fx=f, fy=f, interpolation=cv2.INTER_AREA if f < 1 else cv2.INTER_LINEAR)
    work = (np.asarray(centres, np.float32) + 0.5) * view.scale - 0.5
    return small, (work + 0.5) * f - 0.5


def byler_photos(names_ok) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, scaled photo, centres) for byler-d6 TRAIN photos whose names pass `names_ok`, each
    as taken and framed as a phone photo."""
    out = []
    for record in byler_records("train"):
        name = Path(record["image"]).name
        if not names_ok(name):
            continue
        image = cv2.imread(str(BYLER / record["image"]))
        centres = np.array([d["center"] for d in real_truth(record)], np.float32).reshape(-1, 2)
        out.append((name, *scaled_photo(image, centres)))
        big, scale, pad = synth.phone_framed(image)
        out.append((name + "@phone", *scaled_photo(big, centres * scale + [pad, 0])))
    return out


def synth_photos(first: int, count: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, scaled photo, centres) for seeded synthetic trays of many kinds."""
    out = []
    for seed in range(first, first + count):
        rng = np.random.default_rng(seed)
        kind = seed % 4
        args = {"seed": seed, "n_dice": int(rng.integers(6, 31)), "view": ("above", "below")[seed % 3 == 2],
                "hard": kind != 0, "clusters": (None, 0.6, 0.9, 0.9)[kind],
                "stacked": int(rng.integers(0, 3)) if kind == 3 else 0}
        if seed % 5 == 4:
            args["size"] = synth.PHONE
        image, truth = synth.render_tray(**args)
        centres = np.array([d["center"] for d in truth], np.float32).reshape(-1, 2)
        out.append((f"synth{seed}", *scaled_photo(image, centres)))
    return out


def target(centres: np.ndarray, cells: int) -> np.ndarray:
    """Heatmap target: a Gaussian bump at each centre, 1 at its nearest cell."""
    heat = np.zeros((cells, cells), np.float32)
    ys, xs = np.mgrid[0:cells, 0:cells]
    for x, y in (centres + 0.5) / detect.STRIDE - 0.5:
        if -1 <= x <= cells and -1 <= y <= cells:
            heat = np.maximum(heat, np.exp(-((xs - x) ** 2 + (ys - y) ** 2) / (2 * SIGMA ** 2)))
            ix, iy = int(round(x)), int(round(y))
            if 0 <= ix < cells and 0 <= iy < cells:
                heat[iy, ix] = 1.0
    return heat


def sample(rng, photo: np.ndarray, centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One augmented training crop (Lab, CROP×CROP) and its heatmap target."""
    zoom = float(np.exp(rng.uniform(np.log(0.85), np.log(1.18))))
    reach = CROP / zoom
    h, w = photo.shape[:2]
    if len(centres) and rng.random() < 0.75:
        cx, cy = centres[rng.integers(len(centres))] + rng.uniform(-reach / 3, reach / 3, 2)
    else:
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
    angle = float(rng.choice([0, 90, 180, 270]))
    m = cv2.getRotationMatrix2D((float(cx), float(cy)), angle, zoom)
    m[:, 2] += CROP / 2 - np.array([cx, cy])
    if rng.random() < 0.5:
        m[0] = -m[0]
        m[0, 2] += CROP - 1
    crop = cv2.warpAffine(photo, m, (CROP, CROP), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    moved = centres @ m[:, :2].T + m[:, 2] if len(centres) else centres
    if rng.random() < 0.5:
        crop = crop[..., rng.permutation(3)]
    crop = np.clip(crop.astype(np.float32) * rng.uniform(0.75, 1.25) + rng.uniform(-25, 25), 0, 255).astype(np.uint8)
    if rng.random() < 0.3:
        crop = cv2.GaussianBlur(crop, (0, 0), rng.uniform(0.3, 1.0))
    lab = cv2.cvtColor(crop, cv2.COLOR_BGR2LAB)
    return detect.net_input(lab)[0], target(moved, CROP // detect.STRIDE)


def build_net():
    from torch import nn

    def conv(inputs: int, outputs: int, stride: int = 1, dilation: int = 1) -> list:
        return [nn.Conv2d(inputs, outputs, 3, stride, padding=dilation, dilation=dilation, bias=False),
                nn.BatchNorm2d(outputs), nn.ReLU()]

    return nn.Sequential(*conv(3, 16, 2), *conv(16, 24), *conv(24, 32, 2),
                         *conv(32, 32), *conv(32, 32, dilation=2), *conv(32, 32, dilation=4),
                         nn.Conv2d(32, 1, 1))


def focal_loss(logits, target):
    """CenterNet's penalty-reduced focal loss over a Gaussian-bump target."""
    import torch

    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = target.eq(1).float()
    pos_loss = -(torch.log(p) * (1 - p) ** 2 * pos).sum()
    neg_loss = -(torch.log(1 - p) * p ** 2 * (1 - target) ** 4 * (1 - pos)).sum()
    return (pos_loss + neg_loss) / pos.sum().clamp(min=1)


def fit(photos, seed: int, steps: int, batch: int):
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    rng = np.random.default_rng(seed)
    net = build_net()
    with torch.no_grad():
        net[-1].bias.fill_(-2.2)   # start near the share of cells that are centres
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=4e-3, total_steps=steps)
    running, start = 0.0, time.time()
    for step in range(steps):
        picks = rng.integers(len(photos), size=batch)
        xs, ys = zip(*(sample(rng, photos[i][1], photos[i][2]) for i in picks))
        x, y = torch.from_numpy(np.stack(xs)), torch.from_numpy(np.stack(ys))[:, None]
        net.train()
        loss = focal_loss(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        running = 0.98 * running + 0.02 * float(loss.detach()) if step else float(loss.detach())
        if step % 200 == 0 or step == steps - 1:
            print(f"step {step}/{steps} loss {running:.3f} ({time.time() - start:.0f} s)", flush=True)
    return net.eval()


def export_onnx(net, path: str) -> None:
    import torch

    export_probabilities(net, torch.sigmoid, torch.zeros(1, 3, CROP, CROP), path, ("lab", "centres"),
                         {"lab": {2: "h", 3: "w"}, "centres": {2: "h4", 3: "w4"}})
    check = detect.CentreModel(Path(path)).heatmap(np.full((64, 96, 3), 128, np.uint8))
    assert check.shape == (16, 24), check.shape


def training_photos(trays: int):
    photos = byler_photos(lambda name: not held_out(name))
    print(f"{len(photos)} byler train photos (as taken and phone-framed)", flush=True)
    photos += synth_photos(SYNTH_SEED, trays)
    print(f"{len(photos)} photos with synthetic trays", flush=True)
    return photos


def cmd_train(args) -> None:
    photos = training_photos(args.trays)
    net = fit(photos, args.seed, args.steps, args.batch)
    export_onnx(net, args.out)
    print(f"wrote {args.out} ({Path(args.out).stat().st_size // 1024} kB)")


def match(found: np.ndarray, truth: np.ndarray, reach: float) -> int:
    """Truth centres with a found centre within `reach` (each found centre used once)."""
    used, hits = set(), 0
    for t in truth:
        if len(found) == 0:
            break
        d = np.hypot(*(found - t).T)
        d[list(used)] = np.inf
        j = int(np.argmin(d))
        if d[j] < reach:
            used.add(j)
            hits += 1
    return hits


def cmd_evaluate(args) -> None:
    """Centre recall and precision on held-out photos (byler TRAIN split's fifth, fresh synthetic trays)."""
    sets = {"byler train held out": byler_photos(held_out),
            "synthetic (fresh seeds)": synth_photos(SYNTH_SEED + 100_000, args.trays)}
    for title, photos in sets.items():
        for score in args.scores:
            truths = found = hits = 0
            for _, photo, centres in photos:
                lab = cv2.cvtColor(photo, cv2.COLOR_BGR2LAB)
                got, _ = detect.die_centres(lab, detect.SIDE, min_score=score)
                truths += len(centres)
                found += len(got)
                hits += match(got, centres, 0.4 * detect.SIDE)
            print(f"{title}: score {score}: {truths} dice, recall {100 * hits / max(truths, 1):.2f} %, "
                  f"precision {100 * hits / max(found, 1):.2f} %")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train")
    train.add_argument("--seed", type=int, default=7)
    train.add_argument("--steps", type=int, default=3000)
    train.add_argument("--batch", type=int, default=32)
    train.add_argument("--trays", type=int, default=300, help="vision.synth trays to learn from")
    train.add_argument("--out", default=str(detect.MODEL_PATH))
    evaluate = sub.add_parser("evaluate")
    evaluate.add_argument("--trays", type=int, default=60, help="fresh synthetic trays to check on")
    evaluate.add_argument("--scores", type=float, nargs="+", default=[detect.PEAK_SCORE])
    args = parser.parse_args(argv)
    {"train": cmd_train, "evaluate": cmd_evaluate}[args.command](args)


if __name__ == "__main__":
    main()
