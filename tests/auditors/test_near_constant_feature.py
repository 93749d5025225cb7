"""F002 near-constant-feature: one value covers >= 99% of the non-missing rows in train."""

from __future__ import annotations

import numpy as np
import pandas as pd

import datavet
from datavet import Severity

NAN = float("nan")


def run(train, select="F002", **kw):
    return datavet.audit(train, target="label", select=select, **kw)


def test_fires_at_99_percent():
    train = pd.DataFrame({"x": [0] * 99 + [1], "label": [0, 1] * 50})
    report = run(train)
    (f,) = report.findings
    assert (f.code, f.name, f.severity) == ("F002", "near-constant-feature", Severity.INFO)
    assert f.split == "train" and f.columns == ("x",)
    assert f.n_affected == 1  # the rows that are not the dominant value
    assert f.metrics["top_fraction"] == 0.99 and f.metrics["distinct"] == 2
    assert "'x'" in f.message and "99.0%" in f.message and "100 non-missing" in f.message
    assert "at least" not in f.message  # counts are exact below 1,024 distinct values
    assert report.outcomes[0].status.value == "failed"


def test_quiet_at_98_percent():
    train = pd.DataFrame({"x": [0] * 98 + [1, 2], "label": [0, 1] * 50})
    report = run(train)
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"


def test_share_is_of_the_non_missing_rows():
    # 99 of 100 present values are 5; 30 missing rows do not dilute the share.
    x = [5.0] * 99 + [6.0] + [NAN] * 30
    train = pd.DataFrame({"x": x, "label": [0, 1] * 65})
    (f,) = run(train).findings
    assert f.metrics["top_fraction"] == 0.99 and f.n_affected == 1
    assert "100 non-missing" in f.message


def test_string_column():
    train = pd.DataFrame({"s": ["a"] * 199 + ["b"], "label": [0, 1] * 100})
    (f,) = run(train).findings
    assert f.columns == ("s",) and "'a'" in f.message and "99.5%" in f.message


def test_constant_column_is_f001_not_f002():
    train = pd.DataFrame({"k": [1.0] * 100, "label": [0, 1] * 50})
    report = run(train, select=["F001", "F002"])
    assert [f.code for f in report.findings] == ["F001"]


def test_threshold_override():
    train = pd.DataFrame({"x": [0] * 98 + [1, 2], "label": [0, 1] * 50})
    (f,) = run(train, thresholds={"F002": {"min_fraction": 0.95}}).findings
    assert f.metrics["top_fraction"] == 0.98 and f.n_affected == 2


def test_beyond_1024_distinct_values_the_share_is_a_lower_bound():
    n = 300_000
    x = np.zeros(n)
    x[::250] = np.arange(1, 1201)  # 1,200 other values, once each: 99.6% zeros
    train = pd.DataFrame({"x": x, "label": np.arange(n) % 2})
    (f,) = run(train).findings
    true_share = (n - 1200) / n
    # Misra-Gries: never over, and under by at most n / 1025 rows
    assert true_share - 1 / 1025 <= f.metrics["top_fraction"] <= true_share
    assert "at least" in f.message


def test_skipped_on_a_single_row():
    (o,) = run(pd.DataFrame({"x": [1.0], "label": [0]})).outcomes
    assert o.status.value == "skipped" and "1 row" in o.reason


def test_many_near_constant_columns_are_one_finding():
    n = 1000
    data = {f"c{i}": np.r_[np.ones(3), np.zeros(n - 3)] for i in range(12)}
    data["label"] = np.arange(n) % 2
    report = datavet.audit(pd.DataFrame(data), target="label", select="F002")
    (f,) = report.findings
    assert f.columns == tuple(f"c{i}" for i in range(12)) and f.n_affected == 12
    assert f.message.startswith("12 columns are nearly constant in train: 'c0' (0.0 99.7%)")
    assert f.message.endswith("(+7 more).")
    assert f.metrics["columns"] == 12 and f.metrics["max_top_fraction"] == 0.997
