"""S009 too-few-rows: a train split below ``min_rows`` (default 2) rows is a warning, so a
one-row table cannot read as a clean pass."""

from __future__ import annotations

import pandas as pd

import datavet
from datavet import Severity


def run(train, **kw):
    return datavet.audit(train, target="label", select="S009", **kw)


def test_one_row_is_a_warning():
    (f,) = run(pd.DataFrame({"a": [1.5], "label": [1]})).findings
    assert (f.code, f.name, f.severity) == ("S009", "too-few-rows", Severity.WARNING)
    assert f.split == "train" and f.n_affected == 1
    assert "1 row" in f.message and f.metrics == {"rows": 1, "min_rows": 2}


def test_two_rows_pass():
    report = run(pd.DataFrame({"a": [1.5, 2.5], "label": [0, 1]}))
    assert report.findings == []
    assert next(o for o in report.outcomes if o.code == "S009").status.value == "passed"


def test_threshold_raises_the_floor():
    frame = pd.DataFrame({"a": range(10), "label": [0, 1] * 5})
    assert run(frame).findings == []
    (f,) = run(frame, thresholds={"S009": {"min_rows": 30}}).findings
    assert f.n_affected == 10 and "fewer than 30" in f.message


def test_a_small_test_split_alone_does_not_fire():
    train = pd.DataFrame({"a": [1.0, 2.0, 3.0], "label": [0, 1, 0]})
    assert run(train, test=train.iloc[:1]).findings == []
