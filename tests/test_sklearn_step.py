"""datavet.sklearn.AuditStep: a Pipeline refuses bad training data at fit; good data passes
through unchanged."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from datavet import AuditFailed
from datavet.sklearn import AuditStep


def data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    y = (X["a"] + rng.normal(size=n) > 0).astype(int)
    return X, y


def test_a_pipeline_refuses_training_data_with_nan():
    X, y = data()
    X.loc[5, "b"] = np.nan
    model = make_pipeline(AuditStep(), LogisticRegression())
    with pytest.raises(AuditFailed) as err:
        model.fit(X, y)
    assert "V001" in str(err.value)
    assert [f.code for f in err.value.report.findings] == ["V001"]


def test_clean_data_fits_and_transform_passes_through():
    X, y = data()
    model = make_pipeline(AuditStep(), LogisticRegression()).fit(X, y)
    step = model[0]
    assert step.report_.passed
    assert step.transform(X) is X
    assert model.score(X, y) > 0.6


def test_fail_on_and_select_are_parameters():
    X, y = data()
    X["const"] = 1.0  # F001 constant-feature: a warning
    AuditStep().fit(X, y)  # errors only: passes
    with pytest.raises(AuditFailed):
        AuditStep(fail_on="warning").fit(X, y)
    AuditStep(fail_on="warning", ignore="F").fit(X, y)
    assert AuditStep(fail_on="warning").get_params()["fail_on"] == "warning"


def test_without_labels_it_audits_the_features():
    X, _ = data()
    X.loc[0, "a"] = np.inf
    with pytest.raises(AuditFailed):
        AuditStep().fit(X)
