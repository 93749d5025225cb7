"""S004 schema-mismatch: columns, kinds, widths and order of train vs test."""

from __future__ import annotations

import numpy as np
import pandas as pd

import datavet
from datavet import Severity


def run(train, test=None, **kw):
    return datavet.audit(train, test, target="label", select="S004", **kw)


def test_missing_and_extra_columns():
    train = pd.DataFrame({"a": [1, 2], "c": [1, 2], "label": [0, 1]})
    test = pd.DataFrame({"a": [1, 2], "d": [1, 2], "label": [0, 1]})
    report = run(train, test)
    (f,) = report.findings
    assert f.code == "S004" and f.severity == Severity.ERROR and f.split is None
    assert f.columns == ("c", "d") and f.n_affected == 2
    assert f.metrics["missing_in_test"] == 1 and f.metrics["extra_in_test"] == 1
    assert "missing from test: 'c'" in f.message and "only in test: 'd'" in f.message
    assert report.outcomes[0].status.value == "failed"


def test_only_a_missing_column_and_no_order_warning():
    train = pd.DataFrame({"a": [1], "b": [2], "c": [3], "label": [0]})
    test = pd.DataFrame({"a": [1], "b": [2], "label": [0]})
    (f,) = run(train, test).findings
    assert f.columns == ("c",) and f.metrics["extra_in_test"] == 0
    assert "only in test" not in f.message


def test_number_in_train_text_in_test_is_an_error():
    train = pd.DataFrame({"a": [1, 2], "b": [1.0, 2.0], "label": [0, 1]})
    test = pd.DataFrame({"a": ["1", "n/a"], "b": [1.0, 2.0], "label": [0, 1]})
    (f,) = run(train, test).findings
    assert f.severity == Severity.ERROR
    assert f.columns == ("a",) and f.n_affected == 1
    assert "'a' is int64 in train but" in f.message and "string in test" in f.message


def test_int_vs_float_is_info():
    train = pd.DataFrame({"a": [1, 2], "b": [1.0, 2.0], "label": [0, 1]})
    test = pd.DataFrame({"a": [1.0, 2.0], "b": [1.0, 2.0], "label": [0, 1]})
    (f,) = run(train, test).findings
    assert f.severity == Severity.INFO
    assert f.columns == ("a",) and f.n_affected == 1
    assert "'a' int64 vs double" in f.message
    assert run(train, test).exit_code() == 0  # info does not fail at the default fail_on


def test_width_only_is_info():
    train = pd.DataFrame({"a": np.array([1, 2], np.int32), "label": [0, 1]})
    test = pd.DataFrame({"a": np.array([1, 2], np.int64), "label": [0, 1]})
    (f,) = run(train, test).findings
    assert f.severity == Severity.INFO and "int32 vs int64" in f.message


def test_different_order_is_a_warning():
    train = pd.DataFrame({"a": [1], "b": [2.0], "c": ["x"], "label": [0]})
    test = pd.DataFrame({"c": ["x"], "label": [0], "a": [1], "b": [2.0]})
    (f,) = run(train, test).findings
    assert f.severity == Severity.WARNING
    assert f.columns == ("c", "a", "b")  # in test's order
    assert f.metrics["columns"] == 3
    assert "different order" in f.message


def test_several_mismatches_give_one_finding_each():
    train = pd.DataFrame({"a": [1], "b": [1], "c": [1.0], "gone": [0], "label": [0]})
    test = pd.DataFrame({"c": ["x"], "b": [1.0], "a": [1], "label": [0]})
    report = run(train, test)
    assert all(f.code == "S004" and f.split is None for f in report.findings)
    got = sorted((f.severity, f.columns) for f in report.findings)
    assert got == [
        (Severity.INFO, ("b",)),  # int64 vs double
        (Severity.WARNING, ("c", "b", "a")),  # shared columns in another order
        (Severity.ERROR, ("c",)),  # double vs text
        (Severity.ERROR, ("gone",)),  # missing from test
    ]
    assert report.outcomes[0].n_findings == 4


def test_quiet_on_the_same_schema_and_an_unlabelled_test_split():
    train = pd.DataFrame({"a": [1, 2], "s": ["x", "y"], "label": [0, 1]})
    test = pd.DataFrame({"a": [3, 4], "s": ["z", "w"]})  # no target: an unlabelled test split
    report = run(train, test)
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"


def test_skipped_without_a_test_split():
    report = run(pd.DataFrame({"a": [1, 2], "label": [0, 1]}))
    (o,) = report.outcomes
    assert o.status.value == "skipped" and "test" in o.reason
