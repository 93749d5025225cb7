"""F001 constant-feature: one distinct non-missing value in train."""

from __future__ import annotations

import numpy as np
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
    (f,) = run(train).findings  # two constant columns: one finding that lists both
    assert f.columns == ("s", "b") and f.n_affected == 2
    assert f.message == "2 columns are constant in train: 's' (all 'z'), 'b' (all True)."


def test_a_hundred_constant_columns_are_one_finding_in_every_format():
    from datavet.output import html, render

    rng = np.random.default_rng(0)
    data = {f"px{i}": np.zeros(50) for i in range(100)}
    data["signal"] = rng.normal(size=50)
    data["label"] = rng.integers(0, 2, 50)
    report = datavet.audit(pd.DataFrame(data), target="label", select=["F001", "F002"])
    (f,) = [f for f in report.findings if f.code == "F001"]
    assert f.columns == tuple(f"px{i}" for i in range(100))
    assert f.n_affected == 100 and f.metrics["columns"] == 100
    assert f.message.startswith("100 columns are constant in train: 'px0' (all 0.0), 'px1'")
    assert f.message.endswith("'px4' (all 0.0) (+95 more).")
    assert [g.code for g in report.findings] == ["F001"]  # and not F002 for the same columns
    for fmt in ("text", "json", "sarif", "junit", "github"):
        assert "(+95 more)" in render(report, fmt), fmt
    page = html.render(report)
    assert "(+95 more)" in page and page.count('data-test-finding="F001"') == 1  # one card
    payload = __import__("json").loads(render(report, "json"))
    (j,) = payload["findings"]
    assert len(j["columns"]) == 100


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


def test_constant_dates_times_and_decimals_read_as_written():
    import datetime
    import decimal

    import pyarrow as pa

    n = 50
    table = pa.table(
        {
            "d": pa.array([datetime.date(2020, 1, 2)] * n),
            "t": pa.array([datetime.datetime(2020, 1, 2, 10, 0)] * n),
            "dur": pa.array([datetime.timedelta(minutes=90)] * n),
            "price": pa.array([decimal.Decimal("1.50")] * n, pa.decimal128(5, 2)),
            "city": pa.array(["Oslo"] * n),
            "x": pa.array([float(i) for i in range(n)]),
        }
    )
    report = datavet.audit(table, select="F001")
    (f,) = report.findings
    for shown in ("'d' (all 2020-01-02)", "'t' (all 2020-01-02 10:00:00)", "(all 1:30:00)"):
        assert shown in f.message
    assert "(all 1.5)" in f.message and "(all 'Oslo')" in f.message
    assert "datetime." not in f.message and "Decimal(" not in f.message
