"""The Dask engine on a real LocalCluster (2 worker processes on 127.0.0.1) equals the local one."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import datavet


@pytest.fixture(scope="module")
def scheduler():
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        yield cluster.scheduler_address


def planted(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n, 5)), columns=[f"f{i}" for i in range(5)])
    frame["f1"] = 300 + 10 * frame["f1"]
    frame["const"] = 7.0
    frame.loc[rng.choice(n, 9, replace=False), "f2"] = np.nan
    frame.loc[rng.choice(n, 4, replace=False), "f3"] = np.inf
    frame["cat"] = rng.choice(["a", "b", "c"], n)
    frame["label"] = (frame["f0"] > 0).astype(int)
    frame.loc[: n // 20, "label"] = 1
    frame.iloc[100:110] = frame.iloc[:10].to_numpy()  # duplicates in train
    frame.loc[200, "label"] = 1 - frame.loc[201, "label"]
    frame.iloc[200, :-1] = frame.iloc[201, :-1].to_numpy()  # a conflicting pair
    return frame


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("dask")
    train = planted(6000, 1)
    test = planted(1500, 2)
    test.iloc[:25] = train.iloc[500:525].to_numpy()  # overlap
    test.loc[30, :] = train.loc[600, :].to_numpy()
    test.loc[30, "label"] = 1 - train.loc[600, "label"]  # a cross-split conflict
    tdir = root / "train"
    tdir.mkdir()
    for i in range(3):  # 3 files, several row groups each
        part = train.iloc[i * 2000 : (i + 1) * 2000]
        pq.write_table(
            pa.Table.from_pandas(part, preserve_index=False),
            tdir / f"part-{i}.parquet",
            row_group_size=700,
        )
    test_path = root / "test.parquet"
    test.to_parquet(test_path, index=False, row_group_size=400)
    csv = root / "train.csv"
    train.to_csv(csv, index=False)
    return {"train_dir": tdir, "test": test_path, "csv": csv, "train": train, "test_df": test}


def same(a: dict, b: dict) -> None:
    """Equal reports: findings exactly, statistics to float rounding."""
    assert [
        (f["code"], f["split"], f["columns"], f["n_affected"], f["examples"]) for f in a["findings"]
    ] == [
        (f["code"], f["split"], f["columns"], f["n_affected"], f["examples"]) for f in b["findings"]
    ]
    for split in a["datasets"]:
        for ca, cb in zip(a["datasets"][split]["columns"], b["datasets"][split]["columns"]):
            for key, va in ca.items():
                vb = cb[key]
                if isinstance(va, float):
                    assert math.isclose(va, vb, rel_tol=1e-9, abs_tol=1e-9), (split, key)
                else:
                    assert va == vb, (split, ca["name"], key)
        assert a["datasets"][split]["label"]["classes"] == b["datasets"][split]["label"]["classes"]
    assert a["baselines"] == b["baselines"]


def test_parquet_directory_equals_local(data, scheduler):
    local = datavet.audit(data["train_dir"], data["test"], target="label")
    dask = datavet.audit(
        data["train_dir"], data["test"], target="label", engine="dask", scheduler=scheduler
    )
    same(local.to_dict(), dask.to_dict())
    codes = {f.code for f in dask.findings}
    assert {"V001", "V002", "F001", "F003", "L002", "S001", "S002", "S003"} <= codes
    s001 = next(f for f in dask.findings if f.code == "S001")
    assert s001.n_affected == 26 and s001.examples == (0, 1, 2, 3, 4)
    (cross,) = [f for f in dask.findings if f.code == "S003" and "a train row" in f.message]
    assert cross.examples == (30,) and cross.n_affected == 1


def test_csv_and_dataframe_inputs(data, scheduler):
    for train in (data["csv"], data["train"]):
        local = datavet.audit(train, data["test_df"], target="label", select=["V", "S", "F"])
        dask = datavet.audit(
            train,
            data["test_df"],
            target="label",
            select=["V", "S", "F"],
            engine="dask",
            scheduler=scheduler,
        )
        same(local.to_dict(), dask.to_dict())


def test_without_an_address_a_local_cluster_is_started():
    report = datavet.audit(pd.DataFrame({"x": [1.0, np.nan, 3.0, 3.0]}), engine="dask")
    assert {f.code for f in report.findings} == {"V001", "S002"}


def test_unknown_engine_is_a_usage_error():
    with pytest.raises(datavet.UsageError, match="unknown engine"):
        datavet.audit(pd.DataFrame({"x": [1.0]}), engine="ray")
