"""V005 unseen-test-category: test values of a categorical (dictionary) feature that train never
has; plain text columns are left alone."""

from __future__ import annotations

import pandas as pd
import pytest

import datavet
from datavet import Severity


def splits(test_values, *, categorical=True):
    def col(values):
        return pd.Categorical(values) if categorical else list(values)

    train = pd.DataFrame({"c": col(["p", "q", "r"] * 10), "label": [0, 1] * 15})
    test = pd.DataFrame({"c": col(test_values), "label": [0, 1] * (len(test_values) // 2)})
    return train, test


def run(train, test, **kw):
    return datavet.audit(train, test, target="label", select="V005", **kw)


def test_names_the_unseen_categories_and_counts_rows():
    train, test = splits(["p", "q", "NEW", "NEW", "other", "r"])
    (f,) = run(train, test).findings
    assert (f.code, f.name, f.severity) == ("V005", "unseen-test-category", Severity.WARNING)
    assert f.split == "test" and f.columns == ("c",)
    assert f.n_affected == 3 and f.metrics == {"categories": 2, "rows": 3}
    assert "'NEW' (2 rows)" in f.message and "'other' (1 row)" in f.message


def test_no_finding_when_test_categories_are_seen():
    train, test = splits(["p", "q", "r", "p"])
    report = run(train, test)
    assert report.findings == []


def test_plain_text_columns_are_skipped():
    train, test = splits(["p", "q", "NEW", "NEW"], categorical=False)
    report = run(train, test)
    assert report.findings == []
    assert next(o for o in report.outcomes if o.code == "V005").status.value == "skipped"


@pytest.mark.parametrize("side", ["train", "test"])
def test_categorical_on_either_side_counts(side):
    train, test = splits(["p", "NEW"])
    if side == "train":
        test = test.assign(c=test["c"].astype(str))
    else:
        train = train.assign(c=train["c"].astype(str))
    (f,) = run(train, test).findings
    assert f.n_affected == 1


def test_needs_a_test_split():
    train, _ = splits(["p", "q"])
    outcome = datavet.audit(train, target="label", select="V005").outcomes[0]
    assert outcome.status.value == "skipped"
