"""L004 label-shift: train and test label distributions differ.

Classification: total variation distance (TVD) of the class frequencies, chi-square test of
homogeneity. Regression: Cohen's d of the means, Welch's t-test. Fires only when the effect size
reaches its threshold (TVD 0.1, |d| 0.2) and p < 0.001.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2, t

import datavet
from datavet import Severity

NAN = float("nan")


def frame(labels) -> pd.DataFrame:
    return pd.DataFrame({"x": np.arange(len(labels), dtype=float), "label": labels})


def run(train, test=None, **kw):
    return datavet.audit(train, test, target="label", select="L004", **kw)


def classes(counts: dict) -> pd.DataFrame:
    return frame([c for c, n in counts.items() for _ in range(n)])


# -- classification ------------------------------------------------------------------------


def test_fires_on_50_50_against_90_10():
    report = run(classes({0: 50, 1: 50}), classes({0: 90, 1: 10}))
    (f,) = report.findings
    assert (f.code, f.name, f.severity) == ("L004", "label-shift", Severity.WARNING)
    assert f.split == "test" and f.columns == ("label",)
    assert f.n_affected == 100 and f.examples == ()
    # TVD = (|0.5 - 0.9| + |0.5 - 0.1|) / 2 = 0.4. Chi-square on [[50, 50], [90, 10]]: expected
    # 70 / 30 in each row, X2 = 2 * (20^2 / 70 + 20^2 / 30) = 800 / 21, 1 degree of freedom.
    p = chi2.sf(800 / 21, 1)
    assert f.metrics["tvd"] == pytest.approx(0.4)
    assert f.metrics["p_value"] == pytest.approx(p, rel=1e-6)
    assert p < 1e-9
    assert "total variation distance 0.400" in f.message and f"p = {p:.2g}" in f.message
    assert "largest moves: 0 50.0% -> 90.0%, 1 50.0% -> 10.0%." in f.message
    assert f.hint and "stratify" in f.hint
    assert report.outcomes[0].status.value == "failed"


def test_a_class_missing_from_one_side_counts_in_the_distance():
    train = classes({"a": 60, "b": 40})
    test = classes({"a": 30, "b": 30, "c": 40})
    (f,) = run(train, test).findings
    # TVD = (|0.6 - 0.3| + |0.4 - 0.3| + |0 - 0.4|) / 2 = 0.4; moves ordered by size
    assert f.metrics["tvd"] == pytest.approx(0.4)
    assert f.metrics["p_value"] < 1e-6
    assert "'c' 0.0% -> 40.0%, 'a' 60.0% -> 30.0%, 'b' 40.0% -> 30.0%" in f.message


def test_quiet_on_a_small_shift_in_a_big_sample():
    # 50/50 against 53/47 on 20,000 rows each: significant, but TVD is only 0.03
    train = classes({0: 10_000, 1: 10_000})
    test = classes({0: 10_600, 1: 9_400})
    # X2 = 2 * (300^2 / 10,300 + 300^2 / 9,700) = 36.0: p ~ 2e-9, far below alpha
    x2 = 2 * (300**2 / 10_300 + 300**2 / 9_700)
    assert chi2.sf(x2, 1) < 1e-8
    report = run(train, test)
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"
    # the effect-size threshold alone keeps it quiet: lower it and the same data fires
    (f,) = run(train, test, thresholds={"L004": {"min_tvd": 0.02}}).findings
    assert f.metrics["tvd"] == pytest.approx(0.03)
    assert f.metrics["p_value"] == pytest.approx(chi2.sf(x2, 1), rel=1e-6)


def test_quiet_on_a_big_shift_in_a_tiny_sample():
    # the same 50/50 -> 90/10 on 10 rows each: TVD 0.4, but X2 = 2 * (2^2/7 + 2^2/3) = 3.81,
    # p ~ 0.05, not below 0.001
    assert chi2.sf(2 * (4 / 7 + 4 / 3), 1) > 0.04
    assert run(classes({0: 5, 1: 5}), classes({0: 9, 1: 1})).findings == []


def test_quiet_on_the_same_distribution():
    assert run(classes({"x": 30, "y": 20}), classes({"y": 40, "x": 60})).findings == []


def test_missing_test_labels_are_left_out():
    test = frame([0.0] * 90 + [1.0] * 10 + [NAN] * 50)
    (f,) = run(classes({0: 50, 1: 50}), test).findings
    assert f.n_affected == 100 and f.metrics["tvd"] == pytest.approx(0.4)


def test_counts_across_batches():
    train, test = classes({0: 50, 1: 50}), classes({0: 90, 1: 10})
    assert run(train, test, batch_rows=7).findings == run(train, test).findings


# -- regression ----------------------------------------------------------------------------

BASE = np.tile([1.5, 2.5, 3.5, 4.5, 5.5], 20)  # n = 100, mean 3.5, sample variance 200 / 99


def test_regression_mean_shift_fires_with_cohens_d():
    report = run(frame(BASE), frame(BASE + 1.0))
    (f,) = report.findings
    assert (f.code, f.split, f.columns) == ("L004", "test", ("label",))
    assert f.n_affected == 100
    # equal variances 200/99: pooled sd = sqrt(200/99), d = 1 / sqrt(200/99) = sqrt(99/200);
    # Welch t = 1 / sqrt(2 * (200/99) / 100) = sqrt(99) / 2 with 198 degrees of freedom
    d = math.sqrt(99 / 200)
    p = 2 * t.sf(math.sqrt(99) / 2, 198)
    assert f.metrics["cohens_d"] == pytest.approx(d)
    assert f.metrics["p_value"] == pytest.approx(p, rel=1e-6)
    assert f.metrics["train_mean"] == pytest.approx(3.5)
    assert f.metrics["test_mean"] == pytest.approx(4.5)
    assert p < 1e-5
    assert f"mean 3.5 -> 4.5 (Cohen's d = 0.70, Welch p = {p:.2g})" in f.message
    assert report.outcomes[0].status.value == "failed"


def test_regression_shift_downwards_has_a_negative_d():
    (f,) = run(frame(BASE), frame(BASE - 1.0)).findings
    assert f.metrics["cohens_d"] == pytest.approx(-math.sqrt(99 / 200))
    assert "Cohen's d = -0.70" in f.message


def test_regression_quiet_on_the_same_distribution():
    report = run(frame(BASE), frame(BASE[::-1].copy()))
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"


def test_regression_quiet_on_a_small_shift_in_a_big_sample():
    train = np.tile([1.5, 2.5, 3.5, 4.5, 5.5], 2_000)  # n = 10,000
    # d = 0.14 / sqrt(2 * 10,000 / 9,999) ~ 0.099 < 0.2; t = 0.14 / sqrt(2 * 2.0002 / 10,000) = 7
    var = 2 * 10_000 / 9_999
    d = 0.14 / math.sqrt(var)
    p = 2 * t.sf(0.14 / math.sqrt(2 * var / 10_000), 19_998)
    assert d < 0.1 and p < 1e-10
    assert run(frame(train), frame(train + 0.14)).findings == []


def test_regression_counts_across_batches():
    (whole,) = run(frame(BASE), frame(BASE + 1.0)).findings
    (batched,) = run(frame(BASE), frame(BASE + 1.0), batch_rows=16).findings
    assert batched.metrics["cohens_d"] == pytest.approx(whole.metrics["cohens_d"])
    assert batched.metrics["p_value"] == pytest.approx(whole.metrics["p_value"])


# -- skipped ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "train, test, words",
    [
        (classes({0: 5, 1: 5}), None, "no test split"),
        (classes({0: 5, 1: 5}), pd.DataFrame({"x": [1.0, 2.0]}), "no labels"),
        (classes({0: 5, 1: 5}), frame([NAN, NAN]), "no labels"),
        (frame([0.5, 1.5, 2.5]), frame([0.5, NAN]), "too few labelled rows"),
    ],
    ids=["no-test", "test-without-target", "test-labels-all-missing", "one-row"],
)
def test_skipped_with_a_reason(train, test, words):
    report = run(train, test)
    assert report.findings == []
    (o,) = report.outcomes
    assert o.status.value == "skipped" and words in o.reason


def test_skipped_without_a_target():
    train = pd.DataFrame({"x": [1.0, 2.0]})
    (o,) = datavet.audit(train, pd.DataFrame({"x": [3.0]}), select="L004").outcomes
    assert o.status.value == "skipped" and "target" in o.reason


def test_an_infinite_target_is_left_out_of_the_comparison():
    """V003 reports the inf; L004 compares the finite values (it used to skip)."""
    report = run(frame([0.5, 1.5, np.inf, 2.5]), frame([0.5, 1.5]))
    (o,) = report.outcomes
    assert o.status.value == "passed" and report.findings == []
