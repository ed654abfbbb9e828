"""How well and how fast the dice reader reads: `companion bench vision`.

Sets (each printed as one row of a Markdown table):
  synthetic plain     seeded `vision.synth` trays, even light, 4-30 dice, one photo in three
                      seen from below
  synthetic hard      bar light, glare, blur, noise, strong JPEG, touching clusters, varied
                      sizes, translucent and marbled dice, phone-sized photos, and dice on edge,
                      stacked, cut by the frame or outside the tray
  synthetic crowded   9 dice per tray, nearly all in touching clusters (as players leave them
                      after a reveal), every other tray hard, one in three seen from below
  synthetic far       phone photos taken from standing height: dice 40-80 px in a 4032×3024
                      frame, every other tray hard, one in three seen from below
  synthetic close     phone photos taken close over a few dice: 3-8 dice 200-300 px across in a
                      4032×3024 frame, their sides in view, every other tray hard, one in three
                      seen from below
  synthetic pictures  sets with a paco, skull or emblem face that the reader was not taught:
                      those faces must be flagged, never counted
  synthetic calibrated  boxed-set tables (paco on the ace), each calibrated first the way
                      `companion calibrate` does (empty tray, then dice showing the paco): the
                      taught paco must now be read
  <name> test split / <name> all
                      every real set found as DATA/*/truth.jsonl (default ../shared/data); the
                      author's test split when the set has author_split.txt (`--split train`:
                      its train split, here and in every row below, to choose a rule on)
  <name> test split at phone size
                      the same photos scaled up to 3024 px high and widened with the board's
                      colour to a phone's 4032×3024 frame (JPEG again): the same dice, each
                      about five times larger, as a phone photo of a table shows them
  <name> test split with sensor grain
                      the same photos with seeded noise of deviation 3 in each colour channel,
                      as a small sensor at high ISO (a dim bar) shows them
  <name> test split spoiled: ...   (set `spoiled`)
                      the same photos as other cameras and rooms spoil them: blurred (out of
                      focus, 1.6 px), JPEG quality 50, dark and grainy (a dim room at a fixed
                      exposure, the shadows darkest), underexposed (a camera at its exposure
                      limit: 0.45 times the light in proportion, grainy), under warm light (a
                      tungsten bulb, white balance left as is) and under cool light (a cold LED
                      strip); last, dark and grainy once the photo is turned 30° and taken
                      1.2 times nearer (a dim room, another framing: black dice lose their pips)
  <name> test split turned 25°, ...   (set `reframed`)
                      the same photos as other cameras frame them and other dice colour them:
                      turned 25° and 90°, at 0.75 size, from a tilted camera, red and blue
                      swapped (`vision.synth.REFRAMINGS`); the truth moves with the photo

Scoring. Read dice are matched to truth dice by centre-in-box (the read centre inside the
truth box; nearest first, one to one). A truth die is read right when it is counted with the
right top face; a die the truth marks edge/stacked/cut is right when the reader flags it; a die
outside the tray is right when it is not counted; an untaught picture face is right when it is
read right or flagged. A photo is exact when all its dice are right and nothing else was found.
`ok & wrong` counts photos the reader called `ok` whose counts differ from the truth (or that
hold a die that must be re-rolled): the one error that must never happen.
Speed: median and 95th-percentile milliseconds of `read_tray` per 1640×1232 photo with 6, 15
and 30 dice, one process.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

HELP = "dice reader: accuracy on synthetic and real photo sets, and speed"
REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data"
SETS = ("plain", "hard", "crowded", "far", "close", "pictures", "calibrated", "real", "spoiled", "reframed", "speed")
SPEED_DICE = (6, 15, 30)
GRAIN = 3.0          # noise deviation (per colour channel) of the real test photos "with sensor grain"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true",
                        help="small sets (about 300 synthetic dice each, real sets' author splits only, 5 timing photos)")
    parser.add_argument("--seed", type=int, default=2024, help="first seed of the synthetic sets (default 2024)")
    parser.add_argument("--dice", type=int, default=None, metavar="N",
                        help="synthetic dice per set (default 2000; --quick 300)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, metavar="DIR",
                        help="folder holding real photo sets as SET/truth.jsonl (default ../shared/data)")
    parser.add_argument("--split", choices=("test", "train"), default="test",
                        help="the author split of a real set that its rows read (default test: the "
                             "figures reported; train: for choosing a rule without spending the test split)")
    parser.add_argument("--only", action="append", choices=SETS, metavar="SET",
                        help=f"run only these parts (repeat): {', '.join(SETS)}")
    parser.add_argument("--failures", type=Path, metavar="DIR",
                        help="write DIR/failures.jsonl (every photo not read exactly, with how to "
                             "re-render it) and annotated pictures of the first failures of each set")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures as JSON")


# --------------------------------------------------------------------------------------------
# scoring


@dataclass
class Score:
    """Tallies for one set of photos."""

    name: str
    photos: int = 0
    dice: int = 0
    right: int = 0
    flagged: int = 0           # dice the reader flagged (any flag but outside)
    wrong: int = 0             # counted with a wrong face, or counted when it had to be flagged
    missed: int = 0
    extra: int = 0             # things found that are no die (or a die found twice)
    exact: int = 0
    checked: int = 0           # photos with status `check`
    ok_wrong: int = 0
    crashed: int = 0
    times: list[float] = field(default_factory=list)

    def row(self) -> dict:
        pct = lambda n, d: round(100 * n / d, 2) if d else None    # noqa: E731
        return {
            "set": self.name, "photos": self.photos, "dice": self.dice,
            "read_right_pct": pct(self.right, self.dice), "photos_exact_pct": pct(self.exact, self.photos),
            "dice_flagged_pct": pct(self.flagged, self.dice), "photos_check_pct": pct(self.checked, self.photos),
            "ok_but_wrong": self.ok_wrong, "wrong": self.wrong, "missed": self.missed, "extra": self.extra,
            "crashed": self.crashed,
            "ms_median": round(statistics.median(self.times), 1) if self.times else None,
            "ms_p95": round(_percentile(self.times, 95), 1) if self.times else None,
        }


def score_photo(truth: list[dict], reading, taught: bool = False) -> dict:
    """Compare one reading with the truth: per-die outcomes, extras, and whether the photo is exact.

    Truth dice are dicts with face, bbox [x, y, w, h], center, size, flags and picture. With
    `taught`, picture faces were taught to the reader, so flagging one is no longer right."""
    dice = list(reading.dice)
    match = match_centres(truth, [d.center for d in dice])
    used = set(match.values())
    flagged_near = lambda t: any(                                  # noqa: E731
        _flagged(d) and _near(d.center, t["center"], t["size"]) for d in dice)
    outcomes = []
    for ti, t in enumerate(truth):
        d = dice[match[ti]] if ti in match else None
        must_flag = [f for f in t["flags"] if f != "outside"]
        if "outside" in t["flags"]:
            outcome = "right" if d is None or not d.counted else "wrong"
        elif must_flag:
            outcome = "right" if (d is not None and _flagged(d)) or (d is None and flagged_near(t)) else \
                "missed" if d is None else "wrong"
        elif d is None:
            outcome = "missed"
        elif _flagged(d):
            outcome = "right" if t.get("picture") and not taught else "flagged"
        elif d.face == t["face"]:
            outcome = "right"
        else:
            outcome = "wrong"
        outcomes.append((t, d, outcome))
    near_flagged_truth = lambda d: any(                            # noqa: E731
        t["flags"] and _near(d.center, t["center"], t["size"]) for t in truth)
    extra = [d for pi, d in enumerate(dice) if pi not in used and OUTSIDE_FLAG not in d.flags
             and not (_flagged(d) and near_flagged_truth(d))]
    truth_counts = {str(f): 0 for f in range(1, 7)}
    for t in truth:
        if not t["flags"]:
            truth_counts[str(t["face"])] += 1
    must_check = any(f != "outside" for t in truth for f in t["flags"])
    ok_wrong = reading.status == "ok" and (must_check or reading.counts != truth_counts)
    exact = not extra and all(o == "right" for _, _, o in outcomes)
    return {"outcomes": outcomes, "extra": extra, "exact": exact, "ok_wrong": ok_wrong,
            "truth_counts": truth_counts}


def match_centres(truth: list[dict], centres) -> dict[int, int]:
    """Truth die index -> index of the found centre matched to it: a centre inside the die's
    box (`bbox` [x, y, w, h]), nearest the die's `center` first, each centre used once."""
    pairs = []
    for ti, t in enumerate(truth):
        x, y, w, h = t["bbox"]
        for ci, (cx, cy) in enumerate(centres):
            if x <= cx <= x + w and y <= cy <= y + h:
                pairs.append(((cx - t["center"][0]) ** 2 + (cy - t["center"][1]) ** 2, ti, ci))
    match: dict[int, int] = {}
    used: set[int] = set()
    for _, ti, ci in sorted(pairs):
        if ti not in match and ci not in used:
            match[ti] = ci
            used.add(ci)
    return match


OUTSIDE_FLAG = "outside"


def _flagged(die) -> bool:
    return any(f != OUTSIDE_FLAG for f in die.flags)


def _near(a, b, size) -> bool:
    return (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 <= size ** 2


def _percentile(values, q):
    ordered = sorted(values)
    k = (len(ordered) - 1) * q / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


# --------------------------------------------------------------------------------------------
# photo sets


def synthetic_specs(kind: str, seed: int, n_dice: int) -> list[dict]:
    """render_tray keyword sets for a synthetic set of at least `n_dice` dice (reproducible from `seed`)."""
    import numpy as np

    rng = np.random.default_rng([seed, {"plain": 1, "hard": 2, "pictures": 3, "crowded": 4, "far": 5,
                                       "close": 6}[kind]])
    specs, total, index = [], 0, 0
    while total < n_dice:
        if kind == "crowded":
            n = 9
        else:
            n = int(rng.integers(*{"pictures": (4, 21), "close": (3, 9)}.get(kind, (4, 31))))
        spec = {"seed": seed * 10_000 + index, "n_dice": n, "view": "below" if index % 3 == 2 else "above",
                "hard": kind == "hard"}
        if kind == "crowded":
            spec.update(clusters=0.9, hard=index % 2 == 1)
        if kind == "far":
            spec.update(size=(4032, 3024), die_px=(40.0, 80.0), hard=index % 2 == 1)
        if kind == "close":
            spec.update(size=(4032, 3024), die_px=(200.0, 300.0), hard=index % 2 == 1)
        if kind == "hard" and index % 8 == 7:
            spec["size"] = (4032, 3024)
        if kind == "pictures":
            spec["picture_faces"] = ("paco", "skull", "emblem")[index % 3]
        specs.append(spec)
        total += n
        index += 1
    return specs


def real_sets(data: Path, quick: bool, split: str = "test") -> list[tuple[str, list[dict]]]:
    """Every DATA/*/truth.jsonl, as (set name, rows); rows get `path`. A set with an author split
    gives that `split` first (`test`: the figures reported; `train`: the photos a rule may be
    chosen on, as they are and spoiled or reframed, without spending the test split)."""
    found = []
    for truth_file in sorted(data.glob("*/truth.jsonl")):
        folder = truth_file.parent
        rows = []
        for line in truth_file.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                row["path"] = str(folder / row["image"])
                rows.append(row)
        split_file = folder / "author_split.txt"
        if split_file.exists():
            halves = dict(line.split(",", 1) for line in split_file.read_text().splitlines()
                          if line and not line.startswith("#"))
            chosen = [r for r in rows if halves.get(Path(r["image"]).name, "").strip() == split]
            found.append((f"{folder.name} {split} split", chosen))
            if not quick:
                found.append((f"{folder.name} all", rows))
        else:
            found.append((f"{folder.name} all", rows[:50] if quick else rows))
    return found


def real_truth(row: dict) -> list[dict]:
    out = []
    for die in row["dice"]:
        x, y, w, h = die["bbox"]
        out.append({"face": int(die["face"]), "bbox": [x, y, w, h], "center": [x + w / 2, y + h / 2],
                    "size": (w * h) ** 0.5, "flags": list(die.get("flags", [])), "picture": die.get("picture")})
    return out


# --------------------------------------------------------------------------------------------
# running


class _Failures:
    """Collects photos not read exactly: a JSON line each, and annotated pictures of the first few."""

    PICTURES_PER_SET = 25

    def __init__(self, folder: Path | None):
        self.folder = folder
        self.file = None
        self.pictures: dict[str, int] = {}
        if folder:
            folder.mkdir(parents=True, exist_ok=True)
            self.file = (folder / "failures.jsonl").open("w", encoding="utf-8")

    def add(self, set_name, source, image, reading, result, error=None):
        if self.file is None:
            return
        record = {"set": set_name, **{k: v for k, v in source.items() if k != "calibration_object"}}
        if error:
            record["error"] = error
        else:
            record.update(status=reading.status, counts=reading.counts, truth_counts=result["truth_counts"],
                          ok_but_wrong=result["ok_wrong"],
                          problems=[{"outcome": o, "truth": _short_truth(t), "read": d.to_json() if d else None}
                                    for t, d, o in result["outcomes"] if o != "right"],
                          extra=[d.to_json() for d in result["extra"]])
        n = self.pictures.get(set_name, 0)
        if image is not None and reading is not None and n < self.PICTURES_PER_SET:
            name = f"{set_name.replace(' ', '-')}-{n:02d}.png"
            record["picture"] = name
            self._picture(image, reading, result, self.folder / name)
            self.pictures[set_name] = n + 1
        self.file.write(json.dumps(record, ensure_ascii=False) + "\n")

    def _picture(self, image, reading, result, path):
        import cv2

        from vision.annotate import draw_reading

        out = draw_reading(image, reading)
        for t, _, outcome in result["outcomes"]:
            if outcome == "right":
                continue
            x, y, w, h = (int(round(v)) for v in t["bbox"])
            cv2.rectangle(out, (x, y), (x + w, y + h), (255, 80, 0), 2)
            label = f"truth {t['face']} {','.join(t['flags'])} ({outcome})"
            cv2.putText(out, label, (x, y + h + 16), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 80, 0), 2, cv2.LINE_AA)
        cv2.imwrite(str(path), out)

    def close(self):
        if self.file:
            self.file.close()


def _short_truth(t):
    return {k: t[k] for k in ("face", "center", "size", "flags", "picture", "bbox") if k in t}


def _evaluate(name, items, failures, progress, taught=False):
    """items yields (source dict, image, truth list, view); an image that fails to load is an Exception."""
    from vision.reader import read_tray

    score = Score(name)
    for source, image, truth, view in items:
        score.photos += 1
        score.dice += len(truth)
        try:
            if isinstance(image, Exception):
                raise image
            started = time.perf_counter()
            reading = read_tray(image, view=view, calibration=source.get("calibration_object"))
            score.times.append((time.perf_counter() - started) * 1000)
        except Exception as problem:      # a crash is a finding to report, not a reason to stop
            score.crashed += 1
            score.missed += len(truth)
            failures.add(name, source, None, None, None, error=f"{type(problem).__name__}: {problem}")
            continue
        result = score_photo(truth, reading, taught)
        for t, d, outcome in result["outcomes"]:
            if outcome in ("right", "wrong", "missed"):
                setattr(score, outcome, getattr(score, outcome) + 1)
            if d is not None and _flagged(d) and OUTSIDE_FLAG not in t["flags"]:
                score.flagged += 1
        score.extra += len(result["extra"])
        score.exact += result["exact"]
        score.checked += reading.status == "check"
        score.ok_wrong += result["ok_wrong"]
        if not result["exact"] or result["ok_wrong"]:
            failures.add(name, source, image, reading, result)
        progress(score)
    return score


def _calibrated_items(seed, n_dice, tables):
    """Photos of `tables` boxed-set tables, each read with the calibration learned from its own
    empty-tray photo and a photo of six dice showing the paco to the camera."""
    from vision import synth
    from vision.calibration import Calibration, learn_dice, learn_tray, teach_face

    per_table = -(-n_dice // tables)
    for table in range(tables):
        scene = seed * 100 + table
        view = "above" if table % 2 == 0 else "below"
        cal = Calibration()
        empty = {"seed": scene, "n_dice": 0, "scene_seed": scene, "view": view}
        paco_up = 1 if view == "above" else 6          # from below the paco shows with the 6 up
        lesson = {"seed": scene + 1, "n_dice": 6, "scene_seed": scene, "view": view, "picture_faces": "paco",
                  "faces": [paco_up] * 6, "clusters": 0.0}
        try:
            learn_tray(cal, synth.render_tray(**empty)[0])
            _, crops = learn_dice(cal, synth.render_tray(**lesson)[0], face=1)
            teach_face(cal, 1, crops)
        except Exception as problem:      # a calibration that fails is a finding, like a crash
            cal = problem
        shown, index = 0, 0
        while shown < per_table:
            n = 6 + (index * 7) % 20
            spec = {"seed": scene * 1000 + index, "n_dice": n, "view": view, "picture_faces": "paco",
                    "scene_seed": scene}
            image, truth = synth.render_tray(**spec)
            source = {"render_tray": spec, "calibrated_from": {"empty_tray": empty, "paco_lesson": lesson}}
            if isinstance(cal, Exception):
                yield source, cal, list(truth), view
            else:
                yield {**source, "calibration_object": cal}, image, list(truth), view
            shown += n
            index += 1


def _synthetic_items(specs):
    """The specs' trays, rendered; a tray the generator finds no room on (a rare draw of many
    large dice on a small tray: hard seed 11 has one) is left out, and said so on stderr."""
    from vision import synth

    for spec in specs:
        try:
            image, truth = synth.render_tray(**spec)
        except synth.NoRoom as problem:
            print(f"left out: {problem}", file=sys.stderr)
            continue
        yield {"render_tray": {k: list(v) if isinstance(v, tuple) else v for k, v in spec.items()}}, \
            image, list(truth), spec["view"]


def _real_items(rows):
    from vision.imageio import load_image
    from vision.types import ImageError

    for row in rows:
        try:
            image = load_image(row["path"])
        except ImageError as problem:
            image = problem
        yield {"image": row["path"]}, image, real_truth(row), row.get("view", "above")


def _phone_framing(image):
    """`vision.synth.phone_framed` as a reframing (`_reframed`): the photo a phone would take of
    the same dice, and the map of the real photo's points into it (a scale, then a shift)."""
    import numpy as np

    from vision.synth import phone_framed

    big, scale, pad = phone_framed(image)
    return big, np.float64([[scale, 0.0, pad], [0.0, scale, 0.0], [0.0, 0.0, 1.0]])


DARK_AND_TURNED = "turned 30°, 1.2 times larger"


def _turned_nearer(image):
    """The photo turned by 30° on the camera's mount and taken 1.2 times nearer (`_reframed`):
    with `dark and grainy` on top, a dim room seen by a camera framed otherwise, where black
    dice lose their pips."""
    import cv2
    import numpy as np

    from vision.synth import turned

    framed, H = turned(image, 30.0)
    return (cv2.resize(framed, None, fx=1.2, fy=1.2, interpolation=cv2.INTER_CUBIC),
            np.diag([1.2, 1.2, 1.0]) @ H)


def _spoiled(how, spoil, source, image, truth, view):
    """One real item spoiled by `spoil(image, seed)` (`vision.synth.with_grain`, `SPOILS`),
    seeded by its file name so that every run sees the same noise."""
    if isinstance(image, Exception):
        return source, image, truth, view
    seed = zlib.crc32(Path(source["image"]).name.encode())
    return {**source, "spoiled": how}, spoil(image, seed), truth, view


def _reframed(how, reframe, source, image, truth, view):
    """One real item as `reframe(image)` frames it (`vision.synth.REFRAMINGS`), its truth dice
    moved along (their sizes by the local scale); dice moved out of the frame leave the truth."""
    import numpy as np

    if isinstance(image, Exception):
        return source, image, truth, view
    framed, H = reframe(image)
    height, width = framed.shape[:2]
    moved = []
    for t in truth:
        x, y, z = H @ (t["center"][0], t["center"][1], 1.0)
        x, y = x / z, y / z
        if not (0 <= x < width and 0 <= y < height):
            continue
        # the local scale: square root of the area change of the map at the die's centre
        jacobian = (H[:2, :2] - np.outer((x, y), H[2, :2])) / z
        k = float(np.sqrt(abs(np.linalg.det(jacobian))))
        w, h = t["bbox"][2] * k, t["bbox"][3] * k
        moved.append({**t, "center": [x, y], "size": t["size"] * k, "bbox": [x - w / 2, y - h / 2, w, h]})
    return {**source, "reframed": how}, framed, moved, view


def _speed(seed, photos):
    from vision import synth
    from vision.reader import read_tray

    rows = []
    for n in SPEED_DICE:
        times = []
        for i in range(photos):
            image, _ = synth.render_tray(seed * 100 + n * 1000 + i, n, size=(1640, 1232))
            try:
                read_tray(image)   # warm caches (model load, allocations) outside the timing
                started = time.perf_counter()
                read_tray(image)
            except Exception as problem:
                print(f"speed: the reader crashed ({type(problem).__name__}: {problem})", file=sys.stderr)
                return rows
            times.append((time.perf_counter() - started) * 1000)
        rows.append({"dice": n, "photos": photos, "ms_median": round(statistics.median(times), 1),
                     "ms_p95": round(_percentile(times, 95), 1)})
    return rows


def run(args: argparse.Namespace) -> int:
    from vision.synth import REFRAMINGS, SPOILS, with_grain

    parts = set(args.only or SETS)
    n_dice = args.dice or (300 if args.quick else 2000)
    failures = _Failures(args.failures)
    rows, speed = [], []
    progress = _progress if sys.stderr.isatty() else (lambda score: None)
    print(f"companion bench vision  seed {args.seed}  {n_dice} synthetic dice per set  "
          f"{platform.machine()} {os.cpu_count()} cpu  python {platform.python_version()}", flush=True)
    try:
        for kind in ("plain", "hard", "crowded", "far", "close", "pictures"):
            if kind in parts:
                count = {"pictures": max(100, n_dice // 4), "crowded": max(100, n_dice // 2),
                         "far": max(100, n_dice // 4), "close": max(100, n_dice // 4)}.get(kind, n_dice)
                specs = synthetic_specs(kind, args.seed, count)
                rows.append(_evaluate(f"synthetic {kind}", _synthetic_items(specs), failures, progress).row())
        if "calibrated" in parts:
            count = max(100, n_dice // 4)
            items = _calibrated_items(args.seed, count, 2 if args.quick else 6)
            rows.append(_evaluate("synthetic calibrated", items, failures, progress, taught=True).row())
        if "real" in parts:
            sets = real_sets(args.data, args.quick, args.split)
            if not sets:
                print(f"(no real photo sets found under {args.data})", file=sys.stderr)
            for name, photo_rows in sets:
                rows.append(_evaluate(name, _real_items(photo_rows), failures, progress).row())
                if name.endswith(f"{args.split} split"):
                    items = (_reframed("at phone size", _phone_framing, *item) for item in _real_items(photo_rows))
                    rows.append(_evaluate(f"{name} at phone size", items, failures, progress).row())
                    grain = lambda image, seed: with_grain(image, GRAIN, seed)   # noqa: E731
                    items = (_spoiled("sensor grain", grain, *item) for item in _real_items(photo_rows))
                    rows.append(_evaluate(f"{name} with sensor grain", items, failures, progress).row())
        if "spoiled" in parts:
            for name, photo_rows in real_sets(args.data, quick=True, split=args.split):
                for how, spoil in SPOILS.items():
                    items = (_spoiled(how, spoil, *item) for item in _real_items(photo_rows))
                    rows.append(_evaluate(f"{name} spoiled: {how}", items, failures, progress).row())
                dark = SPOILS["dark and grainy"]
                items = (_spoiled("dark and grainy", dark, *_reframed(DARK_AND_TURNED, _turned_nearer, *item))
                         for item in _real_items(photo_rows))
                rows.append(_evaluate(f"{name} spoiled: dark and grainy, {DARK_AND_TURNED}", items, failures,
                                      progress).row())
        if "reframed" in parts:
            for name, photo_rows in real_sets(args.data, quick=True, split=args.split):
                for how, reframe in REFRAMINGS.items():
                    items = (_reframed(how, reframe, *item) for item in _real_items(photo_rows))
                    rows.append(_evaluate(f"{name} {how}", items, failures, progress).row())
        if "speed" in parts:
            speed = _speed(args.seed, 5 if args.quick else 15)
    finally:
        failures.close()
    print(format_tables(rows, speed))
    if args.json:
        args.json.write_text(json.dumps({"seed": args.seed, "sets": rows, "speed": speed}, indent=1) + "\n")
    if args.failures:
        print(f"\nfailures: {args.failures / 'failures.jsonl'}")
    return 0


def _progress(score: Score) -> None:
    print(f"\r  {score.name}: {score.photos} photos, {score.dice} dice ", end="", file=sys.stderr, flush=True)


def format_tables(rows: list[dict], speed: list[dict]) -> str:
    """The figures as Markdown tables (what the README shows)."""
    out = []
    if rows:
        out += ["", "| set | photos | dice | read right | photos exact | dice flagged | photos `check` "
                "| `ok` & wrong | wrong | missed | extra | ms median | ms p95 |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in rows:
            cells = [r["set"], r["photos"], r["dice"], _pct(r["read_right_pct"]), _pct(r["photos_exact_pct"]),
                     _pct(r["dice_flagged_pct"]), _pct(r["photos_check_pct"]), r["ok_but_wrong"], r["wrong"],
                     r["missed"], r["extra"], _num(r["ms_median"]), _num(r["ms_p95"])]
            out.append("| " + " | ".join(str(c) for c in cells) + " |")
        crashed = [r for r in rows if r["crashed"]]
        for r in crashed:
            out.append(f"\n{r['set']}: the reader crashed on {r['crashed']} photo(s) (see --failures)")
    if speed:
        out += ["", "| dice per 1640×1232 photo | photos | ms median | ms p95 |", "|---:|---:|---:|---:|"]
        out += [f"| {s['dice']} | {s['photos']} | {s['ms_median']} | {s['ms_p95']} |" for s in speed]
    return "\n".join(out)


def _pct(value):
    return "-" if value is None else f"{value:.2f} %"


def _num(value):
    return "-" if value is None else f"{value:.1f}"
