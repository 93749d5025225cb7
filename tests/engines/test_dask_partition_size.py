"""What a Dask partition ships does not grow with the split: each partition keeps only the
sample rows that stay in the final sample (the cut-off key from the split's row count)."""

from __future__ import annotations

import pickle

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from datavet.engines.dask import _profile_part, plan_for
from datavet.scan import ScanPlan
from datavet.scan.reservoir import Reservoir
from datavet.sources import open_source


def _partition(path, rows_total):
    rng = np.random.default_rng(0)
    table = pa.table({"x": rng.normal(size=rows_total), "y": rng.integers(0, 2, rows_total)})
    pq.write_table(table, path, row_group_size=2_000)
    src = open_source(str(path), target="y")
    plan = plan_for(src, ScanPlan(target="y", hash_columns=("x",), sample_rows=1_000))
    first = pq.ParquetFile(path).read_row_group(0)
    profile, _ = _profile_part("table", first, 0, plan, "train", 2_000, 4)
    return plan, profile


def test_partition_keeps_only_the_sample_rows_that_stay(tmp_path):
    plan, small = _partition(tmp_path / "small.parquet", 10_000)
    assert plan.sample_cut == Reservoir.cut(10_000, 1_000, 0)
    _, big = _partition(tmp_path / "big.parquet", 100_000)
    # about sample_rows x partition rows / split rows: ~200 of 2,000, then ~20
    assert len(small.sample.keys) < 400 and len(big.sample.keys) < 60
    assert len(pickle.dumps(big)) < len(pickle.dumps(small))


def test_plan_kept_when_rows_unknown_or_cut_given(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": [1.0, 2.0], "y": [0, 1]}), path)
    src = open_source(str(path), target="y")
    given = ScanPlan(target="y", sample_cut=5)
    assert plan_for(src, given) is given
    few = ScanPlan(target="y")  # fewer rows than the sample: every row stays, no cut
    assert plan_for(src, few).sample_cut is None
