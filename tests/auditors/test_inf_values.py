"""V002 inf-values: +inf and -inf counted separately, apart from NaN."""

from __future__ import annotations

import numpy as np
import pandas as pd

import datavet
from datavet import Severity

NAN, INF = float("nan"), float("inf")


def run(train, test=None, **kw):
    return datavet.audit(train, test, target="label", select="V002", **kw)


def test_fires_with_plus_and_minus_inf_counted_apart():
    train = pd.DataFrame(
        {"x": [1.0, INF, 2.0, -INF, INF, NAN], "y": np.arange(6.0), "label": [0, 1] * 3}
    )
    report = run(train)
    (f,) = report.findings
    assert (f.code, f.name, f.severity) == ("V002", "inf-values", Severity.ERROR)
    assert f.split == "train" and f.columns == ("x",)
    assert f.n_affected == 3  # the NaN at row 5 is not an inf
    assert f.examples == (1, 3, 4)
    assert f.metrics["posinf"] == 2 and f.metrics["neginf"] == 1
    assert f.metrics["fraction"] == 0.5
    assert "'x'" in f.message and "2 +inf and 1 -inf" in f.message
    assert "50.0%" in f.message and "rows 1, 3, 4" in f.message
    (o,) = report.outcomes
    assert o.status.value == "failed"


def test_only_negative_infinity_is_named_as_such():
    train = pd.DataFrame({"x": [1.0, -INF, 2.0, 3.0], "label": [0, 1, 0, 1]})
    (f,) = run(train).findings
    assert f.metrics["posinf"] == 0 and f.metrics["neginf"] == 1
    assert "1 -inf" in f.message and "+inf" not in f.message
    assert f.examples == (1,)


def test_quiet_on_nan_huge_finite_values_and_the_text_inf():
    big = 1e150  # huge but finite (and its square still fits in a float64)
    train = pd.DataFrame(
        {
            "x": [big, -big, NAN, 0.0],
            "s": ["inf", "-inf", "Infinity", "x"],  # text, not a number
            "label": [0, 1, 0, 1],
        }
    )
    report = run(train)
    assert report.findings == []
    (o,) = report.outcomes
    assert o.status.value == "passed"


def test_each_split_on_its_own():
    train = pd.DataFrame({"x": [1.0, 2.0, 3.0], "label": [0, 1, 0]})
    test = pd.DataFrame({"x": [1.0, 2.0, INF], "label": [0, 1, 0]})
    (f,) = run(train, test).findings
    assert f.split == "test" and f.examples == (2,) and "in test" in f.message
    assert f.metrics["posinf"] == 1


def test_float32_column():
    train = pd.DataFrame(
        {"x": np.array([1, np.inf, -np.inf, 2], np.float32), "label": [0, 1, 0, 1]}
    )
    (f,) = run(train).findings
    assert f.n_affected == 2 and f.metrics["posinf"] == 1 and f.metrics["neginf"] == 1


def test_examples_capped_at_five():
    x = np.full(9, INF)
    x[[0, 4]] = 1.0  # inf at 1, 2, 3, 5, 6, 7, 8
    train = pd.DataFrame({"x": x, "label": [0, 1, 0, 1, 0, 1, 0, 1, 0]})
    (f,) = run(train, batch_rows=2).findings
    assert f.n_affected == 7
    assert f.examples == (1, 2, 3, 5, 6)
    assert "(+2 more)" in f.message


def test_many_columns_with_inf_are_one_finding():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(50, 12)), columns=[f"p{i}" for i in range(12)])
    frame.iloc[0, :7] = np.inf
    frame["label"] = rng.integers(0, 2, 50)
    (finding,) = datavet.audit(frame, target="label", select=["V002"]).findings
    assert len(finding.columns) == 7 and finding.n_affected == 1  # one row, 7 cells
    assert finding.metrics["cells"] == 7
    assert "7 columns have +inf/-inf values in train" in finding.message
