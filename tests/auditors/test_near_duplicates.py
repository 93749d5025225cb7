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


def test_names_the_columns_that_differ_and_by_how_much(tmp_path):
    train = frame(4).assign(record_id=np.arange(500))
    test = train.iloc[:20].copy()
    test["record_id"] += 10_000
    test["a"] *= 1 + 1e-9
    for how in ("frames", "csv"):  # the one-pass scan and the second pass (CSV) alike
        if how == "csv":
            train.to_csv(tmp_path / "train.csv", index=False)
            test.to_csv(tmp_path / "test.csv", index=False)
            args = (str(tmp_path / "train.csv"), str(tmp_path / "test.csv"))
        else:
            args = (train, test)
        (f,) = datavet.audit(*args, target="label", select="S007").findings
        assert f.n_affected == 20, how
        assert set(f.columns) == {"record_id", "a"}, how
        # per-column differences come from one-byte fingerprints: 1 in 256 may slip through
        assert f.metrics["differ[record_id]"] == 20 and f.metrics["differ[a]"] >= 18
        assert "'record_id' in 20 rows (identifier, differs by up to 10,000)" in f.message
        assert "rows (equal to 6 significant digits)" in f.message


def test_two_shared_values_of_six_are_not_a_near_copy():
    # four text columns with many values are left out as ID-like; the two left (sex, smoker)
    # agree by chance on most rows: that is no copy
    rng = np.random.default_rng(5)
    n = 600
    df = pd.DataFrame(
        {
            "sex": rng.choice(["f", "m"], n),
            "smoker": rng.choice(["yes", "no"], n),
            "income": [f"{v:,}" for v in rng.integers(20_000, 120_000, n)],
            "age": [str(v) for v in rng.integers(18, 90, n)],
            "job": rng.choice([f"job{i}" for i in range(60)], n),
            "town": rng.choice([f"town{i}" for i in range(80)], n),
            "label": rng.integers(0, 2, n),
        }
    )
    report = datavet.audit(df.iloc[:450], df.iloc[450:], target="label", select="S007")
    assert report.findings == []


def test_equal_readings_on_another_date_are_not_a_near_copy():
    # a temperature series: with the date left out, equal readings look alike
    rng = np.random.default_rng(6)
    n = 2000
    df = pd.DataFrame(
        {
            "date": pd.date_range("2020-01-01", periods=n, freq="h"),
            "temp": np.round(rng.normal(10, 5, n), 1),
            "label": rng.integers(0, 2, n),
        }
    ).sample(frac=1.0, random_state=0)
    report = datavet.audit(df.iloc[:1500], df.iloc[1500:], target="label", select="S007")
    assert report.findings == []


def test_rows_that_agree_only_on_missing_and_constant_values_are_not_copies():
    # a wide table whose rows for some countries hold no data at all
    rng = np.random.default_rng(7)
    n = 200
    years = {str(y): rng.normal(3, 1, n) for y in range(1960, 1990)}
    df = pd.DataFrame(
        {"country": [f"country {i}" for i in range(n)], "indicator": "fertility", **years}
    )
    df.loc[rng.choice(n, 20, replace=False), list(years)] = np.nan
    df["label"] = rng.integers(0, 2, n)
    report = datavet.audit(df.iloc[:150], df.iloc[150:], target="label", select="S007")
    assert report.findings == []


def test_shuffled_splits_of_real_tables_hold_no_near_copies():
    import sklearn.datasets
    import statsmodels.api as sm
    from vega_datasets import data as vega

    tables = [
        sklearn.datasets.load_diabetes(as_frame=True).frame,
        sklearn.datasets.load_wine(as_frame=True).frame,
        sklearn.datasets.load_breast_cancer(as_frame=True).frame,
        sm.datasets.fertility.load_pandas().data,
        sm.datasets.grunfeld.load_pandas().data,
        vega.seattle_weather(),
        vega.stocks(),
        vega.seattle_temps(),
    ]
    for table in tables:
        shuffled = table.sample(frac=1.0, random_state=0).reset_index(drop=True)
        cut = int(len(shuffled) * 0.75)
        report = datavet.audit(shuffled.iloc[:cut], shuffled.iloc[cut:], select="S007")
        assert report.findings == [], table.columns[:5].tolist()
