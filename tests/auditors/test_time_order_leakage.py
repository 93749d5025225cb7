"""S008: test rows older than the newest train row, in a split meant to be by time."""

from __future__ import annotations

import numpy as np
import pandas as pd

import datavet


def frame(n=1000, seed=1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    t = pd.date_range("2024-01-01", periods=n, freq="h")
    return pd.DataFrame({"when": t, "a": rng.normal(size=n), "label": rng.integers(0, 2, n)})


def test_temporal_split_with_old_rows_fires_with_detected_column():
    df = frame()
    train, test = df.iloc[:800], pd.concat([df.iloc[800:], df.iloc[700:720]], ignore_index=True)
    (f,) = datavet.audit(train, test, target="label", select="S008").findings
    assert f.columns == ("when",) and f.n_affected == 20
    assert f.examples == (200, 201, 202, 203, 204)
    assert "2024-02-03 07:00:00" in f.message  # the newest train row, hour 799
    assert abs(f.metrics["older_fraction"] - 20 / 220) < 1e-12


def test_clean_temporal_split_is_quiet():
    df = frame()
    report = datavet.audit(df.iloc[:800], df.iloc[800:], target="label", time="when", select="S008")
    assert report.findings == [] and report.outcomes[0].status.value == "passed"


def test_random_split_reported_only_when_the_column_is_declared():
    df = frame().sample(frac=1, random_state=0)
    train, test = df.iloc[:800], df.iloc[800:]
    assert datavet.audit(train, test, target="label", select="S008").findings == []
    (f,) = datavet.audit(train, test, target="label", time="when", select="S008").findings
    newest = train["when"].max()
    assert f.n_affected == int((test["when"] < newest).sum())


def test_skipped_without_a_time_column():
    df = frame().drop(columns="when")
    (o,) = datavet.audit(df.iloc[:800], df.iloc[800:], target="label", select="S008").outcomes
    assert o.status.value == "skipped" and "--time" in o.reason
