"""datavet._stats.ks_2samp against scipy.stats.ks_2samp: time per call and the import each
costs (not a test: a measurement).

    python bench/bench_stats.py [--calls 20]

S010 (feature drift) runs one two-sample KS test per numeric feature. SciPy's costs
``import scipy.stats`` once (~0.7 s cold, measured here in a fresh interpreter) and little per
call: its exact p-value is compiled code. datavet's costs no import but sweeps the exact
lattice-path count in NumPy, one step per anti-diagonal: about 3 us x (n1 + n2) when the sizes
differ and neither passes 10,000 (equal sizes and larger samples are cheap for both). Prints the
median of ``--calls`` warm calls per size pair (both D under the null and with a shift) and the
import times, with the break-even: how many such features the import would pay for. "D only"
is ``ks_statistic``, what S010 computes for a feature whose D stays below ``min_effect``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SRC = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, str(SRC))

PAIRS = [(300, 200), (1_000, 400), (2_000, 2_000), (5_000, 3_000), (8_000, 2_000),
         (10_000, 9_999), (50_000, 50_000), (50_000, 20_000)]  # fmt: skip


def median_call(fn, x, y, calls: int) -> float:
    fn(x, y)  # warm
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn(x, y)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def import_seconds(module: str, before: str = "numpy", runs: int = 5) -> float:
    """Median wall time of ``import module`` in a fresh interpreter, ``before`` already loaded
    (without .pyc files, as under PYTHONDONTWRITEBYTECODE, this includes compiling)."""
    code = (
        f"import time, {before}\n"
        f"start = time.perf_counter(); import {module}\n"
        "print(time.perf_counter() - start)"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    times = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
        )
        times.append(float(out.stdout))
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()

    from scipy import stats

    from datavet import _stats

    scipy_import = import_seconds("scipy.stats")
    ours_import = import_seconds("datavet._stats", before="numpy, datavet")
    print(f"import scipy.stats    {scipy_import * 1e3:8.1f} ms (fresh interpreter, numpy loaded)")
    print(f"import datavet._stats {ours_import * 1e3:8.1f} ms (numpy and datavet loaded)")
    print()
    head = ("n1", "n2", "shift", "datavet", "scipy", "D only")
    print("{:>7} {:>7} {:>5}  {:>9} {:>9} {:>9}  features/import".format(*head))
    rng = np.random.default_rng(0)
    for n1, n2 in PAIRS:
        for shift in (0.0, 0.5):
            x, y = rng.normal(size=n1), rng.normal(shift, size=n2)
            ours = median_call(_stats.ks_2samp, x, y, args.calls)
            theirs = median_call(stats.ks_2samp, x, y, args.calls)
            d_only = median_call(_stats.ks_statistic, x, y, args.calls)
            extra = ours - theirs
            even = f"{scipy_import / extra:9.0f}" if extra > 0 else "        -"
            times = f"{ours * 1e3:7.2f}ms {theirs * 1e3:7.2f}ms {d_only * 1e3:7.2f}ms"
            print(f"{n1:>7} {n2:>7} {shift:>5}  {times}  {even}")


if __name__ == "__main__":
    main()
