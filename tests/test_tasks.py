"""Task detection: --task auto says which task it chose and why; --task overrides."""

from __future__ import annotations

import datetime
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import datavet
from datavet.cli import main
from datavet.errors import UsageError
from datavet.output import render
from datavet.scan.labels import LabelStats
from datavet.tasks import MAX_CLASSES_AUTO, detect_task


def stats(values, type_=None) -> LabelStats:
    return LabelStats.of("y", pa.array(values, type=type_), 0)


@pytest.mark.parametrize(
    "values, type_, task, words",
    [
        (["a", "b", None, "a"], None, "classification", "target is string (2 distinct values)"),
        ([True, False, True], None, "classification", "target is bool (2 distinct values)"),
        ([0.5, 1.0, 2.25], None, "regression", "non-integer numbers (3 distinct values)"),
        ([0.0, 1.0, None, 1.0], None, "classification", "whole numbers with 2 distinct values"),
        ([1, 2, 3], pa.int8(), "classification", "whole numbers with 3 distinct values"),
        (list(range(MAX_CLASSES_AUTO)), None, "classification", "50 distinct values"),
        (list(range(MAX_CLASSES_AUTO + 1)), None, "regression", "51 distinct values (over 50)"),
        (
            [datetime.date(2020, 1, d) for d in (1, 2, 3)],
            None,
            "regression",
            "target is a date/time",
        ),
    ],
    ids=["string", "bool", "float", "integral-float", "int8", "50-ints", "51-ints", "date"],
)
def test_auto_detection(values, type_, task, words):
    got, reason = detect_task(stats(values, type_))
    assert got == task
    assert words in reason


def test_many_distinct_integers_say_more_than_the_counter_holds():
    task, reason = detect_task(stats(np.arange(5000)))
    assert task == "regression"
    assert "more than 1,024 distinct values" in reason
    assert "pass --task classification if they are classes" in reason


def test_dictionary_encoded_strings_are_classes():
    task, reason = detect_task(LabelStats.of("y", pa.array(["u", "v", "u"]).dictionary_encode(), 0))
    assert task == "classification" and "string" in reason


@pytest.mark.parametrize("requested", ["classification", "regression"])
def test_explicit_task_overrides(requested):
    for values in ([0.5, 1.5], [0, 1, 1]) + (
        (["a", "b"],) if requested == "classification" else ()
    ):
        task, reason = detect_task(stats(values), requested)
        assert task == requested
        assert reason == f"--task {requested}"


def test_regression_on_text_labels_is_a_usage_error():
    with pytest.raises(datavet.UsageError, match="needs a numeric target"):
        detect_task(stats(["a", "b"]), "regression")


def test_unknown_task_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown task 'clustering'"):
        detect_task(stats([0, 1]), "clustering")


# --------------------------------------------------------------------------------------------
# through audit() and the CLI


def frame(labels, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": rng.normal(size=len(labels))}).assign(label=labels)


def test_audit_reports_the_chosen_task_and_why():
    report = datavet.audit(frame([0, 1] * 30), target="label", select="L001")
    assert report.task == "classification"
    assert report.task_reason == "target holds whole numbers with 2 distinct values"
    text = render(report, "text")
    assert "target: 'label' -> classification (target holds whole numbers with 2 distinct" in text
    payload = json.loads(render(report, "json"))
    assert payload["task"] == "classification"
    assert payload["task_reason"] == report.task_reason


def test_audit_task_override_changes_the_baselines():
    labels = np.arange(60) % 3
    auto = datavet.audit(frame(labels), target="label", select="B001")
    forced = datavet.audit(frame(labels), target="label", task="regression", select="B001")
    assert auto.task == "classification"
    assert [m["model"] for m in auto.baselines["models"]] == ["majority", "prior", "linear"]
    assert forced.task == "regression" and forced.task_reason == "--task regression"
    assert forced.baselines["task"] == "regression"
    assert [m["model"] for m in forced.baselines["models"]] == ["mean", "linear"]


def test_audit_task_without_target_is_a_usage_error():
    data = pd.DataFrame({"x": np.arange(10.0)})
    with pytest.raises(UsageError, match="--task regression needs a target"):
        datavet.audit(data, task="regression")
    assert datavet.audit(data).task is None  # auto without a target: no task, no error


def test_audit_unknown_task_is_a_usage_error():
    with pytest.raises(UsageError):
        datavet.audit(frame([0, 1] * 10), target="label", task="ranking")


def test_cli_task_override(tmp_path, capsys):
    path = tmp_path / "train.csv"
    frame([0, 1, 2] * 20).to_csv(path, index=False)
    argv = ["audit", str(path), "--target", "label", "--select", "L001"]
    assert main(argv) == 0
    out, _ = capsys.readouterr()
    assert "-> classification (target holds whole numbers with 3 distinct values)" in out
    assert main([*argv, "--task", "regression"]) == 0
    out, _ = capsys.readouterr()
    assert "target: 'label' -> regression (--task regression)" in out
    assert main([*argv, "--task", "regression", "--format", "json"]) == 0
    out, _ = capsys.readouterr()
    assert json.loads(out)["task"] == "regression"


def test_cli_rejects_an_unknown_task(tmp_path, capsys):
    path = tmp_path / "train.csv"
    frame([0, 1] * 10).to_csv(path, index=False)
    with pytest.raises(SystemExit) as exc:
        main(["audit", str(path), "--target", "label", "--task", "ranking"])
    assert exc.value.code == 2
    capsys.readouterr()


def test_auto_detected_date_target_does_not_crash_the_b_rules():
    """--task auto calls a date/time target regression; the B rules must then cope with it
    (skip with a reason, or fit on it), not crash the audit into exit 2."""
    rng = np.random.default_rng(0)
    data = pd.DataFrame(
        {"a": rng.normal(size=100), "label": pd.date_range("2020-01-01", periods=100, freq="D")}
    )
    report = datavet.audit(data, target="label", select="B")
    assert report.task == "regression" and report.task_reason == "target is a date/time"
    crashed = [(o.code, o.reason) for o in report.outcomes if o.status.value == "crashed"]
    assert crashed == []
    assert report.exit_code() != 2
