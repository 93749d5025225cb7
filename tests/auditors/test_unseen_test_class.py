"""L003 unseen-test-class: test labels that train never has, with their test row counts."""

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
    return datavet.audit(train, test, target="label", select="L003", **kw)


def test_fires_with_each_class_and_its_rows():
    train = frame(["a", "b", "a", "b"])
    test = frame(["a", "c", "d", "c", "b", "c", "c"])
    report = run(train, test)
    (f,) = report.findings
    assert (f.code, f.name, f.severity) == ("L003", "unseen-test-class", Severity.ERROR)
    assert f.split == "test" and f.columns == ("label",)
    # 'c' 4 rows and 'd' 1 row are unseen: 5 of 7 test rows
    assert f.n_affected == 5
    assert f.examples == ()  # counted from class counts; no row positions are kept
    assert f.metrics["classes"] == 2 and f.metrics["rows"] == 5
    assert f.metrics["fraction"] == pytest.approx(5 / 7)
    assert f.message.startswith("2 test class(es) never appear in train: 'c' (4 rows), 'd' (1 row")
    assert "5 test rows (71.4%) cannot be predicted right" in f.message
    assert f.hint and "stratify" in f.hint
    assert report.outcomes[0].status.value == "failed"


def test_classes_listed_most_rows_first():
    train = frame([0, 1, 0, 1])
    test = frame([7, 5, 5, 9, 9, 9, 0])
    (f,) = run(train, test).findings
    assert "9 (3 rows), 5 (2 rows), 7 (1 row" in f.message
    assert f.n_affected == 6 and f.metrics["classes"] == 3


def test_case_matters_cat_and_Cat_are_distinct():
    train = frame(["Cat", "dog", "Cat", "dog"])
    test = frame(["cat", "Cat", "dog", "cat"])
    (f,) = run(train, test).findings
    assert f.n_affected == 2 and f.metrics["classes"] == 1
    assert f.metrics["fraction"] == 0.5
    # a separate class, named beside the train class it differs from only in case
    assert "'cat' (2 rows; train has 'Cat', which differs only in case" in f.message


def test_integer_labels_against_their_text_spelling():
    # the docstring's 1 vs "1": a test file whose labels are text while train has numbers
    train = frame([0, 1, 0, 1])
    test = frame(["0", "1", "1"])
    (f,) = run(train, test).findings
    assert f.n_affected == 3 and f.metrics["classes"] == 2 and f.metrics["fraction"] == 1.0
    assert "'1' (2 rows), '0' (1 row" in f.message


def test_quiet_when_test_classes_are_a_subset():
    report = run(frame([0, 1, 2, 0, 1, 2]), frame([0, 0, 2]))
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"


def test_int_and_float_of_one_class_are_one_class_and_nan_is_no_class():
    # a NaN label turns the test column into floats: 1.0 is still class 1, NaN is missing (V003)
    report = run(frame([0, 1, 0, 1]), frame([0.0, 1.0, NAN, 1.0]))
    assert report.findings == []


def test_only_the_new_class_counts_beside_a_missing_label():
    (f,) = run(frame([0, 1, 0, 1]), frame([0.0, 2.0, NAN, 2.0, 1.0])).findings
    assert f.n_affected == 2 and f.metrics["classes"] == 1
    assert f.metrics["fraction"] == pytest.approx(2 / 4)  # of the 4 labelled test rows
    assert "2.0 (2 rows)" in f.message and "(50.0%)" in f.message


def test_more_than_ten_unseen_classes_are_summarised():
    train = frame([0, 1] * 3)
    test = frame(list(range(2, 14)) + [2])  # 12 unseen classes; class 2 has 2 rows
    (f,) = run(train, test).findings
    assert f.metrics["classes"] == 12 and f.n_affected == 13
    assert f.message.startswith("12 test class(es) never appear in train: 2 (2 rows), 3 (1 row")
    assert "and 2 more" in f.message
    assert "12 (1 row" not in f.message and "13 (1 row" not in f.message


def test_counts_across_batches():
    train = frame(["a", "b", "a", "b", "a", "b"])
    test = frame(["a", "z", "b", "z", "y", "z", "a"])
    whole = run(train, test).findings
    assert run(train, test, batch_rows=2).findings == whole
    (f,) = whole
    assert f.n_affected == 4 and "'z' (3 rows), 'y' (1 row" in f.message


@pytest.mark.parametrize(
    "train, test, kw, words",
    [
        (frame([0.5, 1.5, 0.25, 1.0]), frame([9.5]), {}, "regression"),
        (frame([0, 1, 0, 1]), None, {}, "no test split"),
        (frame([0, 1, 0, 1]), pd.DataFrame({"x": [1.0, 2.0]}), {}, "no target column"),
        (frame(np.arange(1100)), frame([5000]), {"task": "classification"}, "1,024 classes"),
    ],
    ids=["regression", "no-test", "test-without-target", "too-many-classes"],
)
def test_skipped_with_a_reason(train, test, kw, words):
    report = run(train, test, **kw)
    assert report.findings == []
    (o,) = report.outcomes
    assert o.status.value == "skipped" and words in o.reason


def test_skipped_without_a_target():
    train = pd.DataFrame({"x": [1.0, 2.0]})
    (o,) = datavet.audit(train, pd.DataFrame({"x": [3.0]}), select="L003").outcomes
    assert o.status.value == "skipped" and "target" in o.reason
