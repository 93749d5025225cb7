"""Hive-partitioned directories: the partition directories (``site=A``) are columns of the data,
files are read in path order, schemas are unified across files, and both engines agree."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.feather as feather
import pytest

import datavet
import datavet.sources.csv as csv_module
from datavet.cli import main
from datavet.engines.local import profile_source
from datavet.scan import ScanPlan
from datavet.sources import open_source


def frame(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x": rng.normal(size=n).round(3),
            "z": rng.normal(size=n).round(3),
            "label": rng.integers(0, 2, n),
        }
    )


def write(df: pd.DataFrame, path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "parquet":
        df.to_parquet(path, index=False)
    elif kind == "csv":
        df.to_csv(path, index=False)
    else:
        feather.write_feather(pa.Table.from_pandas(df, preserve_index=False), path)


def hive(root, parts: dict[str, pd.DataFrame], kind: str = "parquet"):
    """``parts``: {"site=A/year=2020": frame}; one file per partition directory."""
    for rel, df in parts.items():
        write(df, root / rel / f"part-0.{kind}", kind)
    return root


def run_cli(capsys, argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, out, err, *patterns) -> str:
    assert code == 2 and out == "" and "Traceback" not in err
    (line,) = err.splitlines()
    assert line.startswith("datavet: error:")
    for p in patterns:
        assert re.search(p, line, re.IGNORECASE), (p, line)
    return line


# --------------------------------------------------------------------------------------------
# partition columns are data


@pytest.mark.parametrize("kind", ["parquet", "csv", "feather"])
def test_train_and_test_that_differ_only_by_partition_do_not_overlap(tmp_path, kind):
    """The same rows under site=A (train) and site=B (test): before, the partition column was
    dropped and S001 said 100% of the test rows were in train."""
    df = frame()
    train = hive(tmp_path / "train", {"site=A": df}, kind)
    test = hive(tmp_path / "test", {"site=B": df}, kind)
    report = datavet.audit(train, test, target="label", select=["S001", "S004"])
    assert [f.code for f in report.findings] == []
    columns = [c["name"] for c in report.to_dict()["datasets"]["train"]["columns"]]
    assert "site" in columns


def test_partition_values_and_types(tmp_path):
    df = frame(10)
    root = hive(
        tmp_path / "ds",
        {
            "site=A/year=2020": df,
            "site=B/year=2021": df,
            "site=New%20York/year=2021": df,
            "site=__HIVE_DEFAULT_PARTITION__/year=2022": df,
        },
    )
    source = open_source(root)
    assert source.schema.names == ["x", "z", "label", "site", "year"]
    assert source.schema.field("site").type == pa.string()
    assert pa.types.is_integer(source.schema.field("year").type)
    table = pa.Table.from_batches([b for _, b in source.batches()])
    # path order: site=A, site=B, site=New%20York, site=__HIVE_DEFAULT_PARTITION__
    assert table.column("site").to_pylist() == (
        ["A"] * 10 + ["B"] * 10 + ["New York"] * 10 + [None] * 10
    )
    assert table.column("year").to_pylist() == [2020] * 10 + [2021] * 20 + [2022] * 10
    assert source.num_rows == 40


def test_rows_are_in_path_order_and_the_report_says_so(tmp_path):
    """Positional checks depend on row order: files in sorted path order (not listing or
    write order), row groups in file order; a note says so."""
    parts = {f"site={s}": frame(30, seed=i) for i, s in enumerate("DCBA")}  # written D first
    root = hive(tmp_path / "ds", parts)
    source = open_source(root)
    got = pa.Table.from_batches([b for _, b in source.batches(batch_rows=7)]).to_pandas()
    want = pd.concat([parts[f"site={s}"].assign(site=s) for s in "ABCD"], ignore_index=True)
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    report = datavet.audit(root, target="label", select=["V001"])
    assert any("path order" in n and "4 Parquet files" in n for n in report.notes)


def test_partition_column_feeds_the_rules(tmp_path):
    """A partition that is constant, and a label that follows the partition: the rules see it."""
    df = frame(200)
    df["label"] = 0
    other = frame(200, seed=1)
    other["label"] = 1
    root = hive(tmp_path / "ds", {"site=A": df, "site=B": other})
    report = datavet.audit(root, target="label", select=["B003"])
    assert [f.columns for f in report.findings if f.code == "B003"] == [("site",)]


def test_partition_columns_read_alone(tmp_path):
    """What the local engine prescans (a few columns read by themselves) includes partition
    columns, which no file holds."""
    root = hive(tmp_path / "ds", {"site=A": frame(5), "site=B": frame(7)})
    source = open_source(root)
    got = list(source.column_batches(["site", "x"], batch_rows=4))
    assert [o for o, _ in got] == [0, 4, 5, 9]
    assert pa.Table.from_batches([b for _, b in got]).column("site").to_pylist() == (
        ["A"] * 5 + ["B"] * 7
    )


def test_partition_name_also_a_file_column_is_refused(tmp_path, capsys):
    df = frame(10).assign(site="A")
    root = hive(tmp_path / "ds", {"site=A": df})
    code, out, err = run_cli(capsys, ["audit", root])
    one_line_error(code, out, err, r"partition column 'site'", r"also a column")


def test_no_partitions_in_plain_subdirectories(tmp_path):
    root = hive(tmp_path / "ds", {"2020": frame(5), "2021": frame(5)})
    source = open_source(root)
    assert source.schema.names == ["x", "z", "label"] and source.num_rows == 10


# --------------------------------------------------------------------------------------------
# schemas across files


def test_integer_and_float_files_are_unified(tmp_path):
    """pandas writes int64 for a column without NaN and double for one with: one dataset."""
    a = frame(10)
    b = frame(10, seed=1)
    b.loc[3, "x"] = np.nan
    b["label"] = b["label"].astype("int32")
    a["x"] = (a["x"] * 1000).astype("int64")
    root = hive(tmp_path / "ds", {"site=A": a, "site=B": b})
    source = open_source(root)
    assert source.schema.field("x").type == pa.float64()
    assert source.schema.field("label").type == pa.int64()
    report = datavet.audit(root, target="label", select=["V001"])
    assert [(f.code, f.n_affected) for f in report.findings] == [("V001", 1)]


def test_categorical_and_text_files_are_unified(tmp_path):
    a = frame(10).assign(cat="u")
    b = frame(10).assign(cat="v")
    a["cat"] = a["cat"].astype("category")
    root = hive(tmp_path / "ds", {"site=A": a, "site=B": b})
    source = open_source(root)
    table = pa.Table.from_batches([b for _, b in source.batches()])
    assert table.column("cat").to_pylist() == ["u"] * 10 + ["v"] * 10


def test_parquet_types_that_do_not_unify_are_a_one_line_error(tmp_path, capsys):
    a = frame(10)
    b = frame(10).assign(x="text")
    root = hive(tmp_path / "ds", {"site=A": a, "site=B": b})
    code, out, err = run_cli(capsys, ["audit", root])
    one_line_error(code, out, err, r"site=B", r"column 'x'", r"do not unify")


def test_missing_column_in_one_file_is_a_one_line_error(tmp_path, capsys):
    root = hive(tmp_path / "ds", {"site=A": frame(10), "site=B": frame(10).drop(columns="z")})
    code, out, err = run_cli(capsys, ["audit", root])
    one_line_error(code, out, err, r"site=B/part-0\.parquet", r"missing 'z'")


def test_csv_files_whose_guessed_types_differ_are_read_as_text(tmp_path):
    """CSV types are guesses: a column of numbers in one file and words in another is text."""
    a = frame(10)
    b = frame(10).assign(x=["w"] * 10)
    root = hive(tmp_path / "ds", {"site=A": a, "site=B": b}, "csv")
    source = open_source(root)
    assert source.schema.field("x").type == pa.string()
    table = pa.Table.from_batches([b for _, b in source.batches()])
    assert table.column("x").to_pylist()[-1] == "w"


def test_csv_column_that_turns_to_text_late_in_a_later_file(tmp_path, monkeypatch):
    """A value past the first block of the second file widens the column: the scan restarts
    with the wider type in every file, and every row is read."""
    monkeypatch.setattr(csv_module, "_BLOCK_BYTES", 1024)
    a = pd.DataFrame({"x": np.arange(500), "label": np.arange(500) % 2})
    b = pd.DataFrame({"x": [str(i) for i in range(499)] + ["oops"], "label": np.arange(500) % 2})
    root = hive(tmp_path / "ds", {"site=A": a, "site=B": b}, "csv")
    source = open_source(root)
    profile = profile_source(source, ScanPlan(target="label"), "train", batch_rows=100)
    assert profile.rows == 1000
    assert source.schema.field("x").type == pa.string()


# --------------------------------------------------------------------------------------------
# the Dask engine


@pytest.fixture(scope="module")
def threads_cluster():
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=1,
        threads_per_worker=2,
        processes=False,  # in-process workers on the inproc:// transport: no port opened
        dashboard_address=None,
    ) as cluster:
        yield cluster.scheduler_address


@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_dask_engine_reads_partitions_like_the_local_engine(tmp_path, threads_cluster, kind):
    df = frame(300)
    train = hive(tmp_path / "train", {"site=A": df.iloc[:150], "site=B": df.iloc[150:]}, kind)
    test = hive(tmp_path / "test", {"site=C": df.iloc[:40]}, kind)
    local = datavet.audit(train, test, target="label", baselines=False)
    dask = datavet.audit(
        train, test, target="label", baselines=False, engine="dask", scheduler=threads_cluster
    )
    assert [(f.code, f.split, f.columns, f.n_affected) for f in dask.findings] == [
        (f.code, f.split, f.columns, f.n_affected) for f in local.findings
    ]
    assert "S001" not in {f.code for f in dask.findings}
    names = [c["name"] for c in dask.to_dict()["datasets"]["train"]["columns"]]
    assert "site" in names
