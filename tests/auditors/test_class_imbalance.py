"""L001 class-imbalance: majority / minority >= 10 in train."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet import Severity

NAN = float("nan")


def frame(labels) -> pd.DataFrame:
    return pd.DataFrame({"x": np.arange(len(labels), dtype=float), "label": labels})


def run(train, test=None, **kw):
    return datavet.audit(train, test, target="label", select="L001", **kw)


def test_fires_at_10_to_1():
    report = run(frame([0] * 10 + [1]))
    (f,) = report.findings
    assert (f.code, f.name, f.severity) == ("L001", "class-imbalance", Severity.WARNING)
    assert f.split == "train" and f.columns == ("label",)
    assert f.n_affected == 1  # rows in the classes under 1/10 of the majority
    assert f.metrics["ratio"] == 10.0 and f.metrics["classes"] == 2
    assert f.metrics["majority_fraction"] == pytest.approx(10 / 11)
    assert f.metrics["minority_fraction"] == pytest.approx(1 / 11)
    assert "10:1" in f.message
    assert "majority 0 has 10 rows" in f.message and "minority 1 has 1" in f.message
    assert "90.9%" in f.message and "9.1%" in f.message
    assert report.outcomes[0].status.value == "failed"


def test_quiet_at_9_to_1():
    report = run(frame([0] * 9 + [1]))
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"


def test_three_classes_counts_every_small_class():
    # 30 : 3 : 2 -> ratio 15; classes 1 (30/3 = 10) and 2 (30/2 = 15) are both small
    (f,) = run(frame([0] * 30 + [1] * 3 + [2] * 2)).findings
    assert f.metrics["ratio"] == 15.0 and f.metrics["classes"] == 3
    assert f.n_affected == 5
    assert "2 of 3 classes" in f.message and "minority 2 has 2" in f.message


def test_three_classes_only_the_smallest_is_small():
    # 20 : 5 : 1 -> ratio 20; 20/5 = 4 is fine, only class 2 is under 1/10
    (f,) = run(frame([0] * 20 + [1] * 5 + [2])).findings
    assert f.metrics["ratio"] == 20.0 and f.n_affected == 1
    assert "1 of 3 classes" in f.message


def test_string_labels():
    (f,) = run(frame(["cat"] * 12 + ["dog"])).findings
    assert "'cat'" in f.message and "'dog'" in f.message
    assert f.metrics["ratio"] == 12.0


def test_missing_labels_are_not_a_class():
    (f,) = run(frame([0] * 10 + [1] + [NAN] * 3)).findings
    assert f.metrics["classes"] == 2 and f.metrics["ratio"] == 10.0
    assert f.metrics["majority_fraction"] == pytest.approx(10 / 11)


def test_only_train_is_judged():
    train = frame([0, 1] * 10)
    test = frame([0] * 20 + [1])
    assert run(train, test).findings == []


def test_threshold_override():
    (f,) = run(frame([0] * 9 + [1]), thresholds={"L001": {"max_ratio": 5}}).findings
    assert f.metrics["ratio"] == 9.0
    assert "1/5" in f.message


@pytest.mark.parametrize(
    "train, target, words",
    [
        (frame(np.linspace(0, 1, 20)), "label", "regression"),
        (pd.DataFrame({"x": np.arange(10.0)}), None, "target"),
    ],
    ids=["regression", "no-target"],
)
def test_skipped_with_a_reason(train, target, words):
    report = datavet.audit(train, target=target, select="L001")
    assert report.findings == []
    (o,) = report.outcomes
    assert o.status.value == "skipped" and words in o.reason


def test_one_class_is_an_error_not_a_skip():
    """A classifier cannot learn from one class: L001 says so at error (it used to skip)."""
    report = datavet.audit(frame([3] * 10), target="label", select="L001")
    (f,) = report.findings
    assert f.code == "L001" and f.severity.name == "ERROR"
    assert "single class" in f.message and "3" in f.message
