"""S005: groups with rows in both splits (--group); quiet when the split is by group."""

from __future__ import annotations

import numpy as np
import pandas as pd

import datavet


def patients(seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    pid = np.repeat(np.arange(200), 5)  # 200 patients, 5 rows each
    df = pd.DataFrame(rng.normal(size=(1000, 3)), columns=list("abc"))
    df["patient_id"] = pid
    df["label"] = rng.integers(0, 2, 1000)
    return df


def test_split_by_rows_fires_with_exact_counts():
    df = patients().sample(frac=1, random_state=0).reset_index(drop=True)
    train, test = df.iloc[:800], df.iloc[800:]
    (f,) = datavet.audit(train, test, target="label", group="patient_id", select="S005").findings
    shared = set(train.patient_id) & set(test.patient_id)
    in_test = test.patient_id.isin(shared)
    assert f.code == "S005" and f.severity.label == "error" and f.columns == ("patient_id",)
    assert f.metrics["groups"] == len(shared)
    assert f.n_affected == int(in_test.sum()) == f.metrics["test_rows"]
    assert f.metrics["train_rows"] == int(train.patient_id.isin(shared).sum())
    assert f.metrics["test_groups"] == test.patient_id.nunique()
    assert f.examples == tuple(np.flatnonzero(in_test.to_numpy())[:5].tolist())


def test_split_by_patient_is_quiet():
    df = patients()
    train, test = df[df.patient_id < 160], df[df.patient_id >= 160]
    report = datavet.audit(train, test, target="label", group="patient_id", select="S005")
    assert report.findings == [] and report.outcomes[0].status.value == "passed"


def test_string_groups_and_batches():
    df = patients(1)
    df["patient_id"] = "P-" + df["patient_id"].astype(str)
    train, test = df.iloc[:700], df.iloc[698:]  # patient 139 straddles the cut: rows 698, 699
    (f,) = datavet.audit(
        train, test, target="label", group="patient_id", select="S005", batch_rows=64
    ).findings
    assert f.metrics["groups"] == 1 and f.n_affected == 5 - 3  # 2 of its rows are in test
    assert f.examples == (0,)


def test_skipped_without_group_or_test():
    df = patients()
    (o,) = datavet.audit(df, target="label", select="S005").outcomes
    assert o.status.value == "skipped" and "--group" in o.reason
    (o,) = datavet.audit(df, target="label", group="patient_id", select="S005").outcomes
    assert o.status.value == "skipped" and "test" in o.reason


def test_unknown_group_column_is_an_input_error():
    df = patients()
    try:
        datavet.audit(df, df, target="label", group="patient", select="S005")
    except datavet.InputError as exc:
        assert "group column 'patient' not found" in str(exc) and "patient_id" in str(exc)
    else:
        raise AssertionError("expected InputError")
