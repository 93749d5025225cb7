"""Helper processes share a large Parquet scan (engines/helpers.py): the report is the one
the threads alone give, whether the helpers are forks or fresh interpreters, whether the
hashes stay in memory or spill, and when a helper dies; a corrupt row group in a helper's
share is the same one-line error; no helper outlives the audit."""

from __future__ import annotations

import json
import os
import threading

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import datavet
from datavet.engines import helpers, local
from datavet.errors import InputError


def _table(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4))
    x[::53, 1] = np.nan
    label = (rng.random(n) < 0.2).astype(np.int64)
    label[: n // 20] = 1  # the first rows carry another label (L002)
    return pa.table(
        {
            "a": x[:, 0],
            "b": x[:, 1],
            "c": np.round(x[:, 2], 1),
            "d": x[:, 3] * 300,
            "color": rng.choice(["red", "green", "blue"], n),
            "label": label,
        }
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("helpers")
    train, test = _table(6000, 1), _table(1500, 2)
    test = pa.concat_tables([test.slice(0, 1400), train.slice(100, 100)])  # 100 copied rows
    pq.write_table(train, d / "train.parquet", row_group_size=400)
    pq.write_table(test, d / "test.parquet", row_group_size=400)
    return d / "train.parquet", d / "test.parquet"


@pytest.fixture
def used(monkeypatch):
    """Helpers on for small files (any size, any row group), on two cores; records the row
    groups each helper profiled and every helper process started."""
    monkeypatch.setattr(helpers, "MIN_ROWS", 0)
    monkeypatch.setattr(helpers, "MIN_GROUP_ROWS", 1)
    monkeypatch.setattr(helpers.os, "cpu_count", lambda: 2)
    seen = {"tasks": [], "pids": []}
    run, start = helpers.Helper.run, helpers.Helper.start

    def counted_run(self, task):
        seen["tasks"].append(task[1])
        return run(self, task)

    def counted_start(how):
        helper = start(how)
        if helper is not None:
            seen["pids"].append(helper.pid)
        return helper

    monkeypatch.setattr(helpers.Helper, "run", counted_run)
    monkeypatch.setattr(helpers.Helper, "start", staticmethod(counted_start))
    return seen


def _report(files, **kwargs) -> str:
    report = datavet.audit(*map(str, files), target="label", workers=2, batch_rows=1000, **kwargs)
    data = report.to_dict()
    data.pop("duration_s", None)
    return json.dumps(data, sort_keys=True, default=str)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize("how", ["fork", "spawn"])
@pytest.mark.parametrize("spill_rows", [10**9, 1000])
def test_helpers_give_the_threads_report(files, used, monkeypatch, how, spill_rows):
    monkeypatch.setattr(local, "SPILL_ROWS", spill_rows)
    monkeypatch.setenv("DATAVET_HELPERS", "off")
    alone = _report(files)
    assert not used["tasks"]
    monkeypatch.setenv("DATAVET_HELPERS", how)
    shared = _report(files)
    assert used["tasks"], "no row group went to a helper"
    assert len(used["tasks"]) < 8 + 2  # this process did its share too
    assert shared == alone
    for code in ("V001", "S001", "L002", "F003"):
        assert f'"{code}"' in alone
    assert all(_gone(pid) for pid in used["pids"])  # every helper reaped


def test_a_helper_that_dies_costs_only_its_speed(files, used, monkeypatch):
    monkeypatch.setenv("DATAVET_HELPERS", "off")
    alone = _report(files)
    monkeypatch.setenv("DATAVET_HELPERS", "fork")
    start = helpers.Helper.start

    def killed(how):
        helper = start(how)
        os.kill(helper.pid, 9)  # gone before its first task
        used["pids"].append(helper.pid)
        return helper

    monkeypatch.setattr(helpers.Helper, "start", staticmethod(killed))
    assert _report(files) == alone
    assert used["tasks"]  # it was asked, found gone, and its row group profiled here
    assert all(_gone(pid) for pid in used["pids"])


@pytest.mark.parametrize("how", ["fork", "spawn"])
def test_a_corrupt_row_group_in_a_helpers_share_is_one_error(tmp_path, used, monkeypatch, how):
    path = tmp_path / "good.parquet"
    pq.write_table(_table(4000, 3), path, row_group_size=500, compression="snappy")
    data = path.read_bytes()
    last = pq.ParquetFile(path).metadata.num_row_groups - 1  # a helper's first row group
    meta = pq.ParquetFile(path).metadata.row_group(last).column(0)
    start = meta.data_page_offset
    for off in range(start + 16, start + meta.total_compressed_size - 16, 41):
        bad = bytearray(data)
        for k in range(8):
            bad[off + k] ^= 0xFF
        flipped = tmp_path / "flipped.parquet"
        flipped.write_bytes(bytes(bad))
        try:
            pq.read_table(flipped)
        except (pa.ArrowException, OSError):
            break
    else:
        pytest.fail("no byte flip in the last row group made pyarrow fail")
    monkeypatch.setenv("DATAVET_HELPERS", how)
    with pytest.raises(InputError, match=rf"row group {last} is corrupt"):
        datavet.audit(str(flipped), target="label", workers=2, batch_rows=1000)
    assert used["tasks"] and all(_gone(pid) for pid in used["pids"])


def test_how_helpers_start(monkeypatch):
    monkeypatch.setenv("DATAVET_HELPERS", "off")
    assert helpers.how_to_start() is None
    monkeypatch.setenv("DATAVET_HELPERS", "spawn")
    assert helpers.how_to_start() == "spawn"
    monkeypatch.delenv("DATAVET_HELPERS")
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    assert helpers.how_to_start() == "fork"  # Linux, this thread alone
    # another Python thread may hold a lock a fork would copy: a fresh interpreter instead
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert helpers.how_to_start() == "spawn"


def test_small_inputs_and_one_worker_start_no_helper(files, monkeypatch):
    monkeypatch.setattr(helpers.os, "cpu_count", lambda: 2)
    sources = [datavet.sources.open_source(str(p), role="train") for p in files]
    assert helpers.wanted(sources, workers=2) == 0  # 7,500 rows: not worth a process
    monkeypatch.setattr(helpers, "MIN_ROWS", 0)
    assert helpers.wanted(sources, workers=2) == 1
    assert helpers.wanted(sources, workers=1) == 0
