"""S011 split-distinguishable: a logistic regression told to separate train rows from test rows
(adversarial validation); cross-validated AUC, gated by AUC and p-value; names the features
that carry it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn import datasets as sk

import datavet
from datavet.findings import Status


def split(n: int, seed: int, shift: dict | None = None) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 5)), columns=[f"f{i}" for i in range(5)])
    for column, by in (shift or {}).items():
        df[column] += by
    df["label"] = (df["f0"] + rng.normal(size=n) > 0).astype(int)
    return df


def run(train, test=None, **kw):
    return datavet.audit(train, test, target="label", select="S011", **kw)


def test_fires_when_one_feature_of_five_moves_by_one_sd():
    (f,) = run(split(4000, 0), split(1000, 1, {"f3": 1.0})).findings
    assert (f.code, f.name, f.split) == ("S011", "split-distinguishable", "test")
    assert f.columns[0] == "f3"
    assert f.metrics["auc"] == pytest.approx(0.76, abs=0.04)  # Phi(1 / sqrt 2)
    assert f.metrics["rows_per_split"] == 1000


def test_names_every_feature_that_carries_a_shared_shift():
    (f,) = run(split(4000, 0), split(1000, 1, {"f1": 0.6, "f2": 0.6})).findings
    assert set(f.columns[:2]) == {"f1", "f2"}


@pytest.mark.parametrize("load", [sk.load_diabetes, sk.load_breast_cancer, sk.load_wine])
@pytest.mark.parametrize("seed", [0, 1])
def test_quiet_on_random_splits_of_real_tables(load, seed):
    df = load(as_frame=True).frame.rename(columns={"target": "label"})
    order = np.random.default_rng(seed).permutation(len(df))
    cut = int(0.75 * len(df))
    report = run(df.iloc[order[:cut]], df.iloc[order[cut:]])
    assert report.findings == []
    assert [o.status for o in report.outcomes] == [Status.PASSED]


def test_quiet_on_a_random_split_of_synthetic_rows():
    assert run(split(4000, 0), split(1000, 1)).findings == []


def test_skipped_without_a_test_split():
    (o,) = run(split(100, 0)).outcomes
    assert o.status == Status.SKIPPED and "test split" in o.reason
