"""V007 sentinel-values: missing data filled with 0 / -999 / 9999 (a spike far outside the rest)
fires; real zeros, zero-inflated amounts and placeholders inside the range stay quiet."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet import Severity
from datavet.auditors.sentinel_values import sentinel_shaped


def run(train, test=None, **kw):
    return datavet.audit(train, test, target="label", select="V007", **kw)


def frame(x, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": x, "label": rng.integers(0, 2, len(x))})


def blood_pressure(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    return np.round(rng.normal(72, 12, n)).astype(float)


@pytest.mark.parametrize("placeholder", [0, -999, 9999, -1])
def test_filled_missing_values_fire(placeholder):
    x = blood_pressure()
    x[::20] = placeholder  # 5% of the rows
    report = run(frame(x))
    (f,) = report.findings
    assert (f.code, f.name, f.severity) == ("V007", "sentinel-values", Severity.WARNING)
    assert f.split == "train" and f.columns == ("x",)
    assert f.n_affected == 50 and f.metrics["value"] == placeholder
    assert f.metrics["share"] == pytest.approx(0.05)
    assert f"{placeholder} in 50 rows (5.0%)" in f.message and "placeholder" in f.message
    assert f.examples[:3] == (0, 20, 40)
    assert "NaN" in f.hint


def test_the_healthy_twin_is_quiet():
    report = run(frame(blood_pressure()))
    assert report.findings == [] and report.outcomes[0].status.value == "passed"


def test_zero_inflated_amounts_are_quiet():
    # capital gains: 0 for most rows, then amounts spread over orders of magnitude
    rng = np.random.default_rng(1)
    x = np.where(rng.random(2000) < 0.9, 0.0, np.round(rng.lognormal(8, 1.5, 2000)))
    assert run(frame(x)).findings == []


def test_real_zero_inside_the_range_is_quiet():
    rng = np.random.default_rng(2)
    x = np.round(rng.normal(0, 3, 1000))  # 0 is the most frequent value and a real one
    assert run(frame(x)).findings == []


def test_counts_starting_at_one_with_zeros_are_quiet():
    rng = np.random.default_rng(3)
    x = rng.poisson(2, 1000).astype(float)
    assert run(frame(x)).findings == []


def test_a_rare_placeholder_below_the_share_is_quiet():
    x = blood_pressure()
    x[:5] = -999  # 0.5%
    assert run(frame(x)).findings == []


def test_a_binary_or_few_valued_column_is_quiet():
    x = np.array([0.0] * 100 + [50.0, 51.0] * 450)
    assert run(frame(x)).findings == []


def test_test_split_and_several_columns():
    train = frame(blood_pressure())
    test = frame(blood_pressure(seed=5))
    test.loc[::10, "x"] = 9999
    glucose = np.round(np.random.default_rng(6).normal(120, 20, 2000))
    train["glucose"], test["glucose"] = glucose[:1000], glucose[1000:]
    train.loc[::25, "glucose"] = 0
    report = run(train, test)
    by_split = {f.split: f for f in report.findings}
    assert by_split["train"].columns == ("glucose",)
    assert by_split["test"].columns == ("x",) and by_split["test"].metrics["value"] == 9999


def test_sentinel_shapes():
    assert [sentinel_shaped(v) for v in (0, -1, 99, -999, 9999, 99999.0)] == [True] * 6
    assert [sentinel_shaped(v) for v in (9, 1, 100, 998, -2, 0.5, float("nan"))] == [False] * 7


def test_a_blank_pixel_next_to_the_intensities_is_quiet():
    # sklearn's digits: 0 (no ink) in 17% of rows, the other values 1..16 (median 14)
    rng = np.random.default_rng(4)
    x = np.where(rng.random(1800) < 0.17, 0.0, np.clip(rng.normal(14, 3, 1800).round(), 1, 16))
    assert run(frame(x)).findings == []


def test_a_structural_zero_covering_many_rows_is_quiet():
    # log(max(1, payment)): 0 for the 40% who got none, logs from 2.5 to 7 for the others
    rng = np.random.default_rng(5)
    x = np.where(rng.random(2000) < 0.4, 0.0, rng.normal(6.2, 0.8, 2000).clip(2.5, 7.2))
    assert run(frame(x)).findings == []


def test_a_missing_test_score_written_as_zero_fires():
    # PSAT math scores run 20..80; 2% of the students have 0 (not taken)
    rng = np.random.default_rng(6)
    x = rng.normal(58, 10, 1200).round().clip(23, 80)
    x[::50] = 0
    (f,) = run(frame(x)).findings
    assert f.metrics["value"] == 0 and f.n_affected == 24


def test_a_zero_below_values_that_come_close_to_zero_is_quiet():
    # MASS::fgl magnesium: 0 in 20% of the glass fragments, the others 0.33..4.49 (median 3.5)
    rng = np.random.default_rng(7)
    x = np.where(rng.random(1000) < 0.19, 0.0, rng.normal(3.5, 0.12, 1000).clip(0.33, 4.49))
    x[1:40:4] = rng.uniform(0.33, 1.5, 10)
    assert run(frame(x)).findings == []


def _employment(n=3000, seed=22):
    rng = np.random.default_rng(seed)
    employed = rng.random(n) < 0.93
    hours = np.where(employed, rng.normal(40, 4, n).round(), 0.0)
    return rng, employed, pd.DataFrame({"hours_per_week": hours, "age": rng.integers(18, 70, n)})


@pytest.mark.parametrize(
    "companion",
    [
        lambda employed: employed.astype(int),
        lambda employed: np.where(employed, "employed", "unemployed"),
        lambda employed: employed,
    ],
)
def test_a_zero_another_column_explains_is_a_real_value(companion):
    rng, employed, d = _employment()
    d["status"] = companion(employed)
    d["label"] = rng.integers(0, 2, len(d))
    assert run(d).findings == []
    # the same zeros with no column that marks them: a placeholder
    assert [f.columns for f in run(d.drop(columns="status")).findings] == [("hours_per_week",)]


def test_companions_that_explain_nothing():
    rng, employed, d = _employment()
    lost = ~employed
    d["label"] = rng.integers(0, 2, len(d))
    cases = {
        # another field lost on the same rows: a stand-in level, a missing value, a stand-in
        # number in a many-valued column
        "status": np.where(lost, "unknown", rng.choice(["a", "b"], len(d))),
        "grade": np.where(lost, -1, rng.integers(0, 3, len(d))),
        "score": np.where(lost, np.nan, rng.integers(0, 3, len(d))),
        "chol": np.where(lost, 0, rng.normal(200, 20, len(d)).round()),
    }
    for name, values in cases.items():
        (f,) = run(d.assign(**{name: values})).findings
        assert "hours_per_week" in f.columns, name  # (chol's 0 is one too)
    # a code stays a code where a flag explains it: 999 for "no upper bound" is read as a number
    codes = d.assign(hours_per_week=np.where(lost, 999, d.hours_per_week), flag=lost.astype(int))
    (f,) = run(codes).findings
    assert f.columns == ("hours_per_week",) and f.metrics["value"] == 999
    # the target is never the explanation (zeros exactly where the label is 0 is a leak)
    (f,) = run(d.assign(label=employed.astype(int))).findings
    assert f.columns == ("hours_per_week",)


def _priced(n=2000, seed=1):
    rng = np.random.default_rng(seed)
    y = rng.normal(300, 50, n).round()
    return rng, pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "price": y})


@pytest.mark.parametrize("placeholder", [-999, -1, 9999])
def test_a_regression_targets_placeholder_is_found(placeholder):
    rng, d = _priced()
    d.loc[::25, "price"] = placeholder
    test = d.iloc[:500].assign(a=rng.normal(size=500), b=rng.normal(size=500))
    report = datavet.audit(d, test, target="price", select="V007")
    assert report.task == "regression"
    by_split = {f.split: f for f in report.findings}
    assert set(by_split) == {"train", "test"}
    f = by_split["train"]
    assert f.columns == ("price",) and f.n_affected == 80 and f.metrics["value"] == placeholder
    assert f.examples == (0, 25, 50, 75, 100)
    assert f.message.startswith("The target 'price' in train has ")
    assert "learns to predict the placeholder" in f.message
    assert "judged against the placeholder" in by_split["test"].message
    assert by_split["test"].n_affected == 20


def test_a_target_without_placeholder_and_class_labels_stay_quiet():
    rng, d = _priced()
    assert datavet.audit(d, target="price", select="V007").findings == []
    # zero-inflated sales (0 next to a wide spread) is a real 0, as for a feature
    sales = np.where(rng.random(len(d)) < 0.1, 0, rng.lognormal(5, 1.5, len(d)).round())
    assert datavet.audit(d.assign(price=sales), target="price", select="V007").findings == []
    # a class label of -1 is a class (L001/L003 look at labels), not a placeholder
    labels = np.where(rng.random(len(d)) < 0.05, -1, rng.integers(0, 3, len(d)))
    report = datavet.audit(d.assign(price=labels), target="price", select="V007")
    assert report.task == "classification" and report.findings == []
