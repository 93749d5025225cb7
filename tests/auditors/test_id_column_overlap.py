"""S006: an ID-like column shared across splits (no --group); quiet for measurements."""

from __future__ import annotations

import numpy as np
import pandas as pd

import datavet


def frame(seed=0, n=2000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 2)), columns=["a", "b"])
    df["user_id"] = rng.integers(0, 400, n)  # ~5 rows per user
    df["visits"] = rng.integers(0, 1000, n)  # a count: integer, many values, not an ID by name
    df["label"] = rng.integers(0, 2, n)
    return df


def test_shared_user_ids_fire_and_ask_for_group():
    df = frame()
    train, test = df.iloc[:1600], df.iloc[1600:]
    report = datavet.audit(train, test, target="label", select="S006")
    (f,) = report.findings
    truth = test.user_id.drop_duplicates().isin(set(train.user_id)).mean()
    assert f.columns == ("user_id",) and f.split == "test"
    assert abs(f.metrics["shared_fraction"] - truth) < 1e-9  # under 1,024 values: exact
    assert "--group user_id" in f.message and f.severity.label == "warning"


def test_measurement_columns_are_not_ids_and_disjoint_ids_are_quiet():
    df = frame(1)
    train, test = df[df.user_id < 300], df[df.user_id >= 300]
    assert datavet.audit(train, test, target="label", select="S006").findings == []


def test_text_keys_are_ids_and_estimates_hold_past_the_sketch():
    n = 40_000
    keys = np.array([f"k{i:06d}" for i in range(n)], dtype=object)
    train = pd.DataFrame({"session": keys[:30_000], "x": np.zeros(30_000), "label": 0})
    test = pd.DataFrame({"session": keys[20_000:], "x": np.ones(20_000), "label": 0})
    (f,) = datavet.audit(train, test, target="label", select="S006").findings
    assert f.columns == ("session",)
    assert abs(f.metrics["shared_fraction"] - 0.5) < 0.06  # KMV estimate, k = 1,024
    assert 17_000 < f.metrics["test_distinct"] < 23_000


def test_id_columns_are_left_out_of_the_scale_check():
    df = frame(2)
    df["patient_id"] = np.repeat(np.arange(100_000, 100_000 + 500), 4)  # huge scale, an ID
    df["label"] = (df["patient_id"] % 2).astype(int)  # would look like single-feature leakage
    report = datavet.audit(df, target="label", select=["F003", "B003"])
    assert not any("patient_id" in f.columns for f in report.findings)
