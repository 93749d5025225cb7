"""L002's boundary scan: datavet's own hypergeometric tails against SciPy's.

    python bench/bench_stats_hypergeom.py [--runs 7]

The table is what L002 scans: label counts of a binary target in 1,024 position bins, the class
3% of the rows, for 1.2M rows (a 1M-row train file) and 120M rows; "shuffled" has no drift,
"drift" raises the class to 3.4% in the first 5% of the rows (a finding, p far below 1).
``boundary_scan`` runs with datavet's tails and then with ``scipy.stats.hypergeom`` patched in
(warm: SciPy already imported); the median of ``--runs`` is reported. SciPy's tails cost an
``import scipy.stats`` as well on a cold run, measured in fresh interpreters.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from types import SimpleNamespace

import numpy as np

from datavet import _stats
from datavet.auditors.positional_label_drift import boundary_scan


def table(rows: int, shift: float = 0.0, share: float = 0.03, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    sizes = np.full(1024, rows // 1024)
    sizes[: rows % 1024] += 1
    rate = np.full(1024, share)
    rate[:51] += shift
    k = rng.binomial(sizes, rate)
    return np.stack([k, sizes - k], axis=1).astype(np.float64)


def median_time(fn, runs: int) -> float:
    fn()  # warm
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def scipy_import(runs: int) -> float:
    code = (
        "import time; t = time.perf_counter(); import scipy.stats; print(time.perf_counter() - t)"
    )
    out = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)
        for _ in range(runs)
    ]
    return statistics.median(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    from scipy import stats

    scipy_tails = SimpleNamespace(
        tails=lambda x, M, n, N: (
            stats.hypergeom.cdf(x, M, n, N),
            stats.hypergeom.sf(x - 1, M, n, N),
        )
    )
    ours = _stats.hypergeom
    print(f"{'table':<22} {'datavet':>10} {'scipy warm':>11}  p (datavet / scipy)")
    for rows in (1_200_000, 120_000_000):
        for name, shift in (("shuffled", 0.0), ("drift", 0.004)):
            t = table(rows, shift)
            scan = lambda t=t: boundary_scan(t)  # noqa: E731
            _stats.hypergeom = ours
            mine, p = median_time(scan, args.runs), scan().p_value
            _stats.hypergeom = scipy_tails
            theirs, q = median_time(scan, args.runs), scan().p_value
            _stats.hypergeom = ours
            label = f"{rows:,} {name}"
            print(f"{label:<22} {mine * 1e3:>8.1f}ms {theirs * 1e3:>9.1f}ms  {p:.6g} / {q:.6g}")
    print(f"import scipy.stats (cold, fresh interpreter): {scipy_import(args.runs) * 1e3:.0f}ms")


if __name__ == "__main__":
    main()
