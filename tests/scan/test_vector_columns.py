"""Vector columns (embeddings): NaN and inf inside the vectors are found with their rows and
element positions, constant dimensions and raw scales are flagged as for tensors, and the stats
count elements. Parquet, Arrow IPC, pandas and in-memory Arrow alike."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

import datavet
from datavet.scan.columns import ColumnStats

N, D = 120, 8


def _embeddings(dtype=np.float32) -> np.ndarray:
    emb = np.random.default_rng(0).normal(size=(N, D)).astype(dtype)
    emb[5, 3] = np.nan
    emb[17, 3] = np.nan
    emb[40, 6] = np.inf
    emb[:, 0] = 0.25  # a constant dimension
    return emb


def _inputs(tmp_path):
    emb = _embeddings()
    label = np.arange(N) % 2
    fixed = pa.FixedSizeListArray.from_arrays(pa.array(emb.ravel()), D)
    table = pa.table({"x": np.linspace(0, 1, N), "emb": fixed, "label": label})
    listed = table.set_column(1, "emb", fixed.cast(pa.list_(pa.float64())))
    large = table.set_column(1, "emb", fixed.cast(pa.large_list(pa.float32())))
    pq.write_table(listed, tmp_path / "t.parquet")
    feather.write_feather(table, tmp_path / "t.arrow", compression="uncompressed")
    frame = pd.DataFrame({"x": np.linspace(0, 1, N), "emb": list(emb), "label": label})
    lists = frame.assign(emb=[list(map(float, v)) for v in emb])
    return {
        "arrow fixed_size_list": table,
        "arrow list<double>": listed,
        "arrow large_list": large,
        "parquet": tmp_path / "t.parquet",
        "arrow file": tmp_path / "t.arrow",
        "pandas arrays": frame,
        "pandas lists": lists,
    }


def test_nan_and_inf_inside_vectors_are_found_everywhere(tmp_path):
    for what, data in _inputs(tmp_path).items():
        report = datavet.audit(data, target="label")
        by_code = {f.code: f for f in report.findings if f.columns == ("emb",)}
        assert {"V001", "V002", "F001"} <= set(by_code), (what, report.findings)
        v001 = by_code["V001"]
        assert v001.n_affected == 2 and v001.examples == (5, 17), what
        assert "(row 5, element 3), (row 17, element 3)" in v001.message, v001.message
        assert "all in element 3" in v001.message
        v002 = by_code["V002"]
        assert v002.examples == (40,) and "(row 40, element 6)" in v002.message, v002.message
        f001 = by_code["F001"]
        assert "1 of 8 dimensions of vector column 'emb'" in f001.message, f001.message
        assert "element 0" in f001.message
        stats = next(
            c for c in report.to_dict()["datasets"]["train"]["columns"] if c["name"] == "emb"
        )
        assert stats["kind"] == "vector" and stats["dim"] == D, (what, stats)
        assert (stats["nan"], stats["inf"], stats["count"]) == (2, 1, N * D - 2), (what, stats)
        assert (stats["nan_rows"], stats["inf_rows"]) == (2, 1)
        json.dumps(report.to_dict(), allow_nan=False)


def test_null_vectors_and_ragged_lists():
    values = [[1.0, 2.0], None, [np.nan], [3.0, 4.0, 5.0]] * 10
    t = pa.table({"v": pa.array(values, pa.list_(pa.float64())), "label": np.arange(40) % 2})
    report = datavet.audit(t, target="label")
    (v001,) = [f for f in report.findings if f.code == "V001"]
    assert v001.n_affected == 20 and v001.examples[:2] == (1, 2)
    assert "10 null rows" in v001.message and "10 rows holding NaN" in v001.message
    stats = report.to_dict()["datasets"]["train"]["columns"][0]
    assert stats["dim"] is None and (stats["min_length"], stats["max_length"]) == (1, 3)


def test_unnormalised_vectors_get_t001_and_normal_ones_do_not():
    raw = np.random.default_rng(1).integers(0, 256, size=(N, 4)).astype(np.float32)
    frame = pd.DataFrame(
        {"pix": list(raw), "emb": list(raw / 255 - 0.5), "label": np.arange(N) % 2}
    )
    report = datavet.audit(frame, target="label")
    t001 = [f for f in report.findings if f.code == "T001"]
    assert [f.columns for f in t001] == [("pix",)]
    assert "raw 0..255" in t001[0].message and "divide by 255" in t001[0].hint
    assert "Normalize(mean=[" in t001[0].hint  # 4 dimensions: listed per dimension


def test_t001_still_skips_tables_without_vectors():
    report = datavet.audit(pd.DataFrame({"a": [1.0, 2.0, 3.0] * 5, "label": [0, 1, 0] * 5}))
    (outcome,) = [o for o in report.outcomes if o.code == "T001"]
    assert outcome.status.value == "skipped" and "vector columns" in outcome.reason


def test_vector_rows_hash_numerically_for_duplicates_and_overlap():
    """1 and 1.0 and -0.0 and 0.0 are the same element; NaN equals NaN; the element order counts."""
    a = pa.array([[1, 0], [2, 3], [3, 2]], pa.list_(pa.int64()))
    b = pa.array([[1.0, -0.0], [2.0, 3.0], [9.0, 9.0]], pa.list_(pa.float32(), 2))
    report = datavet.audit(pa.table({"v": a}), pa.table({"v": b}))
    (s001,) = [f for f in report.findings if f.code == "S001"]
    assert s001.n_affected == 2


@pytest.mark.parametrize("batch", [7, 40, 1000])
def test_vector_stats_merge_equals_whole(batch):
    emb = _embeddings(np.float64)
    arr = pa.FixedSizeListArray.from_arrays(pa.array(emb.ravel()), D)
    whole = ColumnStats.of("emb", arr, 0)
    parts = [ColumnStats.of("emb", arr.slice(i, batch), i) for i in range(0, N, batch)]
    merged = parts[0]
    for p in parts[1:]:
        merged = merged.merge(p)
    for stats in (whole, merged):
        assert (stats.missing, stats.inf, stats.missing_rows) == (2, 1, (5, 17))
        assert stats.vector.nan_at == ((5, 3), (17, 3))
        assert stats.vector.constant_dims().tolist() == [0]
    assert merged.finite.n == whole.finite.n
    assert merged.mean == pytest.approx(whole.mean)
    assert np.allclose(merged.vector.dim_mean, whole.vector.dim_mean)
    assert np.allclose(merged.vector.dim_m2, whole.vector.dim_m2)


def test_wide_batches_are_read_in_slices_with_the_same_result(monkeypatch):
    from datavet.scan import vectors
    from datavet.scan.hashing import vector_lanes

    emb = _embeddings(np.float64)
    arr = pa.FixedSizeListArray.from_arrays(pa.array(emb.ravel()), D)
    whole = ColumnStats.of("emb", arr, 0)
    lanes = vector_lanes(arr)
    monkeypatch.setattr(vectors, "CHUNK_ELEMENTS", 3 * D + 1)
    assert len(vectors.row_slices(arr, 3 * D + 1)) == N // 3
    sliced = ColumnStats.of("emb", arr, 0)
    assert (sliced.missing_rows, sliced.inf_rows) == (whole.missing_rows, whole.inf_rows)
    assert sliced.vector.nan_at == whole.vector.nan_at
    assert sliced.vector.constant_dims().tolist() == [0]
    assert all(np.array_equal(a, b) for a, b in zip(vector_lanes(arr), lanes))
