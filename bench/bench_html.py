"""Size and render time of the HTML report for a wide table, in a real headless Chromium.

    python bench/bench_html.py [--columns 1000] [--repeat 5]

Render time is the wall time of `chromium --headless --dump-dom` on the report minus the same on
an empty page (Chromium's own start-up), median of the repeats.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import datavet

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def load_time(page: Path) -> float:
    with tempfile.TemporaryDirectory() as profile:
        start = time.perf_counter()
        subprocess.run(
            [
                shutil.which("chromium"),
                *FLAGS,
                f"--user-data-dir={profile}",
                "--dump-dom",
                page.as_uri(),
            ],
            capture_output=True,
            check=True,
            timeout=120,
        )
        return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--columns", type=int, default=1000)
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if shutil.which("chromium") is None:
        sys.exit("needs Debian's chromium")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        rng.normal(size=(args.rows, args.columns)), columns=[f"f{i}" for i in range(args.columns)]
    )
    frame.iloc[:5, ::25] = np.nan
    frame["label"] = rng.integers(0, 3, args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        report = datavet.audit(frame, target="label")
        page, blank = Path(tmp) / "wide.html", Path(tmp) / "blank.html"
        t0 = time.perf_counter()
        report.save_html(page)
        write_s = time.perf_counter() - t0
        blank.write_text("<!DOCTYPE html><title>blank</title>")
        base = statistics.median(load_time(blank) for _ in range(args.repeat))
        full = statistics.median(load_time(page) for _ in range(args.repeat))
        size = page.stat().st_size
    print(f"{args.columns} columns x {args.rows} rows, {len(report.findings)} findings")
    print(f"HTML size: {size / 1e6:.2f} MB (budget 5 MB); written in {write_s:.2f} s")
    print(
        f"Chromium load: {full:.2f} s, blank page {base:.2f} s, report render {full - base:.2f} s "
        f"(budget 2 s); medians of {args.repeat}"
    )


if __name__ == "__main__":
    main()
