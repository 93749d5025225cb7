"""The Spark engine gives the local engine's report on inputs Spark reads its own way: CSV
missing-value tokens, names that differ only in case, categorical columns, Hive partitions,
Spark ML vectors. One local[2] session for the module; tiny tables."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import datavet
from datavet.engines import spark as engine
from datavet.errors import UsageError


def findings(report) -> list:
    return [(f.code, f.split, f.columns, f.n_affected, f.examples) for f in report.findings]


def test_csv_missing_tokens_as_the_local_reader(spark, tmp_path):
    """ "NA", "null", "N/A", "NaN" are missing in numeric and text columns alike (R's write.csv)."""
    rng = np.random.default_rng(0)
    tokens = ["NA", "null", "N/A", "NaN", ""]
    lines = ["label,x,t"]
    for i in range(60):
        x = tokens[i % 5] if i % 6 == 0 else f"{rng.normal():.3f}"
        t = tokens[(i + 1) % 5] if i % 4 == 0 else str(rng.choice(["a", "b"]))
        lines.append(f"{i % 2},{x},{t}")
    path = tmp_path / "na.csv"
    path.write_text("\n".join(lines) + "\n")
    local = datavet.audit(path, target="label")
    report = datavet.audit(path, target="label", engine="spark")
    assert findings(report) == findings(local)
    missing = {f.columns[0]: f.n_affected for f in report.findings if f.code == "V001"}
    assert missing == {"x": 10, "t": 15}


def test_names_differing_only_in_case(spark, tmp_path):
    """A table or Spark DataFrame with 'Age' and 'age' is audited in the user's session as
    here; a path Spark reads by name is refused in one line naming both."""
    df = pd.DataFrame({"label": [0, 1] * 20, "Age": range(40), "age": [np.nan] * 3 + [1.0] * 37})
    local = datavet.audit(df, target="label")
    assert findings(datavet.audit(df, target="label", engine="spark")) == findings(local)
    frame = spark.createDataFrame(df)
    assert findings(datavet.audit(frame, target="label")) == findings(local)
    path = tmp_path / "case.csv"
    df.to_csv(path, index=False)
    with pytest.raises(UsageError, match="columns 'Age' and 'age' differ only in case"):
        datavet.audit(path, target="label", engine="spark")


def test_cli_own_session_tells_case_apart(tmp_path):
    """The session datavet starts resolves names with case: the CSV is read, 'age' checked."""
    path = tmp_path / "case.csv"
    pd.DataFrame({"label": [0, 1] * 20, "Age": range(40), "age": ["NA"] * 3 + ["1.5"] * 37}).to_csv(
        path, index=False
    )
    proc = subprocess.run(
        [sys.executable, "-m", "datavet", "audit", str(path), "--target", "label"]
        + ["--engine", "spark", "--scheduler", "local[1]", "--format", "concise"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "V001 nan-values [train] Column 'age' has 3 NaN" in proc.stdout, proc.stderr[-2000:]
    assert "internal error" not in proc.stderr


def test_categorical_and_hive_partitions(spark, tmp_path):
    """Dictionary (categorical) columns keep V005; a Hive directory is read with its partition
    column, in the local engine's row order."""
    rng = np.random.default_rng(2)
    train = pd.DataFrame(
        {
            "x": rng.normal(size=120),
            "city": pd.Categorical(rng.choice(["a", "b", "c"], 120)),
            "site": rng.choice(["A", "B"], 120),
            "label": rng.integers(0, 2, 120),
        }
    )
    test = train.iloc[:40].assign(city=pd.Categorical(["a", "zz"] * 20), x=rng.normal(size=40))
    local = datavet.audit(train, test, target="label")
    assert "V005" in [f.code for f in local.findings]
    assert findings(datavet.audit(train, test, target="label", engine="spark")) == findings(local)
    hive = tmp_path / "hive"
    pq.write_to_dataset(pa.Table.from_pandas(train, preserve_index=False), hive, ["site"])
    local = datavet.audit(hive, target="label")
    report = datavet.audit(hive, target="label", engine="spark")
    assert findings(report) == findings(local)
    assert [c["name"] for c in report.to_dict()["datasets"]["train"]["columns"]][-1] == "site"


def test_ml_vectors_are_vector_columns(spark):
    """Dense and sparse Spark ML vectors are checked element-wise, as lists in pandas."""
    from pyspark.ml.linalg import Vectors

    rng = np.random.default_rng(0)
    rows = [[float(v) for v in rng.normal(size=3)] for _ in range(40)]
    rows[5][1] = float("nan")
    labels = [i % 2 for i in range(40)]
    local = datavet.audit(pd.DataFrame({"v": rows, "label": labels}), target="label")
    vectors = [
        Vectors.sparse(3, {0: r[0], 1: r[1]}) if i % 2 else Vectors.dense(r)
        for i, r in enumerate(rows)
    ]
    frame = spark.createDataFrame(list(zip(vectors, labels)), ["v", "label"])
    report = datavet.audit(frame, target="label")
    kinds = {c["name"]: c["kind"] for c in report.to_dict()["datasets"]["train"]["columns"]}
    assert kinds["v"] == "vector"
    v001 = [f for f in report.findings if f.code == "V001"]
    assert [(f.columns, f.examples) for f in v001] == [
        (f.columns, f.examples) for f in local.findings if f.code == "V001"
    ]


def test_workers_without_datavet_one_line():
    with pytest.raises(UsageError, match="set PYSPARK_PYTHON") as err, engine.job_errors([]):
        raise RuntimeError("Traceback ...\nModuleNotFoundError: No module named 'datavet'\n")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("master", "says"),
    [("bogus://x", "not a Spark master URL"), ("spark://127.0.0.1:1", "no master answers")],
)
def test_bad_master_refused_before_spark_starts(master, says):
    with pytest.raises(UsageError, match=says):
        engine.check_master(master)
