"""V003 missing-labels: NaN / None in the target, per split; skipped without a target."""

from __future__ import annotations

import numpy as np
import pandas as pd

import datavet
from datavet import Severity

NAN = float("nan")


def run(train, test=None, **kw):
    return datavet.audit(train, test, target="label", select="V003", **kw)


def test_fires_on_nan_labels():
    train = pd.DataFrame({"x": np.arange(6.0), "label": [0, NAN, 1, NAN, 0, 1]})
    report = run(train)
    (f,) = report.findings
    assert (f.code, f.name, f.severity) == ("V003", "missing-labels", Severity.ERROR)
    assert f.split == "train" and f.columns == ("label",)
    assert f.n_affected == 2 and f.examples == (1, 3)
    assert f.metrics["count"] == 2 and abs(f.metrics["fraction"] - 2 / 6) < 1e-12
    assert "'label'" in f.message and "2 rows of train" in f.message
    assert "33.3%" in f.message and "rows 1, 3" in f.message
    (o,) = report.outcomes
    assert o.status.value == "failed"


def test_none_in_string_labels_and_test_split():
    train = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "label": ["a", "b", "a", "b"]})
    test = pd.DataFrame({"x": [1.0, 2.0, 3.0], "label": ["a", None, "b"]})
    (f,) = run(train, test).findings
    assert f.split == "test" and f.n_affected == 1 and f.examples == (1,)
    assert "of test" in f.message and "row 1" in f.message


def test_quiet_when_every_label_is_present():
    # A NaN feature is V001's business, not V003's.
    train = pd.DataFrame({"x": [NAN, 2.0, 3.0], "label": [0, 1, 0]})
    report = run(train)
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"


def test_unlabelled_test_split_is_not_a_finding():
    train = pd.DataFrame({"x": [1.0, 2.0, 3.0], "label": [0, 1, 0]})
    test = pd.DataFrame({"x": [1.0, 2.0]})
    report = run(train, test)
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"


def test_skipped_without_a_target():
    report = datavet.audit(pd.DataFrame({"x": [1.0, 2.0, 3.0]}), select="V003")
    assert report.findings == []
    (o,) = report.outcomes
    assert o.status.value == "skipped" and "target" in o.reason


def test_examples_capped_at_five():
    y = np.zeros(10)
    y[[0, 2, 3, 5, 8, 9]] = NAN
    train = pd.DataFrame({"x": np.arange(10.0), "label": y})
    (f,) = run(train, batch_rows=4).findings
    assert f.n_affected == 6 and f.examples == (0, 2, 3, 5, 8)
    assert "(+1 more)" in f.message
