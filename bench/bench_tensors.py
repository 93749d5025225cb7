"""Peak memory and time of auditing a 2 GB memory-mapped ``.npy`` (not a test: a measurement).

    python bench/bench_tensors.py [--gb 2] [--dir /tmp] [--keep]

Writes a float32 array of images (N, 3, 64, 64) of about ``--gb`` GB to a temporary file in
``--dir`` (filled block by block through ``open_memmap``, so writing it needs little memory),
with one NaN sample and one +inf pixel planted, then audits it in a fresh Python process and
prints that process's peak RSS, its wall time, and the findings. The file is deleted afterwards
unless ``--keep``.

The audit memory-maps the file and profiles a block of samples at a time; the pages of each block
are handed back once it is profiled, so the peak stays bounded by the block size (plus the
libraries and the per-sample hashes), not by the file size. The issue's target: under 500 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SAMPLE = (3, 64, 64)
# Peak RSS from VmHWM, the high-water mark of this process's own address space: getrusage's
# ru_maxrss would carry over the parent's peak through fork and exec.
PEAK = r"""
def peak_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
"""
CHILD = (
    PEAK
    + r"""
import json, sys, time
import datavet
started = time.perf_counter()
workers = int(sys.argv[2]) if sys.argv[2] != "auto" else None
report = datavet.audit(sys.argv[1], baselines=False, workers=workers)
wall = time.perf_counter() - started
print(json.dumps({
    "peak_rss_mb": peak_mb(),
    "wall_s": wall,
    "rows": report.datasets["train"]["rows"],
    "findings": [(f.code, f.columns, list(f.examples)) for f in report.findings],
}))
"""
)
BASELINE = (
    PEAK
    + r"""
import json
import datavet, numpy, pyarrow, pandas, scipy.stats, sklearn  # what the audit imports anyway
print(json.dumps({"peak_rss_mb": peak_mb()}))
"""
)


def write_array(path: Path, gb: float) -> tuple[int, int, int]:
    per_sample = int(np.prod(SAMPLE)) * 4
    n = int(gb * 1e9) // per_sample
    arr = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, *SAMPLE))
    rng = np.random.default_rng(0)
    step = 2048
    for start in range(0, n, step):
        stop = min(n, start + step)
        arr[start:stop] = rng.standard_normal((stop - start, *SAMPLE), dtype=np.float32)
        arr.flush()
    nan_at, inf_at = n // 3, (2 * n) // 3
    arr[nan_at, 1, 10, 10] = np.nan
    arr[inf_at, 2, 5, 5] = np.inf
    arr.flush()
    del arr
    return n, nan_at, inf_at


def run(code: str, *args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=2.0)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--workers", default="auto", help="profiling threads (default: up to 4)")
    args = ap.parse_args()
    fd, name = tempfile.mkstemp(suffix=".npy", dir=args.dir)
    os.close(fd)
    path = Path(name)
    try:
        t0 = time.perf_counter()
        n, nan_at, inf_at = write_array(path, args.gb)
        size = path.stat().st_size
        print(
            f"wrote {path}: {n:,} samples of {SAMPLE} float32, {size / 1e9:.2f} GB "
            f"in {time.perf_counter() - t0:.1f} s"
        )
        base = run(BASELINE)
        result = run(CHILD, str(path), str(args.workers))
        print(f"python + imports alone: peak RSS {base['peak_rss_mb']:.0f} MB")
        print(
            f"audit of {size / 1e9:.2f} GB memory-mapped .npy: peak RSS "
            f"{result['peak_rss_mb']:.0f} MB, {result['wall_s']:.1f} s "
            f"({size / 1e6 / result['wall_s']:.0f} MB/s), {result['rows']:,} samples, "
            f"workers {args.workers} of {os.cpu_count()} cores"
        )
        for code, columns, examples in result["findings"]:
            print(f"  {code} {', '.join(columns)} samples {examples}")
        expected = {("V001", nan_at), ("V002", inf_at)}
        found = {(c, e[0]) for c, _, e in result["findings"] if e}
        print("planted NaN/inf samples named:", "yes" if expected <= found else f"NO ({found})")
        verdict = "under" if result["peak_rss_mb"] < 500 else "OVER"
        print(f"target: peak RSS under 500 MB -> {verdict}")
    finally:
        if not args.keep:
            path.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
