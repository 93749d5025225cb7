"""Fixes to the baseline rules: B001's paired test, B003 on missingness, B004 on a file
sorted by a real predictor, and the baselines' skip reason on a tiny sample."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet.auditors.base import Skip
from datavet.auditors.no_signal import NoSignal
from datavet.baselines import Baselines


def _ctx(b: Baselines):
    return SimpleNamespace(require_baselines=lambda: b, target="label")


def _fake(reference, linear, *, lin_loss=0.6, prior_loss=0.69, evaluated_on="test") -> Baselines:
    b = Baselines(task="classification", evaluated_on=evaluated_on, eval_rows=len(reference))
    b.models = [
        {"model": "majority", "description": "", "metrics": {"accuracy": 0.5}},
        {"model": "prior", "description": "", "metrics": {"log_loss": prior_loss}},
        {"model": "linear", "description": "", "metrics": {"log_loss": lin_loss, "accuracy": 0.6}},
    ]
    b.reference_loss = np.asarray(reference, dtype=float)
    b.linear_loss = np.asarray(linear, dtype=float)
    return b


# --------------------------------------------------------------------------------------------
# B001: the size of the loss change counts, not only how many rows it lowers


def blocked_segment(n=4000, seed=15) -> tuple[pd.DataFrame, pd.DataFrame]:
    """15% of rows can never be positive, and a feature says which: a real signal that lowers
    the loss a lot on few rows and raises it a little on many."""
    rng = np.random.default_rng(seed)
    seg = (rng.random(n) < 0.15).astype(int)
    y = np.where(seg == 1, 0, (rng.random(n) < 0.35).astype(int))
    d = pd.DataFrame({"is_blocked_account": seg, "noise": rng.normal(size=n), "label": y})
    return d.iloc[:3000], d.iloc[3000:].reset_index(drop=True)


def test_b001_quiet_when_the_mean_loss_is_clearly_lower():
    train, test = blocked_segment()
    report = datavet.audit(train, test, target="label", select="B001")
    models = {m["model"]: m["metrics"] for m in report.baselines["models"]}
    assert models["linear"]["log_loss"] < models["prior"]["log_loss"] - 0.03
    assert report.findings == []
    assert report.outcomes[0].status.value == "passed"


def test_b001_paired_t_test_weighs_the_loss_change():
    from datavet.auditors.no_signal import paired_t_test, sign_test

    # 150 rows 0.4 lower, 850 rows 0.02 higher: worse on most rows, far lower on average
    ref = np.ones(1000)
    lin = np.r_[np.full(150, 0.6), np.full(850, 1.02)]
    lin[:10] += np.linspace(0, 0.01, 10)  # not all equal: a real t statistic
    assert sign_test(ref, lin)[0] > 0.5
    assert paired_t_test(ref, lin) < 1e-6
    assert paired_t_test(lin, ref) > 0.5  # one-sided
    assert NoSignal().run(_ctx(_fake(ref, lin))) == []


def test_b001_paired_t_test_edge_cases():
    from datavet.auditors.no_signal import paired_t_test

    assert paired_t_test(np.ones(5), np.zeros(5)) == 0.0  # the same gain on every row
    assert paired_t_test(np.zeros(5), np.ones(5)) == 1.0
    assert paired_t_test(np.ones(5), np.ones(5)) == 1.0
    assert paired_t_test(np.array([1.0]), np.array([0.0])) == 1.0  # one row: no test
    ref = np.array([1.0, 2.0, np.nan, 1.0, 3.0])
    lin = np.array([0.5, np.inf, 0.1, 0.9, 2.0])
    # the non-finite rows are dropped: differences 0.5, 0.1, 1.0 (mean 0.533, sd 0.451)
    t = 0.5333333333333333 / (0.45092497528228937 / np.sqrt(3))
    from datavet._stats import t as student

    assert paired_t_test(ref, lin) == pytest.approx(student.sf(t, 2))


def test_b001_a_lower_loss_within_chance_is_not_called_no_better():
    from datavet.auditors.no_signal import paired_t_test

    rng = np.random.default_rng(0)
    ref = np.ones(200)
    lin = ref - 0.01 + rng.normal(0, 0.5, 200)  # lower on average, by less than chance allows
    (f,) = NoSignal().run(_ctx(_fake(ref, lin, lin_loss=0.68, prior_loss=0.69)))
    assert "no better" not in f.message
    assert f.message.startswith("The linear baseline is not clearly better than the prior")
    assert "paired t-test p =" in f.message
    assert f.metrics["p_value"] == pytest.approx(paired_t_test(ref, lin))
    assert f.metrics["p_value"] >= 0.05


@pytest.mark.parametrize("positives", [0.5, 0.1, 0.03])
def test_b001_fires_on_shuffled_labels_whatever_the_class_prior(positives):
    """With a skewed prior the linear model is a little better on the majority's many rows and
    much worse on the minority's few: a sign test counted that as signal (B001 went quiet on
    pure noise); the mean loss is not lower."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=(3000, 3))
    label = (x[:, 0] > np.quantile(x[:, 0], 1 - positives)).astype(int)
    data = pd.DataFrame(x, columns=["a", "b", "c"]).assign(label=rng.permutation(label))
    (f,) = datavet.audit(data, target="label", select="B001").findings
    assert f.metrics["p_value"] >= 0.05
    assert f.metrics["rows_better"] + f.metrics["rows_worse"] <= 3000
    assert 0 <= f.metrics["sign_test_p_value"] <= 1


def test_b001_skip_reason_under_cross_validation_does_not_blame_a_test_split():
    b = _fake(np.full(40, np.nan), np.full(40, np.nan), evaluated_on="5-fold cross-validation")
    with pytest.raises(Skip, match="fold") as err:
        NoSignal().run(_ctx(b))
    assert "test" not in str(err.value)


# --------------------------------------------------------------------------------------------
# B003: missingness that gives the label away


def chargebacks(n=3000, seed=20) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(int)
    return pd.DataFrame(
        {
            "amount": rng.lognormal(4, 1, n),
            "age": rng.integers(18, 80, n),
            # ordinary missingness (30%, unrelated to the label) on a strong legit feature
            "score": np.where(rng.random(n) < 0.3, np.nan, y + rng.normal(0, 0.6, n)),
            "city": np.where(rng.random(n) < 0.2, None, rng.choice(["a", "b", "c"], n)),
            "chargeback_amount": np.where(y == 1, rng.lognormal(4, 1, n), np.nan),
            "refund_reason": np.where(y == 1, rng.choice(["fraud", "dispute", "other"], n), None),
            "label": y,
        }
    )


def test_b003_names_columns_filled_in_only_for_positives():
    data = chargebacks()
    report = datavet.audit(data.iloc[:2400], target="label", select="B003")
    by_column = {f.columns[0]: f for f in report.findings}
    assert sorted(by_column) == ["chargeback_amount", "refund_reason"]  # legit ones quiet
    f = by_column["chargeback_amount"]
    missing = int(data["chargeback_amount"].iloc[:2400].isna().sum())
    assert f.metrics["score"] == pytest.approx(1.0)
    assert f.metrics["rows"] == 2400
    assert f"missing values ({missing:,} rows) as a value of their own" in f.message
    assert "ROC AUC" in f.message and "filled in" in f.message
    assert "one-feature accuracy" in by_column["refund_reason"].message

    # a label copy that is randomly missing still fires on its present rows, as before
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 1000)
    leak = np.where(rng.random(1000) < 0.3, np.nan, y + rng.normal(0, 0.01, 1000))
    (f,) = datavet.audit(
        pd.DataFrame({"leak": leak, "label": y}), target="label", select="B003"
    ).findings
    assert f.metrics["rows"] == int(np.isfinite(leak).sum())
    assert "missing values" not in f.message and "filled in" not in f.message


def test_b003_missing_placed_above_the_values_too():
    """Missing for the positives (not the negatives), values only for the negatives."""
    rng = np.random.default_rng(3)
    y = (rng.random(800) < 0.4).astype(int)
    data = pd.DataFrame({"days_to_close": np.where(y == 0, rng.exponential(5, 800), np.nan)})
    (f,) = datavet.audit(data.assign(label=y), target="label", select="B003").findings
    assert f.columns == ("days_to_close",) and f.metrics["score"] == pytest.approx(1.0)


# --------------------------------------------------------------------------------------------
# B004: a file sorted by a real predictor is not a row counter


def sorted_by_age(n=3000, seed=25) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    d = pd.DataFrame(
        {
            "age": rng.integers(20, 90, n),
            "bmi": rng.normal(27, 4, n).round(1),
            "smoker": rng.integers(0, 2, n),
        }
    )
    noise = rng.normal(0, 1, n)
    d["label"] = (0.06 * (d.age - 55) + 0.8 * d.smoker + 0.1 * (d.bmi - 27) + noise) > 0.5
    d["label"] = d["label"].astype(int)
    return d.sort_values("age", kind="stable").iloc[:2400].reset_index(drop=True)


def test_b004_sorted_by_a_predictor_advises_shuffling_not_dropping():
    (f,) = datavet.audit(sorted_by_age(), target="label", select="B004").findings
    assert f.columns == ("age",)
    assert "sorted by feature 'age'" in f.message and "shuffle" in f.message
    assert "Keep the feature if it is a real predictor" in f.message
    assert "drop the counter" not in f.hint and "shuffle" in f.hint
    assert f.metrics["distinct"] <= 1200

    # a row counter keeps the counter's message and advice
    n = 1000
    df = pd.DataFrame({"row_id": np.arange(n), "a": np.random.default_rng(0).normal(size=n)})
    df["label"] = (np.arange(n) > 600).astype(int)
    (f,) = datavet.audit(df, target="label", select="B004").findings
    assert "gives the position away" in f.message and "drop the counter" in f.hint
    assert "distinct" not in f.metrics


# --------------------------------------------------------------------------------------------
# baselines skipped on a tiny sample: the sample is small, not the split


def test_skip_reason_names_the_sample_not_the_split():
    df = pd.DataFrame({"x": np.random.default_rng(0).random(300), "y": np.arange(300) % 2})
    report = datavet.audit(df, target="y", sample_rows=1, select="B001")
    (o,) = report.outcomes
    assert o.status.value == "skipped"
    assert "sample (1 of 300 rows; raise sample_rows)" in o.reason
    assert "1 labelled train row" not in o.reason
