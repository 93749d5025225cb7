"""The Dask engine's failures are one line and exit 2, quickly: a scheduler nobody answers at,
an address that is not one, a failure on a worker (no worker traceback on the terminal), and
engine arguments that are not ours to guess. A real LocalCluster (threads, to keep it light)."""

from __future__ import annotations

import pickle
import socket

import pytest

import datavet
from datavet.cli import main
from datavet.errors import EngineError, InputError, UsageError


@pytest.fixture(scope="module")
def scheduler():
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        yield cluster.scheduler_address


def _cli(capfd, argv) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capfd.readouterr()
    return code, out, err


def _one_line(code, out, err) -> str:
    assert code == 2, (code, err[-2000:])
    assert "Traceback" not in err and "internal error" not in err, err[-2000:]
    lines = err.strip().splitlines()
    assert len(lines) == 1, err[-2000:]
    assert lines[0].startswith("datavet: error:"), lines[0]
    return lines[0]


@pytest.fixture
def csv(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("x,label\n" + "".join(f"{i},{i % 2}\n" for i in range(50)))
    return path


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nobody listens


def test_unreachable_scheduler_is_one_line_within_the_connect_timeout(capfd, csv):
    address = f"tcp://127.0.0.1:{_closed_port()}"
    code, out, err = _cli(capfd, ["audit", csv, "--engine", "dask", "--scheduler", address])
    line = _one_line(code, out, err)
    assert address in line and "cannot reach the Dask scheduler" in line


@pytest.mark.parametrize(
    "address", ["not an address", "tcp://127.0.0.1:notaport", "http://127.0.0.1:8786", ""]
)
def test_malformed_scheduler_address_is_a_usage_error(capfd, csv, address):
    code, out, err = _cli(capfd, ["audit", csv, "--engine", "dask", "--scheduler", address])
    line = _one_line(code, out, err)
    assert "tcp://" in line  # says what an address looks like


def _corrupt_second_row_group(path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {"x": [float(i) for i in range(2_000)], "label": [i % 2 for i in range(2_000)]}
    )
    pq.write_table(table, path, row_group_size=1_000, compression="snappy")
    meta = pq.ParquetFile(path).metadata.row_group(1).column(0)
    data = bytearray(path.read_bytes())
    start = meta.data_page_offset + 40  # inside the page: the footer (read first) stays intact
    data[start : start + 200] = b"\xff" * 200
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("own_cluster", [True, False])
def test_worker_side_failure_is_one_line_without_worker_tracebacks(
    capfd, tmp_path, scheduler, own_cluster
):
    """Both on a cluster of threads and on datavet's own LocalCluster of worker processes (the
    error is pickled across, and the worker's log would print its traceback)."""
    path = _corrupt_second_row_group(tmp_path / "bad.parquet")
    where = [] if own_cluster else ["--scheduler", scheduler]
    code, out, err = _cli(capfd, ["audit", path, "--engine", "dask", *where])
    line = _one_line(code, out, err)
    assert "bad.parquet" in line and "row group 1" in line


def test_input_errors_cross_process_boundaries_intact():
    exc = pickle.loads(pickle.dumps(InputError("train.csv", "row group 3 is corrupt")))
    assert (exc.source, exc.problem) == ("train.csv", "row group 3 is corrupt")


def test_engine_error_is_a_datavet_error():
    assert EngineError("x").exit_code == 2


@pytest.mark.parametrize("engine", ["bogus", "", 3])
def test_bad_engine_is_a_usage_error_for_tables_and_tensors(engine):
    import numpy as np
    import pandas as pd

    table = pd.DataFrame({"x": [1.0, 2.0, 3.0], "label": [0, 1, 0]})
    tensors = (np.random.rand(20, 3), np.arange(20) % 2)
    for data in (table, tensors):
        with pytest.raises(UsageError, match="engine"):
            datavet.audit(data, engine=engine)
