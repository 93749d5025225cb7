"""Every Arrow type, as a feature and as a label, in memory and in Parquet and Arrow IPC files:
the audit finishes with no crashed rule and no raw exception (a type a rule cannot read is
skipped with a reason, never a crash)."""

from __future__ import annotations

import datetime
import decimal

import numpy as np
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

import datavet
from datavet.findings import Status

N = 48
ROWS = np.arange(N)


def _with_nulls(values: list) -> list:
    return [None if i % 11 == 5 else v for i, v in enumerate(values)]


def _ints(k: int = 3) -> list[int]:
    return [int(v) for v in ROWS % k]


TYPES = {
    "null": lambda: pa.nulls(N),
    "bool": lambda: pa.array(_with_nulls([v == 0 for v in _ints(2)])),
    "int8": lambda: pa.array(_with_nulls(_ints(5)), pa.int8()),
    "uint64": lambda: pa.array(_with_nulls(_ints(5)), pa.uint64()),
    "float16": lambda: pa.array((ROWS % 5).astype(np.float16), pa.float16()),
    "float32": lambda: pa.array(_with_nulls([v + 0.5 for v in _ints(5)]), pa.float32()),
    "float64_nan_inf": lambda: pa.array([[1.0, np.nan, np.inf, -np.inf][i % 4] for i in ROWS]),
    "decimal128": lambda: pa.array(
        _with_nulls([decimal.Decimal(v) / 10 for v in _ints(5)]), pa.decimal128(10, 2)
    ),
    "decimal256": lambda: pa.array(
        _with_nulls([decimal.Decimal(v) * 10**60 for v in _ints(5)]), pa.decimal256(70, 0)
    ),
    "string": lambda: pa.array(_with_nulls([f"c{v}" for v in _ints()])),
    "large_string": lambda: pa.array(_with_nulls([f"c{v}" for v in _ints()]), pa.large_string()),
    "string_view": lambda: pa.array(_with_nulls([f"c{v}" for v in _ints()]), pa.string_view()),
    "binary": lambda: pa.array(_with_nulls([f"c{v}".encode() for v in _ints()]), pa.binary()),
    "large_binary": lambda: pa.array([f"c{v}".encode() for v in _ints()], pa.large_binary()),
    "binary_view": lambda: pa.array([f"c{v}".encode() for v in _ints()], pa.binary_view()),
    # valid UTF-8 first, invalid later: a cast that looks at the first value alone is fooled
    "fixed_size_binary": lambda: pa.array(
        [b"ok" if v == 0 else bytes([0xFF, v]) for v in _ints()], pa.binary(2)
    ),
    "date32": lambda: pa.array([datetime.date(2020, 1, 1 + v) for v in _ints()], pa.date32()),
    "date64": lambda: pa.array([datetime.date(2020, 1, 1 + v) for v in _ints()], pa.date64()),
    "time32": lambda: pa.array(_with_nulls(_ints()), pa.time32("s")),
    "time64": lambda: pa.array(_with_nulls(_ints()), pa.time64("us")),
    "timestamp": lambda: pa.array(_with_nulls(_ints()), pa.timestamp("ms")),
    "timestamp_tz": lambda: pa.array(_ints(), pa.timestamp("ms", tz="Europe/Paris")),
    "duration": lambda: pa.array(_with_nulls(_ints()), pa.duration("s")),
    "month_day_nano_interval": lambda: pa.array(
        _with_nulls([pa.MonthDayNano([v, 1, 0]) for v in _ints()]), pa.month_day_nano_interval()
    ),
    "list": lambda: pa.array(
        _with_nulls([[float(v), 1.0] for v in _ints()]), pa.list_(pa.float64())
    ),
    "large_list": lambda: pa.array(
        [[float(v)] * (v + 1) for v in _ints()], pa.large_list(pa.float64())
    ),
    "list_view": lambda: pa.array([[float(v), 1.0] for v in _ints()], pa.list_view(pa.float64())),
    "fixed_size_list": lambda: pa.array(
        _with_nulls([[float(v), np.nan if v == 2 else 1.0] for v in _ints()]),
        pa.list_(pa.float32(), 2),
    ),
    "list_of_strings": lambda: pa.array([[f"a{v}"] for v in _ints()], pa.list_(pa.string())),
    "list_of_lists": lambda: pa.array([[[float(v)]] for v in _ints()]),
    "struct": lambda: pa.array(_with_nulls([{"a": v, "b": "x"} for v in _ints()])),
    "map": lambda: pa.array([[("k", v)] for v in _ints()], pa.map_(pa.string(), pa.int64())),
    "dense_union": lambda: pa.UnionArray.from_dense(
        pa.array((ROWS % 2).astype(np.int8)),
        pa.array(ROWS // 2, pa.int32()),
        [pa.array(ROWS % 3), pa.array([f"s{v}" for v in ROWS % 3])],
    ),
    "sparse_union": lambda: pa.UnionArray.from_sparse(
        pa.array((ROWS % 2).astype(np.int8)),
        [pa.array(ROWS % 3), pa.array([f"s{v}" for v in ROWS % 3])],
    ),
    "dictionary": lambda: pa.array([f"c{v}" for v in _ints()]).dictionary_encode(),
    "dictionary_int": lambda: pa.array(_ints()).dictionary_encode(),
    "run_end_encoded": lambda: pa.RunEndEncodedArray.from_arrays(
        pa.array(np.arange(1, N + 1, dtype=np.int32)), pa.array(ROWS % 3)
    ),
    "uuid": lambda: pa.array([bytes([v]) * 16 for v in _ints()], pa.uuid()),
    "fixed_shape_tensor": lambda: pa.FixedShapeTensorArray.from_numpy_ndarray(
        np.stack([np.full((2, 2), v, dtype=np.float32) for v in _ints()])
    ),
}


def _table(kind: str, role: str) -> pa.Table:
    rng = np.random.default_rng(0)
    x = pa.array(rng.normal(size=N))
    col = TYPES[kind]()
    assert len(col) == N
    if role == "feature":
        return pa.table({"x": x, "c": col, "label": pa.array(ROWS % 2)})
    return pa.table({"x": x, "label": col})


def _files(table: pa.Table, tmp_path, stem: str) -> list:
    out = [table]
    try:
        path = tmp_path / f"{stem}.parquet"
        pq.write_table(table, path)
        out.append(path)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        pass  # Parquet cannot hold this type (unions, intervals, run-end encoding)
    path = tmp_path / f"{stem}.arrow"
    feather.write_feather(table, path, compression="uncompressed")
    out.append(path)
    return out


@pytest.mark.parametrize("role", ["feature", "label"])
@pytest.mark.parametrize("kind", sorted(TYPES))
def test_every_arrow_type_audits_without_a_crash(kind, role, tmp_path):
    table = _table(kind, role)
    for data in _files(table, tmp_path, f"{kind}-{role}"):
        # train and a test split (so the split-comparing rules run too)
        test = table.slice(0, N // 2) if isinstance(data, pa.Table) else data
        report = datavet.audit(data, test, target="label")
        crashed = [(o.code, o.reason) for o in report.outcomes if o.status == Status.CRASHED]
        assert not crashed, (kind, role, str(data), crashed)
        columns = report.to_dict()["datasets"]["train"]["columns"]
        assert [c["name"] for c in columns] == (["x", "c"] if role == "feature" else ["x"])


def test_binary_and_nested_labels_are_classes():
    """A binary or list label reads as one class per distinct value (its text)."""
    t = pa.table({"x": np.arange(N, dtype=float), "label": TYPES["binary"]()})
    label = datavet.audit(t, target="label").to_dict()["datasets"]["train"]["label"]
    assert label["dtype"] == "binary"
    assert sorted(c["value"] for c in label["classes"]) == ["c0", "c1", "c2"]
    t = pa.table({"x": np.arange(N, dtype=float), "label": TYPES["list"]()})
    label = datavet.audit(t, target="label").to_dict()["datasets"]["train"]["label"]
    assert sorted(c["value"] for c in label["classes"]) == [
        "[0.0, 1.0]",
        "[1.0, 1.0]",
        "[2.0, 1.0]",
    ]


def test_invalid_utf8_binary_feature_is_counted_as_bytes():
    t = pa.table({"b": TYPES["fixed_size_binary"](), "label": pa.array(ROWS % 2)})
    report = datavet.audit(t, target="label")
    col = report.to_dict()["datasets"]["train"]["columns"][0]
    assert col["kind"] == "other" and col["distinct"] == 3
