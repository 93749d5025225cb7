"""S010 feature-drift: per feature, KS D (numeric, on the row samples) or Cramer's V (levels,
on exact counts), gated by a Bonferroni-corrected p-value and an effect size; features named
by effect. Quiet on random splits of real tables; fires when one feature of five moves by one
standard deviation in a 1,000-row test split."""

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
    return datavet.audit(train, test, target="label", select="S010", **kw)


def test_fires_when_one_feature_of_five_moves_by_one_sd():
    report = run(split(4000, 0), split(1000, 1, {"f3": 1.0}))
    (f,) = report.findings
    assert (f.code, f.name, f.columns, f.split) == ("S010", "feature-drift", ("f3",), "test")
    assert f.metrics["max_effect"] == pytest.approx(0.38, abs=0.05)  # KS D of a 1 sd shift
    assert "'f3' (KS D = 0." in f.message
    assert "1 of 5 features" in f.message


def test_names_the_features_largest_effect_first():
    report = run(split(4000, 0), split(1000, 1, {"f1": 0.5, "f4": 1.5}))
    (f,) = report.findings
    assert f.columns == ("f4", "f1")


@pytest.mark.parametrize("load", [sk.load_diabetes, sk.load_breast_cancer, sk.load_wine])
@pytest.mark.parametrize("seed", [0, 1])
def test_quiet_on_random_splits_of_real_tables(load, seed):
    df = load(as_frame=True).frame.rename(columns={"target": "label"})
    order = np.random.default_rng(seed).permutation(len(df))
    cut = int(0.75 * len(df))
    report = run(df.iloc[order[:cut]], df.iloc[order[cut:]])
    assert report.findings == []
    assert [o.status for o in report.outcomes] == [Status.PASSED]


def test_text_features_are_compared_by_cramers_v():
    rng = np.random.default_rng(0)
    train, test = split(3000, 0), split(1000, 1)
    train["site"] = rng.choice(["a", "b", "c"], len(train))
    test["site"] = rng.choice(["a", "b", "c"], len(test), p=[0.6, 0.3, 0.1])
    (f,) = run(train, test).findings
    assert f.columns == ("site",)
    assert "Cramer's V" in f.message


def test_a_tiny_effect_on_a_large_split_stays_quiet():
    # p is tiny with 200,000 rows, but D ~ 0.02 is no drift worth a warning
    assert run(split(200_000, 0), split(200_000, 1, {"f2": 0.05})).findings == []


def test_says_when_numbers_were_compared_on_samples():
    report = run(split(4000, 0), split(1000, 1, {"f3": 1.0}), sample_rows=800)
    (f,) = report.findings
    assert "uniform samples of 800 train and 800 test rows" in f.message


def test_keys_and_the_target_are_not_compared():
    train, test = split(2000, 0), split(1000, 1)
    train["row_id"], test["row_id"] = np.arange(2000), np.arange(2000, 3000)
    assert run(train, test).findings == []


def test_skipped_without_a_test_split():
    (o,) = run(split(100, 0)).outcomes
    assert o.status == Status.SKIPPED and "test split" in o.reason


def test_the_report_shows_train_and_test_histograms_of_drifted_features():
    report = run(split(4000, 0), split(1000, 1, {"f3": 1.0}))
    columns = {s: {c["name"]: c for c in report.datasets[s]["columns"]} for s in ("train", "test")}
    hist_train, hist_test = columns["train"]["f3"]["histogram"], columns["test"]["f3"]["histogram"]
    assert hist_train["edges"] == hist_test["edges"]  # shared bins
    assert sum(hist_train["counts"]) == 4000 and sum(hist_test["counts"]) == 1000
    assert "histogram" not in columns["train"]["f1"]  # only the drifted ones
    html = report.to_html()
    assert html.count('data-test-feature-drift-column="f3"') == 1
    assert 'data-test-feature-drift-split="train"' in html
    assert 'data-test-feature-drift-split="test"' in html


def test_ks_p_values_are_scipys_exact_and_asymptotic():
    """The KS test runs on datavet._stats (no SciPy import); its D and p are SciPy's: exact up
    to 10,000 rows a split, asymptotic beyond."""
    from scipy import stats

    for n_train, n_test in ((1_200, 500), (12_000, 3_000)):
        train, test = split(n_train, 0), split(n_test, 1, {"f3": 0.5})
        (f,) = run(train, test).findings
        want = stats.ks_2samp(train["f3"], test["f3"])
        assert f.metrics["effect:f3"] == want.statistic
        assert f.metrics["min_p_value"] == pytest.approx(want.pvalue, rel=1e-9)


def test_a_tiny_d_on_equal_sizes_is_no_crash_and_no_warning():
    # 34 rows a split, D = 1/34: the exact count rounds past 1 and SciPy's method falls back
    # on the asymptotic p with a RuntimeWarning (an error under this suite's filters)
    train = pd.DataFrame({"f": np.arange(34.0), "label": np.arange(34) % 2})
    test = pd.DataFrame({"f": np.arange(34.0) + 0.5, "label": np.arange(34) % 2})
    report = run(train, test, thresholds={"S010": {"min_effect": 0.0}})  # every p computed
    assert [o.status for o in report.outcomes] == [Status.PASSED]


def test_a_d_below_the_effect_gate_costs_no_p_value(monkeypatch):
    """The exact p-value sweeps n1 + n2 diagonals; a feature whose D cannot reach
    ``min_effect`` could not drift whatever its p, so only the moved feature pays for one."""
    from datavet import _stats

    calls = []
    real = _stats.ks_2samp
    monkeypatch.setattr(_stats, "ks_2samp", lambda x, y, **kw: calls.append(1) or real(x, y, **kw))
    (f,) = run(split(4000, 0), split(1000, 1, {"f3": 1.0})).findings
    assert f.columns == ("f3",) and len(calls) == 1
    calls.clear()
    report = run(split(4000, 0), split(1000, 1), thresholds={"S010": {"min_effect": 0.0}})
    assert report.findings == [] and len(calls) == 5
