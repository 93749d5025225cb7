"""B001 no-signal: the linear baseline is no better than the class prior / the mean."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from conftest import sample

import datavet
from datavet import Severity
from datavet.auditors.base import Skip
from datavet.auditors.no_signal import NoSignal, paired_t_test, sign_test
from datavet.baselines import Baselines
from datavet.errors import UsageError

CV5 = "5-fold cross-validation on train"


def binom_tail(k: int, n: int) -> float:
    """P(X >= k) for X ~ Binomial(n, 1/2), exactly, without scipy."""
    return sum(math.comb(n, i) for i in range(k, n + 1)) / 2**n


def random_labels(n=1000, seed=0) -> pd.DataFrame:
    """Features and labels drawn independently: nothing to learn."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    return pd.DataFrame(x, columns=["a", "b", "c"]).assign(label=rng.integers(0, 2, n))


def run(train, test=None, **kw):
    return datavet.audit(train, test, target="label", select="B001", **kw)


def only(report):
    (o,) = report.outcomes
    return o


@pytest.fixture(scope="module")
def random_report():
    return run(random_labels())


@pytest.fixture(scope="module")
def seed_report():
    return run(*sample.planted())


# --------------------------------------------------------------------------------------------
# fires / quiet


def test_fires_on_random_labels(random_report):
    (f,) = random_report.findings
    assert (f.code, f.name, f.severity) == ("B001", "no-signal", Severity.WARNING)
    assert f.split == "train" and f.columns == ("label",)
    assert f.n_affected == 1000
    b = random_report.baselines
    assert b["evaluated_on"] == CV5
    assert f.metrics["p_value"] >= 0.05
    assert f.metrics["rows_better"] + f.metrics["rows_worse"] <= 1000
    assert f.metrics["linear_log_loss"] == b["models"][2]["metrics"]["log_loss"]
    assert f.metrics["prior_log_loss"] == b["models"][1]["metrics"]["log_loss"]
    assert "no better than the prior (5-fold cross-validation on train)" in f.message
    assert f"better on {f.metrics['rows_better']:,} rows" in f.message
    assert "paired t-test p =" in f.message
    assert f.hint
    assert only(random_report).status.value == "failed"


def test_the_sign_test_p_value_is_kept_beside_the_t_test(random_report):
    (f,) = random_report.findings
    better, worse = int(f.metrics["rows_better"]), int(f.metrics["rows_worse"])
    want = binom_tail(better, better + worse)
    assert f.metrics["sign_test_p_value"] == pytest.approx(want, rel=1e-9)


def test_quiet_on_the_seed_table(seed_report):
    assert seed_report.findings == []
    assert only(seed_report).status.value == "passed"
    b = seed_report.baselines
    assert b["models"][2]["metrics"]["accuracy"] > b["models"][0]["metrics"]["accuracy"] + 0.3


def test_random_labels_scored_on_test_split():
    data = random_labels(seed=1)
    report = run(data.iloc[:800], data.iloc[800:].reset_index(drop=True))
    (f,) = report.findings
    assert f.split == "test" and f.n_affected == 200
    assert "(test)" in f.message


def test_fires_on_a_random_regression_target():
    rng = np.random.default_rng(2)
    data = pd.DataFrame(rng.normal(size=(600, 3)), columns=["a", "b", "c"]).assign(
        label=rng.normal(10.0, 2.0, 600)
    )
    report = run(data)
    assert report.task == "regression"
    (f,) = report.findings
    assert "better than the mean" in f.message and "MSE" in f.message
    assert set(f.metrics) == {
        "p_value",
        "rows_better",
        "rows_worse",
        "sign_test_p_value",
        "linear_mse",
        "mean_mse",
    }
    assert f.metrics["p_value"] >= 0.05


def test_quiet_on_a_learnable_regression_target():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(300, 2))
    data = pd.DataFrame(x, columns=["a", "b"]).assign(label=x[:, 0] + rng.normal(0, 0.5, 300))
    report = run(data)
    assert report.findings == []
    assert only(report).status.value == "passed"


# --------------------------------------------------------------------------------------------
# alpha threshold


def test_alpha_override_end_to_end():
    report = run(random_labels(), thresholds={"B001": {"alpha": 0.99}})
    assert report.findings == []  # p ~ 0.77 < 0.99: the linear model counts as better
    assert only(report).status.value == "passed"


def test_unknown_threshold_is_a_usage_error():
    with pytest.raises(UsageError, match="B001 has no threshold"):
        run(random_labels(n=50), thresholds={"B001": {"p": 0.1}})


def _ctx(b: Baselines):
    # NoSignal.check reads the baselines and the target name only.
    return SimpleNamespace(require_baselines=lambda: b, target="label")


def _fake(reference, linear) -> Baselines:
    b = Baselines(task="classification", evaluated_on="test", eval_rows=len(reference))
    b.models = [
        {"model": "majority", "description": "", "metrics": {"accuracy": 0.5}},
        {"model": "prior", "description": "", "metrics": {"log_loss": 0.69, "accuracy": 0.5}},
        {"model": "linear", "description": "", "metrics": {"log_loss": 0.6, "accuracy": 0.6}},
    ]
    b.reference_loss = np.asarray(reference, dtype=float)
    b.linear_loss = np.asarray(linear, dtype=float)
    return b


def test_alpha_boundary_fires_at_p_equal_alpha():
    # 8 rows 0.5 better, 2 rows 1.0 worse: mean gain 0.2, the paired t-test p is about 0.17
    b = _fake([1.0] * 10, [0.5] * 8 + [2.0] * 2)
    p = paired_t_test(np.ones(10), np.r_[[0.5] * 8, [2.0] * 2])
    assert p == pytest.approx(0.1717, abs=1e-3)
    few = {"min_rows": 1}  # 10 rows: below the default minimum, which skips
    (f,) = NoSignal(thresholds={"alpha": p, **few}).run(_ctx(b))
    assert f.metrics["p_value"] == pytest.approx(p)
    assert f.split == "test"
    assert NoSignal(thresholds={"alpha": math.nextafter(p, 1.0), **few}).run(_ctx(b)) == []
    assert NoSignal(thresholds=few).run(_ctx(b))  # default alpha 0.05 < 0.17: fires
    with pytest.raises(Skip, match="too few to tell"):
        NoSignal().run(_ctx(b))


def test_a_linear_model_worse_than_the_prior_fires():
    b = _fake([0.5] * 30, [1.0] * 30)
    (f,) = NoSignal().run(_ctx(b))
    assert f.metrics["rows_better"] == 0 and f.metrics["rows_worse"] == 30
    assert f.metrics["p_value"] == pytest.approx(1.0)


def test_a_clearly_better_linear_model_is_quiet():
    b = _fake([1.0] * 30, [0.1] * 30)
    assert NoSignal().run(_ctx(b)) == []


# --------------------------------------------------------------------------------------------
# sign_test


def test_sign_test_drops_ties_and_non_finite_rows():
    ref = np.array([1.0, 1.0, 1.0, 1.0, np.nan, 1.0, 2.0])
    mod = np.array([0.5, 0.5, 2.0, 1.0, 0.1, np.inf, 2.0])
    p, better, worse = sign_test(ref, mod)
    assert (better, worse) == (2, 1)
    assert p == pytest.approx(binom_tail(2, 3))


def test_sign_test_all_ties():
    assert sign_test(np.ones(5), np.ones(5)) == (1.0, 0, 0)


def test_sign_test_is_one_sided():
    p_good, _, _ = sign_test(np.ones(20), np.zeros(20))
    p_bad, _, _ = sign_test(np.zeros(20), np.ones(20))
    assert p_good == pytest.approx(0.5**20)
    assert p_bad == pytest.approx(1.0)


# --------------------------------------------------------------------------------------------
# skipped / robustness


@pytest.mark.parametrize(
    "data, kw, words",
    [
        (pd.DataFrame({"x": np.arange(40.0), "label": [1] * 40}), {}, "one class"),
        (pd.DataFrame({"x": [1.0], "label": [0]}), {}, "labelled train row"),
        (random_labels(n=40), {"baselines": False}, "baselines=False"),
    ],
    ids=["one-class", "one-row", "no-baselines"],
)
def test_skipped_with_a_reason(data, kw, words):
    report = run(data, **kw)
    assert report.findings == []
    o = only(report)
    assert o.status.value == "skipped" and words in o.reason


def test_skipped_without_a_target():
    report = datavet.audit(random_labels(n=40).drop(columns="label"), select="B001")
    o = only(report)
    assert o.status.value == "skipped" and "target" in o.reason


def test_test_labels_never_seen_in_train_do_not_crash():
    """Every test label is unseen in train: no row has a finite log loss, so the log losses are
    None. B001 must report that (skip or a finding), not crash the audit into exit 2."""
    rng = np.random.default_rng(4)
    train = pd.DataFrame({"a": rng.normal(size=200)})
    train["label"] = (train["a"] > 0).astype(int)
    test = pd.DataFrame({"a": rng.normal(size=20), "label": 2})
    report = run(train, test)
    assert report.baselines["models"][2]["metrics"]["log_loss"] is None
    assert only(report).status.value != "crashed", only(report).reason
    assert report.exit_code() != 2


def test_a_lower_loss_within_chance_is_info_and_a_higher_one_a_warning():
    """A weak real signal on a small table looks "not clearly better": info, not a warning;
    a loss no lower than the prior's is the warning. A severity the user set is kept."""
    b = _fake([1.0] * 30, [0.5, 1.45] * 15)  # linear log loss 0.6 < 0.69 for the prior
    (f,) = NoSignal().run(_ctx(b))
    assert f.severity == Severity.INFO and "not clearly better than the prior" in f.message
    (f,) = NoSignal(severity=Severity.ERROR).run(_ctx(b))
    assert f.severity == Severity.ERROR
    b.models[2]["metrics"]["log_loss"] = 0.7
    (f,) = NoSignal().run(_ctx(b))
    assert f.severity == Severity.WARNING and "no better than the prior" in f.message
