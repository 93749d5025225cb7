"""B002 suspiciously-good: the linear baseline is near perfect (balanced accuracy / R^2)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import sample

import datavet
from datavet import Severity


def run(train, test=None, **kw):
    return datavet.audit(train, test, target="label", select="B002", **kw)


def only(report):
    (o,) = report.outcomes
    return o


def separable(n=600, seed=0) -> pd.DataFrame:
    """``a`` gives the label away, with a margin: a linear model gets every row right."""
    rng = np.random.default_rng(seed)
    label = rng.integers(0, 2, n)
    a = np.where(label == 1, 1, -1) * (0.5 + np.abs(rng.normal(size=n)))
    return pd.DataFrame({"a": a, "b": rng.normal(size=n), "label": label})


@pytest.fixture(scope="module")
def seed_report():
    return run(*sample.planted())


def test_fires_on_a_separable_classification():
    report = run(separable())
    (f,) = report.findings
    assert (f.code, f.name, f.severity) == ("B002", "suspiciously-good", Severity.WARNING)
    assert f.split == "train" and f.columns == ("label",) and f.n_affected == 600
    b = report.baselines
    linear = b["models"][2]["metrics"]["balanced_accuracy"]
    assert linear >= 0.99
    assert f.metrics == {
        "linear_balanced_accuracy": linear,
        "majority_balanced_accuracy": b["models"][0]["metrics"]["balanced_accuracy"],
        "lower_bound": pytest.approx(600 / (600 + 1.6448536**2), rel=1e-6),
    }
    assert f.metrics["majority_balanced_accuracy"] == pytest.approx(0.5)
    assert f"balanced accuracy {linear:.4f}" in f.message
    assert "5-fold cross-validation on train, 600 rows" in f.message
    assert "95% lower bound is 0.9955 (600 of 600 rows right)" in f.message
    assert "against 0.500 for the majority" in f.message
    assert "leakage" in f.message and f.hint
    assert only(report).status.value == "failed"


def test_fires_on_test_split():
    data = separable(n=900, seed=1)
    report = run(data.iloc[:600], data.iloc[600:].reset_index(drop=True))
    (f,) = report.findings
    assert f.split == "test" and f.n_affected == 300
    assert "(test, 300 rows; 1.0000 by cross-validation on train)" in f.message
    assert f.metrics["train_cv_balanced_accuracy"] == 1.0
    assert f.metrics["lower_bound"] > 0.99


@pytest.mark.parametrize("n_test", [7, 36])
def test_quiet_on_a_small_test_split_that_happens_to_be_all_right(n_test):
    # a linear model gets all of a tiny test split right: no evidence of near perfection
    data = separable(n=600 + n_test, seed=6)
    report = run(data.iloc[:600], data.iloc[600:].reset_index(drop=True))
    assert report.baselines["models"][2]["metrics"]["balanced_accuracy"] == 1.0
    assert report.findings == []


def test_quiet_when_cross_validation_on_train_disagrees_with_a_perfect_test():
    # train labels are noisy (CV ~0.8); the clean test split is all right by luck of the draw
    rng = np.random.default_rng(7)
    train = separable(n=600, seed=7)
    flip = rng.random(600) < 0.2
    train["label"] = np.where(flip, 1 - train["label"], train["label"])
    test = separable(n=400, seed=8)
    report = run(train, test)
    assert report.baselines["models"][2]["metrics"]["balanced_accuracy"] == 1.0
    assert report.findings == []


@pytest.mark.parametrize("loader", ["load_iris", "load_wine", "load_breast_cancer"])
def test_quiet_on_well_known_simply_separable_tables(loader):
    import sklearn.datasets

    frame = getattr(sklearn.datasets, loader)(as_frame=True).frame.rename(
        columns={"target": "label"}
    )
    shuffled = frame.sample(frac=1.0, random_state=0).reset_index(drop=True)
    assert run(shuffled).findings == []
    cut = int(len(shuffled) * 0.75)
    assert run(shuffled.iloc[:cut], shuffled.iloc[cut:].reset_index(drop=True)).findings == []


def test_fires_on_a_near_perfect_regression():
    rng = np.random.default_rng(2)
    a = rng.normal(size=300)
    data = pd.DataFrame({"a": a}).assign(label=3.0 * a + rng.normal(0, 0.01, 300))
    report = run(data)
    (f,) = report.findings
    assert set(f.metrics) == {"linear_r2", "mean_r2", "lower_bound"}
    assert 0.99 <= f.metrics["lower_bound"] <= f.metrics["linear_r2"]
    assert f.metrics["linear_r2"] >= 0.99
    assert f.metrics["linear_r2"] == report.baselines["models"][1]["metrics"]["r2"]
    assert "R^2" in f.message and "for the mean" in f.message


def test_quiet_on_a_good_but_imperfect_regression():
    rng = np.random.default_rng(3)
    a = rng.normal(size=300)
    data = pd.DataFrame({"a": a}).assign(label=a + rng.normal(0, 0.5, 300))
    report = run(data)
    assert 0.5 < report.baselines["models"][1]["metrics"]["r2"] < 0.99
    assert report.findings == []


def test_quiet_on_the_seed_table(seed_report):
    linear = seed_report.baselines["models"][2]["metrics"]["balanced_accuracy"]
    assert 0.9 < linear < 0.99  # strong but not suspicious
    assert seed_report.findings == []
    assert only(seed_report).status.value == "passed"


def test_min_score_override_on_the_seed_table(seed_report):
    report = run(*sample.planted(), thresholds={"B002": {"min_score": 0.9}})
    (f,) = report.findings
    expected = seed_report.baselines["models"][2]["metrics"]["balanced_accuracy"]
    assert f.metrics["linear_balanced_accuracy"] == pytest.approx(expected)
    assert f.split == "test" and f.n_affected == 100


def test_quiet_when_the_majority_is_already_perfect():
    # train has both classes; test holds only the train-majority class, so the majority
    # baseline is already perfect on it and a perfect linear model proves nothing
    rng = np.random.default_rng(4)
    a = rng.normal(size=300)
    train = pd.DataFrame({"a": a}).assign(label=(a > -0.5).astype(int))
    test = train[train["label"] == 1].iloc[:50].reset_index(drop=True)
    report = run(train, test)
    models = {m["model"]: m["metrics"] for m in report.baselines["models"]}
    assert models["majority"]["balanced_accuracy"] == pytest.approx(1.0)
    assert models["linear"]["balanced_accuracy"] >= 0.99
    assert report.findings == []


def test_quiet_when_r2_is_undefined():
    # a constant test target: R^2 is None for every model; nothing to judge, nothing crashes
    rng = np.random.default_rng(5)
    a = rng.normal(size=200)
    train = pd.DataFrame({"a": a}).assign(label=2.0 * a + rng.normal(0, 1e-3, 200))
    test = pd.DataFrame({"a": [0.1, 0.2, 0.3], "label": [5.0, 5.0, 5.0]})
    report = run(train, test)
    assert report.baselines["models"][1]["metrics"]["r2"] is None
    assert report.findings == []
    assert only(report).status.value == "passed"


@pytest.mark.parametrize(
    "data, words",
    [
        (pd.DataFrame({"x": np.arange(40.0), "label": [1] * 40}), "one class"),
        (pd.DataFrame({"x": [1.0], "label": [0]}), "labelled train row"),
    ],
    ids=["one-class", "one-row"],
)
def test_skipped_with_a_reason(data, words):
    report = run(data)
    o = only(report)
    assert o.status.value == "skipped" and words in o.reason
