"""B003 single-feature-leakage: one feature alone predicts the label near perfectly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import sample
from sklearn.metrics import roc_auc_score

import datavet
from datavet import Severity
from datavet.auditors.single_feature_leakage import _binned_accuracy


def run(train, test=None, **kw):
    return datavet.audit(train, test, target="label", select="B003", **kw)


def only(report):
    (o,) = report.outcomes
    return o


def named(report) -> list[str]:
    return sorted(c for f in report.findings for c in f.columns)


def base(n=500, seed=0, classes=2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2))
    return pd.DataFrame(x, columns=["a", "b"]).assign(label=rng.integers(0, classes, n))


# --------------------------------------------------------------------------------------------
# binary classification (ROC AUC)


def test_fires_on_a_copy_of_the_label():
    data = base()
    data["leak"] = data["label"].astype(float)
    report = run(data)
    (f,) = report.findings
    assert (f.code, f.name, f.severity) == ("B003", "single-feature-leakage", Severity.ERROR)
    assert f.columns == ("leak",) and f.split == "train"
    assert f.n_affected == 500 and f.metrics == {"score": 1.0, "rows": 500}
    assert "Feature 'leak' alone predicts 'label' near perfectly: ROC AUC = 1.0000" in f.message
    assert "on 500 train rows" in f.message
    assert f.hint
    assert only(report).status.value == "failed"


def test_fires_on_label_plus_tiny_noise():
    data = base(seed=1)
    rng = np.random.default_rng(9)
    data["noisy"] = data["label"] + rng.normal(0, 1e-3, len(data))
    (f,) = run(data).findings
    assert f.columns == ("noisy",)
    assert f.metrics["score"] == pytest.approx(roc_auc_score(data["label"], data["noisy"]))


def test_fires_in_either_direction():
    data = base(seed=2)
    data["flipped"] = -3.0 * data["label"]
    (f,) = run(data).findings
    assert f.columns == ("flipped",) and f.metrics["score"] == pytest.approx(1.0)


def test_string_labels_and_a_string_feature():
    data = base(seed=3)
    data["label"] = np.where(data["label"] == 1, "yes", "no")
    data["status"] = np.where(data["label"] == "yes", "closed", "open")
    data["copy"] = (data["label"] == "yes").astype(float)
    report = run(data)
    assert named(report) == ["copy", "status"]
    msgs = {f.columns[0]: f.message for f in report.findings}
    assert "ROC AUC" in msgs["copy"] and "one-feature accuracy" in msgs["status"]


def test_missing_values_in_the_feature_are_left_out():
    data = base(seed=4)
    data["leak"] = data["label"].astype(float)
    data.loc[:9, "leak"] = np.nan
    data.loc[10, "leak"] = np.inf
    (f,) = run(data).findings
    assert f.n_affected == 489 and f.metrics["rows"] == 489
    assert "on 489 train rows" in f.message


def test_quiet_on_the_seed_table():
    report = run(*sample.planted())
    assert report.findings == []
    assert only(report).status.value == "passed"


def test_seed_x0_is_strong_but_imperfect():
    train, test = sample.planted()
    auc = roc_auc_score(train["label"], train["x0"])
    assert 0.85 < auc < 0.99
    report = run(train, test, thresholds={"B003": {"min_score": 0.85}})
    (f,) = report.findings  # only x0 passes a lowered bar
    assert f.columns == ("x0",)
    assert f.metrics["score"] == pytest.approx(auc)
    assert f.metrics["rows"] == 400


def test_quiet_on_an_id_column_with_random_binary_labels():
    data = base(n=1000, seed=5)
    data["row_id"] = np.arange(1000)
    assert run(data).findings == []


def test_ranges_of_an_id_that_follow_the_class_fire():
    # an ID assigned class by class: the whole of class 0 first, then class 1
    data = base(n=400, seed=6).sort_values("label", kind="stable").reset_index(drop=True)
    data["row_id"] = np.arange(400)
    (f,) = run(data).findings
    assert f.columns == ("row_id",)


# --------------------------------------------------------------------------------------------
# multiclass (binned one-feature accuracy)


def test_multiclass_copy_of_the_label_fires():
    data = base(n=600, seed=7, classes=3)
    data["leak"] = data["label"] * 10.0
    (f,) = run(data).findings
    assert f.columns == ("leak",)
    assert "one-feature accuracy = 1.0000" in f.message


def test_multiclass_numeric_id_is_stopped_by_the_bin_rule():
    data = base(n=600, seed=8, classes=3)
    data["row_id"] = np.arange(600.0)
    y = data["label"].to_numpy()
    # one group per value would memorise every label; the rule's bins must not
    assert _binned_accuracy(np.arange(600), y) == 1.0
    report = run(data)
    assert report.findings == []
    assert only(report).status.value == "passed"


def test_multiclass_string_id_is_stopped_by_the_bin_rule():
    data = base(n=600, seed=9, classes=3)
    data["key"] = [f"row-{i}" for i in range(600)]
    assert run(data).findings == []


def test_multiclass_quiet_when_the_majority_alone_reaches_the_bar():
    rng = np.random.default_rng(10)
    labels = np.array([0] * 995 + [1] * 3 + [2] * 2)
    rng.shuffle(labels)
    data = pd.DataFrame({"a": rng.normal(size=1000)}).assign(label=labels)
    # a random feature scores >= 0.995 on such labels without knowing anything
    assert run(data).findings == []


# --------------------------------------------------------------------------------------------
# regression (|Spearman|)


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(11)
    y = rng.normal(size=500)
    data = pd.DataFrame(
        {
            "weak": y + rng.normal(0, 1.0, 500),
            "expy": np.exp(y),
            "negcube": -(y**3),
            "row_id": np.arange(500.0),
        }
    ).assign(label=y)
    return data, run(data)


def test_regression_monotone_transforms_fire_via_spearman(regression):
    data, report = regression
    assert report.task == "regression"
    assert named(report) == ["expy", "negcube"]
    for f in report.findings:
        assert "|Spearman correlation| = 1.0000" in f.message
        col = f.columns[0]
        expected = abs(data[col].corr(data["label"], method="spearman"))
        assert f.metrics["score"] == pytest.approx(expected)


def test_regression_weak_feature_and_id_are_quiet(regression):
    data, report = regression
    assert "weak" not in named(report) and "row_id" not in named(report)
    assert 0.5 < abs(data["weak"].corr(data["label"], method="spearman")) < 0.99


def test_regression_label_plus_tiny_noise_fires():
    rng = np.random.default_rng(12)
    y = rng.normal(100.0, 5.0, 300)
    data = pd.DataFrame({"a": rng.normal(size=300), "echo": y + rng.normal(0, 1e-3, 300)})
    data["label"] = y
    (f,) = run(data).findings
    assert f.columns == ("echo",)


# --------------------------------------------------------------------------------------------
# thresholds, independence from the baselines, skips


def test_min_score_override_silences():
    data = base(seed=13)
    data["noisy"] = data["label"] + np.random.default_rng(1).normal(0, 0.4, len(data))
    auc = roc_auc_score(data["label"], data["noisy"])
    assert 0.9 < auc < 1.0
    assert run(data, thresholds={"B003": {"min_score": 0.9}}).findings
    assert run(data, thresholds={"B003": {"min_score": min(1.0, auc + 1e-6)}}).findings == []


def test_runs_without_the_baselines():
    data = base(seed=14)
    data["leak"] = data["label"].astype(float)
    report = run(data, baselines=False)
    assert report.baselines is None
    (f,) = report.findings
    assert f.columns == ("leak",)


@pytest.mark.parametrize(
    "data, words",
    [
        (base(n=20, seed=15), "20 labelled rows in the sample; need 30"),
        (base(n=40, seed=16).drop(columns="label"), "target"),
    ],
    ids=["too-few-rows", "no-target"],
)
def test_skipped_with_a_reason(data, words):
    target = "label" if "label" in data else None
    report = datavet.audit(data, target=target, select="B003")
    o = only(report)
    assert o.status.value == "skipped" and words in o.reason


def test_min_rows_override():
    data = base(n=20, seed=17)
    data["leak"] = data["label"].astype(float)
    (f,) = run(data, thresholds={"B003": {"min_rows": 10}}).findings
    assert f.columns == ("leak",)
