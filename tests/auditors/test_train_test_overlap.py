"""S001 train-test-overlap: test rows whose features also appear in train.

Rows are compared on canonical hashes: 1 == 1.0, -0.0 == 0.0, NaN == NaN, column order and the
label do not matter.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet import Severity

NAN = float("nan")


def run(train, test=None, **kw):
    return datavet.audit(train, test, target="label", select="S001", **kw)


def overlap(train, test) -> int:
    """n_affected of the one S001 finding, or 0 when there is none."""
    findings = run(train, test).findings
    assert len(findings) <= 1
    return findings[0].n_affected if findings else 0


def test_fires_with_counts_positions_and_pairs():
    train = pd.DataFrame({"a": [1, 2, 3, 4], "b": ["p", "q", "r", "s"], "label": [0, 1, 0, 1]})
    test = pd.DataFrame({"a": [4, 10, 2], "b": ["s", "q", "q"], "label": [1, 0, 1]})
    report = run(train, test)
    (f,) = report.findings
    assert (f.code, f.name, f.severity) == ("S001", "train-test-overlap", Severity.ERROR)
    assert f.split == "test" and f.columns == ()
    assert f.n_affected == 2 and f.examples == (0, 2)
    assert f.metrics["count"] == 2 and f.metrics["fraction"] == pytest.approx(2 / 3)
    assert f.metrics["distinct_train_rows"] == 2
    assert "2 of 3 test rows" in f.message and "66.7%" in f.message
    assert "rows 0, 2" in f.message
    assert "test 0 = train 3" in f.message and "test 2 = train 1" in f.message
    assert report.outcomes[0].status.value == "failed"


def test_quiet_when_every_row_differs_in_some_feature():
    train = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": ["x", "y", "z"], "label": [0, 1, 0]})
    test = pd.DataFrame({"a": [1.0 + 1e-12, 2.0, 3.0], "b": ["x", "Y", "z "], "label": [0, 1, 0]})
    report = run(train, test)
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"


def test_the_label_is_ignored():
    train = pd.DataFrame({"a": [1.0, 2.0], "label": [0, 0]})
    test = pd.DataFrame({"a": [1.0, 5.0], "label": [1, 1]})  # row 0: same features, new label
    (f,) = run(train, test).findings
    assert f.n_affected == 1 and f.examples == (0,)


def test_a_copied_row_with_nan_still_matches():
    train = pd.DataFrame({"a": [1.0, 2.0], "b": [NAN, 5.0], "label": [0, 1]})
    test = pd.DataFrame({"a": [1.0, 2.0], "b": [NAN, 6.0], "label": [0, 1]})
    (f,) = run(train, test).findings
    assert f.n_affected == 1 and f.examples == (0,)


def test_none_and_nan_in_a_text_column_are_one_missing_value():
    train = pd.DataFrame({"s": ["u", None], "a": [1.0, 2.0], "label": [0, 1]})
    test = pd.DataFrame({"s": ["v", np.nan], "a": [1.0, 2.0], "label": [0, 1]})
    (f,) = run(train, test).findings
    assert f.examples == (1,)


def test_nan_does_not_match_a_number():
    train = pd.DataFrame({"a": [1.0], "b": [NAN], "label": [0]})
    test = pd.DataFrame({"a": [1.0], "b": [0.0], "label": [0]})
    assert overlap(train, test) == 0


def test_int_in_train_matches_float_in_test():
    train = pd.DataFrame({"a": [1, 2, 3], "label": [0, 1, 0]})
    test = pd.DataFrame({"a": [1.0, 2.5], "label": [0, 1]})
    assert train["a"].dtype.kind == "i" and test["a"].dtype.kind == "f"
    (f,) = run(train, test).findings
    assert f.n_affected == 1 and f.examples == (0,)
    assert "test 0 = train 0" in f.message


def test_negative_zero_matches_zero():
    train = pd.DataFrame({"a": [-0.0, 1.0], "label": [0, 1]})
    test = pd.DataFrame({"a": [0.0, 3.0], "label": [0, 1]})
    (f,) = run(train, test).findings
    assert f.examples == (0,)


def test_column_order_does_not_matter():
    train = pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"], "c": [5, 6], "label": [0, 1]})
    test = pd.DataFrame({"c": [6, 7], "label": [1, 0], "b": ["y", "y"], "a": [2.0, 2.0]})
    (f,) = run(train, test).findings
    assert f.n_affected == 1 and f.examples == (0,)
    assert "test 0 = train 1" in f.message


def test_numbers_read_as_text_in_one_split_match_numbers_in_the_other():
    # A CSV's "1.5" and a Parquet's 1.5 are one value (hashing's as_number path).
    train = pd.DataFrame({"a": ["1", "2.5", "x"], "label": [0, 1, 0]})
    test = pd.DataFrame({"a": [1.0, 2.5, 3.0], "label": [0, 1, 0]})
    (f,) = run(train, test).findings
    assert f.n_affected == 2 and f.examples == (0, 1)


def test_only_shared_feature_columns_are_compared():
    train = pd.DataFrame({"a": [1.0, 2.0], "b": [5, 6], "c": [0, 0], "only_train": [7, 8]})
    test = pd.DataFrame({"a": [2.0, 3.0], "b": [6, 6], "c": [0, 0], "only_test": ["x", "y"]})
    train["label"] = [0, 1]
    (f,) = run(train, test).findings
    assert f.examples == (0,)
    assert "'only_train' (train only), 'only_test' (test only)" in f.message


def test_many_test_copies_of_one_train_row():
    train = pd.DataFrame({"a": [1.0, 2.0, 3.0], "label": [0, 1, 0]})
    test = pd.DataFrame({"a": [2.0, 9.0, 2.0, 2.0], "label": [0, 1, 0, 1]})
    (f,) = run(train, test).findings
    assert f.n_affected == 3 and f.examples == (0, 2, 3)
    assert f.metrics["distinct_train_rows"] == 1


def test_examples_capped_at_five_with_the_rest_counted():
    train = pd.DataFrame({"a": np.arange(10), "label": [0, 1] * 5})
    test = pd.DataFrame({"a": [9, 8, 100, 7, 6, 5, 4, 3, 200], "label": [1] * 9})
    (f,) = run(train, test, batch_rows=4).findings
    assert f.n_affected == 7
    assert f.examples == (0, 1, 3, 4, 5)
    assert "rows 0, 1, 3, 4, 5 (+2 more)" in f.message
    assert "test 0 = train 9" in f.message and "test 1 = train 8" in f.message


def test_the_planted_table_has_ten_copied_rows(planted):
    train, test = planted
    (f,) = run(train, test).findings
    assert f.n_affected == 10  # test rows 90..99 are train rows 0..9
    assert f.examples == (90, 91, 92, 93, 94)
    assert f.metrics["distinct_train_rows"] == 10
    assert "(+5 more)" in f.message and "test 90 = train 0" in f.message


def test_skipped_without_a_test_split():
    train = pd.DataFrame({"a": [1.0, 2.0], "label": [0, 1]})
    report = datavet.audit(train, target="label", select="S001")
    assert report.findings == []
    (o,) = report.outcomes
    assert o.status.value == "skipped" and "test" in o.reason


def test_skipped_when_train_and_test_share_no_feature_column():
    # overlap on zero columns once read as "100% overlap"
    train = pd.DataFrame({"a": [1, 2, 3, 4], "label": [0, 1, 0, 1]})
    test = pd.DataFrame({"b": [5, 6, 7, 8], "label": [0, 1, 0, 1]})
    report = datavet.audit(train, test, target="label", select=["S001", "S004"])
    assert [f.code for f in report.findings] == ["S004"]
    (o,) = [o for o in report.outcomes if o.code == "S001"]
    assert o.status == "skipped" and "share no feature column" in o.reason
