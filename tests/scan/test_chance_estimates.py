"""The chance estimates behind S001-S003's "coincide by chance" notes, against the expectation
computed from the distribution the data was drawn from.

A column of half zeros and half amounts in cents has sum(p^2) near 1/4, yet only its zero rows
can ever equal another row: the estimate must follow each row's own chance, not
"1 / sum(p^2) equally likely combinations" (which made a fully copied test split look natural).
"""

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from datavet.scan import rowchecks as rc
from datavet.scan.columns import ColumnStats


def _stats(frame: pd.DataFrame) -> dict:
    return {c: ColumnStats.of(c, pa.array(frame[c]), 0) for c in frame.columns}


def _zero_inflated(rng, n):
    """An amount: exactly 0 half the time, else a value in cents that practically never repeats."""
    return np.where(rng.random(n) < 0.5, 0.0, np.round(rng.lognormal(4, 1, n), 2))


def _amounts(rng, n):
    return pd.DataFrame({c: _zero_inflated(rng, n) for c in "abc"})


def test_duplicates_follow_each_rows_chance():
    rng = np.random.default_rng(22)
    n = 2000
    train = _amounts(rng, n)
    stats = _stats(train)
    assert all(s.values.exact for s in stats.values())  # exact counts (sketches: see below)
    # only all-zero rows (1/8 of rows) can repeat; all but the first of them do
    expected = n * 0.5**3 - 1
    estimate = rc.chance_duplicates(stats, list("abc"), n)
    assert estimate == pytest.approx(expected, rel=0.15)
    assert abs(estimate - train.duplicated().sum()) < 0.15 * expected


def test_overlap_follows_each_rows_chance():
    rng = np.random.default_rng(23)
    train = _amounts(rng, 2000)
    estimate = rc.chance_overlap(_stats(train), list("abc"), 2000, 500)
    # a fresh test row can equal a train row only when all three amounts are zero
    assert estimate == pytest.approx(500 * 0.5**3, rel=0.2)
    # and that is about what fresh test rows do
    fresh = _amounts(rng, 500)
    found = fresh.merge(train.drop_duplicates(), how="inner").shape[0]
    assert abs(found - estimate) < 0.3 * estimate


def test_uniform_columns_keep_the_combinations_formula():
    rng = np.random.default_rng(1)
    n = 3000
    frame = pd.DataFrame({"x": rng.integers(0, 5, n), "y": rng.integers(0, 4, n)})
    stats = _stats(frame)
    # 20 equally likely combinations: all but about 20 rows repeat one
    assert rc.chance_duplicates(stats, ["x", "y"], n) == pytest.approx(n - 20, abs=1)
    assert rc.chance_overlap(stats, ["x", "y"], n, 800) == pytest.approx(800)


def test_skewed_column_against_its_distribution():
    rng = np.random.default_rng(3)
    n = 3000
    p = np.r_[0.5, np.full(49, 0.5 / 49)]
    frame = pd.DataFrame({"x": rng.choice(50, n, p=p), "y": rng.integers(0, 30, n)})
    joint = np.outer(p, np.full(30, 1 / 30)).ravel()
    expected = n - float(np.sum(-np.expm1(n * np.log1p(-joint))))
    assert rc.chance_duplicates(_stats(frame), ["x", "y"], n) == pytest.approx(expected, rel=0.03)


def test_values_seen_once_never_repeat_by_chance():
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"x": rng.normal(size=3000)})
    assert rc.chance_duplicates(_stats(frame), ["x"], 3000) == 0.0


def test_values_train_holds_once_give_test_rows_no_chance():
    # half zeros, half values seen once: a fresh row matches only through a zero
    train = pd.DataFrame({"x": np.r_[np.zeros(100), np.arange(1.0, 101.0)]})
    assert rc.chance_overlap(_stats(train), ["x"], 200, 40) == pytest.approx(20, rel=0.05)


def test_missing_values_agree_with_missing_ones():
    train = pd.DataFrame({"x": [None] * 50 + list(range(50))}, dtype=float)
    # half the rows missing: 49 of them repeat the first missing row; the numbers never repeat
    assert rc.chance_duplicates(_stats(train), ["x"], 100) == pytest.approx(49, abs=0.5)


def test_the_label_counts_when_given():
    rng = np.random.default_rng(5)
    n = 1000
    frame = pd.DataFrame({"x": rng.integers(0, 2, n), "y": rng.integers(0, 5, n)})
    stats = _stats(frame)
    without = rc.chance_duplicates(stats, ["x"], n)
    with_label = rc.chance_duplicates({"x": stats["x"]}, ["x"], n, label=stats["y"])
    assert without == pytest.approx(n - 2, abs=0.5)
    assert with_label == pytest.approx(n - 10, abs=0.5)
    assert math.isfinite(with_label)


def test_a_copied_test_split_of_amounts_is_an_error_not_a_coincidence():
    import datavet
    from datavet.findings import Severity

    rng = np.random.default_rng(22)
    train = _amounts(rng, 2000)
    train["label"] = rng.integers(0, 2, 2000)
    test = train.sample(500, random_state=0).reset_index(drop=True)  # every test row copied
    report = datavet.audit(train, test, target="label", select=["S001"], baselines=False)
    (f,) = report.findings
    assert f.severity == Severity.ERROR and report.exit_code() == 1
    assert f.metrics["expected_by_chance"] == pytest.approx(500 * 0.5**3, rel=0.2)
    assert "coincide" not in f.message


def _merged(frame: pd.DataFrame, parts: int) -> dict:
    """Column statistics folded from ``parts`` batches, as the engines merge them."""
    out = {}
    for c in frame.columns:
        arr = pa.array(frame[c])
        step = -(-len(arr) // parts)
        stats = None
        for i in range(0, len(arr), step):
            part = ColumnStats.of(c, arr.slice(i, step), i)
            stats = part if stats is None else stats.merge(part)
        out[c] = stats
    return out


@pytest.mark.parametrize("distinct", [1100, 1500, 3000])
@pytest.mark.parametrize("parts", [1, 10])
def test_sketched_counts_never_inflate_the_estimate(distinct, parts):
    # past 1,024 distinct values the counts are a Misra-Gries sketch (each kept count short by
    # its floor): the estimate may fall short of the truth, never far above it
    rng = np.random.default_rng(0)
    n = 60_000
    frame = pd.DataFrame({c: rng.integers(0, distinct, n) for c in "ab"})
    stats = _merged(frame, parts)
    assert not stats["a"].values.exact
    joint = np.full(distinct * distinct, 1 / distinct**2)
    truth = n - float(np.sum(-np.expm1(n * np.log1p(-joint))))
    estimate = rc.chance_duplicates(stats, ["a", "b"], n)
    assert 0.3 * truth <= estimate <= 1.2 * truth


def test_copies_among_many_values_are_still_copies():
    import datavet
    from datavet.findings import Severity

    rng = np.random.default_rng(1)
    n = 40_000
    train = pd.DataFrame({c: rng.integers(0, 1100, n) for c in "ab"})
    train["label"] = rng.integers(0, 2, n)
    test = train.sample(3000, random_state=0).reset_index(drop=True)  # every test row copied
    report = datavet.audit(train, test, target="label", select=["S001"], baselines=False)
    (f,) = report.findings
    assert f.severity == Severity.ERROR
    assert f.metrics["expected_by_chance"] < f.n_affected / 2


@pytest.mark.parametrize(
    "values",
    [
        lambda rng: rng.integers(20, 41, 66),  # few values, small table: counted exactly
        lambda rng: np.rint(rng.normal(30_000, 3_000, 4000)).astype(int),  # sketched counts
    ],
)
def test_a_random_split_of_one_whole_number_column_overlaps_by_chance(values):
    # a reading per row (a demand in MW, a measured speed): equal readings in train and test
    # are what a random split of such data gives, not copies
    import datavet
    from datavet.findings import Severity

    rng = np.random.default_rng(7)
    x = values(rng)
    frame = pd.DataFrame({"x": x})
    cut = int(0.8 * len(frame))
    report = datavet.audit(frame.iloc[:cut], frame.iloc[cut:], select=["S001"], baselines=False)
    (f,) = report.findings
    assert f.severity == Severity.INFO
    assert 0.5 * f.n_affected <= f.metrics["expected_by_chance"] <= 2 * f.n_affected
