"""False alarms found by auditing real tables (bench/realworld_sweep.py), each with its twin
that must still fire."""

from __future__ import annotations

import numpy as np
import pandas as pd

import datavet


def _codes(report):
    return {f.code for f in report.findings}


def test_sparse_whole_numbers_are_a_quantity_not_classes():
    rng = np.random.default_rng(0)
    y = rng.choice(np.arange(600, 1100, 10), 300)  # 50 values on a grid of 10
    report = datavet.audit(pd.DataFrame({"x": rng.normal(size=300), "y": y}), target="y")
    assert report.task == "regression"
    assert "too sparse for class codes" in report.task_reason
    dense = rng.integers(0, 5, 300)  # class codes 0..4 stay classes
    report = datavet.audit(pd.DataFrame({"x": rng.normal(size=300), "y": dense}), target="y")
    assert report.task == "classification"


def test_all_distinct_whole_number_target_is_not_called_an_id_in_regression():
    rng = np.random.default_rng(0)
    population = rng.permutation(np.arange(10_000, 10_000 + 500)) * 7
    frame = pd.DataFrame({"area": rng.normal(size=500), "population": population})
    assert "L005" not in _codes(datavet.audit(frame, target="population"))
    frame = frame.rename(columns={"population": "user_id"})  # a key's name: still an ID
    assert "L005" in _codes(datavet.audit(frame, target="user_id"))


def test_equal_inputs_with_different_regression_targets_are_no_conflict():
    rng = np.random.default_rng(0)
    income = rng.integers(0, 50, 200)
    frame = pd.DataFrame({"income": income, "foodexp": income * 3 + rng.normal(size=200)})
    report = datavet.audit(frame, target="foodexp")
    assert "S003" not in _codes(report)
    skipped = {o.code: o.reason for o in report.outcomes if o.status.value == "skipped"}
    assert "regression" in skipped["S003"]
    labels = pd.DataFrame({"a": [1, 1, 2, 2] * 10, "label": [0, 1, 0, 0] * 10})
    assert "S003" in _codes(datavet.audit(labels, target="label"))  # classes still conflict


def test_a_constant_target_does_not_shift():
    value = -78.905417
    frame = pd.DataFrame({"x": np.arange(449.0), "y": np.full(449, value)})
    rng = np.random.default_rng(0)
    order = rng.permutation(449)
    train, test = frame.iloc[order[:359]], frame.iloc[order[359:]]
    assert "L004" not in _codes(datavet.audit(train, test, target="y", task="regression"))
    shifted = test.assign(y=value + 1.0)
    assert "L004" in _codes(datavet.audit(train, shifted, target="y", task="regression"))


def test_no_signal_needs_enough_rows_to_say_so():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=12), "label": rng.integers(0, 2, 12)})
    report = datavet.audit(frame.iloc[:8], frame.iloc[8:], target="label")
    assert "B001" not in _codes(report)
    skipped = {o.code: o.reason for o in report.outcomes if o.status.value == "skipped"}
    assert "too few to tell" in skipped["B001"]


def test_r_row_names_are_no_feature(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=100), "label": rng.integers(0, 2, 100)})
    frame.insert(0, "rownames", np.arange(1, 101))
    frame.to_csv(tmp_path / "t.csv", index=False)
    report = datavet.audit(tmp_path / "t.csv", target="label")
    names = [c["name"] for c in report.to_dict()["datasets"]["train"]["columns"]]
    assert names == ["a"]
