"""Group keys, ID-like columns and time columns: missing group values are no group (S005), a
medium-cardinality category or a measurement with "?" markers is not an ID (S006, S007), and a
numeric time column is checked (S008)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import datavet


def _groups(test_user):
    rng = np.random.default_rng(30)
    train = pd.DataFrame(
        {
            "user": np.r_[np.arange(0, 400), [np.nan] * 100],
            "x": rng.normal(size=500),
            "label": rng.integers(0, 2, 500),
        }
    )
    test = pd.DataFrame({"user": test_user, "x": rng.normal(size=len(test_user)), "label": 0})
    return train, test


def test_missing_group_values_are_no_group():
    train, test = _groups(np.r_[np.arange(400, 500), [np.nan] * 30])
    report = datavet.audit(train, test, target="label", group="user", select="S005")
    assert report.findings == []


def test_shared_groups_are_counted_without_the_missing_value():
    train, test = _groups(np.r_[np.arange(395, 500), [np.nan] * 30])  # users 395..399 shared
    (f,) = datavet.audit(train, test, target="label", group="user", select="S005").findings
    assert f.metrics["groups"] == 5 and f.metrics["test_rows"] == 5
    assert f.metrics["test_groups"] == 105 and f.metrics["train_groups"] == 400
    assert f.metrics["test_rows_without_group"] == 30
    assert f.metrics["train_rows_without_group"] == 100
    assert "test's 105)" in f.message and "30 in test, 100 in train" in f.message


def _cities(seed=12, n=10_000):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "city": rng.choice([f"city_{i:03d}" for i in range(400)], n),  # ~25 rows each
            "age_group": rng.choice(["18-25", "26-35", "36-50", "51+"], n),
            "gender": rng.choice(["F", "M"], n),
            "education": rng.choice(["hs", "ba", "ms", "phd"], n),
        }
    )
    df["label"] = (df.education.isin(["ms", "phd"]) ^ (rng.random(n) < 0.2)).astype(int)
    return df.iloc[:8000], df.iloc[8000:]


def test_a_category_with_hundreds_of_values_is_not_an_id():
    """S007 compares on city (no 93% "near copies" with it left out); S006 only asks whether
    it names a subject, as a country in panel data would."""
    train, test = _cities()
    report = datavet.audit(train, test, target="label", select=["S006", "S007"])
    (f,) = report.findings
    assert (f.code, f.columns) == ("S006", ("city",))
    assert "may name a subject" in f.message and "looks like an ID" not in f.message


def test_text_keys_with_few_rows_each_are_still_ids():
    train, test = _cities()
    train, test = train.copy(), test.copy()
    train["ticket"] = [f"T{i // 2:05d}" for i in range(len(train))]  # 2 rows per value
    test["ticket"] = [f"T{i // 2:05d}" for i in range(len(test))]  # all seen in train
    found = datavet.audit(train, test, target="label", select="S006").findings
    said = {f.columns: f.message for f in found}
    assert "looks like an ID" in said[("ticket",)]
    assert "may name a subject" in said[("city",)]


def test_a_panel_subject_is_asked_about():
    """142 countries x 12 years split at random: every test country is in train."""
    rng = np.random.default_rng(5)
    countries = [f"Country{i:03d}" for i in range(142)]
    d = pd.DataFrame(
        {
            "country": np.repeat(countries, 12),
            "year": np.tile(np.arange(1952, 2008, 5), 142),
            "gdp": rng.lognormal(8, 1, 142 * 12),
        }
    )
    d["label"] = (d["gdp"] > d["gdp"].median()).astype(int)
    d = d.sample(frac=1, random_state=0).reset_index(drop=True)
    (f,) = datavet.audit(d.iloc[:1400], d.iloc[1400:], target="label", select="S006").findings
    assert f.columns == ("country",) and f.metrics["shared_fraction"] > 0.9


def test_numbers_with_question_marks_are_not_an_id():
    rng = np.random.default_rng(4)
    n = 2000
    q = rng.normal(5, 1, n).round(2).astype(object)
    q[rng.choice(n, 30, replace=False)] = "?"
    d = pd.DataFrame({"q": q, "x": rng.normal(size=n), "label": rng.integers(0, 2, n)})
    report = datavet.audit(d.iloc[:1600], d.iloc[1600:], target="label", select=["S006", "V004"])
    assert [f.code for f in report.findings] == ["V004", "V004"]
    (s006,) = [o for o in report.outcomes if o.code == "S006"]
    assert s006.reason == "no ID-like column"


def _years():
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame(
        {
            "x": rng.normal(size=n),
            "year": 2000 + np.arange(n) // 30,
            "d": pd.date_range("2020", periods=n).astype(str),
            "y": rng.choice(["a", "b"], n),
        }
    )
    return df, df.iloc[:50].copy()  # test entirely older than train's newest rows


def test_a_numeric_time_column_is_checked():
    train, test = _years()
    (f,) = datavet.audit(train, test, target="y", time="year", select="S008").findings
    assert f.metrics["older_rows"] == 50
    assert "newest train row (2009)" in f.message and "test 2000 to 2001" in f.message


def test_a_text_time_column_is_skipped_with_the_true_reason():
    train, test = _years()
    # ISO-8601 text in a data frame is read as dates (tests/test_text_time.py); other text is not
    for frame in (train, test):
        frame["d"] = pd.to_datetime(frame["d"]).dt.strftime("%d/%m/%Y")
    report = datavet.audit(train, test, target="y", time="d", select="S008")
    (outcome,) = [o for o in report.outcomes if o.code == "S008"]
    assert outcome.status.value == "skipped"
    assert "holds text" in outcome.reason and "no values" not in outcome.reason


def test_iso_text_time_in_a_data_frame_is_read_as_dates():
    train, test = _years()
    report = datavet.audit(train, test, target="y", time="d", select="S008")
    (f,) = report.findings
    assert f.n_affected == 50  # test is the first 50 days, all older than train's newest


def test_a_numeric_time_column_read_from_csv(tmp_path):
    train, test = _years()
    train.to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "test.csv", index=False)
    report = datavet.audit(
        tmp_path / "train.csv", tmp_path / "test.csv", target="y", time="year", select="S008"
    )
    (f,) = report.findings
    assert f.n_affected == 50
