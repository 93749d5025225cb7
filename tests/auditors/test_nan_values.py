"""V001 nan-values: fires per column and split on NaN / None / NaT; inf is not NaN."""

from __future__ import annotations

import numpy as np
import pandas as pd

import datavet
from datavet import Severity

NAN, INF = float("nan"), float("inf")


def run(train, test=None, **kw):
    return datavet.audit(train, test, target="label", select="V001", **kw)


def by_column(report, code="V001") -> dict:
    return {(f.split, f.columns): f for f in report.findings if f.code == code}


def test_fires_with_count_rows_fraction_and_message():
    train = pd.DataFrame(
        {"x": [1.0, NAN, 3.0, NAN], "y": [1.0, 2.0, 3.0, 4.0], "label": [0, 1, 0, 1]}
    )
    report = run(train)
    (f,) = report.findings
    assert (f.code, f.name, f.severity) == ("V001", "nan-values", Severity.ERROR)
    assert f.split == "train" and f.columns == ("x",)
    assert f.n_affected == 2 and f.examples == (1, 3)
    assert f.metrics["count"] == 2 and f.metrics["fraction"] == 0.5
    assert "'x'" in f.message and "2 NaN" in f.message and "train" in f.message
    assert "50.0%" in f.message and "rows 1, 3" in f.message and "more" not in f.message
    (o,) = report.outcomes
    assert o.status.value == "failed" and o.n_findings == 1
    assert report.exit_code() == 1


def test_nan_none_and_inf_are_counted_apart():
    train = pd.DataFrame(
        {
            "x": [1.0, NAN, INF, -INF, None, 2.0],  # NaN at 1, None at 4; inf at 2 and 3
            "s": ["a", None, "b", np.nan, "c", "d"],  # None at 1, NaN at 3
            "label": [0, 1, 0, 1, 0, 1],
        }
    )
    report = datavet.audit(train, target="label", select=["V001", "V002"])
    nan = by_column(report, "V001")
    assert set(nan) == {("train", ("x",)), ("train", ("s",))}
    assert nan["train", ("x",)].n_affected == 2 and nan["train", ("x",)].examples == (1, 4)
    assert nan["train", ("s",)].n_affected == 2 and nan["train", ("s",)].examples == (1, 3)
    (inf,) = by_column(report, "V002").values()
    assert inf.columns == ("x",) and inf.n_affected == 2 and inf.examples == (2, 3)
    assert inf.metrics["posinf"] == 1 and inf.metrics["neginf"] == 1


def test_nat_and_pandas_na_are_missing():
    train = pd.DataFrame(
        {
            "t": pd.to_datetime(["2020-01-01", None, "2020-01-03"]),
            "i": pd.array([1, None, 3], dtype="Int64"),
            "label": [0, 1, 0],
        }
    )
    found = by_column(run(train))
    assert set(found) == {("train", ("t",)), ("train", ("i",))}
    for f in found.values():
        assert f.n_affected == 1 and f.examples == (1,)
        assert "row 1" in f.message


def test_each_split_is_counted_on_its_own():
    train = pd.DataFrame({"a": [NAN, 1.0, 2.0], "b": [1.0, 2.0, 3.0], "label": [0, 1, 0]})
    test = pd.DataFrame(
        {"a": [1.0, 2.0, 3.0, 4.0], "b": [1.0, NAN, 2.0, NAN], "label": [0, 1, 0, 1]}
    )
    found = by_column(run(train, test))
    assert set(found) == {("train", ("a",)), ("test", ("b",))}
    assert found["train", ("a",)].n_affected == 1 and found["train", ("a",)].examples == (0,)
    t = found["test", ("b",)]
    assert t.n_affected == 2 and t.examples == (1, 3) and "in test" in t.message
    assert "50.0%" in t.message


def test_quiet_on_inf_and_on_a_missing_label():
    # inf belongs to V002 and a missing target to V003: neither is a NaN feature.
    train = pd.DataFrame({"x": [1.0, INF, -INF, 4.0], "label": [0, NAN, 1, 0]})
    report = run(train)
    assert report.findings == []
    (o,) = report.outcomes
    assert o.status.value == "passed"


def test_entirely_missing_column_says_so():
    train = pd.DataFrame({"m": [NAN] * 4, "n": [None] * 4, "label": [0, 1, 0, 1]})
    found = by_column(run(train))
    assert set(found) == {("train", ("m",)), ("train", ("n",))}
    for f in found.values():
        assert f.n_affected == 4 and f.metrics["fraction"] == 1.0
        assert "entirely missing" in f.message and "all 4 rows" in f.message


def test_examples_are_the_first_five_and_the_message_counts_the_rest():
    rows = [1, 2, 4, 6, 7, 8, 9, 11]
    x = np.arange(12, dtype=float)
    x[rows] = NAN
    train = pd.DataFrame({"x": x, "label": [0, 1] * 6})
    # Small batches: the examples must survive the merge of many partial profiles.
    (f,) = run(train, batch_rows=3).findings
    assert f.n_affected == 8
    assert f.examples == (1, 2, 4, 6, 7)
    assert "rows 1, 2, 4, 6, 7 (+3 more)" in f.message


def test_min_count_threshold():
    train = pd.DataFrame({"x": [NAN, NAN, 1.0, 2.0], "label": [0, 1, 0, 1]})
    assert run(train, thresholds={"V001": {"min_count": 3}}).findings == []
    assert len(run(train, thresholds={"V001": {"min_count": 2}}).findings) == 1


def test_many_columns_with_nan_are_one_finding_that_keeps_every_column():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(50, 40)), columns=[f"p{i}" for i in range(40)])
    frame.iloc[:3, :30] = np.nan  # 30 columns, 3 NaN each
    frame["label"] = rng.integers(0, 2, 50)
    report = datavet.audit(frame, target="label", select=["V001"])
    (finding,) = report.findings
    assert finding.columns == tuple(f"p{i}" for i in range(30))
    # rows: the 30 columns' NaN share rows 0-2 (90 cells)
    assert finding.n_affected == 3 and finding.metrics["cells"] == 90
    assert finding.examples == (0, 1, 2)
    assert finding.metrics["columns"] == 30 and finding.metrics["count[p29]"] == 3
    assert "30 columns have NaN/missing values in train" in finding.message
    assert "(+25 more)" in finding.message


def test_a_few_columns_with_nan_keep_one_finding_each():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(50, 8)), columns=[f"p{i}" for i in range(8)])
    frame.iloc[:2, :5] = np.nan
    frame["label"] = rng.integers(0, 2, 50)
    report = datavet.audit(frame, target="label", select=["V001"])
    assert [f.columns for f in report.findings] == [(f"p{i}",) for i in range(5)]
