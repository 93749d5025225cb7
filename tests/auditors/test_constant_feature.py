"""F001 constant-feature: one distinct non-missing value in train."""

from __future__ import annotations

import pandas as pd

import datavet
from datavet import Severity

NAN, INF = float("nan"), float("inf")


def run(train, test=None, select="F001", **kw):
    return datavet.audit(train, test, target="label", select=select, **kw)


def test_fires_on_a_constant_numeric_column():
    train = pd.DataFrame({"k": [7, 7, 7, 7], "x": [1.0, 2.0, 3.0, 4.0], "label": [0, 1, 0, 1]})
    report = run(train)
    (f,) = report.findings
    assert (f.code, f.name, f.severity) == ("F001", "constant-feature", Severity.WARNING)
    assert f.split == "train" and f.columns == ("k",)
    assert f.n_affected == 4 and f.metrics["distinct"] == 1
    assert "'k'" in f.message and "constant" in f.message and "all 4 " in f.message
    assert "7" in f.message and "missing)" not in f.message
    assert report.outcomes[0].status.value == "failed"


def test_constant_with_some_nan_is_still_constant():
    train = pd.DataFrame({"k": [7.0, NAN, 7.0, 7.0, None], "label": [0, 1, 0, 1, 0]})
    (f,) = run(train).findings
    assert f.columns == ("k",) and f.n_affected == 3
    assert "all 3 non-missing" in f.message and "(2 missing)" in f.message


def test_string_and_bool_columns_can_be_constant():
    train = pd.DataFrame({"s": ["z", "z", "z"], "b": [True, True, True], "label": [0, 1, 0]})
    found = {f.columns: f for f in run(train).findings}
    assert set(found) == {("s",), ("b",)}
    assert "'z'" in found["s",].message
    assert "True" in found["b",].message


def test_negative_zero_and_zero_are_one_value():
    train = pd.DataFrame({"z": [0.0, -0.0, 0.0, -0.0], "label": [0, 1, 0, 1]})
    (f,) = run(train).findings
    assert f.columns == ("z",)


def test_infinity_counts_as_a_value():
    train = pd.DataFrame(
        {"all_inf": [INF, INF, INF], "one_inf": [1.0, INF, 1.0], "label": [0, 1, 0]}
    )
    (f,) = run(train).findings
    assert f.columns == ("all_inf",)


def test_all_missing_column_is_v001_not_f001():
    train = pd.DataFrame(
        {"m": [NAN] * 3, "n": [None] * 3, "x": [1.0, 2.0, 3.0], "label": [0, 1, 0]}
    )
    report = run(train, select=["V001", "F001"])
    assert {f.code for f in report.findings} == {"V001"}
    status = {o.code: o.status.value for o in report.outcomes}
    assert status == {"V001": "failed", "F001": "passed"}


def test_quiet_on_two_distinct_values():
    train = pd.DataFrame({"k": [7, 7, 7, 8], "s": ["a", "a", "a", "b"], "label": [0, 1, 0, 1]})
    report = run(train)
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"


def test_only_train_is_checked():
    train = pd.DataFrame({"k": [1.0, 2.0, 3.0], "label": [0, 1, 0]})
    test = pd.DataFrame({"k": [5.0, 5.0, 5.0], "label": [0, 1, 0]})
    assert run(train, test).findings == []


def test_constant_across_batches():
    train = pd.DataFrame({"k": [3.0] * 10, "x": range(10), "label": [0, 1] * 5})
    (f,) = run(train, batch_rows=3).findings
    assert f.columns == ("k",) and f.n_affected == 10


def test_skipped_on_a_single_row():
    train = pd.DataFrame({"k": [1.0], "label": [0]})
    report = run(train)
    assert report.findings == []
    (o,) = report.outcomes
    assert o.status.value == "skipped" and "1 row" in o.reason


def test_the_planted_table_flags_x3_only(planted):
    train, _ = planted
    (f,) = run(train).findings
    assert f.columns == ("x3",) and f.n_affected == len(train)
