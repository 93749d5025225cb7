"""In-memory inputs a hostile tester brought: matrices per row (NaN and inf inside them), vector
columns whose every row holds a NaN element, polars 128-bit integers, MultiIndex targets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import datavet
from datavet.errors import InputError
from datavet.scan.values import dense


def by_code(report) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in report.findings:
        out.setdefault(f.code, []).append(f)
    return out


def test_nan_and_inf_inside_2d_array_cells_are_found():
    cells = [np.random.default_rng(i).normal(size=(2, 2)) for i in range(100)]
    cells[3][0, 1] = np.nan
    cells[4][1, 1] = np.inf
    frame = pd.DataFrame({"m": cells, "y": [0, 1] * 50})
    report = datavet.audit(frame, target="y", baselines=False)
    found = by_code(report)
    assert [(f.n_affected, f.examples) for f in found["V001"]] == [(1, (3,))]
    assert [(f.n_affected, f.examples) for f in found["V002"]] == [(1, (4,))]
    assert found["V001"][0].metrics["nan_elements"] == 1
    assert np.isnan(frame["m"][3][0, 1])  # the caller's cells are left as they were


def test_nested_lists_are_vectors_read_row_major():
    arr = pa.array([[[1.0, 2.0], None, [3.0, float("inf")]], None, [[4.0]], [[5.0, 6.0], [7.0]]])
    assert dense(arr).to_pylist() == [[1.0, 2.0, 3.0, float("inf")], None, [4.0], [5.0, 6.0, 7.0]]
    fixed = pa.array(
        [[[1.0, 2.0], [3.0, 4.0]], [[5.0, float("nan")], [7.0, 8.0]]],
        pa.list_(pa.list_(pa.float32(), 2), 2),
    )
    got = dense(fixed.slice(1)).to_pylist()[0]
    assert got[0] == 5.0 and np.isnan(got[1]) and got[2:] == [7.0, 8.0]
    table = pa.table({"m": pa.array([[[1.0, np.nan], [2.0, 3.0]]] * 50), "y": [0, 1] * 25})
    report = datavet.audit(table, target="y", baselines=False)
    v001 = by_code(report)["V001"][0]
    assert v001.n_affected == 50 and v001.metrics["nan_elements"] == 50
    assert "element 1" in v001.message and "entirely missing" not in v001.message


def test_a_nan_element_in_every_row_is_not_an_entirely_missing_column():
    frame = pd.DataFrame({"emb": [[1.0, 2.0, np.nan]] * 100, "y": [0, 1] * 50})
    v001 = by_code(datavet.audit(frame, target="y", baselines=False))["V001"][0]
    assert "entirely missing" not in v001.message
    assert "100 rows holding NaN" in v001.message and v001.metrics["null_rows"] == 0
    nulls = pd.DataFrame({"emb": [None] * 100, "y": [0, 1] * 50})
    v001 = by_code(datavet.audit(nulls, target="y", baselines=False))["V001"][0]
    assert "entirely missing" in v001.message


@pytest.mark.parametrize("how", ["frame", "lazy", "series"])
def test_polars_int128_is_refused_by_name(how):
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame({"c": pl.Series(range(100), dtype=pl.Int128), "y": [0, 1] * 50})
    data = {"frame": frame, "lazy": frame.lazy(), "series": frame["c"]}[how]
    with pytest.raises(InputError, match=r"column 'c' is polars Int128.*Int64"):
        datavet.audit(data, target=None if how == "series" else "y")


def test_a_multiindex_column_is_named_as_a_target_by_its_tuple():
    columns = pd.MultiIndex.from_tuples([("f", "a"), ("f", "b"), ("t", "y")])
    frame = pd.DataFrame(np.random.default_rng(0).random((100, 3)), columns=columns)
    frame[("t", "y")] = np.arange(100) % 2
    report = datavet.audit(frame, target=("t", "y"), baselines=False)
    assert report.to_dict()["target"] == "('t', 'y')"
    with pytest.raises(InputError, match=r"did you mean"):
        datavet.audit(frame, target=("f", "z"))


def test_scale_mismatch_leaves_out_0_1_indicator_columns():
    """0/1 dummies (RMS about 0.3) used to set the median scale and turn a 50x spread between
    two real features into a 158x finding."""
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n) * 50})
    for k in range(3):
        frame[f"d{k}"] = (rng.random(n) < 0.1).astype(np.int64)
    frame["y"] = np.arange(n) % 2
    assert "F003" not in by_code(datavet.audit(frame, target="y", baselines=False))
    frame["x3"] = rng.normal(size=n) * 500  # a real 500x spread still fires
    assert "F003" in by_code(datavet.audit(frame, target="y", baselines=False))


def test_scale_outliers_at_exactly_ten_times_the_median_are_both_named():
    ones = np.array([1.0, -1.0] * 100)
    frame = pd.DataFrame({"a": ones, "b": ones * 100, "y": np.arange(200) % 2})
    f003 = by_code(datavet.audit(frame, target="y", baselines=False))["F003"][0]
    assert set(f003.columns) == {"a", "b"}
