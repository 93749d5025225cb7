"""ParquetSource.few_text_values: text columns known, from the row groups' dictionaries alone,
to hold fewer than a number of distinct values (the local engine's ID-like guess skips them)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import datavet
from datavet.engines.local import LocalEngine
from datavet.scan.idlike import MIN_DISTINCT
from datavet.sources import open_source


def _write(path, table: pa.Table, row_group_size: int, **kw) -> None:
    pq.write_table(table, path, row_group_size=row_group_size, **kw)


def test_small_dictionaries_are_listed_and_the_rest_are_not(tmp_path):
    n = 4_000
    rng = np.random.default_rng(0)
    table = pa.table(
        {
            "color": rng.choice(["red", "green", "blue"], n),  # 3 values
            # 19 values in all, but each row group holds only a few: the union decides
            "drifting": [f"v{(i // 211) % 19}" for i in range(n)],
            # 25 values in all, each row group under 20: the union passes the limit
            "spread": [f"w{i // 160}" for i in range(n)],
            "user": [f"u{i}" for i in range(n)],  # one value per row
            "code": rng.integers(0, 3, n),  # whole numbers: not text
            "note": pa.array([None] * n, pa.string()),  # no value at all
        }
    )
    _write(tmp_path / "t.parquet", table, row_group_size=500)
    source = open_source(tmp_path / "t.parquet")
    names = ["color", "drifting", "spread", "user", "code", "note"]
    assert source.few_text_values(names, MIN_DISTINCT) == ["color", "drifting", "note"]
    assert source.few_text_values(names, 3) == ["note"]  # three colours are not fewer than 3
    assert source.few_text_values(["user", "missing"], MIN_DISTINCT) == []


def test_plain_encoded_text_and_partition_columns(tmp_path):
    table = pa.table({"color": ["a", "b"] * 50, "x": np.arange(100.0)})
    _write(tmp_path / "plain.parquet", table, row_group_size=30, use_dictionary=False)
    source = open_source(tmp_path / "plain.parquet")
    # pyarrow builds the dictionaries of plain pages as it decodes them: exact all the same
    assert source.few_text_values(["color"], MIN_DISTINCT) == ["color"]
    root = tmp_path / "ds"
    for site in ("A", "B"):
        (root / f"site={site}").mkdir(parents=True)
        _write(root / f"site={site}" / "part.parquet", table, row_group_size=30)
    source = open_source(root)
    assert "site" in source.schema.names
    assert source.few_text_values(["site", "color"], MIN_DISTINCT) == ["color"]


def test_the_dictionaries_of_every_file_count(tmp_path):
    root = tmp_path / "many"
    root.mkdir()
    _write(root / "a.parquet", pa.table({"x": [1.0, 2.0], "kind": ["p", "q"]}), 10)
    _write(root / "b.parquet", pa.table({"x": [3.0, 4.0], "kind": pa.array([None, "p"])}), 10)
    _write(root / "c.parquet", pa.table({"x": [5.0], "kind": ["r"]}), 10)
    source = open_source(root)
    assert source.few_text_values(["kind"], 4) == ["kind"]
    assert source.few_text_values(["kind"], 3) == []  # p, q, r across the files


def test_row_groups_without_rows_are_read_past(tmp_path):
    """A writer that wrote an empty table first leaves a row group of no rows (no chunks to
    read a dictionary from): the audit of such files used to crash here."""
    schema = pa.schema([("kind", pa.string()), ("f", pa.float64()), ("g", pa.float64())])
    rng = np.random.default_rng(0)
    paths = []
    for name, n in (("train", 300), ("test", 60)):
        path = tmp_path / f"{name}.parquet"
        with pq.ParquetWriter(path, schema) as writer:
            writer.write_table(schema.empty_table())
            writer.write_table(
                pa.table(
                    {
                        "kind": rng.choice(["a", "b"], n),
                        "f": rng.normal(size=n),
                        "g": rng.integers(0, 2, n).astype(float),
                    },
                    schema=schema,
                )
            )
        paths.append(path)
    assert pq.ParquetFile(paths[0]).metadata.row_group(0).num_rows == 0
    assert open_source(paths[0]).few_text_values(["kind"], MIN_DISTINCT) == ["kind"]
    report = datavet.audit(*paths, target="g")
    assert not [o for o in report.outcomes if o.status.value == "crashed"]


def test_a_corrupt_file_lists_nothing(tmp_path):
    table = pa.table({"kind": ["p", "q"] * 100})
    _write(tmp_path / "t.parquet", table, row_group_size=50)
    source = open_source(tmp_path / "t.parquet")
    data = (tmp_path / "t.parquet").read_bytes()
    (tmp_path / "t.parquet").write_bytes(data[:4] + b"\x00" * 200 + data[204:])
    assert source.few_text_values(["kind"], MIN_DISTINCT) == []  # the scan says what is wrong


def test_the_guess_with_dictionaries_holds_and_needs_no_second_pass(tmp_path, monkeypatch):
    """Low-cardinality text is skipped by the guess, an ID-like text column is still found:
    the main pass computes the near-duplicate hashes, and the report is the one the second
    pass gives."""
    rng = np.random.default_rng(1)
    n = 3_000

    def frame(start, rows):
        return pd.DataFrame(
            {
                "order_id": [f"o{start + i}" for i in range(rows)],  # ID-like: left out
                "color": rng.choice(["red", "green", "blue"], rows),
                "f": rng.normal(size=rows).round(3),
                "g": rng.normal(size=rows).round(3),
                "label": rng.integers(0, 2, rows),
            }
        )

    train, test = frame(0, n), frame(n, 600)
    test.iloc[:30, 1:] = train.iloc[:30, 1:].to_numpy()  # copies under fresh order ids
    train.to_parquet(tmp_path / "train.parquet", row_group_size=700)
    test.to_parquet(tmp_path / "test.parquet", row_group_size=700)
    args = (str(tmp_path / "train.parquet"), str(tmp_path / "test.parquet"))
    asked = []
    real_few = type(open_source(args[0])).few_text_values

    def few(self, columns, limit):
        got = real_few(self, columns, limit)
        asked.append((list(columns), got))
        return got

    monkeypatch.setattr(type(open_source(args[0])), "few_text_values", few)
    second = []
    real_pass = LocalEngine._near_pass
    monkeypatch.setattr(LocalEngine, "_near_pass", lambda *a: second.append(1) or real_pass(*a))
    one_pass = json.loads(datavet.audit(*args, target="label").to_json())
    assert asked == [(["order_id", "color"], ["color"])] and not second
    monkeypatch.setattr(LocalEngine, "near_guess", lambda *a: None)
    two_pass = json.loads(datavet.audit(*args, target="label").to_json())
    assert second
    for report in (one_pass, two_pass):
        report.pop("duration_s", None)
    assert one_pass == two_pass
    found = {f["code"]: f for f in one_pass["findings"]}
    assert "S007" in found or "S001" in found  # the copies are found with the key left out
