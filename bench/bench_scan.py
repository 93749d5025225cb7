"""Throughput and peak memory of `datavet audit` against the floor script of PEERS.md.

The floor is the least work any auditor must do: pyarrow read, numpy NaN/inf counts and
moments, pandas row hashes, `isin` for overlap. Both run in fresh subprocesses on the same
Parquet files (20 numeric features + label with every planted problem), three times each;
medians are printed side by side with their ratio.

    python bench/bench_scan.py            # 100k and 1M rows
    python bench/bench_scan.py --rows 100000 --repeat 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

FLOOR = r"""
import sys, numpy as np, pandas as pd, pyarrow.parquet as pq
train = pq.read_table(sys.argv[1]).to_pandas()
test = pq.read_table(sys.argv[2]).to_pandas()
for df in (train, test):
    x = df.drop(columns="label").to_numpy(dtype=float)
    nan = np.isnan(x).sum(0); inf = np.isinf(x).sum(0)
    fin = np.where(np.isfinite(x), x, np.nan)
    mean = np.nanmean(fin, 0); std = np.nanstd(fin, 0)
    counts = df["label"].value_counts()
h_train = pd.util.hash_pandas_object(train.drop(columns="label"), index=False)
h_test = pd.util.hash_pandas_object(test.drop(columns="label"), index=False)
overlap = int(h_test.isin(h_train).sum())
print(overlap)
"""

DATAVET = r"""
import sys, json, datavet
report = datavet.audit(sys.argv[1], sys.argv[2], target="label")
print(json.dumps(sorted({f.code for f in report.findings})))
"""


def make_data(rows: int, folder: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    n_test = rows // 5
    x = rng.normal(0.0, 1.0, size=(rows + n_test, 20)).astype(np.float64)
    x[:, 3] = 7.0  # constant
    x[:, 5] = 300.0 + 10.0 * x[:, 5]  # ~300x the scale of the rest
    x[rng.choice(rows, 50, replace=False), 1] = np.nan
    x[rng.choice(rows, 7, replace=False), 2] = np.inf
    y = (rng.random(rows + n_test) < 0.03).astype(np.int64)  # a 3% class
    y[: rows // 20] = 1  # a label block at the start of train
    train = pd.DataFrame(x[:rows], columns=[f"f{i}" for i in range(20)]).assign(label=y[:rows])
    test = pd.DataFrame(x[rows:], columns=train.columns[:-1]).assign(label=y[rows:])
    test.iloc[:100] = train.iloc[1000:1100].to_numpy()  # copied rows
    tr, te = folder / f"train_{rows}.parquet", folder / f"test_{rows}.parquet"
    train.to_parquet(tr, index=False, row_group_size=65_536)
    test.to_parquet(te, index=False, row_group_size=65_536)
    return tr, te


def run(code: str, *args: str) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MB, stdout) of a fresh interpreter running ``code``."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0,):
        raise SystemExit(f"benchmark child failed with {proc.returncode}")
    return wall, usage.ru_maxrss / 1024, out.strip()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, nargs="*", default=[100_000, 1_000_000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores; medians of {args.repeat} runs")
    print(
        f"{'rows':>9}  {'floor wall':>10} {'floor RSS':>10}  {'datavet wall':>12} "
        f"{'datavet RSS':>11}  {'wall ratio':>10} {'RSS ratio':>9}  findings"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for rows in args.rows:
            tr, te = make_data(rows, Path(tmp))
            floor = [run(FLOOR, str(tr), str(te)) for _ in range(args.repeat)]
            dv = [run(DATAVET, str(tr), str(te)) for _ in range(args.repeat)]
            fw, fr = statistics.median(r[0] for r in floor), statistics.median(r[1] for r in floor)
            dw, dr = statistics.median(r[0] for r in dv), statistics.median(r[1] for r in dv)
            found = json.loads(dv[0][2])
            print(
                f"{rows:>9,}  {fw:>9.2f}s {fr:>8.0f}MB  {dw:>11.2f}s {dr:>9.0f}MB  "
                f"{dw / fw:>9.2f}x {dr / fr:>8.2f}x  {','.join(found)}"
            )


if __name__ == "__main__":
    main()
