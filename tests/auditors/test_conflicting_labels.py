"""S003 conflicting-labels: identical features with different labels.

Within a split, every row of a group of identical feature rows whose labels are not all equal
counts. Across splits, a test row counts when it equals a train row in the shared features and no
train copy of it carries its label.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet import Severity

NAN = float("nan")


def run(train, test=None, **kw):
    return datavet.audit(train, test, target="label", select="S003", **kw)


def test_a_conflicting_group_counts_all_its_rows():
    train = pd.DataFrame(
        {
            "a": [1, 2, 1, 3, 1, 2, 4, 4],
            "b": ["x", "y", "x", "z", "x", "y", "w", "w"],
            "label": [0, 1, 1, 0, 0, 1, 0, 0],
        }
    )
    # (1, x) at rows 0, 2, 4 has labels 0, 1, 0: all three rows count.
    # (2, y) at rows 1, 5 and (4, w) at rows 6, 7 are exact duplicates with one label: S002's.
    report = run(train)
    (f,) = report.findings
    assert (f.code, f.name, f.severity) == ("S003", "conflicting-labels", Severity.WARNING)
    assert f.split == "train" and f.columns == ("label",)
    assert f.n_affected == 3 and f.examples == (0, 2, 4)
    assert f.metrics["rows"] == 3 and f.metrics["groups"] == 1
    assert f.message.startswith("3 rows of train (37.5%) share their features with a row of")
    assert f.message.endswith("rows 0, 2, 4.")
    assert f.hint and "relabel" in f.hint
    assert report.outcomes[0].status.value == "failed"


def test_two_groups_and_capped_examples():
    train = pd.DataFrame(
        {"a": [5, 5, 6, 6, 6, 7, 7, 8, 5, 6], "label": [0, 1, 0, 0, 1, 2, 2, 0, 0, 0]}
    )
    # 5: rows 0, 1, 8 (labels 0, 1, 0); 6: rows 2, 3, 4, 9 (0, 0, 1, 0); 7: one label; 8: alone
    (f,) = run(train).findings
    assert f.n_affected == 7 and f.metrics["groups"] == 2
    assert f.examples == (0, 1, 2, 3, 4)
    assert "7 rows of train (70.0%)" in f.message and "rows 0, 1, 2, 3, 4 (+2 more)" in f.message


def test_exact_duplicates_with_the_same_label_are_quiet():
    train = pd.DataFrame({"a": [1.0, 1.0, 2.0, 2.0, 2.0], "label": ["u", "u", "v", "v", "v"]})
    report = run(train)
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"


def test_rows_differing_in_one_feature_are_quiet():
    train = pd.DataFrame({"a": [1.0, 1.0], "b": ["x", "x "], "label": [0, 1]})
    assert run(train).findings == []


def test_missing_feature_values_match():
    train = pd.DataFrame(
        {"a": [1.0, NAN, 2.0, NAN], "b": ["u", None, "v", np.nan], "label": [0, 0, 1, 1]}
    )
    (f,) = run(train).findings
    assert f.n_affected == 2 and f.examples == (1, 3)


def test_test_row_identical_to_a_train_row_with_another_label():
    train = pd.DataFrame(
        {"a": [1.0, 2.0, 3.0, NAN], "b": ["p", "q", "r", "s"], "label": [0, 1, 0, 1]}
    )
    test = pd.DataFrame(
        {"a": [2.0, 1.0, 5.0, 3.0, NAN], "b": ["q", "p", "q", "r", "s"], "label": [0, 0, 1, 0, 0]}
    )
    # test 0 = train 1 (label 1 vs 0): conflict; test 1 = train 0 and test 3 = train 2 with the
    # same label; test 2 matches nothing; test 4 = train 3 (NaN matches NaN), label 0 vs 1
    report = run(train, test)
    (f,) = report.findings
    assert f.split == "test" and f.columns == ("label",)
    assert f.n_affected == 2 and f.examples == (0, 4)
    assert f.metrics["rows"] == 2
    assert f.message == (
        "2 test rows (40.0%) are identical to a train row in features but carry another label: "
        "rows 0, 4; e.g. test 0 vs train 1, test 4 vs train 3."
    )
    assert f.hint and "de-duplicate" in f.hint


def test_a_train_copy_with_the_same_label_clears_a_test_row():
    train = pd.DataFrame({"a": [1.0, 1.0, 2.0], "label": [0, 1, 0]})
    test = pd.DataFrame({"a": [1.0, 2.0], "label": [1, 1]})
    findings = run(train, test).findings
    # train rows 0, 1 conflict with each other; test 0 agrees with train 1; test 1 conflicts
    assert [(f.split, f.n_affected, f.examples) for f in findings] == [
        ("test", 1, (1,)),
        ("train", 2, (0, 1)),
    ]
    assert "test 1 vs train 2" in findings[0].message


def test_within_test_and_across_splits_are_separate_findings():
    train = pd.DataFrame({"a": [1.0, 2.0], "label": [0, 1]})
    test = pd.DataFrame({"a": [2.0, 2.0, 7.0], "label": [0, 1, 0]})
    # within test: rows 0, 1 (labels 0, 1); across: test 0 vs train 1 (label 0 vs 1)
    within, across = run(train, test).findings
    assert (within.split, within.n_affected, within.examples) == ("test", 2, (0, 1))
    assert within.metrics["groups"] == 1 and "2 rows of test (66.7%)" in within.message
    assert (across.split, across.n_affected, across.examples) == ("test", 1, (0,))
    assert "test 0 vs train 1" in across.message


def test_labels_compare_by_value_across_splits():
    # a NaN elsewhere makes the test labels floats: 1.0 is the same label as 1
    train = pd.DataFrame({"a": [1.0, 2.0, 3.0], "label": [0, 1, 1]})
    test = pd.DataFrame({"a": [1.0, 2.0, 9.0], "label": [0.0, 1.0, NAN]})
    assert run(train, test).findings == []


def test_only_shared_features_are_compared_across_splits():
    train = pd.DataFrame({"a": [1.0, 2.0], "b": [3, 4], "extra": [9.0, 8.0], "label": [0, 1]})
    test = pd.DataFrame({"a": [1.0, 2.0], "b": [3, 4], "label": [1, 1]})
    (f,) = run(train, test).findings
    assert f.split == "test" and f.examples == (0,)


def test_missing_labels_are_not_another_label():
    # A row whose label is missing (V003's business) carries no label to conflict with.
    train = pd.DataFrame({"a": [1.0, 1.0, 2.0], "label": [0.0, NAN, 1.0]})
    test = pd.DataFrame({"a": [2.0, 3.0], "label": [NAN, 1.0]})
    assert run(train, test).findings == []


@pytest.mark.parametrize("batch_rows", [1, 2, 3])
def test_batching_gives_the_same_result(batch_rows):
    train = pd.DataFrame({"a": [1.0, 2.0, 1.0, NAN, 3.0, NAN, 2.0], "label": [0, 1, 1, 0, 0, 1, 1]})
    test = pd.DataFrame({"a": [3.0, NAN, 1.0, 4.0, 4.0], "label": [1, 0, 0, 0, 1]})
    whole = run(train, test).findings
    assert run(train, test, batch_rows=batch_rows).findings == whole
    # within train: 1.0 at rows 0, 2 (0, 1) and NaN at rows 3, 5 (0, 1); 2.0 agrees with itself.
    # within test: 4.0 at rows 3, 4. Across: test 0 (3.0, 1) vs train 4 (3.0, 0); test 1 (NaN, 0)
    # and test 2 (1.0, 0) each have a train copy with label 0.
    found = [(f.split, f.n_affected, f.examples) for f in whole]
    assert found == [("test", 2, (3, 4)), ("test", 1, (0,)), ("train", 4, (0, 2, 3, 5))]


def test_quiet_without_a_test_split_and_without_test_labels():
    train = pd.DataFrame({"a": [1.0, 2.0], "label": [0, 1]})
    assert run(train).outcomes[0].status.value == "passed"
    # the test split has no target column: nothing to compare labels against
    report = run(train, pd.DataFrame({"a": [1.0, 2.0]}))
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"


def test_skipped_without_a_target():
    train = pd.DataFrame({"a": [1.0, 1.0], "b": [0, 1]})
    (o,) = datavet.audit(train, select="S003").outcomes
    assert o.status.value == "skipped" and "target" in o.reason
