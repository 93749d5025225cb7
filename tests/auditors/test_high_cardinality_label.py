"""L005 high-cardinality-label: a target with too many distinct values to be classes.

It fires when whole-number or text labels are nearly all distinct (>= 90% of >= 50 labelled rows:
an ID column) or when classification is chosen with more than 100 classes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet import Severity

NAN = float("nan")


def frame(labels) -> pd.DataFrame:
    return pd.DataFrame({"x": np.arange(len(labels), dtype=float), "label": labels})


def run(train, **kw):
    return datavet.audit(train, target="label", select="L005", **kw)


def test_fires_on_an_id_like_integer_label():
    report = run(frame(np.arange(1000, 1200)))  # 200 rows, 200 distinct whole numbers
    assert report.task == "regression"  # over 50 distinct integers: auto picks regression
    (f,) = report.findings
    assert (f.code, f.name, f.severity) == ("L005", "high-cardinality-label", Severity.WARNING)
    assert f.split == "train" and f.columns == ("label",)
    assert f.n_affected == 200 and f.examples == ()
    assert f.metrics["distinct"] == 200 and f.metrics["rows"] == 200
    assert f.message == (
        "Target 'label' has 200 distinct values in 200 train rows (100.0% of labelled rows), "
        "treated as regression: it looks like an ID column; check that the right column is the "
        "target."
    )
    assert f.hint and "--task regression" in f.hint
    assert report.outcomes[0].status.value == "failed"


def test_fires_on_150_classes_forced_to_classification():
    labels = np.arange(300) % 150  # each class twice: not ID-like (50% distinct)
    report = run(frame(labels), task="classification")
    (f,) = report.findings
    assert f.n_affected == 300
    assert f.metrics["distinct"] == 150 and f.metrics["rows"] == 300
    assert "150 distinct values in 300 train rows (50.0% of labelled rows)" in f.message
    assert "treated as classification: use --task regression if these are quantities" in f.message
    assert "ID column" not in f.message


def test_quiet_on_100_classes_forced_to_classification():
    report = run(frame(np.arange(300) % 100), task="classification")
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"


def test_the_same_150_values_as_regression_are_quiet():
    # many values but repeated, and a regression target: neither ID-like nor too many classes
    assert run(frame(np.arange(300) % 150)).findings == []


def test_quiet_on_a_three_class_label():
    report = run(frame(np.arange(300) % 3))
    assert report.task == "classification"
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"


def test_quiet_on_a_float_regression_target():
    report = run(frame(np.linspace(0.0, 1.0, 200) + 0.001))  # 200 distinct, non-integral
    assert report.task == "regression"
    assert report.findings == []


def test_fires_on_text_ids():
    report = run(frame([f"id-{i:04d}" for i in range(60)]))
    assert report.task == "classification"
    (f,) = report.findings
    assert f.metrics["distinct"] == 60 and f.n_affected == 60
    assert "treated as classification: it looks like an ID column" in f.message


@pytest.mark.parametrize(
    "labels, fires",
    [
        (list(range(45)) + [0] * 5, True),  # 45 distinct of 50 rows: exactly 90%
        (list(range(44)) + [0] * 6, False),  # 44 of 50: 88%
        (list(range(49)), False),  # all distinct but fewer than 50 rows
    ],
    ids=["90%", "88%", "49-rows"],
)
def test_id_thresholds(labels, fires):
    findings = run(frame(labels)).findings
    assert len(findings) == (1 if fires else 0)
    if fires:
        assert findings[0].metrics["distinct"] == 45 and "(90.0% of labelled rows)" in (
            findings[0].message
        )


def test_missing_labels_are_left_out_of_the_count():
    labels = np.concatenate([np.arange(200, dtype=float), np.full(20, NAN)])
    (f,) = run(frame(labels)).findings
    assert f.n_affected == 200 and f.metrics["rows"] == 200
    assert "200 distinct values in 200 train rows (100.0%" in f.message


def test_more_distinct_values_than_the_counter_keeps():
    (f,) = run(frame(np.arange(2_000))).findings
    assert f.metrics["distinct"] == -1 and f.metrics["rows"] == 2_000
    assert "more than 1,024 distinct values in 2,000 train rows, treated as" in f.message
    assert "of labelled rows" not in f.message


def test_counts_across_batches():
    train = frame(np.arange(200))
    assert run(train, batch_rows=33).findings == run(train).findings


def test_skipped_without_a_target():
    (o,) = datavet.audit(pd.DataFrame({"x": [1.0, 2.0]}), select="L005").outcomes
    assert o.status.value == "skipped" and "target" in o.reason


def test_skipped_with_fewer_than_two_labelled_rows():
    report = run(frame([1.0, NAN, NAN]))
    assert report.findings == []
    (o,) = report.outcomes
    assert o.status.value == "skipped" and "fewer than 2 labelled rows" in o.reason
