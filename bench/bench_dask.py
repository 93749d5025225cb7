"""The Dask engine at scale: what a partition ships, and the wall with 1 and 2 worker processes.

    python bench/bench_dask.py --data-dir /work/bigdata/data --rows 1000000 10000000 \
        --walls 1000000 --json /tmp/dask.json

Uses the planted files of ``bench/bench_compare.py`` (generated into ``--data-dir`` when
missing). For each size: the pickled size of a partition's Profile (one Parquet row group,
without its row hashes: what a worker sends up the reduction tree), of the merged Profile of
the whole split (what reaches the client), and of the hash buckets the partition hands to the
bucket tasks (worker to worker, never to the client). For the ``--walls`` sizes: the wall of
``datavet.audit(train, test, target="label", engine="dask")`` on a LocalCluster of 1 and of 2
worker processes (one thread each), cluster start excluded, interleaved, median of ``--repeat``.
"""

from __future__ import annotations

import argparse
import json
import pickle
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def partition_sizes(train: Path) -> dict:
    import pyarrow.parquet as pq

    from datavet.engines.dask import _profile_part, plan_for
    from datavet.scan import ScanPlan
    from datavet.sources import open_source

    src = open_source(str(train), target="label")
    features = tuple(n for n in src.schema.names if n != "label")
    plan = plan_for(src, ScanPlan(target="label", hash_columns=features))
    table = pq.ParquetFile(train).read_row_group(0)
    profile, buckets = _profile_part("table", table, 0, plan, "train", 65_536, 4)
    return {
        "partition_rows": table.num_rows,
        "partition_profile_bytes": len(pickle.dumps(profile)),
        "partition_buckets_bytes": len(pickle.dumps(buckets)),
        "file_rows": src.num_rows,
    }


def merged_size(train: Path) -> int:
    from datavet.engines.local import profile_source
    from datavet.scan import ScanPlan
    from datavet.scan.hashing import RowHashes
    from datavet.scan.reservoir import Reservoir
    from datavet.sources import open_source

    src = open_source(str(train), target="label")
    features = tuple(n for n in src.schema.names if n != "label")
    plan = ScanPlan(target="label", hash_columns=features)
    plan = ScanPlan(
        **{**plan.__dict__, "sample_cut": Reservoir.cut(src.num_rows, plan.sample_rows, 0)}
    )
    profile = profile_source(src, plan, "train", progress=False)
    profile.hashes = RowHashes()
    return len(pickle.dumps(profile))


def dask_wall(train: Path, test: Path, workers: int) -> tuple[float, object]:
    from distributed import Client, LocalCluster

    import datavet

    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        Client(cluster),
    ):
        t = time.perf_counter()
        report = datavet.audit(
            str(train),
            str(test),
            target="label",
            engine="dask",
            scheduler=cluster.scheduler_address,
        )
        return time.perf_counter() - t, report


def main() -> None:
    import bench_compare

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--walls", type=int, nargs="*", default=[1_000_000])
    ap.add_argument("--merged", action="store_true", help="also the merged Profile's size")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    out: dict = {"sizes": {}, "walls": {}}
    for rows in args.rows:
        train, test, _ = bench_compare.cached_data(rows, args.data_dir, args.data_dir)
        entry = partition_sizes(train)
        if args.merged:
            entry["merged_profile_bytes"] = merged_size(train)
        out["sizes"][rows] = entry
        print(rows, entry, flush=True)
    for rows in args.walls:
        train, test, _ = bench_compare.cached_data(rows, args.data_dir, args.data_dir)
        walls: dict[int, list[float]] = {1: [], 2: []}
        for _ in range(args.repeat):
            for w in (1, 2):
                wall, report = dask_wall(train, test, w)
                walls[w].append(wall)
                codes = sorted({f.code for f in report.findings})
                print(rows, f"{w} worker(s): {wall:.1f} s", codes, flush=True)
        out["walls"][rows] = {w: statistics.median(v) for w, v in walls.items()}
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
