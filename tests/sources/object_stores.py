"""What the object-store tests (s3:// against moto, gs:// against fake-gcs-server) share: the
objects each server holds, and the checks each store must pass the same way."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

import datavet
from datavet.cli import main

ROOT = Path(__file__).resolve().parents[2]


def frame(n: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {"x": rng.normal(size=n).round(3), "y": rng.integers(0, 5, n), "label": np.arange(n) % 2}
    )
    df.loc[3, "x"] = np.nan
    return df


def parquet_bytes(df: pd.DataFrame, **kw) -> bytes:
    buf = io.BytesIO()
    df.to_parquet(buf, index=False, **kw)
    return buf.getvalue()


def splits() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Train (200 rows) and test (80 rows, 10 of them copied from train)."""
    train, test = frame(), frame(80, seed=1)
    test.iloc[:10] = train.iloc[50:60].to_numpy()
    return train, test


def objects(train: pd.DataFrame, test: pd.DataFrame) -> dict[str, bytes]:
    """The objects every store holds: Parquet and CSV splits and a Hive-partitioned prefix."""
    return {
        "train.parquet": parquet_bytes(train, row_group_size=64),
        "test.parquet": parquet_bytes(test),
        "train.csv": train.to_csv(index=False).encode(),
        "hive/train/site=A/part-0.parquet": parquet_bytes(train.iloc[:100]),
        "hive/train/site=B/part-0.parquet": parquet_bytes(train.iloc[100:]),
        "hive/test/site=C/part-0.parquet": parquet_bytes(train.iloc[:100]),
    }


def summary(report) -> list[tuple]:
    return [(f.code, f.split, f.columns, f.n_affected, f.examples) for f in report.findings]


def check_parquet_like_local(url: Callable[[str], str], train, test) -> None:
    got = datavet.audit(url("train.parquet"), url("test.parquet"), target="label")
    want = datavet.audit(train, test, target="label")
    assert summary(got) == summary(want)
    assert any(f.code == "S001" and f.n_affected >= 10 for f in got.findings)
    assert got.to_dict()["datasets"]["train"]["rows"] == 200


def check_csv_like_local(train_url: str, test_url: str, train, test) -> None:
    got = datavet.audit(train_url, test_url, target="label")
    want = datavet.audit(train, test, target="label")
    assert [s[0] for s in summary(got)] == [s[0] for s in summary(want)]
    assert any(f.code == "S001" and f.n_affected >= 10 for f in got.findings)


def check_hive_prefix(url: Callable[[str], str]) -> None:
    report = datavet.audit(url("hive/train"), url("hive/test/"), target="label")
    columns = [c["name"] for c in report.to_dict()["datasets"]["train"]["columns"]]
    assert "site" in columns
    # the test rows are train's first 100 rows, but in partition site=C: not copies
    assert "S001" not in {f.code for f in report.findings}
    assert report.to_dict()["datasets"]["train"]["rows"] == 200


def check_glob(url: Callable[[str], str]) -> None:
    report = datavet.audit(url("hive/*/site=*/*.parquet"), target="label", select=["V001"])
    assert report.to_dict()["datasets"]["train"]["rows"] == 300


def check_fresh_cli(url: Callable[[str], str], **env: str) -> None:
    """A fresh `python -m datavet` configured by environment variables only."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **env}
    proc = subprocess.run(
        [sys.executable, "-m", "datavet", "audit", url("train.parquet"), "--test",
         url("test.parquet"), "--target", "label", "--format", "json"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert '"S001"' in proc.stdout


def check_one_line_error(capsys, target: str, pattern: str) -> None:
    code = main(["audit", target, "--target", "label"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "Traceback" not in err
    (line,) = err.splitlines()
    assert line.startswith("datavet: error:") and target in line
    assert re.search(pattern, line, re.IGNORECASE), line
