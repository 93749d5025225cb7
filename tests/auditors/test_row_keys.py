"""Columns that number or key rows must not hide copied rows (S001, S002).

A pandas index written with the data (``df.to_csv()`` without ``index=False``, ``to_parquet()``
of a shuffled frame) is left out of the features altogether; row-key columns (an order number,
a UUID) are left out of a second comparison, and the message names them.
"""

from __future__ import annotations

import uuid

import numpy as np
import pandas as pd
import pytest

import datavet


def _splits(n=300, copies=10, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "b": rng.normal(size=n),
            "c": rng.integers(0, 5, n),
            "label": rng.integers(0, 2, n),
        }
    )
    order = rng.permutation(n)
    train, test = df.iloc[order[:210]], df.iloc[order[210:]]
    return train, pd.concat([test, train.iloc[:copies]])  # shuffled index, copies at the end


def _codes(report, code):
    return [f for f in report.findings if f.code == code]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_pandas_index_written_with_the_data_does_not_hide_copies(tmp_path, fmt):
    train, test = _splits()
    for name, df in (("train", train), ("test", test)):
        path = tmp_path / f"{name}.{fmt}"
        df.to_csv(path) if fmt == "csv" else df.to_parquet(path)  # the index goes along
    report = datavet.audit(tmp_path / f"train.{fmt}", tmp_path / f"test.{fmt}", target="label")
    (s001,) = _codes(report, "S001")
    assert s001.n_affected == 10
    assert s001.examples == (90, 91, 92, 93, 94)
    assert any("row index pandas writes" in note for note in report.notes)
    names = [c["name"] for c in report.to_dict()["datasets"]["train"]["columns"]]
    assert names == ["a", "b", "c"]  # the index is no feature: no stats, no rules


def test_index_only_in_one_split_is_no_schema_mismatch(tmp_path):
    train, test = _splits()
    train.to_csv(tmp_path / "train.csv")
    test.to_csv(tmp_path / "test.csv", index=False)
    report = datavet.audit(tmp_path / "train.csv", tmp_path / "test.csv", target="label")
    assert not _codes(report, "S004")
    assert _codes(report, "S001")[0].n_affected == 10


def test_a_named_integer_column_is_not_taken_for_the_index(tmp_path):
    train, test = _splits()
    train = train.assign(rank=np.arange(len(train)))
    test = test.assign(rank=np.arange(len(test)) + 1000)
    report = datavet.audit(train, test, target="label")
    assert not _codes(report, "S001")  # 'rank' is data: rows differ there
    assert not any("row index" in note for note in report.notes)


def _keyed(df, seed):
    rng = np.random.default_rng(seed)
    keys = [str(uuid.UUID(int=int(k))) for k in rng.integers(0, 2**62, len(df))]
    return df.reset_index(drop=True).assign(order_id=keys)


def test_copies_under_fresh_row_keys_are_found_and_the_key_is_named():
    train, test = _splits()
    report = datavet.audit(_keyed(train, 1), _keyed(test, 2), target="label")
    (s001,) = _codes(report, "S001")
    assert s001.n_affected == 10
    assert "'order_id'" in s001.message and "left out" in s001.message
    assert s001.metrics["count_with_row_keys"] == 0


def test_duplicates_under_fresh_row_keys_within_a_split():
    train, _ = _splits()
    keyed = _keyed(train, 1)
    again = _keyed(train.iloc[:5], 3)
    report = datavet.audit(pd.concat([keyed, again], ignore_index=True), target="label")
    (s002,) = _codes(report, "S002")
    assert s002.n_affected == 5
    assert "'order_id'" in s002.message


def test_repeating_keys_group_rows_and_are_not_left_out():
    # a user with many rows: two users' identical rows are not copies of each other
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame(
        {
            "user_id": rng.integers(0, 40, n),
            "item": rng.integers(0, 3, n),
            "rating": rng.integers(1, 3, n),
            "label": rng.integers(0, 2, n),
        }
    )
    report = datavet.audit(df.drop_duplicates(), target="label")
    assert not _codes(report, "S002")


def test_free_text_is_a_feature_not_a_key():
    train, test = _splits()
    words = ["the quick fox", "a slow dog", "one more review"]
    train = train.reset_index(drop=True).assign(
        review=[f"{words[i % 3]} number {i}" for i in range(len(train))]
    )
    test = test.reset_index(drop=True).assign(
        review=[f"{words[i % 3]} other {i}" for i in range(len(test))]
    )
    report = datavet.audit(train, test, target="label")
    assert not _codes(report, "S001")  # the texts differ: these rows are not copies


def test_one_feature_beside_the_key_is_too_little_to_call_copies():
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame({"colour": rng.integers(0, 3, n), "label": rng.integers(0, 2, n)})
    df = _keyed(df, 4)
    report = datavet.audit(df, target="label")
    assert not any("row-key" in f.message for f in report.findings)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_no_rule_names_the_index_column(tmp_path, fmt):
    # a file sorted by its label, with pandas' row numbers and R's row names written along
    rng = np.random.default_rng(0)
    n = 200
    y = np.sort(rng.normal(size=n))
    frame = pd.DataFrame({"rownames": np.arange(1, n + 1), "a": rng.normal(size=n), "y": y})
    path = tmp_path / f"t.{fmt}"
    frame.to_csv(path) if fmt == "csv" else frame.iloc[rng.permutation(n)].to_parquet(path)
    report = datavet.audit(path, target="y")
    index_names = {"", "rownames", "__index_level_0__"}
    named = [f.code for f in report.findings if set(f.columns) & index_names]
    assert not named, named
