"""The Spark engine on a real local SparkSession (local[2], 127.0.0.1, no UI) equals local."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import datavet
from datavet.cli import main

SAMPLE_DATA = Path(__file__).resolve().parents[2] / "sample_data"
TRAIN = SAMPLE_DATA / "planted_train.parquet"
TEST = SAMPLE_DATA / "planted_test.parquet"
SPARK_ERROR = 'pip install "datavet[spark]"'


@pytest.fixture(scope="module")
def local():
    return datavet.audit(TRAIN, TEST).to_dict()


def same(a: dict, b: dict) -> None:
    """Equal reports: findings, examples and exit code exactly, statistics to float rounding."""
    assert [
        (f["code"], f["split"], f["columns"], f["n_affected"], f["examples"]) for f in a["findings"]
    ] == [
        (f["code"], f["split"], f["columns"], f["n_affected"], f["examples"]) for f in b["findings"]
    ]
    assert a["exit_code"] == b["exit_code"]
    for split in a["datasets"]:
        da, db = a["datasets"][split], b["datasets"][split]
        assert da["rows"] == db["rows"]
        for ca, cb in zip(da["columns"], db["columns"], strict=True):
            for key, va in ca.items():
                vb = cb[key]
                if isinstance(va, float):
                    assert math.isclose(va, vb, rel_tol=1e-9, abs_tol=1e-9), (split, key)
                elif key == "dtype":  # Spark has one string type: pandas' large_string is string
                    assert va.replace("large_", "") == vb.replace("large_", ""), ca["name"]
                else:
                    assert va == vb, (split, ca["name"], key)
        assert da["label"]["classes"] == db["label"]["classes"]
        assert da["label"]["positions"] == db["label"]["positions"]
    assert a["baselines"] == b["baselines"]


def test_parquet_paths_read_by_spark_equal_local(spark, local):
    report = datavet.audit(TRAIN, TEST, engine="spark").to_dict()
    same(local, report)
    found = {(f["code"], f["split"]): f for f in report["findings"]}
    assert found["S001", "test"]["n_affected"] == 10
    assert found["S001", "test"]["examples"] == [90, 91, 92, 93, 94]
    assert found["V001", "train"]["examples"] == [4, 83, 149]
    assert report["exit_code"] == 1


def test_csv_paths_read_by_spark_equal_local(spark):
    train, test = SAMPLE_DATA / "planted_train.csv", SAMPLE_DATA / "planted_test.csv"
    same(datavet.audit(train, test).to_dict(), datavet.audit(train, test, engine="spark").to_dict())


def test_spark_dataframes_are_audited_in_place(spark, local):
    """Without engine=..., Spark DataFrames go to the Spark engine; several partitions give
    the same global row positions as one file read in order."""
    train = spark.createDataFrame(pd.read_parquet(TRAIN))
    test = spark.createDataFrame(pd.read_parquet(TEST))
    assert train.rdd.getNumPartitions() > 1
    report = datavet.audit(train, test).to_dict()
    same(local, report)
    assert report["datasets"]["train"]["source"] == "<train Spark DataFrame>"
    read = datavet.audit(spark.read.parquet(str(TRAIN)), spark.read.parquet(str(TEST)))
    same(local, read.to_dict())


def test_a_spark_dataframe_is_refused_by_the_dask_engine(spark):
    frame = spark.read.parquet(str(TRAIN))
    with pytest.raises(datavet.UsageError, match="Spark engine"):
        datavet.audit(frame, engine="dask")


def test_cli_engine_spark(spark, local, tmp_path, capsys):
    out = tmp_path / "report.json"
    argv = ["audit", str(TRAIN), "--test", str(TEST), "--engine", "spark"]
    code = main([*argv, "--format", "json", "--output", str(out)])
    assert code == 1
    same(local, json.loads(out.read_text()))


def test_without_pyspark_a_usage_error_names_the_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pyspark", None)  # import pyspark raises ImportError
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    with pytest.raises(datavet.UsageError, match=r'pip install "datavet\[spark\]"'):
        datavet.audit(TRAIN, TEST, engine="spark")
    code = main(["audit", str(TRAIN), "--engine", "spark"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("datavet: error: ")
    assert SPARK_ERROR in err


def test_without_java_one_line_error():
    """No active session and no JVM: one line on stderr, exit 2, before Spark is started."""
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = os.path.dirname(sys.executable)  # this venv's bin: no java there
    proc = subprocess.run(
        [sys.executable, "-m", "datavet", "audit", str(TRAIN), "--engine", "spark"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("datavet: error: the Spark engine needs Java 17")
    assert SPARK_ERROR in proc.stderr


def test_parquet_directory_and_in_memory_tables(spark, tmp_path):
    """Several files are read in the local engine's order; pandas frames become Spark's."""
    import pyarrow.parquet as pq

    train, test = pd.read_parquet(TRAIN), pd.read_parquet(TEST)
    for i, start in enumerate((0, 150, 300)):
        part = train.iloc[start : start + 150]
        pq.write_table(pa.Table.from_pandas(part, preserve_index=False), tmp_path / f"p{i}.parquet")
    local = datavet.audit(tmp_path, TEST).to_dict()
    same(local, datavet.audit(tmp_path, TEST, engine="spark").to_dict())
    same(local, datavet.audit(train, test, engine="spark").to_dict())


def test_rows_copied_under_a_fresh_key(spark):
    """S001/S002 without the row-key column need the positions and labels the engine does not
    keep on the driver: they are computed again (this crashed with an IndexError)."""
    import numpy as np

    rng = np.random.default_rng(0)
    n = 600
    frame = pd.DataFrame(
        {
            "order_id": [f"o{i:05d}" for i in range(n)],
            "a": rng.normal(size=n),
            "b": rng.normal(size=n),
            "label": rng.integers(0, 2, n),
        }
    )
    frame.iloc[50:60, 1:] = frame.iloc[0:10, 1:].to_numpy()
    train, test = frame.iloc[:500].copy(), frame.iloc[500:].copy()
    test.iloc[:5, 1:] = train.iloc[100:105, 1:].to_numpy()
    test["order_id"] = [f"t{i}" for i in range(len(test))]
    local = datavet.audit(train, test).to_dict()
    assert {f["code"] for f in local["findings"]} >= {"S001", "S002"}
    same(local, datavet.audit(spark.createDataFrame(train), spark.createDataFrame(test)).to_dict())
