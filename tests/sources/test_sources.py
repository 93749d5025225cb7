"""Every source yields the same audit; batching and file splits never change results; inputs are
never modified; a CSV whose column changes type after the first block is still read entirely."""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

import datavet
import datavet.sources.csv as csv_module
from datavet.sources import open_source
from datavet.sources.csv import CsvSource

ROOT = Path(__file__).resolve().parents[2]


def _load_sample():
    spec = importlib.util.spec_from_file_location(
        "_sample_for_sources", ROOT / "sample_data" / "make_sample_data.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SAMPLE = _load_sample()
FEATURES = SAMPLE.COLUMNS  # x0..x3


# --------------------------------------------------------------------------------------------
# helpers


def _split_findings(findings):
    """(everything but metrics, metrics) so floats can be compared to the last few bits."""
    rest = [{k: v for k, v in f.items() if k != "metrics"} for f in findings]
    metrics = [f["metrics"] for f in findings]
    return rest, metrics


def assert_same_findings(got: list[dict], want: list[dict]) -> None:
    """Exact equality for codes, messages, splits, columns, counts and row examples; metrics
    equal up to float rounding (a streamed mean/M2 merge is not bit-identical to one pass)."""
    got_rest, got_metrics = _split_findings(got)
    want_rest, want_metrics = _split_findings(want)
    assert got_rest == want_rest
    for g, w in zip(got_metrics, want_metrics):
        assert g.keys() == w.keys()
        for key in w:
            if isinstance(w[key], float) and isinstance(g[key], float):
                assert g[key] == pytest.approx(w[key], rel=1e-12, abs=1e-12), key
            else:
                assert g[key] == w[key], key


def _dataset_view(report) -> dict:
    out = {}
    for split, d in report.to_dict()["datasets"].items():
        out[split] = {
            "rows": d["rows"],
            "columns": [(c["name"], c["count"], c["nan"], c["inf"]) for c in d["columns"]],
            "means": [c["mean"] for c in d["columns"]],
            "label": None
            if "label" not in d
            else (
                d["label"]["name"],
                d["label"]["missing"],
                sorted((x["value"], x["count"]) for x in d["label"]["classes"]),
            ),
        }
    return out


def _write_parquet_dir(frame: pd.DataFrame, directory: Path, sizes: list[int], **kw) -> Path:
    """Split ``frame`` into consecutive files part-0000.parquet ... written out of order, plus
    the clutter a Spark job leaves (``_SUCCESS``, hidden ``.crc`` files) that must be skipped."""
    directory.mkdir(parents=True)
    assert sum(sizes) == len(frame)
    bounds = np.cumsum([0, *sizes])
    order = list(range(len(sizes)))[::-1]  # write the last file first: order is by path, not mtime
    for i in order:
        part = frame.iloc[bounds[i] : bounds[i + 1]]
        pq.write_table(
            pa.Table.from_pandas(part, preserve_index=False),
            directory / f"part-{i:04d}.parquet",
            **kw,
        )
        (directory / f".part-{i:04d}.parquet.crc").write_bytes(b"not parquet")
    (directory / "_SUCCESS").write_bytes(b"")
    return directory


def _write_arrow_file(frame: pd.DataFrame, path: Path, chunk: int = 64) -> Path:
    table = pa.Table.from_pandas(frame, preserve_index=False)
    with pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, table.schema) as writer:
        for batch in table.to_batches(max_chunksize=chunk):
            writer.write_batch(batch)
    return path


def _write_arrow_stream(frame: pd.DataFrame, path: Path, chunk: int = 64) -> Path:
    table = pa.Table.from_pandas(frame, preserve_index=False)
    with pa.OSFile(str(path), "wb") as sink, ipc.new_stream(sink, table.schema) as writer:
        for batch in table.to_batches(max_chunksize=chunk):
            writer.write_batch(batch)
    return path


def _make(kind: str, frame: pd.DataFrame, directory: Path, stem: str):
    """The same table as ``kind``: a path or an in-memory object."""
    if kind == "csv":
        path = directory / f"{stem}.csv"
        frame.to_csv(path, index=False)
        return path
    if kind == "tsv":
        path = directory / f"{stem}.tsv"
        frame.to_csv(path, index=False, sep="\t")
        return path
    if kind == "parquet":
        path = directory / f"{stem}.parquet"
        frame.to_parquet(path, index=False)
        return path
    if kind == "parquet-dir":
        n = len(frame)
        a, b = n // 3 + 7, n // 3 - 5  # uneven, so file boundaries fall at odd rows
        return _write_parquet_dir(
            frame, directory / f"{stem}_dir", [a, b, n - a - b], row_group_size=50
        )
    if kind == "arrow":
        return _write_arrow_file(frame, directory / f"{stem}.arrow")
    if kind == "arrow-stream":
        return _write_arrow_stream(frame, directory / f"{stem}.ipc")
    if kind == "feather":
        path = directory / f"{stem}.feather"
        feather.write_feather(pa.Table.from_pandas(frame, preserve_index=False), path, chunksize=64)
        return path
    if kind == "pandas":
        return frame.copy()
    if kind == "arrow-table":
        return pa.Table.from_pandas(frame, preserve_index=False)
    if kind == "numpy":
        return frame[FEATURES].to_numpy(), frame["label"].to_numpy()
    raise AssertionError(kind)


KINDS = [
    "csv",
    "tsv",
    "parquet",
    "parquet-dir",
    "arrow",
    "arrow-stream",
    "feather",
    "pandas",
    "arrow-table",
    "numpy",
]
PATH_KINDS = ["csv", "tsv", "parquet", "parquet-dir", "arrow", "arrow-stream", "feather"]


@pytest.fixture(scope="module")
def planted_frames():
    return SAMPLE.planted()


@pytest.fixture(scope="module")
def reference(planted_frames):
    """The audit of the planted table given as pandas DataFrames, checked against the table."""
    train, test = planted_frames
    report = datavet.audit(train.copy(), test.copy(), target="label")
    findings = report.to_dict()["findings"]
    # The reference itself must be right, or comparing against it proves nothing.
    nan_train = np.flatnonzero(train["x1"].isna().to_numpy()).tolist()
    nan_test = np.flatnonzero(test["x1"].isna().to_numpy()).tolist()
    by_key = {(f["code"], f["split"]): f for f in findings}
    assert len(nan_train) == 3 and len(nan_test) == 1
    assert by_key[("V001", "train")]["examples"] == nan_train
    assert by_key[("V001", "test")]["examples"] == nan_test
    assert {f["code"] for f in findings} == {"V001", "F001", "F003", "L002", "S001"}
    return report


# --------------------------------------------------------------------------------------------
# every source, same result


@pytest.mark.parametrize("kind", KINDS)
def test_every_source_gives_the_same_audit(kind, planted_frames, reference, tmp_path):
    train, test = planted_frames
    report = datavet.audit(
        _make(kind, train, tmp_path, "train"), _make(kind, test, tmp_path, "test"), target="label"
    )
    assert_same_findings(report.to_dict()["findings"], reference.to_dict()["findings"])
    got, want = _dataset_view(report), _dataset_view(reference)
    assert got.keys() == want.keys() == {"train", "test"}
    for split in want:
        assert (
            got[split]["rows"]
            == want[split]["rows"]
            == len(planted_frames[0 if split == "train" else 1])
        )
        assert got[split]["columns"] == want[split]["columns"]
        assert got[split]["label"] == want[split]["label"]
        assert got[split]["means"] == pytest.approx(want[split]["means"], rel=1e-12)
    assert report.exit_code() == reference.exit_code() == 1


@pytest.mark.parametrize("kind", KINDS)
def test_every_source_with_auto_target(kind, planted_frames, reference, tmp_path):
    """Without --target, the column named 'label' is found whatever the source."""
    train, _ = planted_frames
    report = datavet.audit(_make(kind, train, tmp_path, "train"))
    assert report.target == "label"
    want = [
        f for f in reference.to_dict()["findings"] if f["split"] == "train" and f["code"] != "S001"
    ]
    assert_same_findings(report.to_dict()["findings"], want)


def test_numpy_columns_are_named_x0_and_label():
    x = np.arange(12, dtype=float).reshape(4, 3)
    y = np.array([0, 1, 0, 1])
    source = open_source((x, y), role="train")
    assert source.schema.names == ["x0", "x1", "x2", "label"]
    batches = list(source.batches())
    table = pa.Table.from_batches([b for _, b in batches])
    assert table.column("x1").to_pylist() == [1.0, 4.0, 7.0, 10.0]
    assert table.column("label").to_pylist() == [0, 1, 0, 1]


# --------------------------------------------------------------------------------------------
# global row offsets across files, row groups and batches


def _offset_frame():
    """18 rows over 3 files (5, 7, 6 rows); NaN at the 2nd file's first row and the 3rd file's
    rows 2 and 5; +inf at the 3rd file's first row."""
    rng = np.random.default_rng(11)
    a = rng.normal(size=18)
    a[[5, 5 + 7 + 2, 5 + 7 + 5]] = np.nan
    b = rng.normal(size=18)
    b[5 + 7] = np.inf
    return pd.DataFrame({"a": a, "b": b, "label": np.arange(18) % 2})


@pytest.mark.parametrize("batch_rows", [2, 3, 65_536])
@pytest.mark.parametrize("row_group_size", [2, 1000])
def test_parquet_directory_offsets_are_global(tmp_path, batch_rows, row_group_size):
    frame = _offset_frame()
    directory = _write_parquet_dir(frame, tmp_path / "ds", [5, 7, 6], row_group_size=row_group_size)
    report = datavet.audit(
        directory, target="label", select=["V001", "V002"], batch_rows=batch_rows
    )
    by_code = {f.code: f for f in report.findings}
    assert report.datasets["train"]["rows"] == 18
    nan = by_code["V001"]
    assert nan.columns == ("a",)
    assert nan.n_affected == 3
    # the NaN in the 2nd file's first row is at offset 5 = rows of file 1
    assert nan.examples == (5, 14, 17)
    inf = by_code["V002"]
    assert inf.columns == ("b",)
    assert inf.n_affected == 1
    assert inf.examples == (12,)


def test_parquet_directory_order_is_path_order_not_write_order(tmp_path):
    """Label drift is positional: the directory must be read in path order to see it."""
    frame = pd.DataFrame(
        {
            "a": np.linspace(0, 1, 300),
            "b": np.linspace(5, 9, 300) ** 2,
            "label": [1] * 60 + [0, 1] * 120,
        }
    )
    directory = _write_parquet_dir(frame, tmp_path / "ds", [60, 120, 120])
    got = datavet.audit(directory, target="label", select="L002")
    want = datavet.audit(frame, target="label", select="L002")
    assert [f.code for f in want.findings] == ["L002"]
    assert want.findings[0].metrics["segment_rows"] == 60
    assert_same_findings(got.to_dict()["findings"], want.to_dict()["findings"])


@pytest.mark.parametrize("kind", ["arrow", "feather"])
def test_arrow_batches_offsets(kind, tmp_path):
    frame = _offset_frame()
    path = (
        _write_arrow_file(frame, tmp_path / "t.arrow", chunk=4)
        if kind == "arrow"
        else tmp_path / "t.feather"
    )
    if kind == "feather":
        feather.write_feather(pa.Table.from_pandas(frame, preserve_index=False), path, chunksize=4)
    report = datavet.audit(path, target="label", select="V")
    by_code = {f.code: f for f in report.findings}
    assert by_code["V001"].examples == (5, 14, 17)
    assert by_code["V002"].examples == (12,)


# --------------------------------------------------------------------------------------------
# batching does not change results


@pytest.mark.parametrize("kind", ["csv", "parquet-dir", "arrow", "pandas", "numpy"])
def test_batch_rows_do_not_change_findings(kind, planted_frames, tmp_path):
    train, test = planted_frames
    tr, te = _make(kind, train, tmp_path, "train"), _make(kind, test, tmp_path, "test")
    small = datavet.audit(tr, te, target="label", batch_rows=7)
    big = datavet.audit(tr, te, target="label", batch_rows=65_536)
    assert len(big.findings) == 6
    assert_same_findings(small.to_dict()["findings"], big.to_dict()["findings"])
    assert _dataset_view(small)["train"]["columns"] == _dataset_view(big)["train"]["columns"]
    assert [o.status for o in small.outcomes] == [o.status for o in big.outcomes]


def test_batches_yield_contiguous_offsets(planted_frames, tmp_path):
    train, _ = planted_frames
    for kind in PATH_KINDS:
        directory = tmp_path / kind
        directory.mkdir()
        source = open_source(_make(kind, train, directory, "t"))
        expected = 0
        for offset, batch in source.batches(7):
            assert offset == expected, kind
            assert 0 < batch.num_rows <= 7
            expected += batch.num_rows
        assert expected == len(train), kind


# --------------------------------------------------------------------------------------------
# CSV columns whose type changes after the first block


def _write_late_change(path: Path, n: int, late: str, *, pad: int = 0) -> None:
    filler = "p" * pad
    with path.open("w") as fh:
        fh.write("a,b,pad\n")
        fh.write("".join(f"{i},{i % 7},{filler}{i % 10}\n" for i in range(n)))
        fh.write(f"{late},3,{filler}x\n")


@pytest.mark.parametrize("late, dtype", [("foo", "string"), ("1.5", "double")])
def test_csv_type_change_after_first_block_small_block(tmp_path, monkeypatch, late, dtype):
    monkeypatch.setattr(csv_module, "_BLOCK_BYTES", 4096)
    path = tmp_path / "late.csv"
    n = 5000
    _write_late_change(path, n, late)
    assert path.stat().st_size > 10 * 4096  # the odd value is many blocks after the first
    report = datavet.audit(path, select="V")
    d = report.datasets["train"]
    assert d["rows"] == n + 1
    cols = {c["name"]: c for c in d["columns"]}
    assert cols["a"]["dtype"] == dtype
    assert cols["a"]["count"] == n + 1 and cols["a"]["nan"] == 0
    assert cols["b"]["dtype"] == "int64" and cols["b"]["count"] == n + 1
    if dtype == "double":
        assert cols["a"]["mean"] == pytest.approx((sum(range(n)) + 1.5) / (n + 1), rel=1e-12)
        assert cols["a"]["max"] == n - 1
    # No NaN or inf; the one text value left in a column of numbers is a V004 (mixed types).
    mixed = {"a", "pad"} if dtype == "string" else {"pad"}
    assert {(f.code, f.columns) for f in report.findings} == {("V004", (c,)) for c in mixed}


def test_csv_source_widens_and_restarts(tmp_path, monkeypatch):
    """At the CsvSource level: int64 -> double -> string, each time restarting the stream."""
    monkeypatch.setattr(csv_module, "_BLOCK_BYTES", 1024)
    path = tmp_path / "late.csv"
    with path.open("w") as fh:
        fh.write("a,b\n")
        fh.write("".join(f"{i},{i}\n" for i in range(2000)))
        fh.write("2.5,1\n")
        fh.write("".join(f"{i},{i}\n" for i in range(2000)))
        fh.write("foo,1\n")
    source = CsvSource(name=str(path), format="csv", path=path).open()
    assert source.schema.field("a").type == pa.int64()
    seen_types = []
    for _ in range(5):
        try:
            rows = sum(b.num_rows for _, b in source.batches(500))
        except datavet.sources.SchemaRestart as restart:
            seen_types.append(str(source.schema.field("a").type))
            assert str(restart) == "a"
            continue
        break
    assert seen_types == ["double", "string"]
    assert rows == 4002
    assert source.schema.field("b").type == pa.int64()


@pytest.mark.parametrize("late, dtype", [("foo", "string"), ("1.5", "double")])
def test_csv_type_change_beyond_real_8mib_block(tmp_path, late, dtype):
    path = tmp_path / "big.csv"
    n = 110_000
    _write_late_change(path, n, late, pad=70)
    assert path.stat().st_size > csv_module._BLOCK_BYTES == 8 << 20
    report = datavet.audit(path, select="V001")
    d = report.datasets["train"]
    assert d["rows"] == n + 1
    cols = {c["name"]: c for c in d["columns"]}
    assert cols["a"]["dtype"] == dtype and cols["a"]["count"] == n + 1
    assert report.exit_code() == 0


# --------------------------------------------------------------------------------------------
# inputs are read-only


def _fingerprint(path: Path) -> dict:
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return {
        str(p): (p.stat().st_mtime_ns, p.stat().st_size, hashlib.sha256(p.read_bytes()).hexdigest())
        for p in files
    }


@pytest.mark.parametrize("kind", PATH_KINDS)
def test_input_files_are_not_modified(kind, planted_frames, tmp_path):
    train, test = planted_frames
    tr, te = _make(kind, train, tmp_path, "train"), _make(kind, test, tmp_path, "test")
    before = {**_fingerprint(tr), **_fingerprint(te)}
    listing = sorted(os.listdir(tmp_path))
    old = 1_000_000_000  # make mtimes distinctive so a touch would show
    for p in before:
        os.utime(p, ns=(old * 10**9, old * 10**9))
    before = {**_fingerprint(tr), **_fingerprint(te)}
    report = datavet.audit(tr, te, target="label")
    assert report.findings  # it really read them
    assert {**_fingerprint(tr), **_fingerprint(te)} == before
    assert sorted(os.listdir(tmp_path)) == listing  # no side files (caches, indexes) written


def test_in_memory_inputs_are_not_modified(planted_frames):
    train, test = planted_frames
    df = train.copy()
    df_before = df.copy(deep=True)
    table = pa.Table.from_pandas(test, preserve_index=False)
    table_before = copy.deepcopy(table.to_pydict())
    x = train[FEATURES].to_numpy().copy()
    y = train["label"].to_numpy().copy()
    x_before, y_before = x.copy(), y.copy()
    datavet.audit(df, table, target="label")
    datavet.audit((x, y), target="label")
    pd.testing.assert_frame_equal(df, df_before)
    assert table.to_pydict().keys() == table_before.keys()
    for k, v in table_before.items():
        np.testing.assert_array_equal(
            np.array(table.column(k).to_pylist(), dtype=float), np.array(v, dtype=float)
        )
    np.testing.assert_array_equal(x, x_before)
    np.testing.assert_array_equal(y, y_before)
    assert x.flags.writeable and y.flags.writeable


# --------------------------------------------------------------------------------------------
# small row groups are read together, in batches of the size asked for


def test_small_row_groups_are_read_in_full_batches(tmp_path):
    path = tmp_path / "small_groups.parquet"
    table = pa.table({"x": np.arange(10_000, dtype=np.float64), "label": np.arange(10_000) % 2})
    pq.write_table(table, path, row_group_size=1000)
    source = open_source(path, role="train")
    batches = list(source.batches(4096))
    # 10 row groups of 1,000 rows: read four at a time (was one batch per row group)
    assert [b.num_rows for _, b in batches] == [4000, 4000, 2000]
    assert [offset for offset, _ in batches] == [0, 4000, 8000]
    assert pa.Table.from_batches([b for _, b in batches]).equals(table)
