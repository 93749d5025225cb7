"""datavet reproduces every figure the source chapter (seeds/004) prints for its planted table."""

from __future__ import annotations

import numpy as np
import pandas as pd
from conftest import sample

import datavet


def whole_table() -> pd.DataFrame:
    """The seed's whole X and y (500 rows; rows 490-499 are in neither split)."""
    X, y = sample.seed_arrays()
    return pd.DataFrame(X, columns=["x0", "x1", "x2", "x3"]).assign(label=y)


def test_means_stds_nan_counts_and_constant_feature_match_the_seed():
    report = datavet.audit(sample.seed_arrays(), select=["V001", "F001"])  # NumPy (X, y)
    cols = {c["name"]: c for c in report.to_dict()["datasets"]["train"]["columns"]}
    names = ["x0", "x1", "x2", "x3"]
    np.testing.assert_allclose(
        [round(cols[n]["mean"], 3) for n in names], [299.266, 1.001, 0.489, 7.0]
    )
    np.testing.assert_allclose(
        [round(cols[n]["std"], 3) for n in names], [10.292, 0.095, 0.199, 0.0]
    )
    assert [cols[n]["nan"] for n in names] == [0, 3, 0, 0]
    constant = [f.columns for f in report.findings if f.code == "F001"]
    assert constant == [("x3",)]


def test_label_ratio_matches_the_seed():
    report = datavet.audit(whole_table(), target="label", select="L001")
    classes = report.to_dict()["datasets"]["train"]["label"]["classes"]
    counts = {c["value"]: c["count"] for c in classes}
    assert [round(counts[k] / 500, 3) for k in (0, 1)] == [0.494, 0.506]
    assert report.findings == []  # 0.494 / 0.506 is no imbalance


def test_ten_rows_shared_by_train_and_test():
    train, test = sample.planted()
    (f,) = datavet.audit(train, test, target="label", select="S001").findings
    assert f.n_affected == 10


def test_label_block_at_the_start():
    # The seed prints label-1 rates 0.92 in the first 50 rows vs 0.46 in the rest; datavet finds
    # the block itself: the first 40 rows, all label 1.
    table = whole_table()
    assert round(table.label[:50].mean(), 3) == 0.92 and round(table.label[50:].mean(), 2) == 0.46
    (f,) = datavet.audit(table, target="label", select="L002").findings
    assert f.metrics["segment_rows"] == 40 and f.metrics["segment_rate"] == 1.0
