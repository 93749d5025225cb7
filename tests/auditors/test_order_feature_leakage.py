"""B004: a feature that follows row order and predicts the label."""

from __future__ import annotations

import numpy as np
import pandas as pd

import datavet


def test_row_index_of_a_sorted_file_fires():
    n = 1000
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"row_id": np.arange(n), "a": rng.normal(size=n)})
    df["label"] = (np.arange(n) > 600).astype(int)
    (f,) = datavet.audit(df, target="label", select="B004").findings
    assert f.columns == ("row_id",) and f.metrics["order_rho"] > 0.999
    assert f.metrics["label_score"] > 0.99


def test_timestamp_with_drifting_regression_target():
    n = 800
    rng = np.random.default_rng(1)
    df = pd.DataFrame(
        {"ts": pd.date_range("2024-01-01", periods=n, freq="min"), "a": rng.normal(size=n)}
    )
    df["y"] = np.linspace(0, 5, n) + rng.normal(0, 1, n)
    (f,) = datavet.audit(df, target="y", select="B004").findings
    assert f.columns == ("ts",)


def test_quiet_when_the_label_does_not_follow_order_or_no_feature_does():
    n = 1000
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"row_id": np.arange(n), "label": rng.integers(0, 2, n)})
    assert datavet.audit(df, target="label", select="B004").findings == []
    df = pd.DataFrame({"a": rng.normal(size=n), "label": (np.arange(n) > 500).astype(int)})
    assert datavet.audit(df, target="label", select="B004").findings == []


def test_text_label_with_a_row_order_column_does_not_crash(tmp_path):
    # step 0..99 follows row order, the label is text: once crashed with UnboundLocalError
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "step": np.arange(100),
            "x": rng.normal(size=100),
            "label": rng.choice(["cat", "dog"], 100),
        }
    )
    path = tmp_path / "r.csv"
    df.to_csv(path, index=False)
    report = datavet.audit(str(path), target="label", select="B004")
    (o,) = report.outcomes
    assert o.status == "passed" and report.findings == []


def test_text_label_sorted_with_pandas_index_column(tmp_path):
    # iris-like: a file sorted by class and saved with pandas' default to_csv() (index column).
    # The index is no feature (left out, with a note), so B004 runs without a crash and names
    # nothing; the sorted file is L002's finding.
    rng = np.random.default_rng(1)
    labels = np.repeat(["setosa", "versicolor", "virginica"], 50)
    df = pd.DataFrame({"a": rng.normal(size=150), "species": labels})
    path = tmp_path / "iris.csv"
    df.to_csv(path)
    report = datavet.audit(str(path), target="species", select=["B004", "L002"])
    assert {o.code: o.status.value for o in report.outcomes} == {
        "L002": "failed",
        "B004": "passed",
    }
    assert [f.code for f in report.findings] == ["L002"]
