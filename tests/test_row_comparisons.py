"""Row identity rules (S001, S002, S003, S007): renamed columns, row keys, chance agreement."""

from __future__ import annotations

import numpy as np
import pandas as pd

import datavet
from datavet.findings import Severity


def _codes(report, *codes):
    return {f.code: f for f in report.findings if f.code in codes}


def _outcome(report, code):
    return next(o for o in report.to_dict()["outcomes"] if o["code"] == code)


def test_s001_is_skipped_when_only_a_minority_of_columns_is_shared():
    # 'age' renamed 'Age': the rows share only 'sex', two values; no test row is a train row
    train = pd.DataFrame({"age": np.arange(300) * 1.0, "sex": np.tile(["m", "f"], 150)})
    test = pd.DataFrame({"Age": np.arange(1000, 1100) * 1.0, "sex": np.tile(["m", "f"], 50)})
    report = datavet.audit(train, test, select=["S001", "S004", "S007"])
    assert set(_codes(report, "S001", "S004", "S007")) == {"S004"}
    s001 = _outcome(report, "S001")
    assert s001["status"] == "skipped"
    assert "'age' (train only)" in s001["reason"] and "'Age' (test only)" in s001["reason"]


def test_s001_names_the_columns_left_out_when_most_are_shared():
    rng = np.random.default_rng(0)
    train = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    test = train.iloc[:50].rename(columns={"c": "C"}).reset_index(drop=True)
    (f,) = _codes(datavet.audit(train, test, select=["S001"]), "S001").values()
    assert f.n_affected == 50
    assert "compared on the 2 feature columns both splits share" in f.message
    assert "'c' (train only), 'C' (test only)" in f.message
    assert f.metrics["compared_columns"] == 2


def _keyed(seed=17, n=1000):
    """an order_id on every row; 20 test rows and 10 train rows are relabelled copies."""
    rng = np.random.default_rng(seed)
    d = pd.DataFrame(
        {
            "order_id": np.arange(1, n + 1),
            "a": rng.normal(size=n).round(3),
            "b": rng.normal(size=n).round(3),
        }
    )
    d["label"] = (d.a > 0).astype(int)
    d.loc[900:919, ["a", "b"]] = d.loc[0:19, ["a", "b"]].values
    d.loc[900:919, "label"] = 1 - d.loc[0:19, "label"].values
    train, test = d.iloc[:800].copy(), d.iloc[800:].reset_index(drop=True)
    train.loc[700:709, ["a", "b"]] = train.loc[100:109, ["a", "b"]].values
    train.loc[700:709, "label"] = 1 - train.loc[100:109, "label"].values
    return train, test


def test_s003_compares_rows_without_the_row_key():
    train, test = _keyed()
    report = datavet.audit(train, test, target="label", baselines=False, select=["S003"])
    found = sorted((f.split, f.n_affected) for f in report.findings if f.code == "S003")
    assert found == [("test", 20), ("train", 20)]
    assert all("'order_id' left out" in f.message for f in report.findings)
    cross = next(f for f in report.findings if "carry another label" in f.message)
    assert cross.examples == (100, 101, 102, 103, 104)


def test_s007_leaves_out_the_copies_s001_reports_without_the_row_key():
    train, test = _keyed()
    report = datavet.audit(
        train, test, target="label", baselines=False, select=["S001", "S003", "S007"]
    )
    by = _codes(report, "S001", "S007")
    assert by["S001"].n_affected == 20
    assert "S007" not in by


def test_s007_keeps_near_copies_beside_the_row_key_copies():
    train, test = _keyed()
    noisy = train.iloc[300:310].copy()
    noisy[["a", "b"]] *= 1 + 1e-9
    noisy["order_id"] += 5000
    test = pd.concat([test, noisy], ignore_index=True)
    report = datavet.audit(train, test, target="label", baselines=False, select=["S001", "S007"])
    by = _codes(report, "S001", "S007")
    assert by["S001"].n_affected == 20
    assert by["S007"].n_affected == 10 and by["S007"].examples == (200, 201, 202, 203, 204)


def test_s007_is_quiet_on_chance_collisions_of_a_continuous_value():
    # independent draws; a few tenure values agree to 6 digits by chance
    rng = np.random.default_rng(16)
    n = 60000
    d = pd.DataFrame(
        {
            "region": rng.choice(list("NSEW"), n),
            "plan": rng.choice(["basic", "pro", "team"], n),
            "tenure_years": rng.exponential(3, n),
        }
    )
    d["label"] = ((d.tenure_years > 3) ^ (rng.random(n) < 0.2)).astype(int)
    train, test = d.iloc[:50000], d.iloc[50000:].reset_index(drop=True)
    report = datavet.audit(train, test, target="label", baselines=False, select=["S007"])
    assert not report.findings
    # ... while the same schema's real near copies (many more than chance) are still found
    copies = train.iloc[:2000].copy()
    copies["tenure_years"] *= 1 + 1e-9
    test = pd.concat([test, copies], ignore_index=True)
    report = datavet.audit(train, test, target="label", baselines=False, select=["S007"])
    (f,) = report.findings
    assert f.n_affected >= 2000 and f.metrics["expected_by_chance"] < 200


def _coarse(seed=22, n=3000):
    rng = np.random.default_rng(seed)
    d = pd.DataFrame(
        {
            "smoker": rng.integers(0, 2, n),
            "age_band": rng.integers(0, 6, n),
            "region": rng.choice(list("NSEW"), n),
        }
    )
    d["label"] = ((d.smoker == 1) ^ (rng.random(n) < 0.2)).astype(int)
    return d


def test_s002_and_s003_call_natural_repeats_of_coarse_data_info():
    report = datavet.audit(_coarse(), target="label", baselines=False, select=["S002", "S003"])
    by = _codes(report, "S002", "S003")
    assert by["S002"].severity == Severity.INFO and by["S003"].severity == Severity.INFO
    assert "by chance alone" in by["S002"].message
    assert "by chance alone" in by["S003"].message
    assert by["S002"].metrics["expected_by_chance"] > by["S002"].n_affected / 2


def test_s002_still_warns_about_copies_in_continuous_data():
    rng = np.random.default_rng(3)
    d = pd.DataFrame(rng.normal(size=(500, 3)), columns=list("abc"))
    d["label"] = rng.integers(0, 2, 500)
    d = pd.concat([d, d.iloc[:40]], ignore_index=True)
    (f,) = datavet.audit(d, target="label", baselines=False, select=["S002"]).findings
    assert f.severity == Severity.WARNING and f.n_affected == 40
    assert "by chance" not in f.message


def test_s001_on_coarse_data_is_info_and_copies_of_continuous_rows_an_error():
    """48 feature combinations: a random 80/20 split puts equal rows on both sides by chance;
    continuous rows copied into test are real overlap."""
    d = _coarse()
    train, test = d.iloc[:2400], d.iloc[2400:].reset_index(drop=True)
    (f,) = datavet.audit(train, test, target="label", baselines=False, select="S001").findings
    assert f.severity == Severity.INFO and "by chance alone" in f.message
    assert f.n_affected <= 2 * f.metrics["expected_by_chance"]
    rng = np.random.default_rng(3)
    d = pd.DataFrame({"a": rng.normal(size=1000), "b": rng.normal(size=1000)})
    d["label"] = (d.a > 0).astype(int)
    train, test = d.iloc[:800], pd.concat([d.iloc[800:], d.iloc[:30]], ignore_index=True)
    (f,) = datavet.audit(train, test, target="label", baselines=False, select="S001").findings
    assert f.severity == Severity.ERROR and f.n_affected == 30
    assert f.metrics["expected_by_chance"] < 1
