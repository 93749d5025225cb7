"""``--max-memory`` holds for what is decoded, not what headers claim: compressed CSVs whose
size no header says (a gzip trailer is the last member's size modulo 4 GiB; bzip2 and zstd
keep none), and a Parquet file of long dictionary-encoded strings whose footer sizes are the
encoded ones. Small inputs: a limit of a few MB against files that decode to 10-100 MB."""

from __future__ import annotations

import bz2
import gzip

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import datavet
from datavet.errors import InputError
from datavet.sources.budget import Budget

from .helpers import assert_one_line_error, run_cli

ROWS = 2_000_000  # "1,2,0\n": 12 MB of CSV, 48 MB once decoded into three int64 columns
BODY = b"a,b,label\n" + b"1,2,0\n" * ROWS


def _gzip_tiny_second_member(path):
    # the trailer at the end of the file says 0 bytes, as a gzip over 4 GiB can say any size
    path.write_bytes(gzip.compress(BODY) + gzip.compress(b""))
    return path


def _bz2(path):
    path.write_bytes(bz2.compress(BODY))
    return path


def _zstd(path):
    with pa.CompressedOutputStream(str(path), "zstd") as out:
        out.write(BODY)
    return path


@pytest.mark.parametrize(
    "name, make",
    [
        ("two.csv.gz", _gzip_tiny_second_member),
        ("bomb.csv.bz2", _bz2),
        ("bomb.csv.zst", _zstd),
    ],
)
def test_compressed_csv_stopped_by_what_is_decoded(tmp_path, capsys, name, make):
    path = make(tmp_path / name)
    assert path.stat().st_size < 200_000
    code, out, err = run_cli(capsys, ["audit", path, "--max-memory", "4MB"])
    line = assert_one_line_error(code, out, err, names=name, problem=[r"max-memory 4\.0 MiB"])
    assert "stopped reading" in line


def test_parquet_long_dictionary_strings_refused_by_decoded_width(tmp_path, capsys):
    strings = ["x" * 20_000 + str(i) for i in range(4)]
    table = pa.table(
        {
            "s": pa.array([strings[i % 4] for i in range(5_000)]),
            "label": [i % 2 for i in range(5_000)],
        }
    )
    path = tmp_path / "long.parquet"
    pq.write_table(table, path, compression="zstd")  # dictionary-encoded: ~1 KB for 100 MB
    assert path.stat().st_size < 10_000
    code, out, err = run_cli(capsys, ["audit", path, "--max-memory", "8MB"])
    assert_one_line_error(
        code, out, err, names="long.parquet", problem=[r"8\.0 MiB", r"20,0\d\d bytes a row"]
    )


def test_within_the_budget_the_audit_runs(tmp_path):
    path = tmp_path / "small.csv.gz"
    path.write_bytes(gzip.compress(b"a,b,label\n" + b"1,2,0\n3,4,1\n" * 500))
    report = datavet.audit(path, target="label", max_memory="64MB", baselines=False)
    assert report.datasets["train"]["rows"] == 1_000


def test_budget_counts_a_second_pass_once():
    batch = pa.record_batch({"x": pa.array(range(1_000), pa.int64())})
    budget = Budget(10**9, batch_rows=1_000, sample_rows=100)
    budget.charge("t", 0, batch)
    first = budget.need()
    budget.charge("t", 0, batch)  # the near-duplicate pass reads the same rows again
    assert budget.need() == first
    budget.charge("t", 1_000, batch)
    assert budget.seen["t"][:2] == [2_000, 2 * batch.nbytes]


def test_budget_names_the_split_and_the_limit():
    batch = pa.record_batch({"x": pa.array(range(10_000), pa.int64())})
    budget = Budget(100_000, batch_rows=10_000, sample_rows=100)
    with pytest.raises(InputError) as info:
        budget.charge("train.csv.gz", 0, batch)
    assert str(info.value).startswith("train.csv.gz: resource limit")
    assert "97.7 KiB" in str(info.value)
