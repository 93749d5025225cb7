"""S002 duplicate-rows: extra copies of a row (features and label) within one split."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet import Severity

NAN = float("nan")


def run(train, test=None, **kw):
    return datavet.audit(train, test, target="label", select="S002", **kw)


def test_three_copies_are_two_extra_rows():
    train = pd.DataFrame(
        {"a": [1, 2, 1, 3, 1, 2], "b": ["x", "y", "x", "z", "x", "y"], "label": [0, 1, 0, 0, 0, 0]}
    )
    # rows 0, 2, 4 are one row three times; row 5 repeats a, b of row 1 with another label
    report = run(train)
    (f,) = report.findings
    assert (f.code, f.name, f.severity) == ("S002", "duplicate-rows", Severity.WARNING)
    assert f.split == "train" and f.columns == ()
    assert f.n_affected == 2 and f.examples == (2, 4)
    assert f.metrics["count"] == 2 and f.metrics["distinct_repeated"] == 1
    assert f.metrics["fraction"] == pytest.approx(2 / 6)
    assert "2 rows of train" in f.message and "33.3%" in f.message
    assert "1 distinct" in f.message and "rows 2, 4" in f.message
    assert report.outcomes[0].status.value == "failed"


def test_same_features_with_another_label_are_not_duplicates():
    train = pd.DataFrame({"a": [1.0, 1.0, 2.0], "label": [0, 1, 0]})
    report = run(train)
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"


def test_rows_differing_in_one_value_are_not_duplicates():
    train = pd.DataFrame({"a": [1.0, 1.0], "b": ["x", "x "], "label": [0, 0]})
    assert run(train).findings == []


def test_missing_values_are_equal():
    train = pd.DataFrame({"a": [1.0, NAN, NAN], "b": ["u", None, np.nan], "label": [0, 0, 0]})
    (f,) = run(train).findings
    assert f.n_affected == 1 and f.examples == (2,)


def test_each_split_on_its_own_and_not_across():
    train = pd.DataFrame({"a": [1.0, 2.0, 3.0], "label": [0, 1, 0]})
    test = pd.DataFrame(
        {"a": [1, 1, 1, 2, 2, 3, 4, 5, 6, 6], "label": [0] * 10}
    )  # rows equal to train rows are S001's business, not S002's
    report = run(train, test)
    (f,) = report.findings
    assert f.split == "test" and "of test" in f.message
    # 1 x3 -> 2 extra (rows 1, 2); 2 x2 -> 1 (row 4); 6 x2 -> 1 (row 9)
    assert f.n_affected == 4 and f.examples == (1, 2, 4, 9)
    assert f.metrics["distinct_repeated"] == 3


def test_duplicates_across_batches():
    train = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 5.0], "label": [0] * 7})
    (f,) = run(train, batch_rows=2).findings
    assert f.n_affected == 2 and f.examples == (4, 5)


def test_without_a_target_features_alone_decide():
    train = pd.DataFrame({"a": [1.0, 1.0, 2.0]})
    (f,) = datavet.audit(train, select="S002").findings
    assert f.n_affected == 1 and f.examples == (1,)


def test_examples_capped_at_five():
    train = pd.DataFrame({"a": [7.0] * 9 + [8.0], "label": [0] * 10})
    (f,) = run(train).findings
    assert f.n_affected == 8 and f.examples == (1, 2, 3, 4, 5)
    assert "(+3 more)" in f.message


@pytest.mark.parametrize("extra_in", ["train", "test"])
def test_a_column_missing_from_the_other_split_still_tells_rows_apart(extra_in):
    # Rows 0 and 1 differ in column 'b', which only one split has: they are not duplicates,
    # whatever the other split's schema is.
    own = pd.DataFrame({"a": [1.0, 1.0, 2.0], "b": [10.0, 20.0, 30.0], "label": [0, 0, 1]})
    other = pd.DataFrame({"a": [5.0, 6.0], "label": [0, 1]})
    assert run(own).findings == []  # audited alone, 'own' has no duplicates
    train, test = (own, other) if extra_in == "train" else (other, own)
    report = run(train, test)
    assert [f for f in report.findings if f.split == extra_in] == []
