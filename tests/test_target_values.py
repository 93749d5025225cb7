"""Label rules on hostile targets: infinite labels, count targets, a corrupt regression value
hiding a shift, and wording at the boundaries."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import datavet
from datavet.scan import LabelStats
from datavet.tasks import detect_task


def _regression_with_inf() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=300)})
    df["y"] = df.x * 3 + rng.normal(size=300)
    df.loc[10, "y"] = np.inf
    df.loc[20, "y"] = -np.inf
    return df


def test_an_infinite_regression_target_is_reported_by_v003():
    report = datavet.audit(_regression_with_inf(), target="y", select="V003")
    (f,) = report.findings
    assert f.code == "V003" and f.columns == ("y",)
    assert "+inf in 1 row and -inf in 1 row" in f.message and "rows 10, 20" in f.message
    assert f.examples == (10, 20) and f.n_affected == 2
    assert f.metrics["posinf"] == 1 and f.metrics["neginf"] == 1
    assert not report.passed


def test_an_inf_in_a_binary_float_target_stays_classification():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"x": rng.normal(size=300), "y": rng.integers(0, 2, 300).astype(float)})
    df.loc[10, "y"] = np.inf
    report = datavet.audit(df, target="y", select="V003,L001")
    assert report.task == "classification"
    assert report.task_reason == "target holds whole numbers with 2 distinct values"
    assert [f.code for f in report.findings] == ["V003"]


def test_label_stats_keep_infinite_labels_out_of_the_classes_and_merge_their_counts():
    a = LabelStats.of("y", pa.array([0.0, 1.0, np.inf, np.nan]), 0)
    b = LabelStats.of("y", pa.array([1.0, -np.inf]), 4)
    merged = a.merge(b)
    assert merged.integral and set(merged.values.keys()) == {0.0, 1.0}
    assert (merged.posinf, merged.neginf, merged.inf_rows) == (1, 1, (2, 5))
    assert merged.missing == 1 and merged.present == 3
    assert merged.positions.mean is not None  # moments of the finite labels survive


def test_tensor_labels_report_inf_apart_from_nan():
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(300, 4, generator=gen)
    y = torch.randint(0, 3, (300,), generator=gen).float()
    y[5], y[7] = float("nan"), float("inf")
    report = datavet.audit((x, y), select="V003")
    assert report.task == "classification"
    messages = sorted(f.message for f in report.findings)
    assert len(messages) == 2
    assert any("+inf in 1 row" in m and "row 7" in m for m in messages)
    assert any("missing in 1 row " in m and "row 5" in m for m in messages)


def _poisson_splits():
    rng = np.random.default_rng(24)
    x = rng.normal(size=(5000, 3))
    d = pd.DataFrame(x, columns=["a", "b", "c"])
    d["label"] = rng.poisson(np.exp(1.5 + 0.5 * x[:, 0]))
    train, test = d.iloc[:4000], d.iloc[4000:].copy()
    test.loc[test.label.idxmax(), "label"] = 27
    return train, test


def test_a_poisson_count_target_is_regression():
    train, test = _poisson_splits()
    report = datavet.audit(train, test, target="label", select="L001,L003", baselines=False)
    assert report.task == "regression"
    assert "like counts" in report.task_reason and "--task classification" in report.task_reason
    assert report.findings == [] and report.passed
    # class codes have no count's shape: digits equally common, 12 codes, too few values
    rng = np.random.default_rng(2)
    for codes in (rng.integers(0, 10, 5000), rng.integers(0, 12, 5000), rng.poisson(1.5, 300)):
        assert detect_task(LabelStats.of("y", pa.array(codes), 0))[0] == "classification"


def test_l003_on_a_count_beyond_trains_range_is_a_warning_that_says_so():
    rng = np.random.default_rng(5)  # counts peaking at 0: left to classification
    train = pd.DataFrame({"x": rng.normal(size=4000), "label": rng.negative_binomial(1, 0.2, 4000)})
    test = pd.DataFrame({"x": rng.normal(size=500), "label": rng.negative_binomial(1, 0.2, 500)})
    test.loc[0, "label"] = int(train.label.max()) + 20
    report = datavet.audit(train, test, target="label", select="L003", baselines=False)
    assert report.task == "classification"
    (f,) = report.findings
    assert f.severity == datavet.Severity.WARNING
    assert "if the target is a count" in f.message and "--task regression" in f.hint
    # a new digit after ten equally common ones is a new class: still an error
    train = pd.DataFrame({"x": rng.normal(size=3000), "label": rng.integers(0, 10, 3000)})
    test = pd.DataFrame({"x": rng.normal(size=300), "label": rng.integers(0, 11, 300)})
    (f,) = datavet.audit(train, test, target="label", select="L003").findings
    assert f.severity == datavet.Severity.ERROR and "count" not in f.message


def test_l003_names_the_train_class_that_differs_only_in_case_or_whitespace():
    train = pd.DataFrame({"x": range(8), "label": ["cat", "dog"] * 4})
    test = pd.DataFrame({"x": range(4), "label": ["Cat", " dog ", "bird", "dog"]})
    (f,) = datavet.audit(train, test, target="label", select="L003").findings
    assert "'Cat' (1 row; train has 'cat', which differs only in case" in f.message
    assert "' dog ' (1 row; train has 'dog'" in f.message
    assert "'bird' (1 row)" in f.message


def test_l001_wording_matches_the_at_most_comparison():
    df = pd.DataFrame({"x": range(1100), "label": [0] * 1000 + [1] * 100})  # exactly 1/10
    (f,) = datavet.audit(df, target="label", select="L001").findings
    assert "1 of 2 classes have at most 1/10 of the majority's rows" in f.message
    assert "under" not in f.message


def _shifted(corrupt: bool):
    rng = np.random.default_rng(27)
    train = pd.DataFrame({"a": rng.normal(size=3000)})
    train["label"] = (train.a * 2 + rng.normal(0, 5, 3000) + 100).round(2)
    if corrupt:
        train.loc[17, "label"] = 99999.0
    test = pd.DataFrame({"a": rng.normal(size=600)})
    test["label"] = (test.a * 2 + rng.normal(0, 5, 600) + 106).round(2)
    return train, test


def test_l004_sees_a_shift_behind_one_corrupt_target_and_names_it():
    train, test = _shifted(corrupt=True)
    (f,) = datavet.audit(train, test, target="label", select="L004").findings
    assert f.code == "L004"
    assert "median 100 -> 106" in f.message and "99,999 (train row 17)" in f.message
    assert f.metrics["robust_d"] > 1 and f.metrics["p_value"] < 1e-50
    assert f.metrics["extreme_values"] == 1
    # without the bad value the mean comparison speaks as before
    train, test = _shifted(corrupt=False)
    (f,) = datavet.audit(train, test, target="label", select="L004").findings
    assert "Cohen's d" in f.message and "robust_d" not in f.metrics
    # one corrupt value and no shift: quiet
    train.loc[17, "label"] = 99999.0
    test["label"] = test.label - 6
    assert datavet.audit(train, test, target="label", select="L004").findings == []
