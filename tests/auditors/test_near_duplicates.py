"""S007: rows equal after rounding/normalising but not exactly; exact copies stay S001."""

from __future__ import annotations

import numpy as np
import pandas as pd

import datavet


def frame(seed=0, n=500) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 3)), columns=list("abc"))
    df["city"] = rng.choice(["Paris", "Lyon", "Nice"], n)
    df["label"] = rng.integers(0, 2, n)
    return df


def test_noise_of_1e_9_is_a_near_duplicate_not_an_exact_one():
    train, fresh = frame(0), frame(1, 100)
    noisy = train.iloc[10:40].copy()
    noisy[list("abc")] *= 1 + 1e-9
    noisy["city"] = noisy["city"].str.upper() + "  "
    exact = train.iloc[50:55]
    test = pd.concat([fresh, noisy, exact], ignore_index=True)
    report = datavet.audit(train, test, target="label", select=["S001", "S007"])
    by = {f.code: f for f in report.findings}
    assert by["S001"].n_affected == 5 and by["S001"].examples == (130, 131, 132, 133, 134)
    assert by["S007"].n_affected == 30
    assert by["S007"].examples == (100, 101, 102, 103, 104)
    assert "test 100 ~ train 10" in by["S007"].message


def test_different_rows_are_quiet():
    report = datavet.audit(frame(0), frame(1), target="label", select="S007")
    assert report.findings == [] and report.outcomes[0].status.value == "passed"


def test_a_unique_row_id_does_not_hide_near_duplicates():
    train = frame(2).assign(record_id=np.arange(500))
    test = train.iloc[:20].copy()
    test["record_id"] += 10_000  # new IDs for copied rows
    test[["a"]] *= 1 + 1e-10
    (f,) = datavet.audit(train, test, target="label", select="S007").findings
    assert f.n_affected == 20


def test_digits_threshold():
    train = frame(3)
    test = train.iloc[:10].copy()
    test["a"] = test["a"] * (1 + 1e-3) + 1e-3  # a real difference at 6 digits...
    assert datavet.audit(train, test, target="label", select="S007").findings == []
    coarse = {"S007": {"digits": 1}}  # ...but not at 1 (most of these values round alike)
    (f,) = datavet.audit(train, test, target="label", select="S007", thresholds=coarse).findings
    assert 1 <= f.n_affected <= 10


def test_skipped_without_test():
    (o,) = datavet.audit(frame(), target="label", select="S007").outcomes
    assert o.status.value == "skipped"
